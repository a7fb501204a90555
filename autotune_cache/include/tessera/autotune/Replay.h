//===- Replay.h - Replaying strategies on measured spaces -------*- C++ -*-===//
//
// Offline evaluation of search strategies: an exhaustively measured tuning
// space (a Kernel Tuner cache file) is loaded into a Space plus a table of
// times, and a strategy is replayed against the table over many seeds. The
// usual metric is the fraction of optimum at budget B: t_opt / t_best_found
// after B distinct evaluations, averaged over seeds.
// Plain C++: no LLVM, MLIR or CUDA types.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_AUTOTUNE_REPLAY_H
#define TESSERA_AUTOTUNE_REPLAY_H

#include "tessera/Support/Status.h"
#include "tessera/autotune/Space.h"
#include "tessera/autotune/Strategy.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tessera::autotune {

/// A measured tuning space. `space`'s validity predicate is "present in the
/// file with a numeric time"; absent configurations (restricted) and those
/// whose time is a string (failed to compile or run) are invalid.
struct ReplaySpace {
  std::string path;
  std::string kernelName;
  std::string deviceName;
  Space space;
  /// Time (ms) of each valid configuration, keyed by Space::index. Shared
  /// with the validity predicate of `space`.
  std::shared_ptr<const std::unordered_map<uint64_t, double>> times;
  /// Every valid time, ascending.
  std::vector<double> sortedTimes;
  /// Entries of the file whose time is not a number.
  size_t failedEntries = 0;

  size_t validCount() const { return sortedTimes.size(); }
  double optimum() const { return sortedTimes.front(); }
  /// The measured time of `config`; nullopt if it is invalid.
  std::optional<double> time(const Config &config) const;
};

/// Loads a Kernel Tuner cache file (gzip-compressed or plain JSON). A
/// missing, corrupt, truncated or unexpected file (no tune_params, keys that
/// do not match the parameter values, no valid time at all) is a Status
/// error.
StatusOr<ReplaySpace> loadKernelTunerCache(const std::string &path);

/// Parses the text of a Kernel Tuner cache file; `path` only names it in
/// messages and in the result.
StatusOr<ReplaySpace> parseKernelTunerCache(std::string_view text,
                                            const std::string &path);

/// Fraction-of-optimum statistics of one strategy, one entry per budget.
struct StrategyScore {
  std::string strategy;
  std::vector<int64_t> budgets;
  std::vector<double> mean;
  std::vector<double> min;
  std::vector<double> standardError;
  int seeds = 0;
  /// Wall-clock seconds of the whole replay.
  double seconds = 0;
};

/// Replays a fresh strategy from `makeStrategy(strategyName)` with seeds
/// `firstSeed`, ..., `firstSeed + seeds - 1`, each run up to the largest
/// budget (distinct evaluations), and reports t_opt / t_best_found after
/// each budget. A strategy that stops early keeps its best. Errors: unknown
/// strategy name, no budgets, a non-positive budget or seed count.
StatusOr<StrategyScore> evaluateStrategy(const ReplaySpace &replay,
                                         std::string_view strategyName,
                                         const std::vector<int64_t> &budgets,
                                         int seeds, uint64_t firstSeed = 0);

/// The exact expected fraction of optimum (min(times) / best found) of
/// uniform random sampling without replacement of `budget` entries of
/// `times` (all positive). Computed from the rank distribution of the best
/// sample (hypergeometric probabilities, in log space). A budget >= the
/// number of times gives 1.
double randomSearchExpectation(const std::vector<double> &times,
                               int64_t budget);

/// What the tuner-eval report replays.
struct TunerEvalOptions {
  std::vector<std::string> files;
  std::vector<std::string> strategies = {"random", "local", "model", "auto"};
  std::vector<int64_t> budgets = {25, 50, 100, 200, 400};
  int seeds = 100;
  uint64_t firstSeed = 0;
  std::string format = "table"; ///< "table" or "json"
};

/// The tuner-eval report on stdout: for each file and strategy, the mean
/// (min, standard error) fraction of optimum at each budget next to the
/// exact expectation of random search; errors on stderr. Returns the exit
/// status: 1 when a file cannot be read or a strategy or budget is invalid.
int runTunerEval(const TunerEvalOptions &options);

} // namespace tessera::autotune

#endif // TESSERA_AUTOTUNE_REPLAY_H
