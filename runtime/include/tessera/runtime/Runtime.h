//===- Runtime.h - Tessera runtime public API -------------------*- C++ -*-===//
//
// Load tile-language source, compile a kernel for a specialisation and a
// device, and launch it on tensor views. Plain C++: no LLVM, MLIR or CUDA
// types. Every fallible call returns a Status naming what was wrong.
//
//   tessera::Runtime rt;
//   auto prog = rt.loadFile("kernels_dsl/vector_ops.tile");
//   auto axpy = rt.compile(**prog, "axpy", {.constants = {{"BLOCK_SIZE",
//   1024}}}); Status s = (*axpy)->launch({TensorView::contiguous(x, DType::F32,
//   {n}),
//                               TensorView::contiguous(y, DType::F32, {n}),
//                               Arg(2.0)});
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_RUNTIME_H
#define TESSERA_RUNTIME_RUNTIME_H

#include "tessera/Support/DType.h"
#include "tessera/Support/KernelInfo.h"
#include "tessera/Support/Status.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tessera {

namespace driver {
class SourceModule;
}

enum class DeviceKind {
  Cpu,  ///< Host code through the ORC JIT; the reference device.
  Sim,  ///< The GPU lowering executed on CPU fibers.
  Cuda, ///< NVIDIA GPUs through the CUDA driver.
};
const char *deviceKindName(DeviceKind kind);
/// The compiler's version, part of every tuning record's key: tuned
/// configurations do not carry over between compiler versions.
const char *compilerVersion();
std::optional<DeviceKind> parseDeviceKind(std::string_view name);

/// A strided view of tensor memory. Strides are in elements. The memory
/// is host memory unless `device` names the device whose buffer
/// (`Runtime::allocate`) holds it; such a view may only be passed to
/// kernels of that device, and for `cuda` `data` is a device address.
struct TensorView {
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::optional<DeviceKind> device;

  /// A row-major contiguous view.
  static TensorView contiguous(void *data, DType dtype,
                               std::vector<int64_t> shape);
  int64_t numel() const;
};

/// One launch argument: a tensor view, a number, or None (an omitted
/// optional tensor).
class Arg {
public:
  Arg() : v_(std::monostate{}) {}
  Arg(TensorView t) : v_(std::move(t)) {}
  Arg(double d) : v_(d) {}
  Arg(float f) : v_(double(f)) {}
  Arg(int64_t i) : v_(i) {}
  Arg(int i) : v_(int64_t(i)) {}
  Arg(bool b) : v_(b) {}
  static Arg none() { return Arg(); }

  bool isNone() const { return std::holds_alternative<std::monostate>(v_); }
  const TensorView *tensor() const { return std::get_if<TensorView>(&v_); }
  const double *floating() const { return std::get_if<double>(&v_); }
  const int64_t *integer() const { return std::get_if<int64_t>(&v_); }
  const bool *boolean() const { return std::get_if<bool>(&v_); }
  std::string describe() const;

private:
  std::variant<std::monostate, TensorView, double, int64_t, bool> v_;
};

struct LaunchOptions {
  /// Program-instance grid; when absent, computed from `@kernel(grid=...)`.
  std::optional<std::array<int64_t, 3>> grid;
  /// `sim` only: count what a GPU would do with the launch's memory
  /// accesses, barriers and branches (Kernel::lastCounters). The first such
  /// launch compiles the kernel once more, with branch reports; launches
  /// without counters run as before. INVALID_ARGUMENT on other devices.
  bool counters = false;
};

/// One memory instruction of a kernel's GPU code (a static op, in one
/// memory space) as the `sim` device counted it over a launch. A warp
/// request is the k-th execution of the instruction by the lanes of one
/// warp (runtime/lib/Sim/README.md has the definitions).
struct SimAccessCounters {
  enum class Space { Global, Shared };
  enum class Kind { Load, Store, Atomic };
  Space space = Space::Global;
  Kind kind = Kind::Load;
  int64_t widthBytes = 0; ///< bytes each lane accesses
  int64_t requests = 0;   ///< warp requests
  int64_t lanes = 0;      ///< active lanes, over all requests
  /// Global memory: 32-byte sectors touched, the fewest that could carry
  /// the requested bytes, and those bytes (each distinct byte once).
  int64_t sectors = 0, idealSectors = 0, usefulBytes = 0;
  /// Shared memory: wavefronts (bank conflicts serialise a request into
  /// several), and the fewest the requests' distinct words need.
  int64_t wavefronts = 0, idealWavefronts = 0;
  std::string op;       ///< e.g. "vector.load"
  std::string location; ///< e.g. "softmax.tile:52:10"
  /// E.g. "global load 16B at softmax.tile:52:10".
  std::string description() const;
};

