//===- TuningCacheSchema.cpp - JSON schema of the tuning cache ------------===//
//
// Conversion between TuningRecord and the schema-version-1 JSON documents
// (docs/tuning-cache.md), record validation and the merge rules. Every
// nlohmann_json call that can throw is either guarded by a type check or
// inside a try block; nothing leaves this file as an exception.
//
//===----------------------------------------------------------------------===//

#include "TuningCacheSchema.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <unordered_map>

using namespace tessera;
using namespace tessera::autotune;
using namespace tessera::autotune::schema;
using Json = nlohmann::json;

namespace {

/// Documents nested deeper than this are rejected before parsing (a v1
/// document is at most 5 levels deep).
constexpr int kMaxNesting = 32;

//===----------------------------------------------------------------------===//
// Timestamps
//===----------------------------------------------------------------------===//

bool parseDigits(const std::string &s, size_t pos, size_t n, int &out) {
  if (pos + n > s.size())
    return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

std::string validateStats(const TimingStats &s, const char *what) {
  const double values[] = {s.medianMs, s.meanMs, s.minMs, s.stddevMs};
  for (double v : values)
    if (!std::isfinite(v) || v < 0)
      return formatString("%s: timings must be finite and >= 0", what);
  if (s.samples < 1)
    return formatString("%s: samples must be >= 1", what);
  // min <= median and min <= mean hold for any sample set; allow rounding.
  double slack = 1e-9 * std::max(1.0, s.minMs);
  if (s.minMs > s.medianMs + slack || s.minMs > s.meanMs + slack)
    return formatString("%s: minMs exceeds medianMs or meanMs", what);
  return "";
}

bool isZeroStats(const TimingStats &s) {
  return s.medianMs == 0 && s.meanMs == 0 && s.minMs == 0 && s.stddevMs == 0 &&
         s.samples == 0;
}

std::string validateTime(const std::string &t, bool allowEmpty,
                         const char *what) {
  if (t.empty())
    return allowEmpty ? "" : formatString("%s: missing timestamp", what);
  std::optional<std::string> norm = normalizeTimestamp(t);
  if (!norm)
    return formatString("%s: '%s' is not an ISO 8601 UTC timestamp", what,
                        t.c_str());
  if (*norm != t && !allowEmpty)
    return formatString("%s: '%s' is not in canonical form", what, t.c_str());
  return "";
}

//===----------------------------------------------------------------------===//
// JSON -> record
//===----------------------------------------------------------------------===//

/// Reads typed fields out of a JSON object, remembering the first error.
class Reader {
public:
  explicit Reader(std::string &error) : error_(error) {}

  bool failed() const { return !error_.empty(); }
  void fail(std::string msg) {
    if (error_.empty())
      error_ = std::move(msg);
  }

  const Json *field(const Json &obj, const char *name, bool required) {
    auto it = obj.find(name);
    if (it == obj.end()) {
      if (required)
        fail(formatString("missing field '%s'", name));
      return nullptr;
    }
    return &*it;
  }

  void string(const Json &obj, const char *name, std::string &out,
              bool required = true) {
    const Json *v = field(obj, name, required);
    if (!v)
      return;
    if (!v->is_string())
      return fail(formatString("field '%s' must be a string", name));
    out = v->get_ref<const std::string &>();
  }

  void number(const Json &obj, const char *name, double &out) {
    const Json *v = field(obj, name, true);
    if (!v)
      return;
    if (!v->is_number())
      return fail(formatString("field '%s' must be a number", name));
    out = v->get<double>();
  }

  void integer(const Json &obj, const char *name, int64_t &out) {
    const Json *v = field(obj, name, true);
    if (!v)
      return;
    if (v->is_number_unsigned()) {
      if (v->get<uint64_t>() > uint64_t(INT64_MAX))
        return fail(formatString("field '%s' is out of range", name));
      out = int64_t(v->get<uint64_t>());
      return;
    }
    if (!v->is_number_integer())
      return fail(formatString("field '%s' must be an integer", name));
    out = v->get<int64_t>();
  }

  void stringMap(const Json &obj, const char *name,
                 std::map<std::string, std::string> &out) {
    const Json *v = field(obj, name, true);
    if (!v)
      return;
    if (!v->is_object())
      return fail(formatString("field '%s' must be an object", name));
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (!it.value().is_string())
        return fail(
            formatString("'%s.%s' must be a string", name, it.key().c_str()));
      out[it.key()] = it.value().get_ref<const std::string &>();
    }
  }

  void stats(const Json &obj, const char *name, TimingStats &out) {
    const Json *v = field(obj, name, true);
    if (!v)
      return;
    if (!v->is_object())
      return fail(formatString("field '%s' must be an object", name));
    number(*v, "medianMs", out.medianMs);
    number(*v, "meanMs", out.meanMs);
    number(*v, "minMs", out.minMs);
    number(*v, "stddevMs", out.stddevMs);
    integer(*v, "samples", out.samples);
    string(*v, "method", out.method);
  }

private:
  std::string &error_;
};

std::optional<TuningRecord> recordFromJson(const Json &j, std::string &error) {
  Reader r(error);
  if (!j.is_object()) {
    r.fail("a record must be an object");
    return std::nullopt;
  }
  TuningRecord rec;
  const Json *key = r.field(j, "key", true);
  if (key && !key->is_object())
    r.fail("field 'key' must be an object");
  if (!r.failed()) {
    r.string(*key, "kernel", rec.key.kernel);
    r.string(*key, "kernelHash", rec.key.kernelHash);
    r.string(*key, "compilerVersion", rec.key.compilerVersion);
    const Json *dev = r.field(*key, "device", true);
    if (dev && !dev->is_object())
      r.fail("field 'device' must be an object");
    if (!r.failed()) {
      r.string(*dev, "kind", rec.key.device.kind);
      r.string(*dev, "name", rec.key.device.name);
      r.string(*dev, "arch", rec.key.device.arch);
      int64_t sm = 0;
      r.integer(*dev, "smCount", sm);
      if (sm < 0 || sm > INT32_MAX)
        r.fail("'device.smCount' is out of range");
      rec.key.device.smCount = int(sm);
    }
    r.stringMap(*key, "keyValues", rec.key.keyValues);
  }

  if (const Json *space = r.field(j, "space", true)) {
    if (!space->is_object())
      r.fail("field 'space' must be an object");
    else
      for (auto it = space->begin(); it != space->end() && !r.failed(); ++it) {
        if (!it.value().is_array()) {
          r.fail(formatString("'space.%s' must be an array", it.key().c_str()));
          break;
        }
        std::vector<std::string> &labels = rec.space[it.key()];
        for (const Json &label : it.value()) {
          if (!label.is_string()) {
            r.fail(
                formatString("'space.%s' must hold strings", it.key().c_str()));
            break;
          }
          labels.push_back(label.get_ref<const std::string &>());
        }
      }
  }
  r.stringMap(j, "best", rec.best);
  r.stats(j, "bestStats", rec.bestStats);

  if (const Json *evals = r.field(j, "evaluated", true)) {
    if (!evals->is_array())
      r.fail("field 'evaluated' must be an array");
    else
      for (const Json &e : *evals) {
        if (r.failed())
          break;
        if (!e.is_object()) {
          r.fail("an 'evaluated' entry must be an object");
          break;
        }
        EvaluatedConfig ec;
        r.stringMap(e, "config", ec.config);
        if (e.contains("stats")) {
          TimingStats s;
          r.stats(e, "stats", s);
          ec.stats = s;
        }
        r.string(e, "invalidReason", ec.invalidReason, /*required=*/false);
        r.string(e, "measuredAt", ec.measuredAt);
        rec.evaluated.push_back(std::move(ec));
      }
  }
  r.string(j, "strategy", rec.strategy);
  r.number(j, "tuningSeconds", rec.tuningSeconds);
  r.string(j, "updatedAt", rec.updatedAt);
  if (r.failed())
    return std::nullopt;
  // Accept any well-formed ISO 8601 UTC form; hold the canonical one.
  auto canonical = [](std::string &t) {
    if (std::optional<std::string> norm = normalizeTimestamp(t))
      t = *norm;
  };
  canonical(rec.updatedAt);
  for (EvaluatedConfig &e : rec.evaluated)
    canonical(e.measuredAt);
  std::string invalid = validateRecord(rec, /*allowEmptyTimes=*/false);
  if (!invalid.empty()) {
    error = invalid;
    return std::nullopt;
  }
  return rec;
}

//===----------------------------------------------------------------------===//
// record -> JSON
//===----------------------------------------------------------------------===//

Json statsToJson(const TimingStats &s) {
  return Json{{"medianMs", s.medianMs}, {"meanMs", s.meanMs},
              {"minMs", s.minMs},       {"stddevMs", s.stddevMs},
              {"samples", s.samples},   {"method", s.method}};
}

Json recordToJson(const TuningRecord &rec) {
  Json key = {{"kernel", rec.key.kernel},
              {"kernelHash", rec.key.kernelHash},
              {"compilerVersion", rec.key.compilerVersion},
              {"device",
               {{"kind", rec.key.device.kind},
                {"name", rec.key.device.name},
                {"arch", rec.key.device.arch},
                {"smCount", rec.key.device.smCount}}},
              {"keyValues", Json(rec.key.keyValues)}};
  Json space = Json::object();
  for (const auto &[name, labels] : rec.space)
    space[name] = Json(labels);
  Json evals = Json::array();
  for (const EvaluatedConfig &e : rec.evaluated) {
    Json je = {{"config", Json(e.config)}, {"measuredAt", e.measuredAt}};
    if (e.stats)
      je["stats"] = statsToJson(*e.stats);
    else
      je["invalidReason"] = e.invalidReason;
    evals.push_back(std::move(je));
  }
  return Json{{"key", std::move(key)},
              {"space", std::move(space)},
              {"best", Json(rec.best)},
              {"bestStats", statsToJson(rec.bestStats)},
              {"evaluated", std::move(evals)},
              {"strategy", rec.strategy},
              {"tuningSeconds", rec.tuningSeconds},
              {"updatedAt", rec.updatedAt}};
}

/// Nesting depth of `text` counted over brackets outside strings.
int maxNesting(const std::string &text) {
  int depth = 0, maxDepth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '[' || c == '{')
      maxDepth = std::max(maxDepth, ++depth);
    else if (c == ']' || c == '}')
      --depth;
  }
  return maxDepth;
}

