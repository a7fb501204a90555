//===- CudaKernelsTest.cpp - Tests for the CUDA C++ baselines -------------===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
//
// Every CUDA C++ baseline source compiles with NVRTC through
// Runtime::compileCuda: without a GPU the result is UNAVAILABLE (the source
// compiled, then the device could not be opened), never INVALID_ARGUMENT. A
// deliberately broken source shows that a compile error would be caught.
// With a GPU, each kernel runs on small host arrays (staged by the runtime)
// and is compared with a straightforward host loop.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"

#include "tessera/Target/CUDA/Nvrtc.h"

#include "BaselinesTestUtil.h"
#include <gmock/gmock.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace tessera;
using namespace tessera::bench;
using ::testing::HasSubstr;

namespace {

// Leaked on purpose: a process-wide Runtime must outlive every static
// destructor that might still touch it.
Runtime &rt() {
  static Runtime *r = new Runtime;
  return *r;
}

std::vector<CudaKernelSource> allSources() {
  std::vector<CudaKernelSource> sources;
  for (std::string_view op : cudakernels::kElementwiseOps)
    sources.push_back(cudakernels::elementwise(std::string(op)));
  for (std::string_view op : cudakernels::kGatherOps)
    sources.push_back(cudakernels::gather(std::string(op)));
  sources.push_back(cudakernels::axpy());
  for (std::string_view op : cudakernels::kReduceOps)
    sources.push_back(cudakernels::reduce(std::string(op)));
  sources.push_back(cudakernels::softmax());
  sources.push_back(cudakernels::layerNorm());
  return sources;
}

bool haveGpu() { return rt().deviceStatus(DeviceKind::Cuda).ok(); }

using tessera::bench::baselinetest::randomVector;

TensorView f32(std::vector<float> &v) {
  return TensorView::contiguous(v.data(), DType::F32, {int64_t(v.size())});
}

/// Compiles `src` for the GPU; fails the test when it does not compile.
std::shared_ptr<Kernel> compileOnGpu(const CudaKernelSource &src) {
  auto k = rt().compileCuda(src);
  EXPECT_TRUE(k.ok()) << src.name << ": " << k.status().toString();
  return k.ok() ? *k : nullptr;
}

/// Closeness allowing for a fused multiply-add versus separate operations
/// and for the GPU's expf.
bool close(double got, double want, double rel = 1e-5, double abs = 1e-6) {
  return std::fabs(got - want) <= abs + rel * std::fabs(want);
}

} // namespace

TEST(CudaKernels, SourcesAreWellFormed) {
  for (const CudaKernelSource &src : allSources()) {
    SCOPED_TRACE(src.name);
    EXPECT_EQ(src.name, src.kernel + ".cu");
    EXPECT_THAT(src.source, HasSubstr("extern \"C\" __global__"));
    EXPECT_THAT(src.source, HasSubstr(src.kernel + "(const float *"));
    EXPECT_THAT(src.source, ::testing::Not(HasSubstr("$")));
    EXPECT_TRUE(src.grid.empty());
    EXPECT_EQ(src.block[0], cudakernels::kBlockSize);
    EXPECT_EQ(src.block[1] * src.block[2], 1);
    EXPECT_EQ(src.dynamicSharedBytes, 0);
    EXPECT_FALSE(src.signature.empty());
  }
}

TEST(CudaKernels, Grids) {
  using Grid = std::array<int64_t, 3>;
  EXPECT_EQ(cudakernels::elementwiseGrid(0), (Grid{0, 1, 1}));
  EXPECT_EQ(cudakernels::elementwiseGrid(1), (Grid{1, 1, 1}));
  EXPECT_EQ(cudakernels::elementwiseGrid(256), (Grid{1, 1, 1}));
  EXPECT_EQ(cudakernels::elementwiseGrid(257), (Grid{2, 1, 1}));
  EXPECT_EQ(cudakernels::elementwiseGrid(int64_t(1) << 32),
            (Grid{int64_t(1) << 24, 1, 1}));
  EXPECT_EQ(cudakernels::reduceGrid(0), (Grid{0, 1, 1}));
  EXPECT_EQ(cudakernels::reduceGrid(1000), (Grid{4, 1, 1}));
  EXPECT_EQ(cudakernels::reduceGrid(int64_t(1) << 30),
            (Grid{cudakernels::kReduceBlocksPerSM * 132, 1, 1}));
  EXPECT_EQ(cudakernels::reduceGrid(int64_t(1) << 30, 8),
            (Grid{cudakernels::kReduceBlocksPerSM * 8, 1, 1}));
  EXPECT_EQ(cudakernels::rowGrid(0), (Grid{0, 1, 1}));
  EXPECT_EQ(cudakernels::rowGrid(4096), (Grid{4096, 1, 1}));
  EXPECT_EQ(cudakernels::reduceIdentity("sum"), 0.0f);
  EXPECT_EQ(cudakernels::reduceIdentity("max"),
            -std::numeric_limits<float>::infinity());
}

