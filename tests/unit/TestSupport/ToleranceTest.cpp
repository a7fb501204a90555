//===- ToleranceTest.cpp - Tests of the tolerance table and compare() -----===//

#include "Tolerance.h"

#include "DataGen.h"
#include "Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using tessera::DType;
using namespace tessera::testing;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

HostTensor make(std::vector<double> values, DType dtype = DType::F32) {
  int64_t n = static_cast<int64_t>(values.size());
  return HostTensor::fromValues({n}, dtype, values);
}

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(ToleranceTest, BaseTable) {
  EXPECT_EQ(baseTolerance(DType::F32).atol, 1e-5);
  EXPECT_EQ(baseTolerance(DType::F16).rtol, 1e-3);
  EXPECT_EQ(baseTolerance(DType::BF16).atol, 1.6e-2);
  EXPECT_EQ(baseTolerance(DType::F8E4M3).rtol, 0.125);
  EXPECT_EQ(baseTolerance(DType::F8E5M2).rtol, 0.25);
  for (DType t : {DType::I8, DType::I32, DType::I64, DType::Bool}) {
    EXPECT_EQ(toleranceFor(t, Op::Gemm, 1024).atol, 0.0);
    EXPECT_EQ(toleranceFor(t, Op::Softmax, 1024).rtol, 0.0);
  }
}

TEST(ToleranceTest, EveryFloatToleranceCoversOneUlp) {
  // The base table must accept a one-ulp disagreement between two correctly
  // rounded results at any magnitude: rtol and atol >= 2^-m.
  for (DType t :
       {DType::F32, DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2}) {
    SCOPED_TRACE(tessera::dtypeName(t));
    Tolerance tol = baseTolerance(t);
    EXPECT_GE(tol.rtol, ulpAtOne(t));
    EXPECT_GE(tol.atol, ulpAtOne(t));
    // Concretely: the neighbour above 2^e, for several binades.
    for (int e : {-3, 0, 3, 7}) {
      double x = std::ldexp(1.0, e);
      double next = x + std::ldexp(ulpAtOne(t), e);
      HostTensor expected = make({x}, t);
      HostTensor actual = make({next}, t);
      ASSERT_EQ(actual.at(0), next); // representable
      EXPECT_TRUE(compare(actual, expected, tol).pass) << e;
    }
  }
  EXPECT_EQ(mantissaBits(DType::BF16), 7);
  EXPECT_EQ(ulpAtOne(DType::F8E4M3), 0.125);
  EXPECT_EQ(ulpAtOne(DType::I32), 0.0);
}

TEST(ToleranceTest, ScalesWithReductionLength) {
  Tolerance elementwise = toleranceFor(DType::F16, Op::Elementwise, 4096);
  EXPECT_EQ(elementwise.atol, 1e-3);
  Tolerance k1 = toleranceFor(DType::F16, Op::Gemm, 1);
  Tolerance k4096 = toleranceFor(DType::F16, Op::Gemm, 4096);
  EXPECT_EQ(k1.atol, 1e-3);
  EXPECT_DOUBLE_EQ(k4096.atol, 64e-3); // sqrt(4096) = 64
  EXPECT_EQ(k4096.rtol, 1e-3);
  EXPECT_DOUBLE_EQ(toleranceFor(DType::F32, Op::Reduction, 100).atol, 1e-4);
  EXPECT_EQ(toleranceFor(DType::F32, Op::Gemm, 0).atol, 1e-5); // K=0 -> 1

  // Normalized ops: a small relative widening that grows with sqrt(K).
  Tolerance soft1 = toleranceFor(DType::F32, Op::Softmax, 1);
  Tolerance soft16k = toleranceFor(DType::F32, Op::Softmax, 16384);
  EXPECT_GT(soft1.rtol, 1e-5);
  EXPECT_NEAR(soft16k.rtol - 1e-5, 8.0 * 128.0 * 0x1p-24, 1e-18);
  EXPECT_LT(soft16k.rtol, 1e-4);
  Tolerance attn = toleranceFor(DType::BF16, Op::Attention, 128);
  EXPECT_GT(attn.atol, 2 * 1.6e-2);
  EXPECT_LT(attn.atol, 2 * 1.6e-2 + 1e-5);
}