void appendLengthPrefixed(std::string &out, const std::string &s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public (to the library) functions
//===----------------------------------------------------------------------===//

std::string schema::nowIso8601() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                now.time_since_epoch())
                .count();
  std::time_t secs = std::time_t(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, int(ms % 1000));
  return buf;
}

std::optional<std::string> schema::normalizeTimestamp(const std::string &t) {
  int year, month, day, hour, minute, second;
  if (!parseDigits(t, 0, 4, year) || t.size() < 20 || t[4] != '-' ||
      !parseDigits(t, 5, 2, month) || t[7] != '-' ||
      !parseDigits(t, 8, 2, day) || t[10] != 'T' ||
      !parseDigits(t, 11, 2, hour) || t[13] != ':' ||
      !parseDigits(t, 14, 2, minute) || t[16] != ':' ||
      !parseDigits(t, 17, 2, second))
    return std::nullopt;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 ||
      minute > 59 || second > 60)
    return std::nullopt;
  size_t pos = 19;
  std::string frac;
  if (t[pos] == '.') {
    ++pos;
    while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9')
      frac += t[pos++];
    if (frac.empty())
      return std::nullopt;
  }
  if (pos + 1 != t.size() || t[pos] != 'Z')
    return std::nullopt;
  frac.resize(3, '0');
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%sZ", year,
                month, day, hour, minute, second, frac.c_str());
  return std::string(buf);
}

