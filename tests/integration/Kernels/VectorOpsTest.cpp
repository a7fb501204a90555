//===- VectorOpsTest.cpp - vector_ops.tile and stream.tile on cpu ---------===//

#include "KernelTest.h"

#include <cmath>
#include <limits>

using namespace tessera;
using namespace tessera::testing;
namespace ref = tessera::testing;

// Once per binary: skip everything when TESSERA_DEVICE names a device this
// machine does not have.
static ::testing::Environment *const kDeviceEnvironment =
    ::testing::AddGlobalTestEnvironment(new TestDeviceEnvironment);

namespace {

// Sizes: single element, below a vector width, non-power-of-two, tile-edge
// tails around the block size, several blocks.
const int64_t kSizes[] = {1, 3, 17, 255, 1024, 1025, 4099, 100003};
const DType kFloatTypes[] = {DType::F32, DType::F16, DType::BF16};

struct Case {
  DType dtype;
  int64_t n;
};
std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return std::string(dtypeName(info.param.dtype)) + "_n" +
         std::to_string(info.param.n);
}
std::vector<Case> allCases() {
  std::vector<Case> cases;
  for (DType t : kFloatTypes)
    for (int64_t n : kSizes)
      cases.push_back({t, n});
  return cases;
}

class VectorOps : public ::testing::TestWithParam<Case> {};

TEST_P(VectorOps, Axpy) {
  auto [dt, n] = GetParam();
  auto k = libraryKernel("vector_ops", "axpy", withPrecision(dt));
  HostTensor x = HostTensor::empty({n}, dt), y = HostTensor::empty({n}, dt);
  fillUniform(x, 1);
  fillUniform(y, 2);
  HostTensor expected = y.clone();
  ref::axpy(1.5, x, expected);
  ASSERT_LAUNCH(k, {view(x), view(y), Arg(1.5)});
  EXPECT_CLOSE(y, expected, toleranceFor(dt, Op::Elementwise));
}

TEST_P(VectorOps, AddMul) {
  auto [dt, n] = GetParam();
  HostTensor x = HostTensor::empty({n}, dt), y = HostTensor::empty({n}, dt);
  HostTensor out = HostTensor::empty({n}, dt);
  fillUniform(x, 3);
  fillUniform(y, 4);
  HostTensor expected = HostTensor::empty({n}, dt);
  auto add = libraryKernel("vector_ops", "add", withPrecision(dt));
  ref::add(x, y, expected);
  ASSERT_LAUNCH(add, {view(x), view(y), view(out)});
  EXPECT_CLOSE(out, expected, toleranceFor(dt, Op::Elementwise));
  auto mul = libraryKernel("vector_ops", "mul", withPrecision(dt));
  ref::mul(x, y, expected);
  ASSERT_LAUNCH(mul, {view(x), view(y), view(out)});
  EXPECT_CLOSE(out, expected, toleranceFor(dt, Op::Elementwise));
}

TEST_P(VectorOps, DotNormSumMax) {
  auto [dt, n] = GetParam();
  HostTensor x = HostTensor::empty({n}, dt), y = HostTensor::empty({n}, dt);
  fillUniform(x, 5);
  fillUniform(y, 6);
  HostTensor out = HostTensor::zeros({1}, DType::F32);
  Tolerance tol = toleranceFor(dt, Op::Reduction, n);

  auto dot = libraryKernel("vector_ops", "dot", withPrecision(dt));
  ASSERT_LAUNCH(dot, {view(x), view(y), view(out)});
  EXPECT_TRUE(isClose(out.at(0), ref::dot(x, y), tol))
      << out.at(0) << " vs " << ref::dot(x, y);

  out.fill(0);
  auto norm = libraryKernel("vector_ops", "norm", withPrecision(dt));
  auto fin = libraryKernel("vector_ops", "norm_finalize", withPrecision(dt));
  ASSERT_LAUNCH(norm, {view(x), view(out)});
  ASSERT_LAUNCH(fin, {view(out)});
  EXPECT_TRUE(isClose(out.at(0), ref::norm2(x), tol))
      << out.at(0) << " vs " << ref::norm2(x);

  out.fill(0);
  auto sum = libraryKernel("vector_ops", "reduce_sum", withPrecision(dt));
  ASSERT_LAUNCH(sum, {view(x), view(out)});
  EXPECT_TRUE(isClose(out.at(0), ref::reduceSum(x), tol));

  out.fill(-std::numeric_limits<double>::infinity());
  auto mx = libraryKernel("vector_ops", "reduce_max", withPrecision(dt));
  ASSERT_LAUNCH(mx, {view(x), view(out)});
  EXPECT_EQ(out.at(0), ref::reduceMax(x));
}