/// One conditional branch of a kernel's GPU code as `sim` counted it:
/// warp-level instances (the k-th evaluation by one warp's lanes) and
/// those whose lanes went different ways.
struct SimBranchCounters {
  std::string op, location;
  int64_t instances = 0, divergent = 0;
};

/// What a `sim` launch with LaunchOptions::counters counted.
struct SimCounters {
  /// The instructions and branches that ran, in the order of the code.
  std::vector<SimAccessCounters> accesses;
  std::vector<SimBranchCounters> branches;
  /// Global memory: warp requests, sectors touched, the ideal sectors,
  /// bytes moved (sectors x 32) and the bytes the lanes asked for.
  int64_t globalRequests = 0, globalSectors = 0, globalIdealSectors = 0,
          globalBytesMoved = 0, globalUsefulBytes = 0;
  /// globalIdealSectors / globalSectors (1 without global accesses).
  double coalescingEfficiency = 1;
  /// Shared memory: warp requests, wavefronts, the ideal wavefronts.
  int64_t sharedRequests = 0, sharedWavefronts = 0, sharedIdealWavefronts = 0;
  /// Block-wide barriers, over all blocks and per block.
  int64_t blocks = 0, barriers = 0, maxBarriersPerBlock = 0;
  double barriersPerBlock = 0;
  /// Warp-level branch instances, and the divergent ones.
  int64_t warpBranchInstances = 0, divergentBranches = 0;
};

/// What a kernel is compiled for, beyond its source.
struct CompileOptions {
  /// Constexpr parameters, autotune/meta parameters, generic dtypes.
  std::map<std::string, ConstValue> constants;
  /// Precision policy, e.g. "bf16@accum(fp32)"; empty means fp32.
  std::string precision;
};

/// Per-stage compile times of one compiled variant, in milliseconds.
struct CompileTimes {
  double parse = 0, sema = 0, tilePasses = 0, lowering = 0, codegen = 0;
  double total() const {
    return parse + sema + tilePasses + lowering + codegen;
  }
};

/// A parsed source module.
class Program {
public:
  ~Program();
  const std::string &name() const;
  std::vector<const KernelInfo *> kernels() const;
  const KernelInfo *findKernel(const std::string &name) const;
  uint64_t sourceHash() const;
  /// The source text the program was loaded from.
  std::string_view source() const;
  /// Whether `constants` (an autotune configuration) satisfies kernel
  /// `kernel`'s `restrict=[...]` expressions.
  StatusOr<bool> satisfiesRestrictions(
      const std::string &kernel,
      const std::map<std::string, ConstValue> &constants) const;

  struct Impl;
  explicit Program(std::shared_ptr<const driver::SourceModule> module);
  const driver::SourceModule &module() const { return *module_; }
  const std::shared_ptr<const driver::SourceModule> &sharedModule() const {
    return module_;
  }

private:
  std::shared_ptr<const driver::SourceModule> module_;
};

class Runtime;

/// A kernel compiled for one specialisation and device. Variants for
/// other stride patterns (unit vs non-unit innermost stride) are compiled
/// on first use and cached.
class Kernel {
public:
  ~Kernel();
  const KernelInfo &info() const;
  DeviceKind device() const;
  const Specialization &specialization() const;
  /// Times of the first (contiguous) variant's compilation.
  const CompileTimes &compileTimes() const;
  /// A hash of the first variant's generated code (0 when unknown):
  /// specialisations that differ only in parameters the device ignores
  /// (num_warps on cpu, say) compile to the same code and fingerprint, so
  /// the autotuner measures such configurations once.
  uint64_t codeFingerprint() const;

  /// Checks `args` against the signature, then runs the grid to
  /// completion. Arguments are every tensor and run-time scalar parameter,
  /// in declaration order (constexprs are not passed).
  Status launch(const std::vector<Arg> &args, const LaunchOptions &opts = {});

