//===- Result.cpp - Benchmark results and their JSON schema ---------------===//
//
// Schema version 1 (docs/bench-json.md): writing, parsing with validation,
// atomic result files and the machine description. JSON is parsed without
// exceptions (nlohmann's allow_exceptions = false) and every value is type
// checked before it is read, so nothing leaves this file as an exception.
//
//===----------------------------------------------------------------------===//

#include "tessera/bench/Result.h"

#include "tessera/Support/Host.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/utsname.h>
#include <unistd.h>

using namespace tessera;
using namespace tessera::bench;
using Json = nlohmann::ordered_json; // keeps the documented field order

//===----------------------------------------------------------------------===//
// Validation of the in-memory form
//===----------------------------------------------------------------------===//

namespace {
bool isFinite(double x) { return std::isfinite(x); }

bool statsFinite(const SampleStats &s) {
  return isFinite(s.median) && isFinite(s.mean) && isFinite(s.min) &&
         isFinite(s.max) && isFinite(s.stddev) && isFinite(s.ci95Low) &&
         isFinite(s.ci95High) && isFinite(s.rsd);
}

bool allFinite(const std::vector<double> &v) {
  for (double x : v)
    if (!isFinite(x))
      return false;
  return true;
}

Status validateCase(const CaseResult &c) {
  if (c.name.empty())
    return invalidArgument("a case has no name");
  auto bad = [&](const char *what) {
    return invalidArgument("case '%s': %s", c.name.c_str(), what);
  };
  if (!isFinite(c.maxAbsError) || !isFinite(c.maxRelError) ||
      !isFinite(c.work.flops) || !isFinite(c.work.bytes) ||
      !isFinite(c.tflops) || !isFinite(c.gbs) || !statsFinite(c.stats) ||
      !allFinite(c.samples) ||
      (c.rooflineEfficiency && !isFinite(*c.rooflineEfficiency)))
    return bad("a number is not finite");
  for (auto &[key, value] : c.resources)
    if (!isFinite(value))
      return bad("a resource value is not finite");
  if (c.skipped && c.passed)
    return bad("both passed and skipped");
  if (c.launchesPerSample < 1 ||
      (c.baseline && c.baseline->launchesPerSample < 1))
    return bad("launchesPerSample below 1");
  if (!c.passed) {
    if (c.failure.empty())
      return bad("FAILED without a failure text");
    if (!c.samples.empty() || c.stats.count != 0 || !c.stopReason.empty() ||
        c.tflops != 0 || c.gbs != 0 || c.rooflineEfficiency ||
        (c.baseline && c.baseline->speedup != 0))
      return bad("FAILED but reports a speed");
  } else if (c.code) {
    if (!c.samples.empty() || c.tflops != 0 || c.gbs != 0 ||
        c.rooflineEfficiency || c.baseline)
      return bad("a scorecard case reports a speed");
    for (const auto *m : {&c.code->metrics, &c.code->baseline})
      for (auto &[key, value] : *m)
        if (!isFinite(value))
          return bad("a code-shape figure is not finite");
  } else {
    if (c.samples.empty())
      return bad("passed without samples");
    if (c.stats.count != static_cast<int64_t>(c.samples.size()))
      return bad("stats.count differs from the number of samples");
  }
  if (c.counters) {
    const CaseCounters &k = *c.counters;
    if (!isFinite(k.launchMs) || !isFinite(k.coalescingEfficiency) ||
        !isFinite(k.barriersPerBlock))
      return bad("a counter is not finite");
    bool negative = k.launchMs < 0 || k.globalRequests < 0 ||
                    k.globalSectors < 0 || k.globalIdealSectors < 0 ||
                    k.globalBytesMoved < 0 || k.globalUsefulBytes < 0 ||
                    k.sharedRequests < 0 || k.sharedWavefronts < 0 ||
                    k.sharedIdealWavefronts < 0 || k.barriersPerBlock < 0 ||
                    k.maxBarriersPerBlock < 0 || k.divergentBranches < 0 ||
                    k.warpBranchInstances < 0;
    if (negative)
      return bad("a counter is negative");
  }
  if (c.baseline) {
    const CaseResult::Baseline &b = *c.baseline;
    if (!statsFinite(b.stats) || !allFinite(b.samples) || !isFinite(b.speedup))
      return bad("a baseline number is not finite");
    if (!b.samples.empty() &&
        b.stats.count != static_cast<int64_t>(b.samples.size()))
      return bad("baseline stats.count differs from its number of samples");
  }
  return okStatus();
}
} // namespace

