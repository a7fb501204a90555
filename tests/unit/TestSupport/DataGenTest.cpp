//===- DataGenTest.cpp - Tests of the deterministic data generators -------===//

#include "DataGen.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using tessera::DType;
using namespace tessera::testing;

namespace {

/// True if every element survives a round trip through `dtype`, i.e. was
/// already rounded to it.
bool isRoundedTo(const HostTensor &t, DType dtype) {
  for (double v : t.toDoubleVector()) {
    HostTensor one = HostTensor::full({}, dtype, v);
    double back = one.at(0);
    if (!(back == v || (std::isnan(back) && std::isnan(v))))
      return false;
  }
  return true;
}

TEST(DataGenTest, NormalIsDeterministic) {
  HostTensor a = HostTensor::zeros({64}, DType::F32);
  HostTensor b = HostTensor::zeros({64}, DType::F32);
  HostTensor c = HostTensor::zeros({64}, DType::F32);
  fillNormal(a, 42);
  fillNormal(b, 42);
  fillNormal(c, 43);
  EXPECT_EQ(a.toDoubleVector(), b.toDoubleVector());
  EXPECT_NE(a.toDoubleVector(), c.toDoubleVector());
}

TEST(DataGenTest, NormalMoments) {
  HostTensor t = HostTensor::zeros({20000}, DType::F32);
  fillNormal(t, 7, 3.0, 2.0);
  double sum = 0, squares = 0;
  for (double v : t.toDoubleVector()) {
    sum += v;
    squares += v * v;
  }
  double n = static_cast<double>(t.numel());
  double mean = sum / n;
  double var = squares / n - mean * mean;
  EXPECT_NEAR(mean, 3.0, 0.05);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.05);
}

TEST(DataGenTest, UniformRangeAndDeterminism) {
  HostTensor t = HostTensor::zeros({1000}, DType::F32);
  fillUniform(t, 1, -2.0, 5.0);
  double lo = 1e9, hi = -1e9;
  for (double v : t.toDoubleVector()) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -2.0);
  EXPECT_LE(hi, 5.0);
  EXPECT_LT(lo, -1.9); // the range is actually used
  EXPECT_GT(hi, 4.9);
  HostTensor u = HostTensor::zeros({1000}, DType::F32);
  fillUniform(u, 1, -2.0, 5.0);
  EXPECT_EQ(t.toDoubleVector(), u.toDoubleVector());
}

TEST(DataGenTest, ValuesAreRoundedToDType) {
  for (DType dtype : {DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2}) {
    SCOPED_TRACE(tessera::dtypeName(dtype));
    HostTensor t = HostTensor::zeros({256}, dtype);
    fillNormal(t, 5);
    EXPECT_TRUE(isRoundedTo(t, dtype));
    // The same seed in f32 gives the unrounded values; rounding them to the
    // dtype gives exactly what the low-precision fill stored.
    HostTensor wide = HostTensor::zeros({256}, DType::F32);
    fillNormal(wide, 5);
    EXPECT_EQ(wide.toDType(dtype).toDoubleVector(), t.toDoubleVector());
  }
}

TEST(DataGenTest, FillsFollowLogicalOrderThroughViews) {
  HostTensor dense = HostTensor::zeros({3, 5}, DType::F32);
  HostTensor padded = HostTensor::padded({3, 5}, DType::F32, {1, 3});
  fillNormal(dense, 9);
  fillNormal(padded, 9);
  EXPECT_EQ(dense.toDoubleVector(), padded.toDoubleVector());
  EXPECT_EQ(padded.countChangedBytesOutsideView(), 0);

  HostTensor base = HostTensor::zeros({5, 3}, DType::F32);
  HostTensor transposed = base.transposed(0, 1);
  fillNormal(transposed, 9);
  EXPECT_EQ(dense.toDoubleVector(), transposed.toDoubleVector());
}

TEST(DataGenTest, RandomIndicesInRange) {
  HostTensor idx = HostTensor::zeros({500}, DType::I32);
  fillRandomIndices(idx, 3, 17);
  std::vector<bool> seen(17, false);
  for (double v : idx.toDoubleVector()) {
    ASSERT_GE(v, 0.0);
    ASSERT_LT(v, 17.0);
    ASSERT_EQ(v, std::floor(v));
    seen[static_cast<size_t>(v)] = true;
  }
  for (bool s : seen)
    EXPECT_TRUE(s);
}