INSTANTIATE_TEST_SUITE_P(Cpu, VectorOps, ::testing::ValuesIn(allCases()),
                         caseName);

// fp8_e4m3 has no infinity: padding the last block with other=-inf loaded
// NaN there and made every fp8_e4m3 maximum NaN. All-negative data, a
// partial last block.
TEST(VectorOpsEdge, ReduceMaxFp8E4M3) {
  for (int64_t n : {int64_t(1), int64_t(1025), int64_t(4099)}) {
    HostTensor x = HostTensor::empty({n}, DType::F8E4M3);
    fillUniform(x, 8, -3.0, -1.0);
    HostTensor out = HostTensor::empty({1}, DType::F32);
    out.fill(-std::numeric_limits<double>::infinity());
    auto mx =
        libraryKernel("vector_ops", "reduce_max", withPrecision(DType::F8E4M3));
    ASSERT_LAUNCH(mx, {view(x), view(out)});
    EXPECT_EQ(out.at(0), ref::reduceMax(x)) << "n=" << n;
  }
}

TEST(VectorOpsEdge, NaNAndInfPropagate) {
  const int64_t n = 3000;
  HostTensor x = HostTensor::empty({n}, DType::F32);
  fillUniform(x, 7);
  setNaNAt(x, 2500);
  HostTensor out = HostTensor::full({1}, DType::F32,
                                    -std::numeric_limits<double>::infinity());
  auto mx = libraryKernel("vector_ops", "reduce_max");
  ASSERT_LAUNCH(mx, {view(x), view(out)});
  EXPECT_TRUE(std::isnan(out.at(0))) << "max of a NaN-containing vector";
  out.fill(0);
  auto sum = libraryKernel("vector_ops", "reduce_sum");
  x = HostTensor::empty({n}, DType::F32);
  fillUniform(x, 8);
  setInfAt(x, 10);
  ASSERT_LAUNCH(sum, {view(x), view(out)});
  EXPECT_EQ(out.at(0), std::numeric_limits<double>::infinity());
}

TEST(VectorOpsEdge, DataPatterns) {
  const int64_t n = 777;
  for (DataPattern pat : kAllDataPatterns) {
    HostTensor x = HostTensor::empty({n}, DType::F32);
    HostTensor y = HostTensor::empty({n}, DType::F32);
    fillPattern(x, pat);
    fillPattern(y, pat);
    HostTensor expected = y.clone();
    ref::axpy(-0.5, x, expected);
    auto k = libraryKernel("vector_ops", "axpy");
    ASSERT_LAUNCH(k, {view(x), view(y), Arg(-0.5)});
    EXPECT_CLOSE(y, expected, toleranceFor(DType::F32, Op::Elementwise))
        << dataPatternName(pat);
  }
}

TEST(VectorOpsEdge, EmptyVectorIsANoOp) {
  HostTensor x = HostTensor::empty({0}, DType::F32);
  HostTensor y = HostTensor::empty({0}, DType::F32);
  auto k = libraryKernel("vector_ops", "axpy");
  ASSERT_LAUNCH(k, {view(x), view(y), Arg(2.0)});
}

//===----------------------------------------------------------------------===//
// STREAM
//===----------------------------------------------------------------------===//

class Stream : public ::testing::TestWithParam<int64_t> {};