Status tessera::bench::validate(const RunResult &run) {
  if (run.header.schemaVersion != kSchemaVersion)
    return invalidArgument("schemaVersion %d (this tessera-bench writes %d)",
                           run.header.schemaVersion, kSchemaVersion);
  for (auto &[key, value] : run.header.peaks)
    if (!isFinite(value))
      return invalidArgument("peak '%s' is not finite", key.c_str());
  for (const CaseResult &c : run.cases)
    TESSERA_RETURN_IF_ERROR(validateCase(c));
  return okStatus();
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {
Json statsToJson(const SampleStats &s) {
  return Json{
      {"count", s.count},     {"median", s.median},     {"mean", s.mean},
      {"min", s.min},         {"max", s.max},           {"stddev", s.stddev},
      {"ci95Low", s.ci95Low}, {"ci95High", s.ci95High}, {"rsd", s.rsd}};
}

Json stringMap(const std::map<std::string, std::string> &m) {
  Json j = Json::object();
  for (auto &[k, v] : m)
    j[k] = v;
  return j;
}

Json numberMap(const std::map<std::string, double> &m) {
  Json j = Json::object();
  for (auto &[k, v] : m)
    j[k] = v;
  return j;
}

Json countersToJson(const CaseCounters &k) {
  Json j = Json::object();
  j["launchMs"] = k.launchMs;
  j["globalRequests"] = k.globalRequests;
  j["globalSectors"] = k.globalSectors;
  j["globalIdealSectors"] = k.globalIdealSectors;
  j["globalBytesMoved"] = k.globalBytesMoved;
  j["globalUsefulBytes"] = k.globalUsefulBytes;
  j["coalescingEfficiency"] = k.coalescingEfficiency;
  j["sharedRequests"] = k.sharedRequests;
  j["sharedWavefronts"] = k.sharedWavefronts;
  j["sharedIdealWavefronts"] = k.sharedIdealWavefronts;
  j["barriersPerBlock"] = k.barriersPerBlock;
  j["maxBarriersPerBlock"] = k.maxBarriersPerBlock;
  j["divergentBranches"] = k.divergentBranches;
  j["warpBranchInstances"] = k.warpBranchInstances;
  Json sites = Json::array();
  for (const CaseCounters::Site &s : k.sites)
    sites.push_back(Json{{"space", s.space},
                         {"kind", s.kind},
                         {"widthBytes", s.widthBytes},
                         {"op", s.op},
                         {"location", s.location},
                         {"requests", s.requests},
                         {"sectors", s.sectors},
                         {"idealSectors", s.idealSectors},
                         {"usefulBytes", s.usefulBytes},
                         {"wavefronts", s.wavefronts},
                         {"idealWavefronts", s.idealWavefronts}});
  j["sites"] = std::move(sites);
  Json branches = Json::array();
  for (const CaseCounters::Branch &b : k.branches)
    branches.push_back(Json{{"op", b.op},
                            {"location", b.location},
                            {"instances", b.instances},
                            {"divergent", b.divergent}});
  j["branches"] = std::move(branches);
  return j;
}

Json caseToJson(const CaseResult &c) {
  Json j = Json::object();
  j["suite"] = c.suite;
  j["kernel"] = c.kernel;
  j["name"] = c.name;
  j["device"] = c.device;
  j["precision"] = c.precision;
  j["params"] = stringMap(c.params);
  j["config"] = stringMap(c.config);
  j["configSource"] = c.configSource;
  j["passed"] = c.passed;
  if (!c.passed)
    j["failure"] = c.failure;
  if (c.skipped)
    j["skipped"] = true;
  j["maxAbsError"] = c.maxAbsError;
  j["maxRelError"] = c.maxRelError;
  if (c.passed) {
    j["samplesMs"] = c.samples;
    j["stats"] = statsToJson(c.stats);
    j["stopReason"] = c.stopReason;
    if (c.launchesPerSample != 1)
      j["launchesPerSample"] = c.launchesPerSample;
  }
  j["work"] = Json{{"flops", c.work.flops}, {"bytes", c.work.bytes}};
  if (c.passed) {
    j["tflops"] = c.tflops;
    j["gbs"] = c.gbs;
    if (c.rooflineEfficiency)
      j["rooflineEfficiency"] = *c.rooflineEfficiency;
  }
  j["computePath"] = c.computePath;
  const CompileTimesMs &t = c.compile;
  j["compileMs"] = Json{{"parse", t.parse},           {"sema", t.sema},
                        {"tilePasses", t.tilePasses}, {"lowering", t.lowering},
                        {"codegen", t.codegen},       {"ptx", t.ptx},
                        {"cubin", t.cubin},           {"tuning", t.tuning}};
  if (c.baseline) {
    Json b = Json::object();
    b["name"] = c.baseline->name;
    b["samplesMs"] = c.baseline->samples;
    b["stats"] = statsToJson(c.baseline->stats);
    if (c.passed)
      b["speedup"] = c.baseline->speedup;
    if (c.baseline->launchesPerSample != 1)
      b["launchesPerSample"] = c.baseline->launchesPerSample;
    j["baseline"] = std::move(b);
  }
  j["resources"] = numberMap(c.resources);
  if (!c.resourcesArch.empty())
    j["resourcesArch"] = c.resourcesArch;
  if (!c.resourcesNote.empty())
    j["resourcesNote"] = c.resourcesNote;
  if (c.code) {
    const CodeShape &k = *c.code;
    Json code{{"arch", k.arch},
              {"function", k.function},
              {"assembler", k.assembler},
              {"metrics", numberMap(k.metrics)}};
    if (!k.baselineName.empty()) {
      code["baselineName"] = k.baselineName;
      code["baseline"] = numberMap(k.baseline);
      code["baselineConfig"] = stringMap(k.baselineConfig);
    }
    if (!k.baselineNote.empty())
      code["baselineNote"] = k.baselineNote;
    j["code"] = std::move(code);
  }
  if (c.counters)
    j["counters"] = countersToJson(*c.counters);
  return j;
}
} // namespace

std::string tessera::bench::toJson(const RunResult &run) {
  const RunHeader &h = run.header;
  Json j = Json::object();
  j["schemaVersion"] = h.schemaVersion;
  j["tool"] = h.tool;
  j["header"] = Json{
      {"compilerVersion", h.compilerVersion}, {"gitRevision", h.gitRevision},
      {"commandLine", h.commandLine},         {"startedAt", h.startedAt},
      {"machine", stringMap(h.machine)},      {"device", stringMap(h.device)},
      {"peaks", numberMap(h.peaks)}};
  Json cases = Json::array();
  for (const CaseResult &c : run.cases)
    cases.push_back(caseToJson(c));
  j["cases"] = std::move(cases);
  // Invalid UTF-8 in a string is replaced rather than thrown about.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
/// Reads fields of one JSON object, recording the first error with its path.
class Reader {
public:
  Reader(std::string_view file, Status &error) : file_(file), error_(error) {}

  bool failed() const { return !error_.ok(); }

  void fail(const std::string &path, const std::string &what) {
    if (error_.ok())
      error_ = invalidArgument("%s: %s: %s", file_.c_str(), path.c_str(),
                               what.c_str());
  }

  /// The member `key` of `obj` or nullptr (and an error when `required`).
  const Json *member(const Json &obj, const std::string &path, const char *key,
                     bool required) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required)
        fail(path, std::string("missing required field '") + key + "'");
      return nullptr;
    }
    return &*it;
  }

  void str(const Json &obj, const std::string &path, const char *key,
           std::string &out, bool required) {
    const Json *v = member(obj, path, key, required);
    if (!v)
      return;
    if (!v->is_string())
      return fail(join(path, key), "expected a string");
    out = v->get_ref<const std::string &>();
  }

  void num(const Json &obj, const std::string &path, const char *key,
           double &out, bool required) {
    const Json *v = member(obj, path, key, required);
    if (!v)
      return;
    if (!v->is_number())
      return fail(join(path, key), "expected a number");
    out = v->get<double>();
  }

  void integer(const Json &obj, const std::string &path, const char *key,
               int64_t &out, bool required) {
    const Json *v = member(obj, path, key, required);
    if (!v)
      return;
    if (!v->is_number_integer())
      return fail(join(path, key), "expected an integer");
    out = v->get<int64_t>();
  }

  void boolean(const Json &obj, const std::string &path, const char *key,
               bool &out, bool required) {
    const Json *v = member(obj, path, key, required);
    if (!v)
      return;
    if (!v->is_boolean())
      return fail(join(path, key), "expected true or false");
    out = v->get<bool>();
  }

  void numbers(const Json &obj, const std::string &path, const char *key,
               std::vector<double> &out, bool required) {
    const Json *v = member(obj, path, key, required);
    if (!v)
      return;
    std::string p = join(path, key);
    if (!v->is_array())
      return fail(p, "expected an array of numbers");
    out.clear();
    out.reserve(v->size());
    for (size_t i = 0; i < v->size(); ++i) {
      const Json &x = (*v)[i];
      if (!x.is_number())
        return fail(p + "[" + std::to_string(i) + "]", "expected a number");
      out.push_back(x.get<double>());
    }
  }

  void stringMap(const Json &obj, const std::string &path, const char *key,
                 std::map<std::string, std::string> &out, bool required) {
    const Json *v = member(obj, path, key, required);
    if (!v)
      return;
    std::string p = join(path, key);
    if (!v->is_object())
      return fail(p, "expected an object of strings");
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (!it.value().is_string())
        return fail(join(p, it.key().c_str()), "expected a string");
      out[it.key()] = it.value().get<std::string>();
    }
  }

  void numberMap(const Json &obj, const std::string &path, const char *key,
                 std::map<std::string, double> &out, bool required) {
    const Json *v = member(obj, path, key, required);
    if (!v)
      return;
    std::string p = join(path, key);
    if (!v->is_object())
      return fail(p, "expected an object of numbers");
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (!it.value().is_number())
        return fail(join(p, it.key().c_str()), "expected a number");
      out[it.key()] = it.value().get<double>();
    }
  }

  /// The member `key` when it is an object; nullptr otherwise (with an error
  /// when present with another type or required and missing).
  const Json *object(const Json &obj, const std::string &path, const char *key,
                     bool required) {
    const Json *v = member(obj, path, key, required);
    if (v && !v->is_object()) {
      fail(join(path, key), "expected an object");
      return nullptr;
    }
    return v;
  }

  void stats(const Json &obj, const std::string &path, const char *key,
             SampleStats &s, bool required) {
    const Json *v = object(obj, path, key, required);
    if (!v)
      return;
    std::string p = join(path, key);
    integer(*v, p, "count", s.count, true);
    num(*v, p, "median", s.median, true);
    num(*v, p, "mean", s.mean, true);
    num(*v, p, "min", s.min, true);
    num(*v, p, "max", s.max, true);
    num(*v, p, "stddev", s.stddev, true);
    num(*v, p, "ci95Low", s.ci95Low, true);
    num(*v, p, "ci95High", s.ci95High, true);
    num(*v, p, "rsd", s.rsd, true);
  }

  static std::string join(const std::string &path, const char *key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

private:
  std::string file_;
  Status &error_;
};