std::string schema::validateRecord(const TuningRecord &rec,
                                   bool allowEmptyTimes) {
  const RecordKey &k = rec.key;
  if (k.kernel.empty())
    return "key.kernel is empty";
  if (k.kernelHash.empty())
    return "key.kernelHash is empty";
  if (k.device.kind.empty())
    return "key.device.kind is empty";
  if (k.device.smCount < 0)
    return "key.device.smCount is negative";
  for (const auto &[name, value] : k.keyValues)
    if (name.empty())
      return "key.keyValues has an empty name";
  for (const auto &[name, labels] : rec.space) {
    if (name.empty())
      return "space has an empty parameter name";
    if (labels.empty())
      return formatString("space.%s has no values", name.c_str());
  }
  if (!std::isfinite(rec.tuningSeconds) || rec.tuningSeconds < 0)
    return "tuningSeconds must be finite and >= 0";
  std::string err = validateTime(rec.updatedAt, allowEmptyTimes, "updatedAt");
  if (!err.empty())
    return err;
  for (size_t i = 0; i < rec.evaluated.size(); ++i) {
    const EvaluatedConfig &e = rec.evaluated[i];
    std::string what = formatString("evaluated[%zu]", i);
    if (e.stats && !e.invalidReason.empty())
      return what + ": has both stats and invalidReason";
    if (!e.stats && e.invalidReason.empty())
      return what + ": has neither stats nor invalidReason";
    if (e.stats) {
      err = validateStats(*e.stats, what.c_str());
      if (!err.empty())
        return err;
    }
    err = validateTime(e.measuredAt, allowEmptyTimes, what.c_str());
    if (!err.empty())
      return err;
  }
  if (!rec.best.empty() || !isZeroStats(rec.bestStats)) {
    err = validateStats(rec.bestStats, "bestStats");
    if (!err.empty())
      return err;
    if (!configInSpace(rec.best, rec.space))
      return "best config is not inside the space";
  }
  return "";
}