TEST(DataGenTest, Arange) {
  HostTensor t = HostTensor::zeros({2, 2}, DType::F32);
  fillArange(t, 1.0, 0.5);
  EXPECT_EQ(t.toDoubleVector(), (std::vector<double>{1.0, 1.5, 2.0, 2.5}));
}

TEST(DataGenTest, Patterns) {
  HostTensor t = HostTensor::zeros({2, 5}, DType::F16);
  fillPattern(t, DataPattern::LargePositive);
  for (double v : t.toDoubleVector())
    EXPECT_EQ(v, 10000.0);
  fillPattern(t, DataPattern::LargeNegative);
  for (double v : t.toDoubleVector())
    EXPECT_EQ(v, -10000.0);
  fillPattern(t, DataPattern::AlternatingSigns);
  EXPECT_EQ(t.toDoubleVector(),
            (std::vector<double>{1000, -1000, 1000, -1000, 1000, -1000, 1000,
                                 -1000, 1000, -1000}));
  fillPattern(t, DataPattern::HalfAndHalf);
  EXPECT_EQ(t.toDoubleVector(),
            (std::vector<double>{1000, 1000, 1000, -1000, -1000, 1000, 1000,
                                 1000, -1000, -1000}));
  fillPattern(t, DataPattern::Zeros);
  for (double v : t.toDoubleVector())
    EXPECT_EQ(v, 0.0);
  EXPECT_EQ(std::string(dataPatternName(DataPattern::HalfAndHalf)),
            "half_half");
}

TEST(DataGenTest, PatternsClampToFiniteRange) {
  HostTensor e4m3 = HostTensor::zeros({3}, DType::F8E4M3);
  fillPattern(e4m3, DataPattern::LargePositive);
  EXPECT_EQ(e4m3.at(0), 448.0); // not NaN
  fillPattern(e4m3, DataPattern::AlternatingSigns);
  EXPECT_EQ(e4m3.at(1), -448.0);
  HostTensor i8 = HostTensor::zeros({2}, DType::I8);
  fillPattern(i8, DataPattern::LargeNegative);
  EXPECT_EQ(i8.at(0), -127.0);
  HostTensor e5m2 = HostTensor::zeros({1}, DType::F8E5M2);
  fillPattern(e5m2, DataPattern::LargePositive);
  EXPECT_EQ(e5m2.at(0), 10240.0); // 1e4 rounded to 3 significant bits
}

TEST(DataGenTest, SpecialValues) {
  HostTensor t = HostTensor::zeros({3, 4}, DType::BF16);
  setNaNAt(t, 5);
  setInfAt(t, 0);
  setInfAt(t, 11, /*negative=*/true);
  EXPECT_TRUE(std::isnan(t.get({1, 1})));
  EXPECT_EQ(t.get({0, 0}), INFINITY);
  EXPECT_EQ(t.get({2, 3}), -INFINITY);
  EXPECT_EQ(t.get({0, 1}), 0.0);

  HostTensor rows = HostTensor::zeros({2, 3, 4}, DType::F32);
  setRowNegInf(rows, 4); // row 4 of 6 is [1, 1, :]
  for (int64_t c = 0; c < 4; ++c)
    EXPECT_EQ(rows.get({1, 1, c}), -INFINITY);
  EXPECT_EQ(rows.get({1, 0, 3}), 0.0);
  EXPECT_EQ(rows.get({1, 2, 0}), 0.0);

  HostTensor e4m3 = HostTensor::zeros({1}, DType::F8E4M3);
  setInfAt(e4m3, 0);
  EXPECT_TRUE(std::isnan(e4m3.at(0))); // e4m3 has no infinity
}

TEST(DataGenDeathTest, SpecialValuesNeedFloatDType) {
  HostTensor t = HostTensor::zeros({2}, DType::I32);
  EXPECT_DEATH(setNaNAt(t, 0), "floating-point");
}

} // namespace