// The check this file exists for: NVRTC accepts every source. Without a GPU
// the source is compiled before the device is found missing.
TEST(CudaKernels, EverySourceCompilesWithNvrtc) {
  if (Status nvrtc = cuda::nvrtcAvailable(); !nvrtc.ok())
    GTEST_SKIP() << nvrtc.toString();
  bool gpu = haveGpu();
  for (const CudaKernelSource &src : allSources()) {
    auto start = std::chrono::steady_clock::now();
    auto k = rt().compileCuda(src);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    std::printf("  %-28s %7.1f ms\n", src.name.c_str(), ms);
    if (gpu) {
      EXPECT_TRUE(k.ok()) << src.name << ": " << k.status().toString();
      continue;
    }
    ASSERT_FALSE(k.ok()) << src.name << " compiled without a GPU";
    EXPECT_NE(k.status().code(), StatusCode::kInvalidArgument)
        << src.name << ":\n"
        << k.status().toString();
    EXPECT_EQ(k.status().code(), StatusCode::kUnavailable)
        << src.name << ": " << k.status().toString();
  }
}

// A compile error is INVALID_ARGUMENT carrying the NVRTC log, with or
// without a GPU: the test above would catch a broken baseline.
TEST(CudaKernels, BrokenSourceIsRejectedWithTheNvrtcLog) {
  if (Status nvrtc = cuda::nvrtcAvailable(); !nvrtc.ok())
    GTEST_SKIP() << nvrtc.toString();
  CudaKernelSource src = cudakernels::elementwise("triad");
  size_t pos = src.source.find("s * b[j]");
  ASSERT_NE(pos, std::string::npos);
  src.source.replace(pos, 8, "s * undeclared_operand");
  auto k = rt().compileCuda(src);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument)
      << k.status().toString();
  EXPECT_THAT(k.status().message(), HasSubstr("baseline_triad.cu"));
  EXPECT_THAT(k.status().message(), HasSubstr("undeclared_operand"));

  for (const CudaKernelSource &bad :
       {cudakernels::elementwise("nope"), cudakernels::gather("mul"),
        cudakernels::reduce("min")}) {
    auto u = rt().compileCuda(bad);
    ASSERT_FALSE(u.ok()) << bad.name;
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument)
        << u.status().toString();
    EXPECT_THAT(u.status().message(), HasSubstr("unknown"));
  }
}

//===----------------------------------------------------------------------===//
// On a GPU: results against host loops.
//===----------------------------------------------------------------------===//

TEST(CudaKernels, ElementwiseMatchesHost) {
  if (!haveGpu())
    GTEST_SKIP() << rt().deviceStatus(DeviceKind::Cuda).toString();
  const float s = 2.5f;
  const float sentinel = 7.0f;
  for (std::string_view op : cudakernels::kElementwiseOps) {
    auto k = compileOnGpu(cudakernels::elementwise(std::string(op)));
    ASSERT_TRUE(k);
    for (int64_t stride : {1, 3}) {
      for (int64_t n : {1, 255, 1000, 4097}) {
        SCOPED_TRACE(std::string(op) + " n=" + std::to_string(n) +
                     " stride=" + std::to_string(stride));
        size_t span = size_t((n - 1) * stride + 1);
        std::vector<float> a = randomVector(span, 1), b = randomVector(span, 2);
        std::vector<float> c(span, sentinel);
        LaunchOptions opts;
        opts.grid = cudakernels::elementwiseGrid(n);
        Status st = k->launch(
            {f32(a), f32(b), f32(c), Arg(s), Arg(n), Arg(stride)}, opts);
        ASSERT_TRUE(st.ok()) << st.toString();
        for (size_t j = 0; j < span; ++j) {
          if (j % size_t(stride) != 0) {
            ASSERT_EQ(c[j], sentinel) << "gap element " << j << " written";
            continue;
          }
          double want = op == "copy"    ? a[j]
                        : op == "scale" ? double(s) * a[j]
                        : op == "add"   ? double(a[j]) + b[j]
                        : op == "triad" ? a[j] + double(s) * b[j]
                                        : double(a[j]) * b[j];
          ASSERT_TRUE(close(c[j], want)) << j << ": " << c[j] << " vs " << want;
        }
      }
    }
  }
}

