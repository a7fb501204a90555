//===- KernelImpl.h - A compiled kernel and its variants --------*- C++ -*-===//
//
// Kernel::Impl: a kernel's signature, the device it runs on and the
// variants of its code compiled so far (one per launch guarantee the code
// relies on, compiled on first use). Launches are checked here and run by
// the device. Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_KERNEL_KERNELIMPL_H
#define TESSERA_RUNTIME_KERNEL_KERNELIMPL_H

#include "Cache/CodeCache.h"
#include "Hal/Device.h"
#include "Launch/LaunchChecks.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace tessera {

struct Kernel::Impl {
  hal::Device *device = nullptr;
  /// Where variants get their code (the runtime's).
  CodeCache *code = nullptr;
  launch::Signature signature;
  CompileTimes times;
  /// The first variant's code fingerprint.
  uint64_t fingerprint = 0;

  std::mutex mutex;
  /// Compiled variants by the device's code key, without and with the
  /// counters' reports.
  std::map<launch::VariantKey, std::shared_ptr<hal::Executable>> variants,
      countingVariants;
  /// A CUDA C++ kernel's one executable (every launch takes it).
  std::shared_ptr<hal::Executable> fixed;
  /// What the last launch counted (LaunchOptions::counters), under `mutex`.
  std::optional<SimCounters> lastCounters;

  const std::string &name() const { return signature.name; }
  /// The executable for `key`, compiled on first use.
  StatusOr<std::shared_ptr<hal::Executable>>
  variant(const launch::VariantKey &key, bool counters = false);
  /// The tensors of `sig` a launch on contiguous tensors makes unit-stride
  /// (every tensor parameter with dimensions).
  static uint64_t contiguousMask(const launch::Signature &sig);
  /// The variant most launches take: all tensors in `unitMask` contiguous
  /// and aligned, 31-bit offsets, the declared grid, default heuristics.
  static launch::VariantKey firstKey(const launch::Signature &sig,
                                     uint64_t unitMask);
  /// Compiles the variant most launches take (all tensors in `unitMask`
  /// contiguous and aligned, 31-bit offsets, the declared grid) and keeps
  /// its compile times and fingerprint.
  Status compileFirst(uint64_t unitMask);
  /// Kernel::launch run `launches` times; with `ms` also the mean time of
  /// one (see Kernel::launchTimedBatch).
  Status launch(const std::vector<Arg> &args, const LaunchOptions &opts,
                int launches, double *ms, bool flush);
};

} // namespace tessera

#endif // TESSERA_RUNTIME_KERNEL_KERNELIMPL_H
