//===- TesseraTune.cpp - tessera-tune: tune, warm up, manage the cache ----===//
//
//   tessera-tune tune FILE -k KERNEL --shape M=1024,N=1024,K=1024
//   tessera-tune warmup MANIFEST.json
//   tessera-tune cache list | export FILE | import FILE
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/Inputs.h"
#include "tessera/autotune/Tuner.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tessera;
using namespace tessera::autotune;
using json = nlohmann::json;

namespace {

std::string describe(const std::map<std::string, std::string> &m) {
  std::string s;
  for (const auto &[k, v] : m)
    s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

StatusOr<std::map<std::string, ConstValue>> parseFixed(const std::string &t) {
  TESSERA_ASSIGN_OR_RETURN(auto parts, parseAssignments(t));
  std::map<std::string, ConstValue> out;
  for (const auto &[name, value] : parts)
    out[name] = ConstValue::parse(value);
  return out;
}

struct Job {
  std::string file, kernel, precision, strategy = "auto";
  DeviceKind device = DeviceKind::Cpu;
  std::map<std::string, int64_t> shapes;
  std::map<std::string, ConstValue> fixed;
  int64_t budget = 0;
  double seconds = 0;
  uint64_t seed = 1;
  bool force = false;
};

/// Tunes one job; prints a line (and progress on a terminal).
Status runJob(Runtime &rt, const Job &job, const std::string &cacheDir,
              bool progress, json *report) {
  TESSERA_ASSIGN_OR_RETURN(auto program, rt.loadFile(job.file));
  const KernelInfo *info = program->findKernel(job.kernel);
  if (!info)
    return Status(StatusCode::kNotFound,
                  "no kernel '" + job.kernel + "' in " + job.file);
  TESSERA_ASSIGN_OR_RETURN(GeneratedArgs gen,
                           generateArgs(*info, job.shapes, job.precision));
  TuneOptions o;
  o.device = job.device;
  o.precision = job.precision;
  o.fixed = job.fixed;
  o.strategy = job.strategy;
  o.budget.evaluations = job.budget;
  o.budget.seconds = job.seconds;
  o.seed = job.seed;
  o.cacheDir = cacheDir;
  if (progress)
    o.progress = [&](const EvaluatedConfig &e, size_t done, size_t total) {
      std::fprintf(stderr, "\r\033[K  [%zu/%zu] %s: %s", done, total,
                   describe(e.config).c_str(),
                   e.stats ? (std::to_string(e.stats->medianMs) + " ms").c_str()
                           : e.invalidReason.substr(0, 60).c_str());
      std::fflush(stderr);
    };
  Tuner tuner(rt, program, job.kernel, o);
  auto r = tuner.tune(gen.args, job.force);
  if (progress)
    std::fprintf(stderr, "\r\033[K");
  if (!r.ok())
    return r.status();
  std::printf("%s.%s [%s] %s: best %s  median %.4f ms (%lld samples)  "
              "%zu evaluated (%zu invalid, %zu reused)  %.2f s%s\n",
              job.file.c_str(), job.kernel.c_str(),
              describe(r->key.keyValues).c_str(), deviceKindName(job.device),
              describe(r->best).c_str(), r->bestStats.medianMs,
              static_cast<long long>(r->bestStats.samples), r->evaluated,
              r->invalid, r->reused, r->seconds,
              r->fromCache ? "  (cached)" : "");
  if (report)
    report->push_back({{"file", job.file},
                       {"kernel", job.kernel},
                       {"key", r->key.keyValues},
                       {"best", r->best},
                       {"median_ms", r->bestStats.medianMs},
                       {"evaluated", r->evaluated},
                       {"invalid", r->invalid},
                       {"reused", r->reused},
                       {"seconds", r->seconds},
                       {"cached", r->fromCache}});
  return Status::ok();
}

/// A warmup manifest (see docs/autotune.md):
///   {"version": 1, "entries": [{"file": "kernels_dsl/gemm.tile",
///     "kernel": "gemm", "device": "cpu", "precision": "",
///     "shapes": [{"M": 1024, "N": 1024, "K": 1024}, ...],
///     "fixed": {"HEAD_DIM": 64}, "budget": 32, "strategy": "auto"}]}
StatusOr<std::vector<Job>> readManifest(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return Status(StatusCode::kNotFound, "cannot read manifest " + path);
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception &e) {
    return Status(StatusCode::kInvalidArgument,
                  path + ": not valid JSON: " + e.what());
  }
  std::vector<Job> jobs;
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  try {
    if (!j.is_object() || !j.contains("entries") || !j["entries"].is_array())
      return Status(StatusCode::kInvalidArgument,
                    path + ": expected {\"entries\": [...]}");
    for (const json &e : j["entries"]) {
      Job base;
      std::string file = e.at("file").get<std::string>();
      base.file = std::filesystem::path(file).is_absolute()
                      ? file
                      : (dir / file).lexically_normal().string();
      base.kernel = e.at("kernel").get<std::string>();
      base.precision = e.value("precision", "");
      base.strategy = e.value("strategy", "auto");
      base.budget = e.value("budget", int64_t(0));
      base.seconds = e.value("seconds", 0.0);
      std::string dev = e.value("device", "cpu");
      auto kind = parseDeviceKind(dev);
      if (!kind)
        return Status(StatusCode::kInvalidArgument,
                      path + ": unknown device '" + dev + "'");
      base.device = *kind;
      if (e.contains("fixed"))
        for (auto &[k, v] : e["fixed"].items())
          base.fixed[k] = ConstValue::parse(v.is_string() ? v.get<std::string>()
                                                          : v.dump());
      for (const json &s : e.at("shapes")) {
        Job job = base;
        for (auto &[k, v] : s.items())
          job.shapes[k] = v.get<int64_t>();
        jobs.push_back(job);
      }
    }
  } catch (const std::exception &e) {
    return Status(StatusCode::kInvalidArgument,
                  path + ": bad manifest entry: " + e.what());
  }
  return jobs;
}

int fail(const Status &s) {
  std::fprintf(stderr, "tessera-tune: %s\n", s.toString().c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Tune Tessera kernels and manage the tuning cache"};
  app.require_subcommand(1);
  std::string cacheDir;
  app.add_option("--cache-dir", cacheDir,
                 "Tuning cache directory (default $TESSERA_CACHE_DIR/tuning)");

  Job job;
  std::string shapes, fixed, device = "cpu";
  CLI::App *tune = app.add_subcommand("tune", "Tune one kernel for one key");
  tune->add_option("file", job.file, "Source file (.tile)")->required();
  tune->add_option("-k,--kernel", job.kernel, "Kernel")->required();
  tune->add_option("--shape", shapes, "Shape symbols: M=1024,N=1024,...")
      ->required();
  tune->add_option("--device", device, "cpu or cuda (sim refuses to tune)");
  tune->add_option("--precision", job.precision, "Precision policy");
  tune->add_option("--fixed", fixed, "Constants not tuned: NAME=V,...");
  tune->add_option(
      "--strategy", job.strategy, "Search strategy (" + [] {
        std::string s;
        for (const std::string &n : strategyNames())
          s += (s.empty() ? "" : ", ") + n;
        return s;
      }() + ")");
  tune->add_option("--budget", job.budget,
                   "New evaluations (default 64; stored ones are reused)");
  tune->add_option("--seconds", job.seconds, "Wall-time budget");
  tune->add_option("--seed", job.seed, "Search seed");
  tune->add_flag("--force", job.force,
                 "Tune even if the key is cached (continuing its search)");
  std::string jsonOut;
  tune->add_option("--json", jsonOut, "Also write the result as JSON");

  std::string manifest;
  CLI::App *warm = app.add_subcommand(
      "warmup", "Tune every kernel x key x device of a manifest (resumable)");
  warm->add_option("manifest", manifest, "Manifest JSON")->required();
  warm->add_option("--json", jsonOut, "Also write the results as JSON");

  CLI::App *cache = app.add_subcommand("cache", "List, export or import");
  cache->require_subcommand(1);
  CLI::App *list = cache->add_subcommand("list", "List the records");
  std::string path, kernelFilter;
  CLI::App *exp = cache->add_subcommand("export", "Export records to a file");
  exp->add_option("file", path)->required();
  exp->add_option("--kernel", kernelFilter, "Only this kernel's records");
  CLI::App *imp =
      cache->add_subcommand("import", "Merge an exported file into the cache");
  imp->add_option("file", path)->required();
  CLI::App *merge = cache->add_subcommand(
      "merge", "Merge another cache directory (or exported file) into this "
               "one");
  merge->add_option("source", path)->required();

  CLI11_PARSE(app, argc, argv);

  Runtime rt;
  bool tty = isatty(fileno(stderr));
  json report = json::array();
  if (*tune) {
    auto kind = parseDeviceKind(device);
    if (!kind)
      return fail(Status(StatusCode::kInvalidArgument,
                         "unknown device '" + device + "'"));
    job.device = *kind;
    auto s = parseShapes(shapes);
    if (!s.ok())
      return fail(s.status());
    job.shapes = *s;
    auto f = parseFixed(fixed);
    if (!f.ok())
      return fail(f.status());
    job.fixed = *f;
    Status st = runJob(rt, job, cacheDir, tty, &report);
    if (!st.isOk())
      return fail(st);
  } else if (*warm) {
    auto jobs = readManifest(manifest);
    if (!jobs.ok())
      return fail(jobs.status());
    auto t0 = std::chrono::steady_clock::now();
    int failed = 0;
    for (size_t i = 0; i < jobs->size(); ++i) {
      if (tty)
        std::fprintf(stderr, "[%zu/%zu] %s.%s\n", i + 1, jobs->size(),
                     (*jobs)[i].file.c_str(), (*jobs)[i].kernel.c_str());
      Status st = runJob(rt, (*jobs)[i], cacheDir, tty, &report);
      if (!st.isOk()) {
        ++failed;
        std::fprintf(stderr, "tessera-tune: %s.%s: %s\n",
                     (*jobs)[i].file.c_str(), (*jobs)[i].kernel.c_str(),
                     st.toString().c_str());
      }
    }
    std::printf(
        "warmup: %zu entries, %d failed, %.2f s\n", jobs->size(), failed,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count());
    if (failed)
      return 1;
  } else {
    auto c = TuningCache::open(cacheDir);
    if (!c.ok())
      return fail(c.status());
    if (*list) {
      for (const TuningRecord &r : (*c)->records())
        std::printf("%s [%s] %s %s: %s  %.4f ms  (%zu evaluated, %s, %.1f s)\n",
                    r.key.kernel.c_str(), describe(r.key.keyValues).c_str(),
                    r.key.device.kind.c_str(), r.key.device.name.c_str(),
                    describe(r.best).c_str(), r.bestStats.medianMs,
                    r.evaluated.size(), r.strategy.c_str(), r.tuningSeconds);
    } else if (*exp) {
      Status st = (*c)->exportTo(path, kernelFilter);
      if (!st.isOk())
        return fail(st);
    } else if (*imp || *merge) {
      auto n = (*c)->importFrom(path);
      if (!n.ok())
        return fail(n.status());
      std::printf("imported %zu records\n", *n);
    }
    for (const std::string &w : (*c)->warnings())
      std::fprintf(stderr, "warning: %s\n", w.c_str());
  }
  if (!jsonOut.empty()) {
    std::ofstream out(jsonOut);
    out << report.dump(2) << "\n";
  }
  return 0;
}