/// The objects of array `key` of `obj` (absent: none), each read by
/// `read(object, path)`.
template <typename Read>
void readObjects(Reader &r, const Json &obj, const std::string &path,
                 const char *key, Read read) {
  const Json *v = r.member(obj, path, key, false);
  if (!v)
    return;
  std::string p = Reader::join(path, key);
  if (!v->is_array())
    return r.fail(p, "expected an array of objects");
  for (size_t i = 0; i < v->size() && !r.failed(); ++i) {
    std::string ip = p + "[" + std::to_string(i) + "]";
    if (!(*v)[i].is_object())
      return r.fail(ip, "expected an object");
    read((*v)[i], ip);
  }
}

void readCounters(Reader &r, const Json &j, const std::string &p,
                  CaseCounters &k) {
  r.num(j, p, "launchMs", k.launchMs, false);
  r.integer(j, p, "globalRequests", k.globalRequests, true);
  r.integer(j, p, "globalSectors", k.globalSectors, true);
  r.integer(j, p, "globalIdealSectors", k.globalIdealSectors, true);
  r.integer(j, p, "globalBytesMoved", k.globalBytesMoved, true);
  r.integer(j, p, "globalUsefulBytes", k.globalUsefulBytes, true);
  r.num(j, p, "coalescingEfficiency", k.coalescingEfficiency, true);
  r.integer(j, p, "sharedRequests", k.sharedRequests, true);
  r.integer(j, p, "sharedWavefronts", k.sharedWavefronts, true);
  r.integer(j, p, "sharedIdealWavefronts", k.sharedIdealWavefronts, true);
  r.num(j, p, "barriersPerBlock", k.barriersPerBlock, true);
  r.integer(j, p, "maxBarriersPerBlock", k.maxBarriersPerBlock, true);
  r.integer(j, p, "divergentBranches", k.divergentBranches, true);
  r.integer(j, p, "warpBranchInstances", k.warpBranchInstances, true);
  readObjects(r, j, p, "sites", [&](const Json &o, const std::string &op) {
    CaseCounters::Site s;
    r.str(o, op, "space", s.space, true);
    r.str(o, op, "kind", s.kind, true);
    r.integer(o, op, "widthBytes", s.widthBytes, true);
    r.str(o, op, "op", s.op, false);
    r.str(o, op, "location", s.location, false);
    r.integer(o, op, "requests", s.requests, true);
    r.integer(o, op, "sectors", s.sectors, false);
    r.integer(o, op, "idealSectors", s.idealSectors, false);
    r.integer(o, op, "usefulBytes", s.usefulBytes, false);
    r.integer(o, op, "wavefronts", s.wavefronts, false);
    r.integer(o, op, "idealWavefronts", s.idealWavefronts, false);
    k.sites.push_back(std::move(s));
  });
  readObjects(r, j, p, "branches", [&](const Json &o, const std::string &op) {
    CaseCounters::Branch b;
    r.str(o, op, "op", b.op, false);
    r.str(o, op, "location", b.location, false);
    r.integer(o, op, "instances", b.instances, true);
    r.integer(o, op, "divergent", b.divergent, true);
    k.branches.push_back(std::move(b));
  });
}