  /// Launches like launch() and returns the time of the kernel itself, in
  /// milliseconds: on `cuda` between CUDA events recorded around the kernel
  /// alone (host-tensor copies excluded), after rewriting a buffer the size
  /// of the L2 cache when `flushCaches` so that the kernel starts cold; on
  /// `cpu` and `sim` the steady-clock time of the whole grid (no cache
  /// flush).
  StatusOr<double> launchTimed(const std::vector<Arg> &args,
                               const LaunchOptions &opts = {},
                               bool flushCaches = true);

  /// Launches `launches` times back to back on the same arguments and
  /// returns the mean time of one launch, in milliseconds (the elapsed time
  /// of the batch / `launches`). The arguments are checked once. On `cuda`
  /// the launches are queued on the default stream with no host
  /// synchronisation between them, between two CUDA events: the buffer the
  /// size of the L2 cache is rewritten first when `flushCaches` (so the
  /// first launch starts cold; the others find what the one before left in
  /// L2), and host tensors are copied in before the batch and out after it,
  /// outside the events. On `cpu` and `sim` the steady-clock time of the
  /// `launches` grids, one after the other (no cache flush). A kernel that
  /// accumulates into an output (y += a * x) accumulates `launches` times.
  /// INVALID_ARGUMENT when `launches` < 1.
  StatusOr<double> launchTimedBatch(const std::vector<Arg> &args,
                                    const LaunchOptions &opts, int launches,
                                    bool flushCaches = true);
  /// The counters of the last launch when it ran with
  /// LaunchOptions::counters (on `sim`); FAILED_PRECONDITION when the last
  /// launch did not count or failed.
  StatusOr<SimCounters> lastCounters() const;

  /// Only the launch-time checks; returns the grid that would run.
  StatusOr<std::array<int64_t, 3>> check(const std::vector<Arg> &args,
                                         const LaunchOptions &opts = {}) const;

  struct Impl;
  explicit Kernel(std::unique_ptr<Impl> impl);

private:
  friend class Runtime;
  std::unique_ptr<Impl> impl_;
};

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

/// What a device is, for keys (tuning records) and reports.
struct DeviceInfo {
  DeviceKind kind = DeviceKind::Cpu;
  /// "NVIDIA H100 80GB HBM3", or the host CPU's model name.
  std::string name;
  /// "sm_90a" on cuda; "host" on cpu and sim.
  std::string arch;
  /// Streaming multiprocessors on cuda; the runtime's threads on cpu/sim.
  int computeUnits = 0;
  /// cuda only (0 elsewhere).
  int64_t l2CacheBytes = 0;
  int64_t maxSharedPerBlock = 0;
  int clockMHz = 0;
  int memoryClockMHz = 0;
  int memoryBusWidthBits = 0;
};

struct RuntimeOptions {
  /// Threads for CPU launches; 0 means all hardware threads.
  unsigned numThreads = 0;
};

/// Memory owned by a device, from `Runtime::allocate`: host memory for
/// `cpu` and `sim`, device memory for `cuda` (kernels launched on views of
/// it read and write it in place; host views are copied in and out around
/// every launch). Movable, freed on destruction; must not outlive its
/// Runtime.
class DeviceBuffer {
public:
  DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&) noexcept;
  ~DeviceBuffer();

  DeviceKind device() const;
  size_t bytes() const;
  /// The buffer's address on its device (not dereferenceable on the host
  /// for `cuda`).
  void *data() const;
  /// Copies `bytes` bytes from host memory to the buffer at `offset`.
  Status copyFrom(const void *host, size_t bytes, size_t offset = 0);
  /// Copies `bytes` bytes at `offset` of the buffer to host memory.
  Status copyTo(void *host, size_t bytes, size_t offset = 0) const;
  /// A row-major view of the buffer (from its start) as a tensor of
  /// `shape`; INVALID_ARGUMENT when it does not fit.
  StatusOr<TensorView> view(DType dtype, std::vector<int64_t> shape) const;

  struct Impl;
  explicit DeviceBuffer(std::unique_ptr<Impl> impl);

private:
  std::unique_ptr<Impl> impl_;
};

struct CompileCacheStats {
  uint64_t hits = 0, misses = 0, entries = 0;
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

  CompileCacheStats cacheStats() const;
  unsigned numThreads() const;

  struct Impl;
  Impl &impl() { return *impl_; }

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera

#endif // TESSERA_RUNTIME_RUNTIME_H
