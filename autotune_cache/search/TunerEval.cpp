//===- TunerEval.cpp - The tuner-eval report ------------------------------===//
//
// Replays each strategy on each Kernel Tuner cache file and prints the mean
// fraction of optimum (t_opt / t_best_found) at each budget next to the
// exact expectation of uniform random search (tessera-tuner-eval and
// tessera-bench tuner-eval).
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/Replay.h"

#include <nlohmann/json.hpp>

#include <cstdio>

using namespace tessera;
using namespace tessera::autotune;

int autotune::runTunerEval(const TunerEvalOptions &o) {
  const std::vector<std::string> &files = o.files;
  const std::vector<std::string> &strategies = o.strategies;
  const std::vector<int64_t> &budgets = o.budgets;
  const int seeds = o.seeds;
  const uint64_t firstSeed = o.firstSeed;
  const std::string &format = o.format;
  for (const std::string &s : strategies)
    if (!makeStrategy(s)) {
      std::fprintf(stderr, "error: unknown strategy '%s'\n", s.c_str());
      return 1;
    }
  for (int64_t b : budgets)
    if (b <= 0) {
      std::fprintf(stderr, "error: budget %lld is not positive\n",
                   (long long)b);
      return 1;
    }

  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  int rc = 0;
  for (const std::string &file : files) {
    StatusOr<ReplaySpace> replay = loadKernelTunerCache(file);
    if (!replay.ok()) {
      std::fprintf(stderr, "error: %s\n", replay.status().toString().c_str());
      rc = 1;
      continue;
    }
    std::vector<double> randomExp;
    for (int64_t b : budgets)
      randomExp.push_back(randomSearchExpectation(replay->sortedTimes, b));
    nlohmann::ordered_json fileJson;
    if (format == "table") {
      std::printf(
          "%s: %s on %s, %zu valid configurations of %zu parameters "
          "(cartesian %llu), optimum %.6g\n",
          file.c_str(), replay->kernelName.c_str(), replay->deviceName.c_str(),
          replay->validCount(), replay->space.numParams(),
          (unsigned long long)replay->space.cartesianSize(), replay->optimum());
      std::printf("  %-22s", "budget");
      for (int64_t b : budgets)
        std::printf(" %8lld", (long long)b);
      std::printf("  %8s\n", "seconds");
      std::printf("  %-22s", "random (exact expect.)");
      for (double v : randomExp)
        std::printf(" %8.4f", v);
      std::printf("\n");
    } else {
      fileJson["file"] = file;
      fileJson["kernel"] = replay->kernelName;
      fileJson["device"] = replay->deviceName;
      fileJson["valid_configs"] = replay->validCount();
      fileJson["optimum"] = replay->optimum();
      fileJson["budgets"] = budgets;
      fileJson["seeds"] = seeds;
      fileJson["random_expectation"] = randomExp;
      fileJson["strategies"] = nlohmann::ordered_json::array();
    }
    for (const std::string &s : strategies) {
      StatusOr<StrategyScore> score =
          evaluateStrategy(*replay, s, budgets, seeds, firstSeed);
      if (!score.ok()) {
        std::fprintf(stderr, "error: %s\n", score.status().toString().c_str());
        return 1;
      }
      if (format == "table") {
        std::printf("  %-22s", s.c_str());
        for (double v : score->mean)
          std::printf(" %8.4f", v);
        std::printf("  %8.1f\n", score->seconds);
        std::printf("  %-22s", "  min / std. error");
        for (size_t k = 0; k < budgets.size(); ++k)
          std::printf(" %.2f/%.3f", score->min[k], score->standardError[k]);
        std::printf("\n");
        std::fflush(stdout);
      } else {
        nlohmann::ordered_json sj;
        sj["name"] = s;
        sj["mean"] = score->mean;
        sj["min"] = score->min;
        sj["standard_error"] = score->standardError;
        sj["seconds"] = score->seconds;
        fileJson["strategies"].push_back(sj);
      }
    }
    if (format == "json")
      out.push_back(fileJson);
  }
  if (format == "json")
    std::printf("%s\n",
                out.dump(2, ' ', false,
                         nlohmann::ordered_json::error_handler_t::replace)
                    .c_str());
  return rc;
}