TEST(CudaKernels, GatherMatchesHost) {
  if (!haveGpu())
    GTEST_SKIP() << rt().deviceStatus(DeviceKind::Cuda).toString();
  const float s = -1.5f;
  const int64_t m = 500, n = 1000;
  std::vector<float> a = randomVector(m, 3), b = randomVector(m, 4);
  std::vector<int32_t> idx(n);
  std::mt19937 rng(5);
  for (int32_t &i : idx)
    i = int32_t(rng() % uint32_t(m)); // repeats included
  for (std::string_view op : cudakernels::kGatherOps) {
    SCOPED_TRACE(std::string(op));
    auto k = compileOnGpu(cudakernels::gather(std::string(op)));
    ASSERT_TRUE(k);
    std::vector<float> c(n, 0.0f);
    LaunchOptions opts;
    opts.grid = cudakernels::elementwiseGrid(n);
    Status st = k->launch({f32(a), f32(b),
                           TensorView::contiguous(idx.data(), DType::I32, {n}),
                           f32(c), Arg(s), Arg(n)},
                          opts);
    ASSERT_TRUE(st.ok()) << st.toString();
    for (int64_t i = 0; i < n; ++i) {
      float x = a[idx[i]], y = b[idx[i]];
      double want = op == "copy"    ? x
                    : op == "scale" ? double(s) * x
                    : op == "add"   ? double(x) + y
                                    : x + double(s) * y;
      ASSERT_TRUE(close(c[i], want)) << i << ": " << c[i] << " vs " << want;
    }
  }
}

TEST(CudaKernels, AxpyMatchesHost) {
  if (!haveGpu())
    GTEST_SKIP() << rt().deviceStatus(DeviceKind::Cuda).toString();
  auto k = compileOnGpu(cudakernels::axpy());
  ASSERT_TRUE(k);
  const float alpha = 0.75f;
  for (int64_t stride : {1, 2}) {
    const int64_t n = 3001;
    size_t span = size_t((n - 1) * stride + 1);
    std::vector<float> x = randomVector(span, 6), y = randomVector(span, 7);
    std::vector<float> y0 = y;
    LaunchOptions opts;
    opts.grid = cudakernels::elementwiseGrid(n);
    Status st =
        k->launch({f32(x), f32(y), Arg(alpha), Arg(n), Arg(stride)}, opts);
    ASSERT_TRUE(st.ok()) << st.toString();
    for (size_t j = 0; j < span; ++j) {
      double want = j % size_t(stride) == 0 ? y0[j] + double(alpha) * x[j]
                                            : double(y0[j]);
      ASSERT_TRUE(close(y[j], want)) << j << ": " << y[j] << " vs " << want;
    }
  }
}

TEST(CudaKernels, ReductionsMatchHost) {
  if (!haveGpu())
    GTEST_SKIP() << rt().deviceStatus(DeviceKind::Cuda).toString();
  auto info = rt().deviceInfo(DeviceKind::Cuda);
  ASSERT_TRUE(info.ok()) << info.status().toString();
  // Up to sizes where every thread of the capped grid runs the unrolled
  // grid-stride loop several times; the negative range checks max on
  // sign-bit-set floats.
  for (std::string_view op : cudakernels::kReduceOps) {
    auto k = compileOnGpu(cudakernels::reduce(std::string(op)));
    ASSERT_TRUE(k);
    for (int64_t n : {1, 1000, 100003, 2000003}) {
      for (float lo : {-1.0f, -20.0f}) {
        SCOPED_TRACE(std::string(op) + " n=" + std::to_string(n) +
                     " lo=" + std::to_string(lo));
        float hi = lo + 2.0f;
        std::vector<float> a = randomVector(size_t(n), 8, lo, hi);
        std::vector<float> b = randomVector(size_t(n), 9, lo, hi);
        std::vector<float> out = {cudakernels::reduceIdentity(std::string(op))};
        LaunchOptions opts;
        opts.grid = cudakernels::reduceGrid(n, info->computeUnits);
        Status st = k->launch({f32(a), f32(b), f32(out), Arg(n)}, opts);
        ASSERT_TRUE(st.ok()) << st.toString();
        double want =
            op == "max" ? -std::numeric_limits<double>::infinity() : 0.0;
        double magnitude = 0;
        for (int64_t i = 0; i < n; ++i) {
          double t = op == "dot"     ? double(a[i]) * b[i]
                     : op == "sumsq" ? double(a[i]) * a[i]
                                     : double(a[i]);
          want = op == "max" ? std::max(want, t) : want + t;
          magnitude += std::fabs(t);
        }
        if (op == "max")
          EXPECT_EQ(out[0], float(want));
        else
          EXPECT_NEAR(out[0], want, 1e-5 * magnitude + 1e-6);
      }
    }
  }
}

