//===- LocalSearch.cpp - Iterated local search ----------------------------===//
//
// First-improvement hill climbing over the "one parameter moved to the
// nearest valid value up or down" neighbourhood, iterated: at a local
// minimum the search restarts from a perturbation of the best configuration
// found so far (a few parameters set to random values), or, now and then,
// from a uniformly random configuration.
//
//===----------------------------------------------------------------------===//

#include "SearchCommon.h"

#include <algorithm>

namespace tessera::autotune::detail {
namespace {

class LocalSearch final : public StrategyBase {
public:
  std::string name() const override { return "local"; }

  void reset(const Space &space, uint64_t seed) override {
    StrategyBase::reset(space, seed);
    center_ = -1;
    queue_.clear();
    starts_.clear();
  }

private:
  /// Probability of a uniformly random restart instead of a perturbation of
  /// the best configuration.
  static constexpr double kRestartProbability = 0.2;

  void onObserve(const Observation &obs) override {
    bool wasStart = starts_.erase(obs.index) != 0;
    if (!obs.score)
      return;
    // Accept a new start unconditionally; otherwise move on improvement
    // (first improvement).
    if (wasStart ||
        (center_ >= 0 && *obs.score < *observations_[center_].score))
      setCenter(int64_t(observedAt_[obs.index]));
  }

  void setCenter(int64_t obs) {
    center_ = obs;
    queue_ = neighbours(observations_[obs].config, /*allValues=*/false);
    // Shuffle so that ties between directions do not bias the walk.
    for (size_t i = queue_.size(); i > 1; --i)
      std::swap(queue_[i - 1], queue_[rng_.below(i)]);
  }

  std::optional<Config> next() override {
    if (center_ < 0) {
      // Waiting for the start of the climb: fill the batch randomly.
      if (!starts_.empty())
        return sampleUnseen();
      // A warm start (or a failed start) climbs from the best observation.
      if (bestObservation() < 0)
        return newStart(/*random=*/true);
      setCenter(bestObservation());
    }
    while (!queue_.empty()) {
      Config c = std::move(queue_.back());
      queue_.pop_back();
      uint64_t idx = space_.index(c);
      auto it = observedAt_.find(idx);
      if (it != observedAt_.end()) {
        // Known already: move there for free if it is better.
        const Observation &o = observations_[it->second];
        if (o.score && *o.score < *observations_[center_].score)
          setCenter(int64_t(it->second));
        continue;
      }
      if (isSeen(idx))
        continue; // Pending.
      return c;
    }
    // A local minimum (or neighbours still pending): restart.
    return newStart(rng_.uniform() < kRestartProbability);
  }

  /// A new starting point: a perturbation of the best configuration (2 or 3
  /// parameters set to random values) or a random configuration.
  std::optional<Config> newStart(bool random) {
    std::optional<Config> start;
    int64_t best = bestObservation();
    if (!random && best >= 0) {
      const Config &b = observations_[best].config;
      size_t np = space_.numParams();
      for (int attempt = 0; attempt < 200 && !start; ++attempt) {
        Config c = b;
        int changes = 2 + int(rng_.below(2));
        for (int k = 0; k < changes; ++k) {
          size_t p = rng_.below(np);
          c[p] = uint32_t(rng_.below(space_.params()[p].values.size()));
        }
        if (space_.isValid(c) && !isSeen(space_.index(c)))
          start = std::move(c);
      }
    }
    if (!start)
      start = sampleUnseen();
    if (start) {
      starts_.insert(space_.index(*start));
      center_ = -1;
      queue_.clear();
    }
    return start;
  }

  int64_t center_ = -1;
  std::vector<Config> queue_;
  /// Proposed starting points not observed yet.
  std::unordered_set<uint64_t> starts_;
};

} // namespace

std::unique_ptr<Strategy> makeLocalSearch() {
  return std::make_unique<LocalSearch>();
}

} // namespace tessera::autotune::detail
