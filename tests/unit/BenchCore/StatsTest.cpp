//===- StatsTest.cpp - Tests of the timing statistics ---------------------===//

#include "tessera/bench/Stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace tessera::bench;

TEST(Stats, EmptyIsAllZero) {
  SampleStats s = computeStats({});
  EXPECT_EQ(s, SampleStats{});
}

TEST(Stats, SingleSample) {
  std::vector<double> v = {3.5};
  SampleStats s = computeStats(v);
  EXPECT_EQ(s.count, 1);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.mean, 3.5);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_DOUBLE_EQ(s.ci95Low, 3.5);
  EXPECT_DOUBLE_EQ(s.ci95High, 3.5);
  EXPECT_DOUBLE_EQ(s.rsd, 0);
}

TEST(Stats, KnownData) {
  // mean 5, sum of squared deviations 32, s = sqrt(32/7).
  std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  SampleStats s = computeStats(v);
  EXPECT_EQ(s.count, 8);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  double sd = std::sqrt(32.0 / 7.0);
  EXPECT_NEAR(s.stddev, sd, 1e-12);
  EXPECT_NEAR(s.rsd, sd / 5, 1e-12);
  double half = 2.364624252 * sd / std::sqrt(8.0); // t(0.975, 7)
  EXPECT_NEAR(s.ci95Low, 5 - half, 1e-6);
  EXPECT_NEAR(s.ci95High, 5 + half, 1e-6);
  EXPECT_NEAR(s.ci95HalfWidth(), half, 1e-6);
}

TEST(Stats, OddMedianUnsorted) {
  std::vector<double> v = {9, 1, 5, 3, 7};
  EXPECT_DOUBLE_EQ(computeStats(v).median, 5);
  EXPECT_DOUBLE_EQ(median(v), 5);
}

TEST(Stats, StudentTQuantiles) {
  EXPECT_NEAR(studentT975(1), 12.706, 1e-3);
  EXPECT_NEAR(studentT975(2), 4.303, 1e-3);
  EXPECT_NEAR(studentT975(10), 2.228, 1e-3);
  EXPECT_NEAR(studentT975(30), 2.042, 1e-3);
  EXPECT_NEAR(studentT975(31), 2.0395, 1e-3);
  EXPECT_NEAR(studentT975(40), 2.021, 1e-3);
  EXPECT_NEAR(studentT975(60), 2.000, 1e-3);
  EXPECT_NEAR(studentT975(120), 1.980, 1e-3);
  EXPECT_NEAR(studentT975(1000000), 1.960, 1e-3);
  EXPECT_TRUE(std::isinf(studentT975(0)));
  // Decreasing in the degrees of freedom.
  for (int df = 1; df < 200; ++df)
    EXPECT_GT(studentT975(df), studentT975(df + 1)) << df;
}

TEST(Stats, RunningMatchesBatch) {
  std::vector<double> v = {1.0, 1.1, 0.9, 1.05, 0.95, 1.2};
  RunningStats r;
  for (double x : v)
    r.add(x);
  SampleStats s = computeStats(v);
  EXPECT_EQ(r.count(), 6);
  EXPECT_NEAR(r.mean(), s.mean, 1e-12);
  EXPECT_NEAR(r.stddev(), s.stddev, 1e-12);
  EXPECT_NEAR(r.rsd(), s.rsd, 1e-12);
}
