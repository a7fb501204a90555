//===- Stats.h - Summary statistics of timing samples -----------*- C++ -*-===//
//
// Median, mean, extremes, sample standard deviation, the 95% confidence
// interval of the mean (Student t) and the relative standard deviation of a
// set of timing samples. Units pass through unchanged (ms in, ms out).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCH_STATS_H
#define TESSERA_BENCH_STATS_H

#include <cstdint>
#include <span>

namespace tessera::bench {

struct SampleStats {
  int64_t count = 0;
  double median = 0, mean = 0, min = 0, max = 0;
  /// Sample standard deviation (n - 1 denominator); 0 for fewer than 2.
  double stddev = 0;
  /// 95% confidence interval of the mean: mean -/+ t(0.975, n-1) * s / sqrt(n).
  /// Both equal the mean for fewer than 2 samples.
  double ci95Low = 0, ci95High = 0;
  /// stddev / mean (0 when the mean is 0).
  double rsd = 0;

  /// Half the width of the confidence interval.
  double ci95HalfWidth() const { return (ci95High - ci95Low) / 2; }
  bool operator==(const SampleStats &) const = default;
};

/// Statistics of `samples`; an empty span gives all zeros.
SampleStats computeStats(std::span<const double> samples);

/// The two-sided 95% quantile of Student's t distribution (the 0.975
/// quantile) for `degreesOfFreedom` >= 1: exact table values up to 30, a
/// Cornish-Fisher expansion above (error < 1e-4), 1.959964 in the limit.
/// Returns +infinity for degreesOfFreedom < 1.
double studentT975(int64_t degreesOfFreedom);

/// Median of `samples` (mean of the two middle values for an even count);
/// 0 for an empty span.
double median(std::span<const double> samples);

/// Running mean and variance (Welford), for stopping rules that look at the
/// statistics after every sample.
class RunningStats {
public:
  void add(double x);
  int64_t count() const { return count_; }
  double mean() const { return mean_; }
  /// Sample variance (n - 1); 0 for fewer than 2 values.
  double variance() const;
  double stddev() const;
  /// stddev / mean; 0 when the mean is 0.
  double rsd() const;

private:
  int64_t count_ = 0;
  double mean_ = 0, m2_ = 0;
};

} // namespace tessera::bench

#endif // TESSERA_BENCH_STATS_H