std::string schema::canonicalKey(const RecordKey &k) {
  std::string out;
  out.reserve(128);
  appendLengthPrefixed(out, k.kernel);
  appendLengthPrefixed(out, k.kernelHash);
  appendLengthPrefixed(out, k.compilerVersion);
  appendLengthPrefixed(out, k.device.kind);
  appendLengthPrefixed(out, k.device.name);
  appendLengthPrefixed(out, k.device.arch);
  out += std::to_string(k.device.smCount);
  out += ';';
  for (const auto &[name, value] : k.keyValues) {
    appendLengthPrefixed(out, name);
    appendLengthPrefixed(out, value);
  }
  return out;
}

std::string
schema::canonicalConfig(const std::map<std::string, std::string> &config) {
  std::string out;
  for (const auto &[name, value] : config) {
    appendLengthPrefixed(out, name);
    appendLengthPrefixed(out, value);
  }
  return out;
}

void schema::recomputeBest(TuningRecord &rec) {
  const EvaluatedConfig *best = nullptr;
  for (const EvaluatedConfig &e : rec.evaluated) {
    if (!e.stats || !configInSpace(e.config, rec.space))
      continue;
    if (!best || e.stats->medianMs < best->stats->medianMs ||
        (e.stats->medianMs == best->stats->medianMs &&
         e.stats->minMs < best->stats->minMs))
      best = &e;
  }
  if (best) {
    rec.best = best->config;
    rec.bestStats = *best->stats;
  } else {
    rec.best.clear();
    rec.bestStats = TimingStats();
  }
}

void schema::normalizeEvaluated(TuningRecord &rec) {
  if (!rec.best.empty() && !isZeroStats(rec.bestStats)) {
    bool found = false;
    for (const EvaluatedConfig &e : rec.evaluated)
      found |= e.config == rec.best;
    if (!found)
      rec.evaluated.push_back(
          EvaluatedConfig{rec.best, rec.bestStats, "", rec.updatedAt});
  }
  std::unordered_map<std::string, size_t> index;
  std::vector<EvaluatedConfig> out;
  out.reserve(rec.evaluated.size());
  for (EvaluatedConfig &e : rec.evaluated) {
    auto [it, inserted] = index.emplace(canonicalConfig(e.config), out.size());
    if (inserted)
      out.push_back(std::move(e));
    else if (e.measuredAt >= out[it->second].measuredAt)
      out[it->second] = std::move(e);
  }
  rec.evaluated = std::move(out);
}

void schema::mergeRecord(TuningRecord &existing, const TuningRecord &incoming,
                         MergeMode mode) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < existing.evaluated.size(); ++i)
    index.emplace(canonicalConfig(existing.evaluated[i].config), i);
  for (const EvaluatedConfig &e : incoming.evaluated) {
    auto it = index.find(canonicalConfig(e.config));
    if (it == index.end()) {
      index.emplace(canonicalConfig(e.config), existing.evaluated.size());
      existing.evaluated.push_back(e);
    } else if (e.measuredAt >= existing.evaluated[it->second].measuredAt) {
      existing.evaluated[it->second] = e;
    }
  }
  bool takeIncoming =
      mode == MergeMode::kStore || incoming.updatedAt >= existing.updatedAt;
  if (takeIncoming) {
    existing.space = incoming.space;
    existing.strategy = incoming.strategy;
    existing.tuningSeconds = incoming.tuningSeconds;
  }
  existing.updatedAt = std::max(existing.updatedAt, incoming.updatedAt);
  recomputeBest(existing);
}

