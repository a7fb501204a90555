//===- StreamTest.cpp - Streams, asynchronous launches and events ---------===//

#include "ScaleKernel.h"
#include "tessera/tessera.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <dlfcn.h>
#include <future>
#include <thread>
#include <type_traits>
#include <vector>

using namespace tessera;
using ::testing::HasSubstr;

namespace {

Runtime &streamRuntime() {
  static Runtime *r = new Runtime(RuntimeOptions{2});
  return *r;
}

std::shared_ptr<Kernel> scaleOn(DeviceKind device) {
  auto prog = streamRuntime().loadSource("stream.tile", test::kScaleKernel);
  EXPECT_TRUE(prog.ok()) << prog.status().toString();
  auto k = streamRuntime().compile(**prog, "scale", {}, device);
  EXPECT_TRUE(k.ok()) << k.status().toString();
  return k.ok() ? *k : nullptr;
}

/// A buffer of `n` floats on `device` holding `values`.
DeviceBuffer bufferOf(DeviceKind device, const std::vector<float> &values) {
  auto b = streamRuntime().allocate(device, values.size() * sizeof(float));
  EXPECT_TRUE(b.ok()) << b.status().toString();
  EXPECT_TRUE(b->copyFrom(values.data(), values.size() * sizeof(float)).ok());
  return std::move(*b);
}

std::vector<float> contents(const DeviceBuffer &b) {
  std::vector<float> out(b.bytes() / sizeof(float));
  EXPECT_TRUE(b.copyTo(out.data(), b.bytes()).ok());
  return out;
}

class StreamOnHostDevices : public ::testing::TestWithParam<DeviceKind> {};

// A launch on device memory queues the kernel and returns: it cannot have
// run while a host function queued before it holds the stream. Work runs
// in the order it was queued (the second kernel reads the first's output).
TEST_P(StreamOnHostDevices, LaunchOnDeviceMemoryReturnsBeforeItRuns) {
  DeviceKind dev = GetParam();
  auto k = scaleOn(dev);
  ASSERT_NE(k, nullptr);
  const int64_t n = 300;
  DeviceBuffer x = bufferOf(dev, std::vector<float>(n, 1.0f));
  DeviceBuffer y = bufferOf(dev, std::vector<float>(n, 0.0f));
  DeviceBuffer z = bufferOf(dev, std::vector<float>(n, 0.0f));
  auto stream = streamRuntime().createStream(dev);
  ASSERT_TRUE(stream.ok()) << stream.status().toString();
  EXPECT_EQ(stream->device(), dev);
  EXPECT_EQ(stream->nativeHandle(), nullptr);

  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<bool> gatePassed{false};
  ASSERT_TRUE(stream
                  ->enqueueHostFunction([open, &gatePassed] {
                    // Bounded: a launch that waited for the stream would
                    // otherwise hang the test instead of failing it.
                    open.wait_for(std::chrono::seconds(20));
                    gatePassed = true;
                  })
                  .ok());
  LaunchOptions opts;
  opts.stream = *stream;
  auto start = std::chrono::steady_clock::now();
  Status s = k->launch(
      {*x.view(DType::F32, {n}), *y.view(DType::F32, {n}), 2.0}, opts);
  ASSERT_TRUE(s.ok()) << s.toString();
  s = k->launch({*y.view(DType::F32, {n}), *z.view(DType::F32, {n}), 3.0},
                opts);
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10))
      << "the launches waited for the stream";
  EXPECT_FALSE(gatePassed) << "the stream ran past its gate";
  EXPECT_THAT(contents(z), ::testing::Each(0.0f));
  gate.set_value();
  ASSERT_TRUE(stream->synchronize().ok());
  EXPECT_TRUE(gatePassed);
  EXPECT_THAT(contents(y), ::testing::Each(2.0f));
  EXPECT_THAT(contents(z), ::testing::Each(6.0f));
}

// Host tensors on a stream: the launch synchronises, so the caller may
// read (and reuse) them as soon as it returns.
TEST_P(StreamOnHostDevices, LaunchOnHostTensorsSynchronises) {
  DeviceKind dev = GetParam();
  auto k = scaleOn(dev);
  ASSERT_NE(k, nullptr);
  auto stream = streamRuntime().createStream(dev);
  ASSERT_TRUE(stream.ok());
  std::vector<float> x(200, 1.5f), y(200, 0.0f);
  LaunchOptions opts;
  opts.stream = *stream;
  Status s =
      k->launch({TensorView::contiguous(x.data(), DType::F32, {200}),
                 TensorView::contiguous(y.data(), DType::F32, {200}), 4.0},
                opts);
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_THAT(y, ::testing::Each(6.0f));
}