TEST(ToleranceTest, WithOutputRounding) {
  Tolerance tol = withOutputRounding({1e-5, 1e-5}, DType::BF16);
  EXPECT_DOUBLE_EQ(tol.rtol, 1e-5 + 0x1p-8);
  EXPECT_EQ(withOutputRounding({0, 0}, DType::F8E4M3).atol, 0x1p-10);
  Tolerance same = withOutputRounding({1e-5, 1e-5}, DType::I32);
  EXPECT_EQ(same.rtol, 1e-5);
}

TEST(ToleranceTest, IsCloseRule) {
  Tolerance tol{0.1, 0.01};
  EXPECT_TRUE(isClose(100.0, 101.1, tol));  // 1.1 <= 0.1 + 1.011
  EXPECT_FALSE(isClose(100.0, 101.2, tol)); // 1.2 >  0.1 + 1.012
  EXPECT_TRUE(isClose(0.05, 0.0, tol));
  EXPECT_TRUE(isClose(kNaN, kNaN, tol));
  EXPECT_FALSE(isClose(kNaN, 1.0, tol));
  EXPECT_FALSE(isClose(1.0, kNaN, tol));
  EXPECT_TRUE(isClose(kInf, kInf, tol));
  EXPECT_FALSE(isClose(-kInf, kInf, tol));
  EXPECT_FALSE(isClose(1e300, kInf, tol));
  EXPECT_FALSE(isClose(kInf, 1e300, Tolerance{kInf, 0}));
  EXPECT_TRUE(isClose(-0.0, 0.0, Tolerance{}));
}

TEST(ToleranceTest, ComparePassAndFail) {
  HostTensor expected = make({1, 2, 3, 4});
  HostTensor close = make({1, 2.00001, 3, 4});
  Comparison pass = compare(close, expected, {1e-4, 0});
  EXPECT_TRUE(pass.pass);
  EXPECT_EQ(pass.mismatches, 0);
  EXPECT_EQ(pass.worstIndex, 1);
  EXPECT_NEAR(pass.maxAbsErr, 1e-5, 1e-6);
  EXPECT_TRUE(contains(pass.summary, "PASS")) << pass.summary;

  HostTensor off = make({1, 2, 3.5, 4.1});
  Comparison fail = compare(off, expected, {1e-3, 1e-3});
  EXPECT_FALSE(fail.pass);
  EXPECT_EQ(fail.mismatches, 2);
  EXPECT_EQ(fail.worstIndex, 2);
  EXPECT_DOUBLE_EQ(fail.maxAbsErr, 0.5);
  EXPECT_NEAR(fail.maxRelErr, 0.5 / 3, 1e-12);
  EXPECT_TRUE(contains(fail.summary, "FAIL")) << fail.summary;
  EXPECT_TRUE(contains(fail.summary, "[2]")) << fail.summary;
  EXPECT_TRUE(contains(fail.summary, "actual 3.5")) << fail.summary;
  EXPECT_TRUE(contains(fail.summary, "expected 3")) << fail.summary;
}

TEST(ToleranceTest, CompareReportsMultiIndexAcrossLayouts) {
  HostTensor expected = HostTensor::zeros({2, 3}, DType::F32);
  fillArange(expected);
  // Same values in a bf16 transposed-storage tensor, one element off.
  HostTensor store = HostTensor::zeros({3, 2}, DType::BF16);
  HostTensor actual = store.transposed(0, 1);
  actual.copyFrom(expected);
  actual.set({1, 2}, 9.0);
  Comparison c =
      compare(actual, expected, toleranceFor(DType::BF16, Op::Elementwise));
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.worstIndex, 5);
  EXPECT_TRUE(contains(c.summary, "[1, 2] (flat 5)")) << c.summary;
  EXPECT_TRUE(contains(c.summary, "actual 9, expected 5")) << c.summary;
}

