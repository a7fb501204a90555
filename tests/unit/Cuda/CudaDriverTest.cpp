//===- CudaDriverTest.cpp - libcuda wrapper
//--------------------------------===//
//
// Without libcuda.so.1 only the UNAVAILABLE path runs; the GPU tests skip
// with the reason.
//
//===----------------------------------------------------------------------===//

#include "Cuda/CudaDevice.h"
#include "tessera/Target/CUDA/Nvrtc.h"

#include <gtest/gtest.h>

#include <vector>

using namespace tessera;
using namespace tessera::cuda;

namespace {

TEST(CudaDriver, OpenWithoutDriverIsUnavailableWithReason) {
  auto device = CudaDevice::open(0);
  if (device.ok())
    GTEST_SKIP() << "a CUDA device is present: "
                 << (*device)->properties().name;
  EXPECT_EQ(device.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(device.status().message().find("libcuda"), std::string::npos)
      << device.status().message();
  // The outcome is cached and stable.
  auto again = CudaDevice::open(0);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(), device.status().message());
  EXPECT_FALSE(CudaDevice::deviceCount().ok());
}

TEST(CudaDriver, NegativeOrdinalIsRejected) {
  auto device = CudaDevice::open(-1);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), StatusCode::kUnavailable);
}

TEST(CudaDriver, PropertiesAreSane) {
  auto device = CudaDevice::open(0);
  if (!device.ok())
    GTEST_SKIP() << device.status().message();
  const CudaDeviceProperties &p = (*device)->properties();
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(p.computeMajor, 5);
  EXPECT_GT(p.smCount, 0);
  EXPECT_GE(p.maxSharedPerBlockOptin, p.maxSharedPerBlock);
  EXPECT_GT(p.l2CacheBytes, 0);
  EXPECT_EQ(p.warpSize, 32);
  EXPECT_GT(p.peakBandwidthGBs(), 0.0);
}

TEST(CudaDriver, NvrtcSaxpyMatchesReference) {
  auto device = CudaDevice::open(0);
  if (!device.ok())
    GTEST_SKIP() << device.status().message();
  Status nvrtc = nvrtcAvailable();
  if (!nvrtc.ok())
    GTEST_SKIP() << nvrtc.message();
  CudaDevice &dev = **device;

  NvrtcOptions options;
  options.arch = dev.properties().archName();
  options.nameExpressions = {"saxpy<float>"};
  auto compiled = compileCuda(R"(
template <typename T>
__global__ void saxpy(T a, const T *x, T *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
})",
                              "saxpy.cu", options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().toString();

  auto module = dev.loadModule(compiled->cubin);
  ASSERT_TRUE(module.ok()) << module.status().toString();
  auto kernel = module->kernel(compiled->loweredNames["saxpy<float>"]);
  ASSERT_TRUE(kernel.ok()) << kernel.status().toString();

  const int n = 10007;
  std::vector<float> x(n), y(n), expected(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1.0f - i;
    expected[i] = 2.0f * x[i] + y[i];
  }
  size_t bytes = n * sizeof(float);
  auto dx = dev.allocate(bytes);
  auto dy = dev.allocate(bytes);
  ASSERT_TRUE(dx.ok() && dy.ok());
  ASSERT_TRUE(dev.copyToDevice(dx->address(), x.data(), bytes).ok());
  ASSERT_TRUE(dev.copyToDevice(dy->address(), y.data(), bytes).ok());

  auto stream = dev.createStream();
  auto start = dev.createEvent();
  auto stop = dev.createEvent();
  ASSERT_TRUE(stream.ok() && start.ok() && stop.ok());
  float a = 2.0f;
  CuDevicePtr px = dx->address(), py = dy->address();
  int count = n;
  void *params[] = {&a, &px, &py, &count};
  ASSERT_TRUE(start->record(stream->get()).ok());
  Status launched = dev.launch(*kernel, {(n + 255) / 256, 1, 1}, {256, 1, 1}, 0,
                               stream->get(), params);
  ASSERT_TRUE(launched.ok()) << launched.toString();
  ASSERT_TRUE(stop->record(stream->get()).ok());
  ASSERT_TRUE(stream->synchronize().ok());
  auto ms = CudaEvent::elapsedMs(*start, *stop);
  ASSERT_TRUE(ms.ok()) << ms.status().toString();
  EXPECT_GE(*ms, 0.0f);

  std::vector<float> result(n);
  ASSERT_TRUE(dev.copyToHost(result.data(), dy->address(), bytes).ok());
  for (int i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(result[i], expected[i]) << "at " << i;

  auto missing = module->kernel("noSuchKernel");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

} // namespace