// Events record where a stream has got to; their difference is the time
// of the work between them.
TEST_P(StreamOnHostDevices, EventsTimeTheWorkBetweenThem) {
  DeviceKind dev = GetParam();
  auto stream = streamRuntime().createStream(dev);
  auto start = streamRuntime().createEvent(dev);
  auto end = streamRuntime().createEvent(dev);
  ASSERT_TRUE(stream.ok() && start.ok() && end.ok());
  EXPECT_EQ(end->synchronize().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(start->record(*stream).ok());
  ASSERT_TRUE(stream
                  ->enqueueHostFunction([] {
                    std::this_thread::sleep_for(std::chrono::milliseconds(30));
                  })
                  .ok());
  ASSERT_TRUE(end->record(*stream).ok());
  ASSERT_TRUE(end->synchronize().ok());
  auto ms = Event::elapsedMs(*start, *end);
  ASSERT_TRUE(ms.ok()) << ms.status().toString();
  EXPECT_GE(*ms, 29.0);
  EXPECT_LT(*ms, 10000.0);
}

INSTANTIATE_TEST_SUITE_P(Devices, StreamOnHostDevices,
                         ::testing::Values(DeviceKind::Cpu, DeviceKind::Sim),
                         [](const auto &info) {
                           return std::string(deviceKindName(info.param));
                         });

TEST(Stream, MisuseIsReported) {
  auto k = scaleOn(DeviceKind::Cpu);
  ASSERT_NE(k, nullptr);
  auto simStream = streamRuntime().createStream(DeviceKind::Sim);
  ASSERT_TRUE(simStream.ok());
  std::vector<float> x(64, 1.0f), y(64);
  std::vector<Arg> args = {TensorView::contiguous(x.data(), DType::F32, {64}),
                           TensorView::contiguous(y.data(), DType::F32, {64}),
                           1.0};
  LaunchOptions opts;
  opts.stream = *simStream;
  Status s = k->launch(args, opts);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("sim stream"));

  auto cpuStream = streamRuntime().createStream(DeviceKind::Cpu);
  ASSERT_TRUE(cpuStream.ok());
  opts.stream = *cpuStream;
  EXPECT_EQ(k->launchTimed(args, opts).status().code(),
            StatusCode::kInvalidArgument);
  opts.counters = true;
  auto onSim = scaleOn(DeviceKind::Sim);
  ASSERT_NE(onSim, nullptr);
  opts.stream = *simStream;
  EXPECT_EQ(onSim->launch(args, opts).code(), StatusCode::kInvalidArgument);

  int dummy = 0;
  EXPECT_EQ(streamRuntime().wrapStream(DeviceKind::Cpu, &dummy).status().code(),
            StatusCode::kUnimplemented);
  auto cpuEvent = streamRuntime().createEvent(DeviceKind::Cpu);
  ASSERT_TRUE(cpuEvent.ok());
  EXPECT_EQ(cpuEvent->record(*simStream).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Stream().synchronize().code(), StatusCode::kOk);
  EXPECT_EQ(Stream().enqueueHostFunction([] {}).code(),
            StatusCode::kFailedPrecondition);
}

// On a GPU: a created and an adopted CUstream take launches on device
// memory and events; without one, cuda streams and events report the
// device's status.
TEST(Stream, CudaStreams) {
  Status device = streamRuntime().deviceStatus(DeviceKind::Cuda);
  if (!device.ok()) {
    EXPECT_EQ(streamRuntime().createStream(DeviceKind::Cuda).status().code(),
              device.code());
    EXPECT_EQ(streamRuntime().createEvent(DeviceKind::Cuda).status().code(),
              device.code());
    EXPECT_EQ(
        streamRuntime().wrapStream(DeviceKind::Cuda, nullptr).status().code(),
        device.code());
    GTEST_SKIP() << device.toString();
  }
  auto k = scaleOn(DeviceKind::Cuda);
  ASSERT_NE(k, nullptr);
  const int64_t n = 1000;
  DeviceBuffer x = bufferOf(DeviceKind::Cuda, std::vector<float>(n, 1.0f));
  DeviceBuffer y = bufferOf(DeviceKind::Cuda, std::vector<float>(n, 0.0f));
  auto stream = streamRuntime().createStream(DeviceKind::Cuda);
  ASSERT_TRUE(stream.ok()) << stream.status().toString();
  ASSERT_NE(stream->nativeHandle(), nullptr);
  // The same CUstream adopted, as an application's own would be.
  auto adopted =
      streamRuntime().wrapStream(DeviceKind::Cuda, stream->nativeHandle());
  ASSERT_TRUE(adopted.ok()) << adopted.status().toString();
  auto start = streamRuntime().createEvent(DeviceKind::Cuda);
  auto end = streamRuntime().createEvent(DeviceKind::Cuda);
  ASSERT_TRUE(start.ok() && end.ok());
  LaunchOptions opts;
  opts.stream = *adopted;
  ASSERT_TRUE(start->record(*adopted).ok());
  Status s = k->launch(
      {*x.view(DType::F32, {n}), *y.view(DType::F32, {n}), 5.0}, opts);
  ASSERT_TRUE(s.ok()) << s.toString();
  std::atomic<bool> ran{false};
  ASSERT_TRUE(adopted->enqueueHostFunction([&ran] { ran = true; }).ok());
  ASSERT_TRUE(end->record(*adopted).ok());
  ASSERT_TRUE(stream->synchronize().ok());
  EXPECT_TRUE(ran);
  auto ms = Event::elapsedMs(*start, *end);
  ASSERT_TRUE(ms.ok()) << ms.status().toString();
  EXPECT_GE(*ms, 0.0);
  EXPECT_THAT(contents(y), ::testing::Each(5.0f));
}