TEST_P(Stream, SequentialAndStrided) {
  int64_t stride = GetParam();
  for (int64_t n : {int64_t(1), int64_t(1000), int64_t(65537)}) {
    HostTensor a = HostTensor::strided({n}, {stride}, DType::F32);
    HostTensor b = HostTensor::strided({n}, {stride}, DType::F32);
    HostTensor c = HostTensor::strided({n}, {stride}, DType::F32);
    fillUniform(a, 11);
    fillUniform(b, 12);
    HostTensor expected = HostTensor::empty({n}, DType::F32);
    Tolerance tol = toleranceFor(DType::F32, Op::Elementwise);

    ASSERT_LAUNCH(libraryKernel("stream", "copy"), {view(a), view(c)});
    ref::streamCopy(a, expected);
    EXPECT_CLOSE(c, expected, tol);
    ASSERT_LAUNCH(libraryKernel("stream", "scale"),
                  {view(a), view(c), Arg(3.0)});
    ref::streamScale(a, expected, 3.0);
    EXPECT_CLOSE(c, expected, tol);
    ASSERT_LAUNCH(libraryKernel("stream", "add"), {view(a), view(b), view(c)});
    ref::streamAdd(a, b, expected);
    EXPECT_CLOSE(c, expected, tol);
    ASSERT_LAUNCH(libraryKernel("stream", "triad"),
                  {view(a), view(b), view(c), Arg(3.0)});
    ref::streamTriad(a, b, expected, 3.0);
    EXPECT_CLOSE(c, expected, tol);
    // Nothing outside the strided views was written.
    EXPECT_EQ(c.countChangedBytesOutsideView(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, Stream, ::testing::Values(1, 2, 4, 8));

// The GPU lowering moves up to 16 bytes per thread and access when every
// tensor is aligned to that at run time (and runs the element loop
// otherwise), with the last, partial chunk of a row element by element.
// Views starting 0, 1, 3 or 4 elements into their storage, mixed, at
// lengths around the chunk size: both versions must give the reference,
// and nothing outside the views may be written (on `sim` a vector access
// that is not aligned as it promises fails the launch).
TEST(StreamEdge, MisalignedViewsAndPartialChunks) {
  struct Offsets {
    int64_t a, b, c;
  };
  const Offsets offsets[] = {
      {0, 0, 0}, {4, 4, 4}, {1, 1, 1}, {0, 3, 0}, {0, 0, 1}};
  for (DType dt : {DType::F32, DType::F16})
    for (int64_t n : {int64_t(1), int64_t(7), int64_t(8), int64_t(1029)})
      for (Offsets o : offsets) {
        SCOPED_TRACE(std::string(dtypeName(dt)) + " n=" + std::to_string(n) +
                     " offsets " + std::to_string(o.a) + "," +
                     std::to_string(o.b) + "," + std::to_string(o.c));
        HostTensor a = HostTensor::padded({n}, dt, {0}, o.a);
        HostTensor b = HostTensor::padded({n}, dt, {0}, o.b);
        HostTensor c = HostTensor::padded({n}, dt, {0}, o.c);
        fillUniform(a, 31);
        fillUniform(b, 32);
        HostTensor expected = HostTensor::empty({n}, dt);
        ASSERT_LAUNCH(libraryKernel("stream", "triad", withPrecision(dt)),
                      {view(a), view(b), view(c), Arg(3.0)});
        ref::streamTriad(a, b, expected, 3.0);
        EXPECT_CLOSE(c, expected, toleranceFor(dt, Op::Elementwise));
        EXPECT_EQ(c.countChangedBytesOutsideView(), 0);
      }
}

TEST(StreamGather, RandomAccess) {
  const int64_t m = 5000, n = 12345;
  HostTensor a = HostTensor::empty({m}, DType::F32);
  HostTensor b = HostTensor::empty({m}, DType::F32);
  HostTensor idx = HostTensor::empty({n}, DType::I32);
  HostTensor c = HostTensor::empty({n}, DType::F32);
  fillUniform(a, 21);
  fillUniform(b, 22);
  fillRandomIndices(idx, 23, m);
  HostTensor expected = HostTensor::empty({n}, DType::F32);
  ref::gather(a, idx, expected);
  ASSERT_LAUNCH(libraryKernel("stream", "copy_gather"),
                {view(a), view(idx), view(c)});
  EXPECT_CLOSE(c, expected, toleranceFor(DType::F32, Op::Elementwise));
}

} // namespace
