//===- SearchCommon.h - Shared search machinery -----------------*- C++ -*-===//
//
// Internal to TesseraAutotuneSearch: a portable deterministic random number
// generator, the bookkeeping every strategy needs (what was proposed, what
// was observed, the best so far), uniform sampling of valid configurations
// and the neighbourhood used by local moves.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_AUTOTUNE_SEARCH_SEARCHCOMMON_H
#define TESSERA_AUTOTUNE_SEARCH_SEARCHCOMMON_H

#include "tessera/autotune/Strategy.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tessera::autotune::detail {

/// xoshiro256** seeded through splitmix64: the same stream on every
/// platform (the std distributions are implementation-defined).
class Rng {
public:
  explicit Rng(uint64_t seed = 0) { seedWith(seed); }
  void seedWith(uint64_t seed);
  uint64_t next();
  /// Uniform in [0, n); n > 0.
  uint64_t below(uint64_t n);
  /// Uniform in [0, 1).
  double uniform();

private:
  uint64_t s_[4];
};

/// Spaces up to this cartesian size are enumerated for sampling; larger
/// ones are sampled by rejection.
constexpr uint64_t kEnumerateLimit = uint64_t(1) << 22;

/// Bookkeeping shared by the strategies: subclasses call the base reset()
/// and observe() and use the helpers.
class StrategyBase : public Strategy {
public:
  void reset(const Space &space, uint64_t seed) override;
  void observe(const Evaluation &evaluation) override;
  /// Up to `n` configurations from next(), each recorded as proposed.
  std::vector<Config> propose(size_t n) override;

protected:
  /// The next configuration to propose (valid, not seen), or nullopt when
  /// the strategy is done.
  virtual std::optional<Config> next() = 0;

  struct Observation {
    Config config;
    uint64_t index;
    std::optional<double> score;
  };

  /// Called by observe() after the bookkeeping.
  virtual void onObserve(const Observation &obs) {}

  /// Proposed or observed (never propose again).
  bool isSeen(uint64_t index) const { return seen_.count(index) != 0; }
  /// Records a proposal.
  void markProposed(uint64_t index) { seen_.insert(index); }

  /// A uniformly random valid configuration that was not seen, nullopt if
  /// none could be found (exhausted space, or rejection sampling of a huge
  /// sparse space gave up).
  std::optional<Config> sampleUnseen();
  /// A uniformly random valid configuration, seen or not.
  std::optional<Config> sampleValid();

  /// Configurations one parameter away from `c`: for each parameter and
  /// direction, the nearest value index whose configuration is valid. With
  /// `allValues`, every other value of each parameter instead.
  std::vector<Config> neighbours(const Config &c, bool allValues) const;

  /// Index of the best observation in observations_, or -1.
  int64_t bestObservation() const { return best_; }

  Space space_;
  Rng rng_;
  std::vector<Observation> observations_;
  std::unordered_map<uint64_t, size_t> observedAt_;
  /// Valid configurations when the space is small enough to enumerate.
  const std::vector<Config> *enumerated_ = nullptr;

private:
  std::unordered_set<uint64_t> seen_;
  int64_t best_ = -1;
};

/// Factories of the strategies defined in their own files.
std::unique_ptr<Strategy> makeLocalSearch();
std::unique_ptr<Strategy> makeModelSearch();

} // namespace tessera::autotune::detail

#endif // TESSERA_AUTOTUNE_SEARCH_SEARCHCOMMON_H
