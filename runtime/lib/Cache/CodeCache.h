//===- CodeCache.h - Where kernel code comes from ---------------*- C++ -*-===//
//
// A kernel variant's executable comes from the first of: the code of a
// loaded deployment bundle, the disk cache (code this build compiled
// before, in any process), a compile (whose code then goes to the disk
// cache). Devices whose code cannot be stored (Device::codeTarget() empty)
// always compile. The counts say which it was, so that a test can assert
// that a start-up compiled nothing. Thread-safe. Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_CACHE_CODECACHE_H
#define TESSERA_RUNTIME_CACHE_CODECACHE_H

#include "Cache/DiskCache.h"
#include "Hal/Device.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace tessera {

class CodeCache {
public:
  /// The executable of kernel `kernel` of `module` for `spec` on `device`.
  StatusOr<std::shared_ptr<hal::Executable>>
  get(hal::Device &device, const driver::SourceModule &module,
      const std::string &kernel, const Specialization &spec, bool counters);

  /// Makes `bytes` the code of `key` (a kernelArtifactKey without the
  /// build) for get(): a bundle's code.
  void addBundled(std::string key, std::string bytes);

  struct Counts {
    uint64_t compiles = 0, diskLoads = 0, bundleLoads = 0;
  };
  Counts counts() const;

private:
  /// The disk cache ($TESSERA_CACHE_DIR/kernels or ~/.cache/tessera/kernels;
  /// TESSERA_KERNEL_CACHE=off turns it off), or null when it is off or
  /// cannot be opened.
  DiskCache *disk();
  /// A loaded bundle's code for the key of these, or null.
  std::shared_ptr<const std::string> bundled(const char *kind,
                                             const std::string &target,
                                             const driver::SourceModule &module,
                                             const std::string &kernel,
                                             const Specialization &spec);

  std::once_flag diskOnce_;
  std::unique_ptr<DiskCache> disk_;
  mutable std::mutex mutex_;
  /// Shared: a lookup holds the bytes without copying them under the lock.
  std::map<std::string, std::shared_ptr<const std::string>> bundled_;
  std::atomic<uint64_t> compiles_{0}, diskLoads_{0}, bundleLoads_{0};
};

} // namespace tessera

#endif // TESSERA_RUNTIME_CACHE_CODECACHE_H
