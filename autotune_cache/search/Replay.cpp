//===- Replay.cpp - Replaying strategies on measured tuning spaces --------===//
//
// Loading Kernel Tuner cache files, replaying strategies against the
// recorded times, and the exact expectation of random search.
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/Replay.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

namespace tessera::autotune {

using Json = nlohmann::ordered_json;

std::optional<double> ReplaySpace::time(const Config &config) const {
  if (!times || !space.isValid(config))
    return std::nullopt;
  auto it = times->find(space.index(config));
  if (it == times->end())
    return std::nullopt;
  return it->second;
}

/// Reads a whole gzip-compressed or plain file (zlib reads plain files
/// transparently).
static StatusOr<std::string> readMaybeGzipped(const std::string &path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    return notFound("cannot open '%s': %s", path.c_str(),
                    errno ? std::strerror(errno) : "gzopen failed");
  std::string text;
  char buf[1 << 16];
  while (true) {
    int n = gzread(f, buf, sizeof(buf));
    if (n < 0) {
      int err = 0;
      std::string msg = gzerror(f, &err);
      gzclose(f);
      return dataLoss("cannot read '%s': %s", path.c_str(), msg.c_str());
    }
    if (n == 0)
      break;
    text.append(buf, size_t(n));
  }
  int err = 0;
  const char *msg = gzerror(f, &err);
  if (err != Z_OK && err != Z_STREAM_END) {
    std::string m = msg ? msg : "";
    gzclose(f);
    return dataLoss("cannot read '%s': %s", path.c_str(), m.c_str());
  }
  if (gzclose(f) != Z_OK)
    return dataLoss("cannot read '%s': truncated or corrupt gzip stream",
                    path.c_str());
  return text;
}

/// Kernel Tuner writes keys with Python's str(): True/False for booleans.
static std::string labelOf(const Json &v) {
  if (v.is_boolean())
    return v.get<bool>() ? "True" : "False";
  if (v.is_string())
    return v.get<std::string>();
  return v.dump();
}

static StatusOr<ReplaySpace> parseImpl(std::string_view text,
                                       const std::string &path) {
  Json doc = Json::parse(text.begin(), text.end(), nullptr,
                         /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return dataLoss("'%s' is not valid JSON (corrupt or truncated)",
                    path.c_str());
  if (!doc.is_object())
    return invalidArgument("'%s': not a Kernel Tuner cache file (top level "
                           "is not an object)",
                           path.c_str());
  auto tp = doc.find("tune_params");
  auto cache = doc.find("cache");
  if (tp == doc.end() || !tp->is_object() || tp->empty())
    return invalidArgument("'%s': not a Kernel Tuner cache file (no "
                           "tune_params object)",
                           path.c_str());
  if (cache == doc.end() || !cache->is_object())
    return invalidArgument("'%s': not a Kernel Tuner cache file (no cache "
                           "object)",
                           path.c_str());

  // Parameter order: tune_params_keys, else the order of tune_params.
  std::vector<std::string> names;
  auto keys = doc.find("tune_params_keys");
  if (keys != doc.end()) {
    if (!keys->is_array())
      return invalidArgument("'%s': tune_params_keys is not an array",
                             path.c_str());
    for (const Json &k : *keys) {
      if (!k.is_string())
        return invalidArgument("'%s': tune_params_keys holds a non-string",
                               path.c_str());
      names.push_back(k.get<std::string>());
    }
  } else {
    for (auto it = tp->begin(); it != tp->end(); ++it)
      names.push_back(it.key());
  }

  std::vector<Parameter> params;
  std::vector<const Json *> rawValues;
  for (const std::string &name : names) {
    auto v = tp->find(name);
    if (v == tp->end() || !v->is_array() || v->empty())
      return invalidArgument("'%s': parameter '%s' has no value list",
                             path.c_str(), name.c_str());
    Parameter p;
    p.name = name;
    for (size_t i = 0; i < v->size(); ++i) {
      const Json &e = (*v)[i];
      if (e.is_boolean())
        p.values.push_back(e.get<bool>() ? 1.0 : 0.0);
      else if (e.is_number())
        p.values.push_back(e.get<double>());
      else
        p.values.push_back(double(i));
      p.labels.push_back(labelOf(e));
    }
    params.push_back(std::move(p));
    rawValues.push_back(&*v);
  }
  double logSize = 0;
  for (const Parameter &p : params)
    logSize += std::log2(double(p.values.size()));
  if (logSize >= 63)
    return unimplemented("'%s': the cartesian product of the parameters is "
                         "too large",
                         path.c_str());

  ReplaySpace out;
  out.path = path;
  if (auto k = doc.find("kernel_name"); k != doc.end() && k->is_string())
    out.kernelName = k->get<std::string>();
  if (auto d = doc.find("device_name"); d != doc.end() && d->is_string())
    out.deviceName = d->get<std::string>();
  Space tmp(params);
  auto times = std::make_shared<std::unordered_map<uint64_t, double>>();

  for (auto it = cache->begin(); it != cache->end(); ++it) {
    const Json &entry = it.value();
    if (!entry.is_object())
      return invalidArgument("'%s': cache entry '%s' is not an object",
                             path.c_str(), it.key().c_str());
    // Split the key for parameters the entry does not repeat.
    std::vector<std::string> tokens;
    {
      const std::string &key = it.key();
      size_t pos = 0;
      while (true) {
        size_t comma = key.find(',', pos);
        tokens.push_back(key.substr(pos, comma - pos));
        if (comma == std::string::npos)
          break;
        pos = comma + 1;
      }
    }
    Config c(params.size());
    for (size_t p = 0; p < params.size(); ++p) {
      int64_t found = -1;
      auto field = entry.find(params[p].name);
      if (field != entry.end()) {
        for (size_t i = 0; i < rawValues[p]->size() && found < 0; ++i)
          if ((*rawValues[p])[i] == *field)
            found = int64_t(i);
      } else if (tokens.size() == params.size()) {
        for (size_t i = 0; i < params[p].labels.size() && found < 0; ++i)
          if (params[p].labels[i] == tokens[p])
            found = int64_t(i);
      }
      if (found < 0)
        return invalidArgument("'%s': cache entry '%s': the value of '%s' is "
                               "not in its tune_params list",
                               path.c_str(), it.key().c_str(),
                               params[p].name.c_str());
      c[p] = uint32_t(found);
    }
    auto t = entry.find("time");
    if (t == entry.end() || !t->is_number()) {
      ++out.failedEntries;
      continue;
    }
    double time = t->get<double>();
    if (!std::isfinite(time) || time <= 0) {
      ++out.failedEntries;
      continue;
    }
    times->emplace(tmp.index(c), time);
  }
  if (times->empty())
    return invalidArgument("'%s': no configuration has a numeric time",
                           path.c_str());

  out.sortedTimes.reserve(times->size());
  for (const auto &[idx, t] : *times)
    out.sortedTimes.push_back(t);
  std::sort(out.sortedTimes.begin(), out.sortedTimes.end());
  std::shared_ptr<const std::unordered_map<uint64_t, double>> shared = times;
  out.times = shared;
  Space base = tmp;
  out.space = Space(std::move(params), [shared, base](const Config &c) {
    return shared->count(base.index(c)) != 0;
  });
  return out;
}

StatusOr<ReplaySpace> parseKernelTunerCache(std::string_view text,
                                            const std::string &path) {
  // The parser runs without exceptions; this guards any left in the JSON
  // library's accessors so that none escapes the API.
  try {
    return parseImpl(text, path);
  } catch (const std::exception &e) {
    return invalidArgument("'%s': unexpected content: %s", path.c_str(),
                           e.what());
  }
}

StatusOr<ReplaySpace> loadKernelTunerCache(const std::string &path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, readMaybeGzipped(path));
  return parseKernelTunerCache(text, path);
}

StatusOr<StrategyScore> evaluateStrategy(const ReplaySpace &replay,
                                         std::string_view strategyName,
                                         const std::vector<int64_t> &budgets,
                                         int seeds, uint64_t firstSeed) {
  std::unique_ptr<Strategy> strategy = makeStrategy(strategyName);
  if (!strategy)
    return invalidArgument("unknown strategy '%.*s'", int(strategyName.size()),
                           strategyName.data());
  if (budgets.empty())
    return invalidArgument("no budgets");
  for (int64_t b : budgets)
    if (b <= 0)
      return invalidArgument("budget %lld is not positive", (long long)b);
  if (seeds <= 0)
    return invalidArgument("seed count %d is not positive", seeds);
  if (replay.sortedTimes.empty())
    return failedPrecondition("the replay space has no valid configuration");

  auto start = std::chrono::steady_clock::now();
  int64_t maxBudget = *std::max_element(budgets.begin(), budgets.end());
  double opt = replay.optimum();
  size_t nb = budgets.size();
  std::vector<double> sum(nb, 0), sum2(nb, 0),
      mn(nb, std::numeric_limits<double>::infinity());
  auto evaluate = [&](const Config &c) {
    Evaluation e;
    e.config = c;
    e.score = replay.time(c);
    if (!e.score)
      e.invalidReason = "not in the measured space";
    return e;
  };
  for (int s = 0; s < seeds; ++s) {
    std::vector<Evaluation> evals =
        runSearch(replay.space, *strategy, evaluate, Budget{maxBudget, 0},
                  firstSeed + uint64_t(s));
    // Best so far after each prefix.
    std::vector<double> bestAt(evals.size());
    double best = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < evals.size(); ++i) {
      if (evals[i].score)
        best = std::min(best, *evals[i].score);
      bestAt[i] = best;
    }
    for (size_t k = 0; k < nb; ++k) {
      size_t upto = std::min<size_t>(size_t(budgets[k]), evals.size());
      double frac = upto ? opt / bestAt[upto - 1] : 0.0;
      if (!std::isfinite(frac))
        frac = 0;
      sum[k] += frac;
      sum2[k] += frac * frac;
      mn[k] = std::min(mn[k], frac);
    }
  }
  StrategyScore out;
  out.strategy = std::string(strategyName);
  out.budgets = budgets;
  out.seeds = seeds;
  for (size_t k = 0; k < nb; ++k) {
    double m = sum[k] / seeds;
    double var =
        seeds > 1 ? std::max(0.0, (sum2[k] - seeds * m * m) / (seeds - 1)) : 0;
    out.mean.push_back(m);
    out.min.push_back(mn[k]);
    out.standardError.push_back(std::sqrt(var / seeds));
  }
  out.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return out;
}

double randomSearchExpectation(const std::vector<double> &times,
                               int64_t budget) {
  if (times.empty() || budget <= 0)
    return 0;
  std::vector<double> t = times;
  std::sort(t.begin(), t.end());
  int64_t n = int64_t(t.size());
  if (budget >= n)
    return 1;
  // P(best of B draws has rank k) = C(n-k, B-1) / C(n, B), k = 1..n-B+1.
  auto logChoose = [](int64_t a, int64_t b) {
    return std::lgamma(double(a) + 1) - std::lgamma(double(b) + 1) -
           std::lgamma(double(a - b) + 1);
  };
  double logTotal = logChoose(n, budget);
  double e = 0;
  for (int64_t k = 1; k <= n - budget + 1; ++k) {
    double p = std::exp(logChoose(n - k, budget - 1) - logTotal);
    e += p * (t[0] / t[size_t(k - 1)]);
  }
  return e;
}

} // namespace tessera::autotune