ParsedDocument schema::parseDocument(const std::string &text) {
  ParsedDocument doc;
  try {
    if (maxNesting(text) > kMaxNesting) {
      doc.error = "nested too deeply";
      return doc;
    }
    Json j = Json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      doc.error = "not valid JSON (garbage or truncated)";
      return doc;
    }
    if (!j.is_object()) {
      doc.error = "the document is not a JSON object";
      return doc;
    }
    auto format = j.find("format");
    if (format == j.end() || !format->is_string() ||
        format->get_ref<const std::string &>() != kFormatName) {
      doc.error = formatString("'format' is not \"%s\"", kFormatName);
      return doc;
    }
    auto version = j.find("schemaVersion");
    if (version == j.end() || !version->is_number_integer()) {
      doc.error = "'schemaVersion' is missing or not an integer";
      return doc;
    }
    doc.version = version->is_number_unsigned()
                      ? int64_t(std::min<uint64_t>(version->get<uint64_t>(),
                                                   uint64_t(INT64_MAX)))
                      : version->get<int64_t>();
    if (doc.version != TuningCache::kSchemaVersion) {
      doc.state = ParsedDocument::State::kUnknownVersion;
      doc.error =
          formatString("schemaVersion %lld (this build reads %d)",
                       (long long)doc.version, TuningCache::kSchemaVersion);
      return doc;
    }
    for (const char *name : {"kernel", "kernelHash"}) {
      auto it = j.find(name);
      if (it == j.end())
        continue;
      if (!it->is_string()) {
        doc.error = formatString("'%s' is not a string", name);
        return doc;
      }
      (std::string(name) == "kernel" ? doc.kernel : doc.kernelHash) =
          it->get_ref<const std::string &>();
    }
    auto records = j.find("records");
    if (records == j.end() || !records->is_array()) {
      doc.error = "'records' is missing or not an array";
      return doc;
    }
    std::unordered_map<std::string, size_t> index;
    size_t i = 0;
    for (const Json &jr : *records) {
      std::string error;
      std::optional<TuningRecord> rec = recordFromJson(jr, error);
      if (rec && !doc.kernel.empty() &&
          (rec->key.kernel != doc.kernel ||
           rec->key.kernelHash != doc.kernelHash)) {
        error = "its kernel identity differs from the file's";
        rec.reset();
      }
      if (!rec) {
        doc.recordWarnings.push_back(
            formatString("record %zu skipped: %s", i, error.c_str()));
      } else {
        auto [it, inserted] =
            index.emplace(canonicalKey(rec->key), doc.records.size());
        if (inserted) {
          doc.records.push_back(std::move(*rec));
        } else {
          doc.recordWarnings.push_back(formatString(
              "record %zu duplicates an earlier key; merged into it", i));
          mergeRecord(doc.records[it->second], *rec, MergeMode::kImport);
        }
      }
      ++i;
    }
    doc.state = ParsedDocument::State::kOk;
    return doc;
  } catch (const std::exception &e) {
    doc = ParsedDocument();
    doc.error = std::string("unexpected JSON error: ") + e.what();
    return doc;
  } catch (...) {
    doc = ParsedDocument();
    doc.error = "unexpected error while parsing";
    return doc;
  }
}

std::string
schema::serializeDocument(const std::vector<const TuningRecord *> &records,
                          const std::string &kernel,
                          const std::string &kernelHash) {
  Json doc = {{"format", kFormatName},
              {"schemaVersion", TuningCache::kSchemaVersion}};
  if (!kernel.empty()) {
    doc["kernel"] = kernel;
    doc["kernelHash"] = kernelHash;
  }
  Json list = Json::array();
  for (const TuningRecord *rec : records)
    list.push_back(recordToJson(*rec));
  doc["records"] = std::move(list);
  // Invalid UTF-8 in caller strings is replaced rather than thrown on.
  return doc.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

bool tessera::autotune::configInSpace(
    const std::map<std::string, std::string> &config,
    const std::map<std::string, std::vector<std::string>> &space) {
  if (space.empty())
    return true;
  if (config.size() != space.size())
    return false;
  for (const auto &[name, value] : config) {
    auto it = space.find(name);
    if (it == space.end() || std::find(it->second.begin(), it->second.end(),
                                       value) == it->second.end())
      return false;
  }
  return true;
}
