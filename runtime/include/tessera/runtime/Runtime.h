//===- Runtime.h - Tessera runtime public API -------------------*- C++ -*-===//
//
// Load tile-language source, compile a kernel for a specialisation and a
// device, and launch it on tensor views. Plain C++: no LLVM, MLIR or CUDA
// types. Every fallible call returns a Status (or StatusOr) naming what was
// wrong; `ok()` tells success. This example is compiled and run by
// RuntimeApiTest (HeaderExample):
//
//   tessera::Runtime rt;
//   auto prog = rt.loadFile("kernels_dsl/vector_ops.tile");
//   if (!prog.ok())
//     return prog.status();
//   auto axpy = rt.compile(**prog, "axpy", {.constants = {{"BLOCK_SIZE",
//   1024}}}); if (!axpy.ok())
//     return axpy.status();
//   std::vector<float> x(1000, 1.0f), y(1000, 2.0f);
//   int64_t n = int64_t(x.size());
//   return (*axpy)->launch(
//       {tessera::TensorView::contiguous(x.data(), tessera::DType::F32, {n}),
//        tessera::TensorView::contiguous(y.data(), tessera::DType::F32, {n}),
//        2.0}); // y = 2 x + y
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_RUNTIME_H
#define TESSERA_RUNTIME_RUNTIME_H

#include "tessera/Support/DType.h"
#include "tessera/Support/KernelInfo.h"
#include "tessera/Support/Status.h"
#include "tessera/runtime/Device.h"
#include "tessera/runtime/DeviceBuffer.h"
#include "tessera/runtime/Kernel.h"
#include "tessera/runtime/Program.h"
#include "tessera/runtime/SimCounters.h"
#include "tessera/runtime/Stream.h"
#include "tessera/runtime/Tensor.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tessera {

/// A hand-written CUDA C++ kernel for Runtime::compileCuda. It becomes a
/// Kernel like a tile kernel: the same launch call, argument checks and
/// grid evaluation, so that tile and CUDA C++ kernels are interchangeable
/// for the runtime, the autotuner and the benchmarks.
struct CudaKernelSource {
  /// File name for messages, e.g. "saxpy.cu".
  std::string name = "kernel.cu";
  std::string source;
  /// The `__global__` function: its name for an `extern "C"` kernel, or a
  /// name expression such as "scale<float>" (NVRTC finds the mangled name).
  std::string kernel;
  /// The parameters in the tile language's syntax, e.g.
  /// `x: Tensor["N", f32], y: Tensor["N", f32], a: float, n: int`. Tensors
  /// are passed as device pointers to their first element (the kernel sees
  /// no strides: pass contiguous views); `float` as a 32-bit float, `int`
  /// as a 64-bit integer (declare `long long`/`int64_t` in the kernel), a
  /// `bool` as one byte.
  std::string signature;
  /// The grid in blocks, as `@kernel(grid=...)` spells it: e.g.
  /// "(cdiv(N, 256),)". Empty: pass LaunchOptions::grid at launch.
  std::string grid;
  /// Threads per block.
  std::array<int, 3> block = {256, 1, 1};
  /// Dynamic shared memory per block, in bytes.
  int64_t dynamicSharedBytes = 0;
  /// NVRTC options (e.g. "-DBLOCK=256", "-std=c++17") and in-memory
  /// headers (include name, contents).
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct RuntimeOptions {
  /// Threads for CPU launches; 0 means all hardware threads.
  unsigned numThreads = 0;
};

struct CompileCacheStats {
  /// Runtime::compile requests answered in process, and those that were not.
  uint64_t hits = 0, misses = 0, entries = 0;
  /// Where the code of the kernel variants came from: compiled here, loaded
  /// from the disk cache, loaded from a bundle.
  uint64_t compiles = 0, diskLoads = 0, bundleLoads = 0;
};

/// A kernel configuration compiled for another machine when a bundle is
/// written (Runtime::saveBundle), such as a GPU architecture that is not
/// here: the variant a launch on contiguous, 16-byte-aligned tensors
/// compiles first.
struct CrossCompile {
  std::shared_ptr<Program> program;
  std::string kernel;
  CompileOptions options;
  DeviceKind device = DeviceKind::Cuda;
  /// The code target: for cuda an architecture, e.g. "sm_90a", "sm_80".
  std::string target;
};

/// What Runtime::loadBundle made available.
struct BundleInfo {
  /// Kernel variants whose code now loads with no compile.
  size_t kernels = 0;
  /// The bundle's code this machine cannot use, and why (another
  /// architecture, a device that is not there).
  std::vector<std::string> skipped;
  /// The bundle's tuning records, in the tuning cache's export format
  /// (autotune::importBundle adds them to a tuning cache).
  std::string tuningRecords;
};

class Runtime {
public:
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  StatusOr<std::shared_ptr<Program>> loadSource(std::string name,
                                                std::string text);
  StatusOr<std::shared_ptr<Program>> loadFile(const std::string &path);

