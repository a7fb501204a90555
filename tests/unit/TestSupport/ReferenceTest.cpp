//===- ReferenceTest.cpp - Hand-checked tests of the references -----------===//

#include "Reference.h"

#include "DataGen.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using tessera::DType;
using namespace tessera::testing;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

HostTensor make(std::vector<int64_t> shape, std::vector<double> values,
                DType dtype = DType::F32) {
  return HostTensor::fromValues(std::move(shape), dtype, values);
}

void expectAllNaN(const std::vector<double> &values) {
  for (double v : values)
    EXPECT_TRUE(std::isnan(v)) << v;
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

TEST(ReferenceTest, Gemm2x3Times3x2) {
  HostTensor a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = make({3, 2}, {7, 8, 9, 10, 11, 12});
  HostTensor c = HostTensor::empty({2, 2}, DType::F32); // NaN poison
  gemm(a, b, c);
  // [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154]
  EXPECT_EQ(c.toDoubleVector(), (std::vector<double>{58, 64, 139, 154}));
}

TEST(ReferenceTest, GemmAlphaBeta) {
  HostTensor a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = make({3, 2}, {7, 8, 9, 10, 11, 12});
  HostTensor c = make({2, 2}, {1, 1, 2, 2});
  gemm(a, b, c, 0.5, -2.0);
  EXPECT_EQ(c.toDoubleVector(), (std::vector<double>{27, 30, 65.5, 73}));
}

TEST(ReferenceTest, GemmBetaZeroIgnoresGarbageInC) {
  HostTensor a = make({1, 1}, {3});
  HostTensor b = make({1, 1}, {4});
  HostTensor c = make({1, 1}, {kNaN});
  gemm(a, b, c, 1.0, 0.0);
  EXPECT_EQ(c.at(0), 12.0);
  // With beta != 0 the NaN is read and propagates.
  c.setAt(0, kNaN);
  gemm(a, b, c, 1.0, 1.0);
  EXPECT_TRUE(std::isnan(c.at(0)));
}

TEST(ReferenceTest, GemmTransposedViewsAndPaddedOutput) {
  // A^T stored as [K, M], B^T stored as [N, K].
  HostTensor at = make({3, 2}, {1, 4, 2, 5, 3, 6});
  HostTensor bt = make({2, 3}, {7, 9, 11, 8, 10, 12});
  HostTensor c = HostTensor::padded({2, 2}, DType::F32, {1, 3});
  gemm(at.transposed(0, 1), bt.transposed(0, 1), c);
  EXPECT_EQ(c.toDoubleVector(), (std::vector<double>{58, 64, 139, 154}));
  EXPECT_EQ(c.countChangedBytesOutsideView(), 0);
}

TEST(ReferenceTest, GemmRoundsOutputToDType) {
  // 1 + 2^-11 is halfway between two f16 values; ties go to even (1.0).
  HostTensor a = make({1, 2}, {1.0, 0x1p-11}, DType::F32);
  HostTensor b = make({2, 1}, {1.0, 1.0}, DType::F32);
  HostTensor c = HostTensor::zeros({1, 1}, DType::F16);
  gemm(a, b, c);
  EXPECT_EQ(c.at(0), 1.0);
  HostTensor c32 = HostTensor::zeros({1, 1}, DType::F32);
  gemm(a, b, c32);
  EXPECT_EQ(c32.at(0), 1.0 + 0x1p-11);
}

TEST(ReferenceTest, GemmEmptyK) {
  HostTensor a = HostTensor::zeros({2, 0}, DType::F32);
  HostTensor b = HostTensor::zeros({0, 3}, DType::F32);
  HostTensor c = HostTensor::empty({2, 3}, DType::F32);
  gemm(a, b, c);
  for (double v : c.toDoubleVector())
    EXPECT_EQ(v, 0.0);
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

TEST(ReferenceTest, SoftmaxHandExample) {
  HostTensor x = make({1, 2}, {0.0, std::log(2.0)});
  HostTensor y = HostTensor::empty({1, 2}, DType::F32);
  softmax(x, y);
  EXPECT_NEAR(y.at(0), 1.0 / 3.0, 1e-7);
  EXPECT_NEAR(y.at(1), 2.0 / 3.0, 1e-7);
}

TEST(ReferenceTest, SoftmaxIsStableForLargeValues) {
  HostTensor x = HostTensor::zeros({2, 4}, DType::F16);
  fillPattern(x, DataPattern::LargePositive);
  HostTensor y = HostTensor::empty({2, 4}, DType::F32);
  softmax(x, y);
  for (double v : y.toDoubleVector())
    EXPECT_EQ(v, 0.25);
  // Mixed signs: the +1e3 entries share all the mass.
  fillPattern(x, DataPattern::HalfAndHalf);
  softmax(x, y);
  EXPECT_EQ(y.toDoubleVector(),
            (std::vector<double>{0.5, 0.5, 0, 0, 0.5, 0.5, 0, 0}));
}

TEST(ReferenceTest, SoftmaxCausalMasksColumnsAboveDiagonal) {
  // rows = 3, cols = 4: row r sees columns [0, r].
  HostTensor x = HostTensor::zeros({3, 4}, DType::F32);
  // Garbage in masked positions must not matter.
  x.set({0, 1}, kNaN);
  x.set({0, 3}, kInf);
  x.set({1, 2}, kNaN);
  HostTensor y = HostTensor::empty({3, 4}, DType::F32);
  softmax(x, y, /*causal=*/true);
  const double third = static_cast<float>(1.0 / 3); // as stored in f32
  EXPECT_EQ(y.toDoubleVector(), (std::vector<double>{1, 0, 0, 0, 0.5, 0.5, 0, 0,
                                                     third, third, third, 0}));
  // More rows than columns: rows >= cols see everything.
  HostTensor tall = HostTensor::zeros({3, 2}, DType::F32);
  HostTensor out = HostTensor::empty({3, 2}, DType::F32);
  softmax(tall, out, true);
  EXPECT_EQ(out.toDoubleVector(),
            (std::vector<double>{1, 0, 0.5, 0.5, 0.5, 0.5}));
}

TEST(ReferenceTest, SoftmaxSpecialRows) {
  HostTensor x = HostTensor::zeros({5, 3}, DType::F32);
  setRowNegInf(x, 0);           // all -inf       -> NaN row
  setNaNAt(x, 1 * 3 + 1);       // a NaN          -> NaN row
  setInfAt(x, 2 * 3 + 2);       // a +inf         -> NaN row
  setInfAt(x, 3 * 3 + 0, true); // one -inf entry -> 0 there
  // Row 4 stays zeros -> uniform.
  HostTensor y = HostTensor::empty({5, 3}, DType::F32);
  softmax(x, y);
  std::vector<double> ys = y.toDoubleVector();
  expectAllNaN({ys.begin(), ys.begin() + 9});
  EXPECT_EQ(ys[9], 0.0);
  EXPECT_EQ(ys[10], 0.5);
  EXPECT_EQ(ys[11], 0.5);
  for (int i = 12; i < 15; ++i)
    EXPECT_FLOAT_EQ(ys[i], 1.0 / 3);
}

TEST(ReferenceTest, SoftmaxCausalRowWithVisibleNegInfOnly) {
  // Row 0 sees only column 0, which is -inf: NaN, but masked outputs are 0.
  HostTensor x = make({2, 2}, {-kInf, 5.0, -kInf, 1.0});
  HostTensor y = HostTensor::empty({2, 2}, DType::F32);
  softmax(x, y, true);
  EXPECT_TRUE(std::isnan(y.get({0, 0})));
  EXPECT_EQ(y.get({0, 1}), 0.0);
  EXPECT_EQ(y.get({1, 0}), 0.0);
  EXPECT_EQ(y.get({1, 1}), 1.0);
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

TEST(ReferenceTest, LayerNormHandExample) {
  // [1, 2, 3]: mean 2, biased var 2/3, y = (x - 2) / sqrt(2/3).
  HostTensor x = make({1, 3}, {1, 2, 3});
  HostTensor y = HostTensor::empty({1, 3}, DType::F32);
  HostTensor mean = HostTensor::empty({1}, DType::F32);
  HostTensor rstd = HostTensor::empty({1}, DType::F32);
  layerNorm(x, HostTensor(), HostTensor(), y, 0.0, &mean, &rstd);
  double s = std::sqrt(1.5); // 1 / sqrt(2/3)
  EXPECT_NEAR(y.at(0), -s, 1e-6);
  EXPECT_EQ(y.at(1), 0.0);
  EXPECT_NEAR(y.at(2), s, 1e-6);
  EXPECT_EQ(mean.at(0), 2.0);
  EXPECT_NEAR(rstd.at(0), s, 1e-6);
}

TEST(ReferenceTest, LayerNormWeightBiasAndEps) {
  HostTensor x = make({2, 2}, {1, 3, 5, 5});
  HostTensor w = make({2}, {2, 3});
  HostTensor b = make({2}, {10, 20});
  HostTensor y = HostTensor::empty({2, 2}, DType::F32);
  layerNorm(x, w, b, y, 3.0);
  // Row 0: mean 2, var 1, (x - 2) / sqrt(4) = [-0.5, 0.5] -> [9, 21.5].
  // Row 1: constant, var 0 -> y = bias exactly.
  EXPECT_EQ(y.toDoubleVector(), (std::vector<double>{9, 21.5, 10, 20}));
}

TEST(ReferenceTest, LayerNormSpecialRows) {
  HostTensor x = HostTensor::zeros({4, 3}, DType::F32);
  fillArange(x);
  setNaNAt(x, 1);
  setInfAt(x, 4);
  setInfAt(x, 8, true);
  HostTensor y = HostTensor::empty({4, 3}, DType::F32);
  layerNorm(x, HostTensor(), HostTensor(), y, 1e-5);
  std::vector<double> ys = y.toDoubleVector();
  expectAllNaN({ys.begin(), ys.begin() + 9});
  EXPECT_FALSE(std::isnan(ys[9]));

  // Constant row with eps == 0: 0 / 0.
  HostTensor c = HostTensor::full({1, 4}, DType::F32, 7.0);
  HostTensor cy = HostTensor::empty({1, 4}, DType::F32);
  layerNorm(c, HostTensor(), HostTensor(), cy, 0.0);
  expectAllNaN(cy.toDoubleVector());
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

TEST(ReferenceTest, AttentionWithOneKeyReturnsV) {
  HostTensor q = HostTensor::zeros({2, 3, 4}, DType::F32);
  HostTensor k = HostTensor::zeros({2, 1, 4}, DType::F32);
  HostTensor v = HostTensor::zeros({2, 1, 5}, DType::F32);
  fillNormal(q, 1);
  fillNormal(k, 2);
  fillNormal(v, 3);
  HostTensor o = HostTensor::empty({2, 3, 5}, DType::F32);
  HostTensor lse = HostTensor::empty({2, 3}, DType::F32);
  attention(q, k, v, o, /*causal=*/false, defaultAttentionScale(4), &lse);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t c = 0; c < 5; ++c)
        EXPECT_EQ(o.get({b, i, c}), v.get({b, 0, c}));
  // lse of a single score is the score itself.
  double score = 0;
  for (int64_t c = 0; c < 4; ++c)
    score += q.get({1, 2, c}) * k.get({1, 0, c});
  EXPECT_NEAR(lse.get({1, 2}), score * 0.5, 1e-6);
}

TEST(ReferenceTest, AttentionTwoKeysHandExample) {
  // Scores 0 and ln 3 -> weights 1/4, 3/4.
  HostTensor q = make({1, 1, 1}, {1.0});
  HostTensor k = make({1, 2, 1}, {0.0, std::log(3.0)});
  HostTensor v = make({1, 2, 2}, {4, 8, 0, -4});
  HostTensor o = HostTensor::empty({1, 1, 2}, DType::F32);
  attention(q, k, v, o, false, 1.0);
  EXPECT_NEAR(o.at(0), 1.0, 1e-6);
  EXPECT_NEAR(o.at(1), -1.0, 1e-6);
}

TEST(ReferenceTest, AttentionCausalBottomRightAligned) {
  // Sq = 2, Sk = 3, all scores 0: query 0 sees keys {0, 1}, query 1 all 3.
  HostTensor q = HostTensor::zeros({1, 2, 2}, DType::F32);
  HostTensor k = HostTensor::zeros({1, 3, 2}, DType::F32);
  HostTensor v = make({1, 3, 1}, {3, 6, 30});
  // A NaN in a key row that query 0 must not see.
  k.set({0, 2, 0}, kNaN);
  HostTensor o = HostTensor::empty({1, 2, 1}, DType::F32);
  attention(q, k, v, o, /*causal=*/true, 1.0);
  EXPECT_EQ(o.get({0, 0, 0}), 4.5);
  EXPECT_TRUE(std::isnan(o.get({0, 1, 0}))); // sees the NaN key

  k.set({0, 2, 0}, 0.0);
  attention(q, k, v, o, true, 1.0);
  EXPECT_EQ(o.get({0, 0, 0}), 4.5);
  EXPECT_EQ(o.get({0, 1, 0}), 13.0);
}

TEST(ReferenceTest, AttentionQueriesWithNoVisibleKeyGiveZero) {
  // Sq = 3, Sk = 1: query i sees keys j <= i - 2, so only query 2 sees key 0.
  HostTensor q = HostTensor::zeros({1, 3, 1}, DType::F32);
  HostTensor k = HostTensor::zeros({1, 1, 1}, DType::F32);
  HostTensor v = make({1, 1, 1}, {5});
  HostTensor o = HostTensor::empty({1, 3, 1}, DType::F32);
  HostTensor lse = HostTensor::empty({1, 3}, DType::F32);
  attention(q, k, v, o, true, 1.0, &lse);
  EXPECT_EQ(o.toDoubleVector(), (std::vector<double>{0, 0, 5}));
  EXPECT_EQ(lse.toDoubleVector(), (std::vector<double>{-kInf, -kInf, 0}));
}

TEST(ReferenceTest, AttentionMatchesManualSoftmaxOnStridedInputs) {
  // Cross-check attention against gemm + softmax on a random case whose K
  // is a transposed view.
  const int64_t sq = 3, sk = 4, d = 2;
  HostTensor q = HostTensor::zeros({1, sq, d}, DType::F32);
  HostTensor kStore = HostTensor::zeros({1, d, sk}, DType::F32);
  HostTensor v = HostTensor::zeros({1, sk, d}, DType::F32);
  fillNormal(q, 11);
  fillNormal(kStore, 12);
  fillNormal(v, 13);
  HostTensor k = kStore.transposed(1, 2);
  HostTensor o = HostTensor::empty({1, sq, d}, DType::F32);
  attention(q, k, v, o, false, 0.5);

  HostTensor s = HostTensor::empty({sq, sk}, DType::F32);
  gemm(q.reshapedContiguous({sq, d}), kStore.reshapedContiguous({d, sk}), s,
       0.5);
  HostTensor p = HostTensor::empty({sq, sk}, DType::F32);
  softmax(s, p);
  HostTensor expected = HostTensor::empty({sq, d}, DType::F32);
  gemm(p, v.reshapedContiguous({sk, d}), expected);
  std::vector<double> os = o.toDoubleVector();
  std::vector<double> es = expected.toDoubleVector();
  for (size_t i = 0; i < os.size(); ++i)
    EXPECT_NEAR(os[i], es[i], 1e-5);
}

//===----------------------------------------------------------------------===//
// Vector ops and reductions
//===----------------------------------------------------------------------===//

TEST(ReferenceTest, VectorOps) {
  HostTensor x = make({3}, {1, 2, 3});
  HostTensor y = make({3}, {4, -5, 6});
  EXPECT_EQ(dot(x, y), 4 - 10 + 18);
  EXPECT_EQ(norm2(make({2}, {3, 4})), 5.0);
  HostTensor out = HostTensor::empty({3}, DType::F32);
  add(x, y, out);
  EXPECT_EQ(out.toDoubleVector(), (std::vector<double>{5, -3, 9}));
  mul(x, y, out);
  EXPECT_EQ(out.toDoubleVector(), (std::vector<double>{4, -10, 18}));
  axpy(2.0, x, y);
  EXPECT_EQ(y.toDoubleVector(), (std::vector<double>{6, -1, 12}));
  EXPECT_EQ(reduceSum(x), 6.0);
  EXPECT_EQ(reduceMax(y), 12.0);
}

TEST(ReferenceTest, ReductionSpecialValues) {
  EXPECT_TRUE(std::isnan(reduceMax(make({3}, {1, kNaN, 2}))));
  EXPECT_TRUE(std::isnan(reduceMax(make({2}, {kNaN, kInf}))));
  EXPECT_TRUE(std::isnan(reduceMax(make({2}, {kInf, kNaN}))));
  EXPECT_EQ(reduceMax(make({2}, {-kInf, -kInf})), -kInf);
  EXPECT_EQ(reduceMax(HostTensor::zeros({0}, DType::F32)), -kInf);
  EXPECT_EQ(reduceSum(HostTensor::zeros({0}, DType::F32)), 0.0);
  EXPECT_TRUE(std::isnan(reduceSum(make({2}, {kInf, -kInf}))));
  EXPECT_TRUE(std::isnan(dot(make({1}, {0}), make({1}, {kInf}))));

  HostTensor x = make({2, 3}, {1, 5, 2, -1, kNaN, 0});
  HostTensor sums = HostTensor::empty({2}, DType::F32);
  HostTensor maxima = HostTensor::empty({2}, DType::F32);
  reduceSumRows(x, sums);
  reduceMaxRows(x, maxima);
  EXPECT_EQ(sums.at(0), 8.0);
  EXPECT_TRUE(std::isnan(sums.at(1)));
  EXPECT_EQ(maxima.at(0), 5.0);
  EXPECT_TRUE(std::isnan(maxima.at(1)));

  HostTensor noCols = HostTensor::zeros({2, 0}, DType::F32);
  reduceMaxRows(noCols, maxima);
  EXPECT_EQ(maxima.toDoubleVector(), (std::vector<double>{-kInf, -kInf}));
}

TEST(ReferenceTest, ReductionsOnStridedViews) {
  HostTensor t = HostTensor::zeros({10}, DType::F32);
  fillArange(t);                         // 0..9
  HostTensor odd = t.slice(0, 1, 10, 2); // 1, 3, 5, 7, 9
  EXPECT_EQ(reduceSum(odd), 25.0);
  EXPECT_EQ(reduceMax(odd), 9.0);
  EXPECT_EQ(dot(odd, odd), 1 + 9 + 25 + 49 + 81);
}

//===----------------------------------------------------------------------===//
// STREAM
//===----------------------------------------------------------------------===//

TEST(ReferenceTest, StreamKernelsOnStridedVectors) {
  HostTensor aStore = HostTensor::zeros({8}, DType::F32);
  fillArange(aStore, 1.0);                 // 1..8
  HostTensor a = aStore.slice(0, 0, 8, 2); // 1, 3, 5, 7
  HostTensor b = make({4}, {10, 20, 30, 40});
  HostTensor c = HostTensor::padded({4}, DType::F32, {4}, 1);
  c = c.slice(0, 0, 4); // keep the padded allocation, view of 4
  streamCopy(a, c);
  EXPECT_EQ(c.toDoubleVector(), (std::vector<double>{1, 3, 5, 7}));
  streamScale(a, c, 3.0);
  EXPECT_EQ(c.toDoubleVector(), (std::vector<double>{3, 9, 15, 21}));
  streamAdd(a, b, c);
  EXPECT_EQ(c.toDoubleVector(), (std::vector<double>{11, 23, 35, 47}));
  streamTriad(a, b, c, 0.5);
  EXPECT_EQ(c.toDoubleVector(), (std::vector<double>{6, 13, 20, 27}));
  EXPECT_EQ(c.countChangedBytesOutsideView(), 0);
}

TEST(ReferenceTest, StreamTriadRoundsToF16) {
  HostTensor a = make({1}, {1.0}, DType::F16);
  HostTensor b = make({1}, {1.0}, DType::F16);
  HostTensor c = HostTensor::empty({1}, DType::F16);
  streamTriad(a, b, c, 0x1p-12); // 1 + 2^-12 rounds to 1 in f16
  EXPECT_EQ(c.at(0), 1.0);
}

TEST(ReferenceTest, Gather) {
  HostTensor src = make({5}, {10, 11, 12, 13, 14});
  for (DType idxType : {DType::I32, DType::I64}) {
    HostTensor idx = HostTensor::fromValues({2, 2}, idxType,
                                            std::vector<double>{4, 0, 2, 4});
    HostTensor out = HostTensor::empty({2, 2}, DType::F32);
    gather(src, idx, out);
    EXPECT_EQ(out.toDoubleVector(), (std::vector<double>{14, 10, 12, 14}));
  }
  HostTensor src16 = src.toDType(DType::F16).slice(0, 1, 5, 2); // 11, 13
  HostTensor idx =
      HostTensor::fromValues({3}, DType::I64, std::vector<double>{1, 1, 0});
  HostTensor out = HostTensor::empty({3}, DType::F16);
  gather(src16, idx, out);
  EXPECT_EQ(out.toDoubleVector(), (std::vector<double>{13, 13, 11}));
}

TEST(ReferenceDeathTest, ShapeMismatchesAbort) {
  HostTensor a = HostTensor::zeros({2, 3}, DType::F32);
  HostTensor b = HostTensor::zeros({2, 3}, DType::F32);
  HostTensor c = HostTensor::zeros({2, 3}, DType::F32);
  EXPECT_DEATH(gemm(a, b, c), "B is not");
  HostTensor src = HostTensor::zeros({3}, DType::F32);
  HostTensor idx = HostTensor::full({1}, DType::I32, 3);
  HostTensor out = HostTensor::zeros({1}, DType::F32);
  EXPECT_DEATH(gather(src, idx, out), "index out of range");
}

} // namespace
