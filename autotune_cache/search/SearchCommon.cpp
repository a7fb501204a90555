//===- SearchCommon.cpp - Shared machinery of the search strategies -------===//

#include "SearchCommon.h"

namespace tessera::autotune::detail {

//===----------------------------------------------------------------------===//
// Rng
//===----------------------------------------------------------------------===//

static uint64_t splitmix64(uint64_t &x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void Rng::seedWith(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t &s : s_)
    s = splitmix64(x);
}

uint64_t Rng::next() {
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::below(uint64_t n) {
  // Rejection of the biased tail keeps the draw exactly uniform.
  uint64_t limit = ~uint64_t(0) - (~uint64_t(0) % n);
  uint64_t x;
  do
    x = next();
  while (x >= limit);
  return x % n;
}

double Rng::uniform() { return double(next() >> 11) * 0x1.0p-53; }

//===----------------------------------------------------------------------===//
// StrategyBase
//===----------------------------------------------------------------------===//

void StrategyBase::reset(const Space &space, uint64_t seed) {
  space_ = space;
  rng_.seedWith(seed ^ 0x5eed5eed5eed5eedULL);
  observations_.clear();
  observedAt_.clear();
  seen_.clear();
  best_ = -1;
  enumerated_ = space_.cartesianSize() <= kEnumerateLimit
                    ? &space_.validConfigs()
                    : nullptr;
}

void StrategyBase::observe(const Evaluation &evaluation) {
  // Malformed configs and configs outside the restrictions (a stale prior)
  // can never be proposed; they do not steer the search either.
  if (!space_.isValid(evaluation.config))
    return;
  uint64_t idx = space_.index(evaluation.config);
  seen_.insert(idx);
  if (observedAt_.count(idx))
    return; // Observed twice: keep the first.
  Observation obs{evaluation.config, idx, evaluation.score};
  observedAt_[idx] = observations_.size();
  observations_.push_back(obs);
  if (obs.score && (best_ < 0 || *obs.score < *observations_[best_].score))
    best_ = int64_t(observations_.size() - 1);
  onObserve(observations_.back());
}

std::optional<Config> StrategyBase::sampleValid() {
  if (enumerated_) {
    if (enumerated_->empty())
      return std::nullopt;
    return (*enumerated_)[rng_.below(enumerated_->size())];
  }
  if (space_.cartesianSize() == 0)
    return std::nullopt;
  for (int attempt = 0; attempt < 100000; ++attempt) {
    Config c = space_.config(rng_.below(space_.cartesianSize()));
    if (space_.isValid(c))
      return c;
  }
  return std::nullopt;
}

std::optional<Config> StrategyBase::sampleUnseen() {
  if (enumerated_) {
    size_t n = enumerated_->size();
    // Random probes first; when most of the space is seen, a scan from a
    // random start finds the remaining ones.
    for (int attempt = 0; attempt < 64 && n > 0; ++attempt) {
      const Config &c = (*enumerated_)[rng_.below(n)];
      if (!isSeen(space_.index(c)))
        return c;
    }
    if (n == 0)
      return std::nullopt;
    std::vector<size_t> unseen;
    for (size_t i = 0; i < n; ++i)
      if (!isSeen(space_.index((*enumerated_)[i])))
        unseen.push_back(i);
    if (unseen.empty())
      return std::nullopt;
    return (*enumerated_)[unseen[rng_.below(unseen.size())]];
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::optional<Config> c = sampleValid();
    if (!c)
      return std::nullopt;
    if (!isSeen(space_.index(*c)))
      return c;
  }
  return std::nullopt;
}

std::vector<Config> StrategyBase::neighbours(const Config &c,
                                             bool allValues) const {
  std::vector<Config> out;
  const auto &params = space_.params();
  for (size_t p = 0; p < params.size(); ++p) {
    uint32_t n = uint32_t(params[p].values.size());
    if (allValues) {
      for (uint32_t v = 0; v < n; ++v) {
        if (v == c[p])
          continue;
        Config d = c;
        d[p] = v;
        if (space_.isValid(d))
          out.push_back(std::move(d));
      }
      continue;
    }
    for (int dir : {-1, 1}) {
      Config d = c;
      for (int64_t v = int64_t(c[p]) + dir; v >= 0 && v < int64_t(n);
           v += dir) {
        d[p] = uint32_t(v);
        if (space_.isValid(d)) {
          out.push_back(d);
          break;
        }
      }
    }
  }
  return out;
}

std::vector<Config> StrategyBase::propose(size_t n) {
  std::vector<Config> out;
  while (out.size() < n) {
    std::optional<Config> c = next();
    if (!c)
      break;
    markProposed(space_.index(*c));
    out.push_back(std::move(*c));
  }
  return out;
}

} // namespace tessera::autotune::detail