  /// OK if `kind` can run kernels here; otherwise Unavailable (no driver or
  /// no device) or Unimplemented, with the reason.
  Status deviceStatus(DeviceKind kind) const;
  /// What device `kind` is (its status when it cannot be used).
  StatusOr<DeviceInfo> deviceInfo(DeviceKind kind) const;

  /// Compiles (or fetches from the in-process cache) kernel `kernel` of
  /// `program`. The same source + specialisation + device compiles once.
  StatusOr<std::shared_ptr<Kernel>>
  compile(const Program &program, const std::string &kernel,
          const CompileOptions &options = {},
          DeviceKind device = DeviceKind::Cpu);

  /// Compiles a CUDA C++ kernel with NVRTC for the `cuda` device. The
  /// source is compiled before the device is opened: a compile error is
  /// INVALID_ARGUMENT with the NVRTC log even where there is no GPU
  /// (then, for valid source, the result is UNAVAILABLE). Other devices
  /// are UNIMPLEMENTED.
  StatusOr<std::shared_ptr<Kernel>>
  compileCuda(const CudaKernelSource &source,
              DeviceKind device = DeviceKind::Cuda);

  /// Allocates `bytes` bytes on `device` (64-byte aligned host memory for
  /// `cpu` and `sim`). UNAVAILABLE when the device is; RESOURCE_EXHAUSTED
  /// when the memory is not there.
  StatusOr<DeviceBuffer> allocate(DeviceKind device, size_t bytes);

  /// Times `launches` calls of `enqueue` back to back as
  /// Kernel::launchTimedBatch times launches, and returns the mean time of
  /// one call in milliseconds. On `cuda`, `enqueue` must queue device work
  /// on the legacy default stream of device 0's primary context without
  /// waiting for it (a library call such as a cuBLAS GEMM, whose handle uses
  /// that stream); the calls are made between two CUDA events on that
  /// stream, after the L2 flush when `flushCaches`, and the time is the
  /// events' elapsed time / `launches`. On `cpu` and `sim` it is the
  /// steady-clock time of the calls / `launches`. An error from `enqueue`
  /// stops the batch and is returned. INVALID_ARGUMENT when `launches` < 1;
  /// the device's status (UNAVAILABLE without a GPU) when it cannot be
  /// used, before `enqueue` is called.
  StatusOr<double> timeBatch(DeviceKind device,
                             const std::function<Status()> &enqueue,
                             int launches, bool flushCaches = true);

  /// A new stream on `device` (UNAVAILABLE when the device is).
  StatusOr<Stream> createStream(DeviceKind device);
  /// Adopts the application's own stream (a CUstream on `cuda`, such as a
  /// framework's current stream), which stays the application's: Tessera
  /// never destroys it. UNIMPLEMENTED on devices without native streams.
  StatusOr<Stream> wrapStream(DeviceKind device, void *nativeStream);
  /// An event for streams of `device`.
  StatusOr<Event> createEvent(DeviceKind device);

  /// Loads a deployment bundle (written by saveBundle or `tessera-tune
  /// warmup --bundle`): its code for this machine's devices is used by later
  /// compiles of the same kernels and configurations, with no compile.
  /// FAILED_PRECONDITION, with nothing loaded, for a bundle another version
  /// of Tessera wrote or one with no code for this machine's devices;
  /// DATA_LOSS for a damaged file; NOT_FOUND when there is none. Whatever it
  /// returns, kernels it does not cover compile on first use as usual.
  StatusOr<BundleInfo> loadBundle(const std::string &path);
  /// Writes a bundle holding the code of every variant of `kernels`
  /// compiled (or loaded) so far, the code of `crossCompiled` (compiled now,
  /// for their targets; no GPU is needed for a cuda architecture) and
  /// `tuningRecords` (the tuning cache's export format, "" for none).
  /// INVALID_ARGUMENT for a kernel whose code cannot be stored (CUDA C++
  /// kernels, sim kernels); a cross-compile's compile error.
  Status saveBundle(const std::string &path,
                    const std::vector<std::shared_ptr<Kernel>> &kernels,
                    const std::string &tuningRecords = "",
                    const std::vector<CrossCompile> &crossCompiled = {});

  CompileCacheStats cacheStats() const;
  unsigned numThreads() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera

#endif // TESSERA_RUNTIME_RUNTIME_H