TEST(ToleranceTest, NaNPositionsMustMatch) {
  HostTensor expected = make({1, kNaN, 3});
  EXPECT_TRUE(compare(make({1, kNaN, 3}), expected, {1e-3, 1e-3}).pass);

  Comparison moved = compare(make({kNaN, 2, 3}), expected, {1e-3, 1e-3});
  EXPECT_FALSE(moved.pass);
  EXPECT_EQ(moved.mismatches, 2); // NaN where 1 expected, 2 where NaN expected
  EXPECT_EQ(moved.worstIndex, 0);
  EXPECT_EQ(moved.maxAbsErr, kInf);
  EXPECT_TRUE(contains(moved.summary, "nan")) << moved.summary;

  // Even an infinite tolerance does not excuse a NaN.
  EXPECT_FALSE(compare(make({kNaN}), make({1}), {kInf, kInf}).pass);
}

TEST(ToleranceTest, InfinitiesMustMatchExactly) {
  Tolerance tol{1e-3, 1e-3};
  EXPECT_TRUE(compare(make({kInf, -kInf}), make({kInf, -kInf}), tol).pass);
  EXPECT_FALSE(compare(make({kInf}), make({-kInf}), tol).pass);
  EXPECT_FALSE(compare(make({65504}, DType::F16), make({kInf}), tol).pass);
  EXPECT_FALSE(compare(make({kInf}), make({3e38}), tol).pass);
}

TEST(ToleranceTest, IntegerComparisonIsExact) {
  Tolerance tol = toleranceFor(DType::I32, Op::Elementwise);
  EXPECT_TRUE(
      compare(make({1, 2}, DType::I32), make({1, 2}, DType::I32), tol).pass);
  Comparison c =
      compare(make({1, 3}, DType::I32), make({1, 2}, DType::I32), tol);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.worstIndex, 1);
}

TEST(ToleranceTest, ShapeMismatchFails) {
  Comparison c = compare(HostTensor::zeros({2, 3}, DType::F32),
                         HostTensor::zeros({3, 2}, DType::F32), {1, 1});
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.worstIndex, -1);
  EXPECT_TRUE(contains(c.summary, "shape mismatch")) << c.summary;
}

TEST(ToleranceTest, EmptyTensorsPass) {
  Comparison c = compare(HostTensor::zeros({0}, DType::F16),
                         HostTensor::zeros({0}, DType::F32), {0, 0});
  EXPECT_TRUE(c.pass);
  EXPECT_EQ(c.worstIndex, -1);
}

// End to end: an f16 GEMM whose f32-accumulated result is rounded to f16
// passes against the f16 reference under toleranceFor(F16, Gemm, K), while a
// result that drops one K-term does not.
TEST(ToleranceTest, GemmToleranceAcceptsF32AccumulationRejectsBugs) {
  const int64_t m = 8, n = 8, k = 512;
  HostTensor a = HostTensor::zeros({m, k}, DType::F16);
  HostTensor b = HostTensor::zeros({k, n}, DType::F16);
  fillNormal(a, 21);
  fillNormal(b, 22);
  HostTensor expected = HostTensor::empty({m, n}, DType::F16);
  gemm(a, b, expected);

  // Emulated kernel: f32 accumulation in k order, then rounding to f16.
  HostTensor good = HostTensor::empty({m, n}, DType::F16);
  HostTensor buggy = HostTensor::empty({m, n}, DType::F16);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f, missing = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        float term = static_cast<float>(a.get({i, p}) * b.get({p, j}));
        acc += term;
        if (p != k - 1)
          missing += term;
      }
      good.set({i, j}, acc);
      buggy.set({i, j}, missing);
    }
  }
  Tolerance tol = toleranceFor(DType::F16, Op::Gemm, k);
  Comparison ok = compare(good, expected, tol);
  EXPECT_TRUE(ok.pass) << ok.summary;
  Comparison bad = compare(buggy, expected, tol);
  EXPECT_FALSE(bad.pass) << bad.summary;
}

} // namespace