TEST(CudaKernels, SoftmaxMatchesHost) {
  if (!haveGpu())
    GTEST_SKIP() << rt().deviceStatus(DeviceKind::Cuda).toString();
  auto k = compileOnGpu(cudakernels::softmax());
  ASSERT_TRUE(k);
  const int64_t rows = 6, rowsPerMatrix = 3;
  for (int64_t cols : {1, 37, 1000}) {
    for (int64_t causal : {0, 1}) {
      SCOPED_TRACE("cols=" + std::to_string(cols) +
                   " causal=" + std::to_string(causal));
      std::vector<float> x = randomVector(size_t(rows * cols), 10, -8, 8);
      std::vector<float> y(x.size(), -1.0f);
      LaunchOptions opts;
      opts.grid = cudakernels::rowGrid(rows);
      Status st = k->launch({f32(x), f32(y), Arg(rows), Arg(cols),
                             Arg(rowsPerMatrix), Arg(causal)},
                            opts);
      ASSERT_TRUE(st.ok()) << st.toString();
      for (int64_t r = 0; r < rows; ++r) {
        int64_t limit = causal ? std::min(cols, r % rowsPerMatrix + 1) : cols;
        double m = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t j = 0; j < limit; ++j)
          m = std::max(m, double(x[r * cols + j]));
        for (int64_t j = 0; j < limit; ++j)
          sum += std::exp(x[r * cols + j] - m);
        for (int64_t j = 0; j < cols; ++j) {
          float got = y[r * cols + j];
          if (j >= limit) {
            ASSERT_EQ(got, 0.0f) << r << "," << j;
            continue;
          }
          double want = std::exp(x[r * cols + j] - m) / sum;
          ASSERT_TRUE(close(got, want, 1e-5, 1e-7))
              << r << "," << j << ": " << got << " vs " << want;
        }
      }
    }
  }
}

TEST(CudaKernels, LayerNormMatchesHost) {
  if (!haveGpu())
    GTEST_SKIP() << rt().deviceStatus(DeviceKind::Cuda).toString();
  auto k = compileOnGpu(cudakernels::layerNorm());
  ASSERT_TRUE(k);
  const int64_t rows = 5;
  const float eps = 1e-5f;
  for (int64_t hidden : {1, 300, 1027}) {
    SCOPED_TRACE("hidden=" + std::to_string(hidden));
    // A large mean: the centred second pass keeps the variance accurate.
    std::vector<float> x = randomVector(size_t(rows * hidden), 11, 99, 101);
    std::vector<float> w = randomVector(size_t(hidden), 12, 0.5f, 1.5f);
    std::vector<float> b = randomVector(size_t(hidden), 13);
    std::vector<float> y(x.size(), -1.0f);
    LaunchOptions opts;
    opts.grid = cudakernels::rowGrid(rows);
    Status st = k->launch(
        {f32(x), f32(w), f32(b), f32(y), Arg(rows), Arg(hidden), Arg(eps)},
        opts);
    ASSERT_TRUE(st.ok()) << st.toString();
    for (int64_t r = 0; r < rows; ++r) {
      const float *xr = x.data() + r * hidden;
      double mean = 0, var = 0;
      for (int64_t j = 0; j < hidden; ++j)
        mean += xr[j];
      mean /= double(hidden);
      for (int64_t j = 0; j < hidden; ++j)
        var += (xr[j] - mean) * (xr[j] - mean);
      var /= double(hidden);
      double rstd = 1.0 / std::sqrt(var + eps);
      for (int64_t j = 0; j < hidden; ++j) {
        double want = (xr[j] - mean) * rstd * w[j] + b[j];
        float got = y[r * hidden + j];
        ASSERT_TRUE(close(got, want, 1e-3, 1e-3))
            << r << "," << j << ": " << got << " vs " << want;
      }
    }
  }
}