void readCase(Reader &r, const Json &j, const std::string &p, CaseResult &c) {
  if (!j.is_object())
    return r.fail(p, "expected an object");
  r.str(j, p, "suite", c.suite, true);
  r.str(j, p, "kernel", c.kernel, true);
  r.str(j, p, "name", c.name, true);
  r.str(j, p, "device", c.device, true);
  r.str(j, p, "precision", c.precision, true);
  r.stringMap(j, p, "params", c.params, false);
  r.stringMap(j, p, "config", c.config, false);
  r.str(j, p, "configSource", c.configSource, false);
  r.boolean(j, p, "passed", c.passed, true);
  if (r.failed())
    return;
  if (!c.passed) {
    r.str(j, p, "failure", c.failure, true);
    r.boolean(j, p, "skipped", c.skipped, false);
    for (const char *key :
         {"samplesMs", "stats", "stopReason", "launchesPerSample", "tflops",
          "gbs", "rooflineEfficiency"})
      if (j.contains(key))
        return r.fail(p, std::string("FAILED case '") + c.name +
                             "' reports a speed ('" + key + "')");
    auto b = j.find("baseline");
    if (b != j.end() && b->is_object() && b->contains("speedup"))
      return r.fail(p, "FAILED case '" + c.name +
                           "' reports a speed ('baseline.speedup')");
    if (c.failure.empty())
      return r.fail(Reader::join(p, "failure"),
                    "a FAILED case needs a failure text");
  }
  r.num(j, p, "maxAbsError", c.maxAbsError, false);
  r.num(j, p, "maxRelError", c.maxRelError, false);
  if (c.passed) {
    r.numbers(j, p, "samplesMs", c.samples, true);
    r.stats(j, p, "stats", c.stats, true);
    r.str(j, p, "stopReason", c.stopReason, false);
    r.integer(j, p, "launchesPerSample", c.launchesPerSample, false);
    r.num(j, p, "tflops", c.tflops, true);
    r.num(j, p, "gbs", c.gbs, true);
    if (j.contains("rooflineEfficiency")) {
      double e = 0;
      r.num(j, p, "rooflineEfficiency", e, true);
      c.rooflineEfficiency = e;
    }
  }
  if (const Json *w = r.object(j, p, "work", false)) {
    std::string wp = Reader::join(p, "work");
    r.num(*w, wp, "flops", c.work.flops, true);
    r.num(*w, wp, "bytes", c.work.bytes, true);
  }
  r.str(j, p, "computePath", c.computePath, false);
  if (const Json *t = r.object(j, p, "compileMs", false)) {
    std::string tp = Reader::join(p, "compileMs");
    CompileTimesMs &ct = c.compile;
    r.num(*t, tp, "parse", ct.parse, false);
    r.num(*t, tp, "sema", ct.sema, false);
    r.num(*t, tp, "tilePasses", ct.tilePasses, false);
    r.num(*t, tp, "lowering", ct.lowering, false);
    r.num(*t, tp, "codegen", ct.codegen, false);
    r.num(*t, tp, "ptx", ct.ptx, false);
    r.num(*t, tp, "cubin", ct.cubin, false);
    r.num(*t, tp, "tuning", ct.tuning, false);
  }
  if (const Json *b = r.object(j, p, "baseline", false)) {
    std::string bp = Reader::join(p, "baseline");
    CaseResult::Baseline base;
    r.str(*b, bp, "name", base.name, true);
    r.numbers(*b, bp, "samplesMs", base.samples, false);
    r.stats(*b, bp, "stats", base.stats, true);
    r.num(*b, bp, "speedup", base.speedup, false);
    r.integer(*b, bp, "launchesPerSample", base.launchesPerSample, false);
    c.baseline = std::move(base);
  }
  r.numberMap(j, p, "resources", c.resources, false);
  r.str(j, p, "resourcesArch", c.resourcesArch, false);
  r.str(j, p, "resourcesNote", c.resourcesNote, false);
  if (const Json *k = r.object(j, p, "code", false)) {
    std::string kp = Reader::join(p, "code");
    CodeShape code;
    r.str(*k, kp, "arch", code.arch, true);
    r.str(*k, kp, "function", code.function, false);
    r.str(*k, kp, "assembler", code.assembler, false);
    r.numberMap(*k, kp, "metrics", code.metrics, true);
    r.str(*k, kp, "baselineName", code.baselineName, false);
    r.numberMap(*k, kp, "baseline", code.baseline, false);
    r.stringMap(*k, kp, "baselineConfig", code.baselineConfig, false);
    r.str(*k, kp, "baselineNote", code.baselineNote, false);
    c.code = std::move(code);
  }
  if (const Json *k = r.object(j, p, "counters", false)) {
    CaseCounters counters;
    readCounters(r, *k, Reader::join(p, "counters"), counters);
    c.counters = std::move(counters);
  }
}
} // namespace

