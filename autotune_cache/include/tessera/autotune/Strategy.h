//===- Strategy.h - Autotuning search strategies and budgets ----*- C++ -*-===//
//
// Search strategies follow an ask/tell protocol: the driver asks for
// candidate configurations with propose(), measures them, and reports each
// result with observe(). Strategies are deterministic for a given seed and
// accept prior evaluations (a resumed or warm-started search) through
// observe() before the first propose().
// Plain C++: no LLVM, MLIR or CUDA types.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_AUTOTUNE_STRATEGY_H
#define TESSERA_AUTOTUNE_STRATEGY_H

#include "tessera/autotune/Space.h"

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::autotune {

/// The result of evaluating one config: a score (lower is better, e.g. median
/// ms) or invalid with a reason (failed to compile, wrong answer, too much
/// shared memory...). A score must be finite; strategies that model the
/// score in log space treat non-positive scores as tiny positive ones.
struct Evaluation {
  Config config;
  std::optional<double> score;
  std::string invalidReason;
};

/// Limits of a search. 0 = no limit for that dimension; at least one must be
/// set. `evaluations` counts every evaluated configuration, invalid ones
/// included (as in real tuning, a configuration that fails to compile or
/// verify still costs a compile); `seconds` is wall-clock time of the whole
/// search (evaluations and strategy), checked before each batch.
struct Budget {
  int64_t evaluations = 0;
  double seconds = 0;
};

/// Ask/tell strategy. `propose` returns up to `n` distinct, valid,
/// not-yet-evaluated (and not pending) configs (n > 1 lets the tuner compile
/// candidates in parallel ahead of measuring); fewer (or none) when the
/// strategy is done or the space exhausted. `observe` is called once per
/// proposed config with its evaluation, in any order; evaluations of configs
/// that were never proposed (priors) are accepted too, before or between
/// proposals, and are never proposed again.
class Strategy {
public:
  virtual ~Strategy();
  virtual std::string name() const = 0;
  /// Forgets everything and starts a new search over `space`. The strategy
  /// keeps a copy of `space` (cheap: the enumeration cache is shared).
  virtual void reset(const Space &space, uint64_t seed) = 0;
  virtual std::vector<Config> propose(size_t n) = 0;
  virtual void observe(const Evaluation &evaluation) = 0;
};

/// "exhaustive", "random", "local" (iterated local search), "model"
/// (random-forest surrogate with expected improvement) and "auto" (the
/// recommended default, currently the model-based search); nullptr for an
/// unknown name.
std::unique_ptr<Strategy> makeStrategy(std::string_view name);

/// The names makeStrategy accepts.
std::vector<std::string> strategyNames();

/// Drives `strategy` over `space` until the budget is spent or the strategy
/// stops proposing: reset(space, seed), observe every `prior` evaluation
/// (they cost nothing and are not returned), then repeatedly propose up to
/// `batch` configs, evaluate them serially with `evaluate` and observe the
/// results. Invalid evaluations count against the evaluation budget. The
/// `config` of each returned Evaluation is the proposed config, whatever
/// `evaluate` put there. Returns every new evaluation in order; an empty
/// result if the budget sets no limit (both fields 0).
std::vector<Evaluation>
runSearch(const Space &space, Strategy &strategy,
          const std::function<Evaluation(const Config &)> &evaluate,
          Budget budget, uint64_t seed, size_t batch = 1,
          std::span<const Evaluation> prior = {});

/// The evaluation with the lowest score among `evaluations` (invalid ones
/// never win); nullptr if none has a score. Ties go to the earliest.
const Evaluation *bestEvaluation(std::span<const Evaluation> evaluations);

} // namespace tessera::autotune

#endif // TESSERA_AUTOTUNE_STRATEGY_H
