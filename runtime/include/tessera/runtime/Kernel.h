//===- Kernel.h - Compiled kernels and their launches -----------*- C++ -*-===//
//
// A Kernel is compiled for one specialisation and device (Runtime::compile
// or compileCuda); launch() checks the arguments and runs the grid.
// Plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_KERNEL_H
#define TESSERA_RUNTIME_KERNEL_H

#include "tessera/Support/KernelInfo.h"
#include "tessera/Support/Status.h"
#include "tessera/runtime/Device.h"
#include "tessera/runtime/SimCounters.h"
#include "tessera/runtime/Stream.h"
#include "tessera/runtime/Tensor.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace tessera {

struct LaunchOptions {
  /// Program-instance grid; when absent, computed from `@kernel(grid=...)`.
  std::optional<std::array<int64_t, 3>> grid;
  /// The stream to queue the launch on (of the kernel's device): launch()
  /// checks the arguments, queues the kernel and returns; errors of the
  /// run come from Stream::synchronize. A launch on views of device memory
  /// (DeviceBuffer::view) never waits for the device, so it can be
  /// captured in a CUDA graph; one with host tensors synchronises the
  /// stream before it returns (cuda stages host tensors through device
  /// memory). Without a stream (the default) the launch runs to completion.
  /// Timed launches and counters need no stream.
  Stream stream;
  /// `sim` only: count what a GPU would do with the launch's memory
  /// accesses, barriers and branches (Kernel::lastCounters). The first such
  /// launch compiles the kernel once more, with branch reports; launches
  /// without counters run as before. INVALID_ARGUMENT on other devices.
  bool counters = false;
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

private:
  friend class Runtime;
  struct Impl;
  explicit Kernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera

#endif // TESSERA_RUNTIME_KERNEL_H
