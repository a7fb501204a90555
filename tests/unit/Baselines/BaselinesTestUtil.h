//===- BaselinesTestUtil.h - Shared helpers of the baseline tests -*- C++
//-*-===//

#ifndef TESSERA_TESTS_UNIT_BASELINES_BASELINESTESTUTIL_H
#define TESSERA_TESTS_UNIT_BASELINES_BASELINESTESTUTIL_H

#include <random>
#include <vector>

namespace tessera::bench::baselinetest {

/// `n` floats uniform in [lo, hi) from `seed`.
inline std::vector<float> randomVector(size_t n, unsigned seed,
                                       float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float &x : v)
    x = dist(rng);
  return v;
}

} // namespace tessera::bench::baselinetest

#endif // TESSERA_TESTS_UNIT_BASELINES_BASELINESTESTUTIL_H
