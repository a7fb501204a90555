//===- BenchTestUtil.h - Synthetic bench results ----------------*- C++ -*-===//
//-*-===//

#ifndef TESSERA_TESTS_BENCHCORE_BENCHTESTUTIL_H
#define TESSERA_TESTS_BENCHCORE_BENCHTESTUTIL_H

#include "tessera/bench/Result.h"
#include "tessera/bench/Stats.h"

#include <string>
#include <vector>

namespace tessera::bench::testing {

/// 3 * `repeats` samples: median * (1 - spread), median, median * (1 +
/// spread), repeated; the median and the mean are both `median`.
inline std::vector<double> spreadSamples(double median, double spread,
                                         int repeats = 10) {
  std::vector<double> v;
  for (int i = 0; i < repeats; ++i) {
    v.push_back(median * (1 - spread));
    v.push_back(median);
    v.push_back(median * (1 + spread));
  }
  return v;
}

inline CaseResult passedCase(const std::string &name,
                             std::vector<double> samples) {
  CaseResult c;
  c.suite = "gemm";
  c.kernel = "gemm";
  c.name = name;
  c.device = "NVIDIA H100 80GB HBM3";
  c.precision = "f16";
  c.passed = true;
  c.samples = std::move(samples);
  c.stats = computeStats(c.samples);
  c.stopReason = "converged";
  c.work = Work{2.0 * 4096 * 4096 * 4096, 3.0 * 4096 * 4096 * 2};
  c.tflops = c.work.flops / (c.stats.median * 1e-3) / 1e12;
  c.gbs = c.work.bytes / (c.stats.median * 1e-3) / 1e9;
  return c;
}

/// Sim counters of a case: 75% coalesced, 2-way shared conflicts, one
/// divergent branch, two barriers per block.
inline CaseCounters sampleCounters() {
  CaseCounters k;
  k.launchMs = 12.5;
  k.globalRequests = 64;
  k.globalSectors = 512;
  k.globalIdealSectors = 384;
  k.globalBytesMoved = 512 * 32;
  k.globalUsefulBytes = 384 * 32;
  k.coalescingEfficiency = 0.75;
  k.sharedRequests = 32;
  k.sharedWavefronts = 64;
  k.sharedIdealWavefronts = 32;
  k.barriersPerBlock = 2;
  k.maxBarriersPerBlock = 2;
  k.divergentBranches = 1;
  k.warpBranchInstances = 40;
  CaseCounters::Site s;
  s.space = "global";
  s.kind = "load";
  s.op = "vector.load";
  s.location = "softmax.tile:52:10";
  s.widthBytes = 16;
  s.requests = 64;
  s.sectors = 512;
  s.idealSectors = 384;
  s.usefulBytes = 384 * 32;
  k.sites = {s};
  k.branches = {{"scf.for", "softmax.tile:50:5", 40, 1}};
  return k;
}

inline CaseResult failedCase(const std::string &name,
                             const std::string &failure) {
  CaseResult c;
  c.suite = "gemm";
  c.kernel = "gemm";
  c.name = name;
  c.device = "NVIDIA H100 80GB HBM3";
  c.precision = "f16";
  c.passed = false;
  c.failure = failure;
  c.maxAbsError = 0.5;
  c.maxRelError = 0.25;
  return c;
}

} // namespace tessera::bench::testing

#endif // TESSERA_TESTS_BENCHCORE_BENCHTESTUTIL_H
