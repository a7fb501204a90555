//===- Stats.cpp - Summary statistics of timing samples -------------------===//
//
// computeStats(), the Student t quantile and the running (Welford) mean and
// variance used by the stopping rule.
//
//===----------------------------------------------------------------------===//

#include "tessera/bench/Stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace tessera::bench;

namespace {
/// t(0.975, df) for df = 1..30 (standard tables, 9 significant digits).
constexpr double kT975[30] = {
    12.7062047, 4.30265273, 3.18244631, 2.77644511, 2.57058184, 2.44691185,
    2.36462425, 2.30600414, 2.26215716, 2.22813885, 2.20098516, 2.17881283,
    2.16036866, 2.14478669, 2.13144955, 2.11990530, 2.10981558, 2.10092204,
    2.09302405, 2.08596345, 2.07961384, 2.07387307, 2.06865761, 2.06389856,
    2.05953855, 2.05552944, 2.05183052, 2.04840714, 2.04522964, 2.04227246};
} // namespace

double tessera::bench::studentT975(int64_t degreesOfFreedom) {
  if (degreesOfFreedom < 1)
    return std::numeric_limits<double>::infinity();
  if (degreesOfFreedom <= 30)
    return kT975[degreesOfFreedom - 1];
  // Cornish-Fisher expansion of the t quantile around the normal one
  // (Abramowitz & Stegun 26.7.5); below 1e-5 error for df > 30.
  const double z = 1.959963984540054;
  const double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2,
               z9 = z7 * z2;
  const double v = static_cast<double>(degreesOfFreedom);
  const double g1 = (z3 + z) / 4;
  const double g2 = (5 * z5 + 16 * z3 + 3 * z) / 96;
  const double g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384;
  const double g4 =
      (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160;
  return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

double tessera::bench::median(std::span<const double> samples) {
  if (samples.empty())
    return 0;
  std::vector<double> sorted(samples.begin(), samples.end());
  size_t mid = sorted.size() / 2;
  std::nth_element(sorted.begin(), sorted.begin() + mid, sorted.end());
  double upper = sorted[mid];
  if (sorted.size() % 2 == 1)
    return upper;
  double lower = *std::max_element(sorted.begin(), sorted.begin() + mid);
  return (lower + upper) / 2;
}

SampleStats tessera::bench::computeStats(std::span<const double> samples) {
  SampleStats s;
  if (samples.empty())
    return s;
  s.count = static_cast<int64_t>(samples.size());
  s.median = median(samples);
  s.min = *std::min_element(samples.begin(), samples.end());
  s.max = *std::max_element(samples.begin(), samples.end());
  // Two-pass mean and variance (exact enough for any sample count we keep).
  double sum = 0;
  for (double x : samples)
    sum += x;
  s.mean = sum / static_cast<double>(s.count);
  if (s.count >= 2) {
    double ss = 0;
    for (double x : samples)
      ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(s.count - 1));
  }
  double half = s.count >= 2 ? studentT975(s.count - 1) * s.stddev /
                                   std::sqrt(static_cast<double>(s.count))
                             : 0;
  s.ci95Low = s.mean - half;
  s.ci95High = s.mean + half;
  s.rsd = s.mean != 0 ? s.stddev / std::fabs(s.mean) : 0;
  return s;
}

void RunningStats::add(double x) {
  ++count_;
  double delta = x - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (x - mean_);
}

double RunningStats::variance() const {
  return count_ >= 2 ? m2_ / static_cast<double>(count_ - 1) : 0;
}

double RunningStats::stddev() const { return std::sqrt(variance()); }

double RunningStats::rsd() const {
  return mean_ != 0 ? stddev() / std::fabs(mean_) : 0;
}