/// The CUDA graph functions of the driver (the runtime has no graph API of
/// its own: an application captures Tessera's launches with the driver's
/// or the CUDA runtime's calls, as this test does).
struct CudaGraphApi {
  void *lib = nullptr;
  int (*beginCapture)(void *stream, int mode) = nullptr;
  int (*endCapture)(void *stream, void **graph) = nullptr;
  int (*instantiate)(void **exec, void *graph,
                     unsigned long long flags) = nullptr;
  int (*launch)(void *exec, void *stream) = nullptr;
  int (*destroyExec)(void *exec) = nullptr;
  int (*destroyGraph)(void *graph) = nullptr;

  bool open() {
    lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
      lib = ::dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib)
      return false;
    auto get = [&](const char *name, auto &fn) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          ::dlsym(lib, name));
      return fn != nullptr;
    };
    return get("cuStreamBeginCapture_v2", beginCapture) &&
           get("cuStreamEndCapture", endCapture) &&
           get("cuGraphInstantiateWithFlags", instantiate) &&
           get("cuGraphLaunch", launch) &&
           get("cuGraphExecDestroy", destroyExec) &&
           get("cuGraphDestroy", destroyGraph);
  }
};

// On a GPU: launches on a stream over device memory are captured in a CUDA
// graph (the launch path neither allocates device memory nor synchronises)
// and the graph, replayed, does their work. The variant is compiled by a
// launch before the capture (loading a module is not allowed while a
// stream captures).
TEST(Stream, CudaGraphCapture) {
  Status device = streamRuntime().deviceStatus(DeviceKind::Cuda);
  if (!device.ok())
    GTEST_SKIP() << device.toString();
  CudaGraphApi api;
  ASSERT_TRUE(api.open()) << "libcuda without the graph API";
  auto k = scaleOn(DeviceKind::Cuda);
  ASSERT_NE(k, nullptr);
  const int64_t n = 4096;
  DeviceBuffer x = bufferOf(DeviceKind::Cuda, std::vector<float>(n, 1.0f));
  DeviceBuffer y = bufferOf(DeviceKind::Cuda, std::vector<float>(n, 0.0f));
  DeviceBuffer z = bufferOf(DeviceKind::Cuda, std::vector<float>(n, 0.0f));
  auto stream = streamRuntime().createStream(DeviceKind::Cuda);
  ASSERT_TRUE(stream.ok()) << stream.status().toString();
  LaunchOptions opts;
  opts.stream = *stream;
  std::vector<Arg> first = {*x.view(DType::F32, {n}), *y.view(DType::F32, {n}),
                            2.0};
  std::vector<Arg> second = {*y.view(DType::F32, {n}), *z.view(DType::F32, {n}),
                             3.0};
  ASSERT_TRUE(k->launch(first, opts).ok());
  ASSERT_TRUE(stream->synchronize().ok());
  ASSERT_TRUE(y.copyFrom(std::vector<float>(n, 0.0f).data(), n * 4).ok());

  void *cu = stream->nativeHandle();
  ASSERT_EQ(api.beginCapture(cu, /*CU_STREAM_CAPTURE_MODE_GLOBAL=*/0), 0);
  Status a = k->launch(first, opts);
  Status b = k->launch(second, opts);
  void *graph = nullptr;
  ASSERT_EQ(api.endCapture(cu, &graph), 0);
  ASSERT_TRUE(a.ok()) << a.toString();
  ASSERT_TRUE(b.ok()) << b.toString();
  // Captured, not run.
  EXPECT_THAT(contents(z), ::testing::Each(0.0f));
  void *exec = nullptr;
  ASSERT_EQ(api.instantiate(&exec, graph, 0), 0);
  for (int replay = 0; replay < 3; ++replay)
    ASSERT_EQ(api.launch(exec, cu), 0);
  ASSERT_TRUE(stream->synchronize().ok());
  EXPECT_THAT(contents(y), ::testing::Each(2.0f));
  EXPECT_THAT(contents(z), ::testing::Each(6.0f));
  api.destroyExec(exec);
  api.destroyGraph(graph);
}

} // namespace