StatusOr<RunResult> tessera::bench::fromJson(std::string_view text,
                                             std::string_view nameForErrors) {
  std::string file(nameForErrors.empty() ? "<json>" : nameForErrors);
  Json j = Json::parse(text.begin(), text.end(), nullptr,
                       /*allow_exceptions=*/false);
  if (j.is_discarded())
    return dataLoss("%s: not valid JSON (truncated or corrupt file?)",
                    file.c_str());
  if (!j.is_object())
    return invalidArgument("%s: the document is not a JSON object",
                           file.c_str());
  Status error;
  Reader r(file, error);
  RunResult run;
  RunHeader &h = run.header;
  int64_t version = 0;
  r.integer(j, "", "schemaVersion", version, true);
  if (r.failed())
    return error;
  if (version != kSchemaVersion)
    return invalidArgument(
        "%s: unsupported schemaVersion %lld (this tessera-bench reads %d)",
        file.c_str(), static_cast<long long>(version), kSchemaVersion);
  h.schemaVersion = kSchemaVersion;
  r.str(j, "", "tool", h.tool, true);
  if (const Json *hj = r.object(j, "", "header", true)) {
    r.str(*hj, "header", "compilerVersion", h.compilerVersion, true);
    r.str(*hj, "header", "gitRevision", h.gitRevision, true);
    r.str(*hj, "header", "commandLine", h.commandLine, true);
    r.str(*hj, "header", "startedAt", h.startedAt, true);
    r.stringMap(*hj, "header", "machine", h.machine, true);
    r.stringMap(*hj, "header", "device", h.device, true);
    r.numberMap(*hj, "header", "peaks", h.peaks, false);
  }
  const Json *cases = r.member(j, "", "cases", true);
  if (cases && !cases->is_array())
    r.fail("cases", "expected an array");
  if (r.failed())
    return error;
  run.cases.resize(cases->size());
  for (size_t i = 0; i < cases->size() && !r.failed(); ++i)
    readCase(r, (*cases)[i], "cases[" + std::to_string(i) + "]", run.cases[i]);
  if (r.failed())
    return error;
  Status valid = validate(run);
  if (!valid.ok())
    return valid.withContext(file);
  return run;
}

