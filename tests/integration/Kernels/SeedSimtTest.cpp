//===- SeedSimtTest.cpp - seed 002's SIMT kernels on the test device ------===//
//
// kernels_dsl/seed/: the thread-level kernels of seed 002 (vector
// operations, layer norm, attention softmax, memory bandwidth), run against the
// references of
// ../support on the test device (cpu runs them through the sim's scheduler).
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"

#include <cmath>
#include <limits>

using namespace tessera;
using namespace tessera::testing;
namespace ref = tessera::testing;

namespace {

std::shared_ptr<Kernel> seedKernel(const std::string &file,
                                   const std::string &name,
                                   CompileOptions opts) {
  return libraryKernel("seed/" + file, name, std::move(opts));
}

/// `result_dtype` is the element type for the element-wise operations and
/// f32 for the reductions.
CompileOptions vectorOp(DType t, const std::string &op, int warps = 4) {
  bool elementwise = op == "axpy" || op == "add" || op == "mul";
  return withPrecision(
      t, {{"operation", ConstValue::string(op)},
          {"num_warps", ConstValue::integer(warps)},
          {"result_dtype", ConstValue::dtype(elementwise ? t : DType::F32)}});
}

struct VectorCase {
  DType dtype;
  int64_t n;
  int warps;
};
std::string vectorName(const ::testing::TestParamInfo<VectorCase> &i) {
  return std::string(dtypeName(i.param.dtype)) + "_n" +
         std::to_string(i.param.n) + "_w" + std::to_string(i.param.warps);
}
std::vector<VectorCase> vectorCases() {
  std::vector<VectorCase> v;
  for (DType t : {DType::F32, DType::F16})
    for (int64_t n : {int64_t(1), int64_t(37), int64_t(1000), int64_t(4099)})
      v.push_back({t, n, 4});
  v.push_back({DType::F32, 4099, 8});
  return v;
}

class SeedVectorOperations : public ::testing::TestWithParam<VectorCase> {};

TEST_P(SeedVectorOperations, ElementWise) {
  auto [dt, n, warps] = GetParam();
  HostTensor x = HostTensor::empty({n}, dt), y = HostTensor::empty({n}, dt);
  fillUniform(x, 61);
  fillUniform(y, 62);
  HostTensor out = HostTensor::empty({n}, dt);
  HostTensor expected = y.clone();

  auto axpy = seedKernel("vector_operations", "vector_operations",
                         vectorOp(dt, "axpy", warps));
  ref::axpy(1.5, x, expected);
  ASSERT_LAUNCH(axpy, {view(x), view(y), view(out), Arg(1.5)});
  EXPECT_CLOSE(out, expected, toleranceFor(dt, Op::Elementwise));

  auto add = seedKernel("vector_operations", "vector_operations",
                        vectorOp(dt, "add", warps));
  ref::add(x, y, expected);
  ASSERT_LAUNCH(add, {view(x), view(y), view(out), Arg(1.0)});
  EXPECT_CLOSE(out, expected, toleranceFor(dt, Op::Elementwise));

  auto mul = seedKernel("vector_operations", "vector_operations",
                        vectorOp(dt, "mul", warps));
  ref::mul(x, y, expected);
  ASSERT_LAUNCH(mul, {view(x), view(y), view(out), Arg(1.0)});
  EXPECT_CLOSE(out, expected, toleranceFor(dt, Op::Elementwise));
}

TEST_P(SeedVectorOperations, Reductions) {
  auto [dt, n, warps] = GetParam();
  HostTensor x = HostTensor::empty({n}, dt), y = HostTensor::empty({n}, dt);
  fillUniform(x, 63);
  fillUniform(y, 64);
  HostTensor out = HostTensor::zeros({1}, DType::F32);
  Tolerance tol = toleranceFor(dt, Op::Reduction, n);
  const char *file = "vector_operations";

  auto dot = seedKernel(file, file, vectorOp(dt, "dot", warps));
  ASSERT_LAUNCH(dot, {view(x), view(y), view(out), Arg(1.0)});
  EXPECT_TRUE(isClose(out.at(0), ref::dot(x, y), tol))
      << out.at(0) << " vs " << ref::dot(x, y);

  out.fill(0);
  auto norm = seedKernel(file, file, vectorOp(dt, "norm", warps));
  ASSERT_LAUNCH(norm, {view(x), view(y), view(out), Arg(1.0)});
  double sq = ref::norm2(x) * ref::norm2(x);
  EXPECT_TRUE(isClose(out.at(0), sq, tol)) << out.at(0) << " vs " << sq;

  out.fill(0);
  auto sum = seedKernel(file, file, vectorOp(dt, "reduce_sum", warps));
  ASSERT_LAUNCH(sum, {view(x), view(y), view(out), Arg(1.0)});
  EXPECT_TRUE(isClose(out.at(0), ref::reduceSum(x), tol))
      << out.at(0) << " vs " << ref::reduceSum(x);

  out.fill(-std::numeric_limits<double>::infinity());
  auto mx = seedKernel(file, file, vectorOp(dt, "reduce_max", warps));
  ASSERT_LAUNCH(mx, {view(x), view(y), view(out), Arg(1.0)});
  EXPECT_EQ(out.at(0), ref::reduceMax(x));
}

INSTANTIATE_TEST_SUITE_P(Seed, SeedVectorOperations,
                         ::testing::ValuesIn(vectorCases()), vectorName);

struct RowCase {
  DType dtype;
  int64_t rows, cols;
  bool causal;
  int warps;
};
std::string rowName(const ::testing::TestParamInfo<RowCase> &i) {
  return std::string(dtypeName(i.param.dtype)) + "_" +
         std::to_string(i.param.rows) + "x" + std::to_string(i.param.cols) +
         (i.param.causal ? "_causal" : "") + "_w" +
         std::to_string(i.param.warps);
}

class SeedLayerNorm : public ::testing::TestWithParam<RowCase> {};

TEST_P(SeedLayerNorm, MatchesReference) {
  const RowCase &c = GetParam();
  auto kernel = seedKernel(
      "layernorm_safe", "layernorm_safe",
      withPrecision(c.dtype, {{"num_warps", ConstValue::integer(c.warps)}}));
  // [B, S, H] with B = 2: blocks along both grid axes.
  const int64_t b = 2, s = c.rows, h = c.cols;
  HostTensor x = HostTensor::empty({b, s, h}, c.dtype);
  HostTensor w = HostTensor::empty({h}, c.dtype);
  HostTensor bias = HostTensor::empty({h}, c.dtype);
  HostTensor y = HostTensor::empty({b, s, h}, c.dtype);
  fillNormal(x, 65, 0.5, 2.0);
  fillUniform(w, 66, 0.5, 1.5);
  fillUniform(bias, 67);
  HostTensor expected = HostTensor::empty({b * s, h}, DType::F32);
  ref::layerNorm(x.reshapedContiguous({b * s, h}), w, bias, expected, 1e-5);
  ASSERT_LAUNCH(kernel, {view(x), view(w), view(bias), view(y), Arg(1e-5)});
  EXPECT_CLOSE(y.reshapedContiguous({b * s, h}), expected,
               toleranceFor(c.dtype, Op::LayerNorm, h));
}

INSTANTIATE_TEST_SUITE_P(
    Seed, SeedLayerNorm,
    ::testing::Values(RowCase{DType::F32, 1, 1, false, 4},
                      RowCase{DType::F32, 3, 300, false, 4},
                      RowCase{DType::F32, 2, 4096, false, 8},
                      RowCase{DType::F16, 3, 513, false, 4},
                      RowCase{DType::BF16, 2, 1024, false, 4}),
    rowName);

class SeedSoftmax : public ::testing::TestWithParam<RowCase> {};

TEST_P(SeedSoftmax, MatchesReference) {
  const RowCase &c = GetParam();
  auto kernel = seedKernel(
      "softmax_safe", "softmax_safe",
      withPrecision(c.dtype, {{"causal_mask", ConstValue::boolean(c.causal)},
                              {"num_warps", ConstValue::integer(c.warps)}}));
  // [B, H, Sq, Sk] = [2, 2, rows, cols]: blocks along the three grid axes.
  const int64_t bh = 4;
  HostTensor x = HostTensor::empty({2, 2, c.rows, c.cols}, c.dtype);
  HostTensor y = HostTensor::empty({2, 2, c.rows, c.cols}, c.dtype);
  fillNormal(x, 68, 0.0, 2.0);
  ASSERT_LAUNCH(kernel, {view(x), view(y)});
  // Each (batch, head) plane is a [rows, cols] softmax with the causal mask
  // on the query index.
  for (int64_t p = 0; p < bh; ++p) {
    HostTensor plane = HostTensor::empty({c.rows, c.cols}, c.dtype);
    HostTensor got = HostTensor::empty({c.rows, c.cols}, c.dtype);
    for (int64_t i = 0; i < c.rows * c.cols; ++i) {
      plane.setAt(i, x.at(p * c.rows * c.cols + i));
      got.setAt(i, y.at(p * c.rows * c.cols + i));
    }
    HostTensor expected = HostTensor::empty({c.rows, c.cols}, DType::F32);
    ref::softmax(plane, expected, c.causal);
    EXPECT_CLOSE(got, expected, toleranceFor(c.dtype, Op::Softmax, c.cols))
        << "plane " << p;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Seed, SeedSoftmax,
    ::testing::Values(RowCase{DType::F32, 1, 1, false, 4},
                      RowCase{DType::F32, 3, 77, false, 4},
                      RowCase{DType::F32, 5, 77, true, 4},
                      RowCase{DType::F32, 2, 2048, false, 8},
                      RowCase{DType::F16, 4, 300, true, 4},
                      RowCase{DType::BF16, 3, 129, false, 4}),
    rowName);

struct BandwidthCase {
  DType dtype;
  std::string op, pattern;
  int64_t n;
};
std::string bandwidthName(const ::testing::TestParamInfo<BandwidthCase> &i) {
  return std::string(dtypeName(i.param.dtype)) + "_" + i.param.op + "_" +
         i.param.pattern + "_n" + std::to_string(i.param.n);
}

class SeedMemoryBandwidth : public ::testing::TestWithParam<BandwidthCase> {};

// The seed's contract (memory_bandwidth.tile's header): which elements a
// pattern reaches, and the operation on them; the rest of c is untouched.
TEST_P(SeedMemoryBandwidth, MatchesReference) {
  const BandwidthCase &c = GetParam();
  auto kernel = seedKernel(
      "memory_bandwidth", "memory_bandwidth_kernel",
      withPrecision(c.dtype, {{"operation", ConstValue::string(c.op)},
                              {"access_pattern", ConstValue::string(c.pattern)},
                              {"num_warps", ConstValue::integer(4)}}));
  HostTensor a = HostTensor::empty({c.n}, c.dtype);
  HostTensor b = HostTensor::empty({c.n}, c.dtype);
  HostTensor out = HostTensor::empty({c.n}, c.dtype);
  fillUniform(a, 71);
  fillUniform(b, 72);
  for (int64_t i = 0; i < c.n; ++i)
    out.setAt(i, -7.0);
  HostTensor expected = out.clone();
  const double scalar = 1.5;
  const int64_t threads = (c.n + 127) / 128 * 128;
  for (int64_t i = 0; i < threads; ++i) {
    int64_t idx = i;
    if (c.pattern.rfind("strided_", 0) == 0)
      idx = i * std::stoll(c.pattern.substr(8));
    else if (c.pattern == "random")
      idx = (i * 1103515245 + 12345) % c.n;
    if (idx >= c.n)
      continue;
    double x = a.at(idx), y = b.at(idx), v;
    // The product rounds to the storage type before the sum, as the
    // kernel computes in it.
    auto round = [&](double t) {
      HostTensor one = HostTensor::empty({1}, c.dtype);
      one.setAt(0, t);
      return one.at(0);
    };
    if (c.op == "copy")
      v = x;
    else if (c.op == "scale")
      v = round(scalar * x);
    else if (c.op == "add")
      v = round(x + y);
    else
      v = round(x + round(scalar * y));
    expected.setAt(idx, v);
  }
  ASSERT_LAUNCH(kernel,
                {view(a), view(b), view(out), Arg(scalar), Arg(int64_t(1))});
  EXPECT_CLOSE(out, expected, toleranceFor(c.dtype, Op::Elementwise));
}

std::vector<BandwidthCase> bandwidthCases() {
  std::vector<BandwidthCase> v;
  for (const char *op : {"copy", "scale", "add", "triad"})
    for (const char *pat : {"sequential", "strided_3", "random"})
      v.push_back({DType::F32, op, pat, 1000});
  v.push_back({DType::F16, "triad", "sequential", 4099});
  v.push_back({DType::BF16, "scale", "strided_2", 513});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Seed, SeedMemoryBandwidth,
                         ::testing::ValuesIn(bandwidthCases()), bandwidthName);

} // namespace
