//===- Strategy.cpp - Exhaustive and random search, the search driver -----===//
//
// The two baseline strategies, the strategy registry and runSearch().
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/Strategy.h"

#include "SearchCommon.h"

#include <chrono>

namespace tessera::autotune {

Strategy::~Strategy() = default;

namespace {

/// Every valid configuration once, in index order.
class ExhaustiveSearch final : public detail::StrategyBase {
public:
  std::string name() const override { return "exhaustive"; }

  void reset(const Space &space, uint64_t seed) override {
    StrategyBase::reset(space, seed);
    cursor_ = 0;
  }

private:
  std::optional<Config> next() override {
    while (cursor_ < space_.cartesianSize()) {
      uint64_t idx = cursor_++;
      if (isSeen(idx))
        continue;
      Config c = space_.config(idx);
      if (space_.isValid(c))
        return c;
    }
    return std::nullopt;
  }

  uint64_t cursor_ = 0;
};

/// Uniform sampling of valid configurations without replacement.
class RandomSearch final : public detail::StrategyBase {
public:
  std::string name() const override { return "random"; }

private:
  std::optional<Config> next() override { return sampleUnseen(); }
};

} // namespace

std::unique_ptr<Strategy> makeStrategy(std::string_view name) {
  if (name == "exhaustive")
    return std::make_unique<ExhaustiveSearch>();
  if (name == "random")
    return std::make_unique<RandomSearch>();
  if (name == "local")
    return detail::makeLocalSearch();
  if (name == "model" || name == "auto")
    return detail::makeModelSearch();
  return nullptr;
}

std::vector<std::string> strategyNames() {
  return {"exhaustive", "random", "local", "model", "auto"};
}

const Evaluation *bestEvaluation(std::span<const Evaluation> evaluations) {
  const Evaluation *best = nullptr;
  for (const Evaluation &e : evaluations)
    if (e.score && (!best || *e.score < *best->score))
      best = &e;
  return best;
}

std::vector<Evaluation>
runSearch(const Space &space, Strategy &strategy,
          const std::function<Evaluation(const Config &)> &evaluate,
          Budget budget, uint64_t seed, size_t batch,
          std::span<const Evaluation> prior) {
  std::vector<Evaluation> out;
  if (budget.evaluations <= 0 && budget.seconds <= 0)
    return out;
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  strategy.reset(space, seed);
  for (const Evaluation &e : prior)
    strategy.observe(e);
  if (batch == 0)
    batch = 1;
  while (true) {
    size_t n = batch;
    if (budget.evaluations > 0) {
      int64_t left = budget.evaluations - int64_t(out.size());
      if (left <= 0)
        break;
      n = std::min<size_t>(n, size_t(left));
    }
    if (budget.seconds > 0 && elapsed() >= budget.seconds)
      break;
    std::vector<Config> configs = strategy.propose(n);
    if (configs.empty())
      break;
    for (Config &c : configs) {
      Evaluation e = evaluate(c);
      e.config = std::move(c);
      strategy.observe(e);
      out.push_back(std::move(e));
    }
  }
  return out;
}

} // namespace tessera::autotune