StatusOr<RunResult> tessera::bench::readResultFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT)
      return notFound("%s: no such file", path.c_str());
    return unavailable("%s: cannot open: %s", path.c_str(),
                       std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return unavailable("%s: read error", path.c_str());
  return fromJson(text.str(), path);
}

Status tessera::bench::writeResultFile(const std::string &path,
                                       const RunResult &run) {
  TESSERA_RETURN_IF_ERROR(validate(run), "%s", path.c_str());
  std::string text = toJson(run);
  static std::atomic<uint64_t> counter{0};
  std::string tmp =
      formatString("%s.tmp.%d.%llu", path.c_str(), static_cast<int>(::getpid()),
                   static_cast<unsigned long long>(++counter));
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return unavailable("cannot create '%s': %s", tmp.c_str(),
                       std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(::fileno(f)) == 0 && ok;
  int savedErrno = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    return unavailable("cannot write '%s': %s", tmp.c_str(),
                       std::strerror(savedErrno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    savedErrno = errno;
    std::remove(tmp.c_str());
    return unavailable("cannot rename '%s' to '%s': %s", tmp.c_str(),
                       path.c_str(), std::strerror(savedErrno));
  }
  return okStatus();
}

//===----------------------------------------------------------------------===//
// Machine description
//===----------------------------------------------------------------------===//

std::map<std::string, std::string> tessera::bench::machineDescription() {
  std::map<std::string, std::string> m;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0)
    m["hostname"] = host;
  m["cpu"] = hostCpuModelName();
  m["cores"] = std::to_string(std::thread::hardware_concurrency());
  {
    std::ifstream in("/proc/meminfo");
    std::string key;
    long long kib = 0;
    while (in >> key >> kib) {
      if (key == "MemTotal:") {
        m["memory"] = formatString("%.1f GiB", kib / (1024.0 * 1024.0));
        break;
      }
      in.ignore(1 << 12, '\n');
    }
  }
  struct utsname u;
  if (::uname(&u) == 0)
    m["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  return m;
}

std::string tessera::bench::isoTimestampUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}
