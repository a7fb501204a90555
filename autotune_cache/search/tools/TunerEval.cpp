//===- TunerEval.cpp - Score search strategies on measured spaces ---------===//
//
// tessera-tuner-eval FILE... [--strategies random,local,model,auto]
//     [--budgets 25,50,100,200,400] [--seeds 100] [--format table|json]
//
// Replays each strategy on each Kernel Tuner cache file and prints the mean
// fraction of optimum (t_opt / t_best_found) at each budget next to the
// exact expectation of uniform random search.
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/Replay.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

using namespace tessera;
using namespace tessera::autotune;

int main(int argc, char **argv) {
  CLI::App app{"Replays autotuning search strategies on exhaustively "
               "measured tuning spaces (Kernel Tuner cache files)"};
  std::vector<std::string> files;
  std::vector<std::string> strategies = {"random", "local", "model", "auto"};
  std::vector<int64_t> budgets = {25, 50, 100, 200, 400};
  int seeds = 100;
  uint64_t firstSeed = 0;
  std::string format = "table";
  app.add_option("files", files, "Kernel Tuner cache files (.json or .json.gz)")
      ->required();
  app.add_option("--strategies", strategies, "Strategies to replay")
      ->delimiter(',');
  app.add_option("--budgets", budgets, "Budgets (distinct evaluations)")
      ->delimiter(',');
  app.add_option("--seeds", seeds, "Seeds per strategy")
      ->check(CLI::PositiveNumber);
  app.add_option("--first-seed", firstSeed, "First seed");
  app.add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"table", "json"}));
  CLI11_PARSE(app, argc, argv);

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
    if (!replay.isOk()) {
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
      if (!score.isOk()) {
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
    std::cout << out.dump(2, ' ', false,
                          nlohmann::ordered_json::error_handler_t::replace)
              << "\n";
  return rc;
}
