//===- CompileCache.h - The in-process cache of compiled kernels -*- C++
//-*-===//
//
// Kernels by (program, source hash, kernel, specialisation, device): the
// same request compiles once per Runtime. Thread-safe. Internal to the
// runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_CACHE_COMPILECACHE_H
#define TESSERA_RUNTIME_CACHE_COMPILECACHE_H

#include "tessera/runtime/Runtime.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tessera {

class CompileCache {
public:
  /// The key of kernel `kernel` of `program` for `spec` on `device`.
  static std::string key(const Program &program, const std::string &kernel,
                         const Specialization &spec, DeviceKind device);
  /// The kernel cached under `key` (a hit), or null (a miss).
  std::shared_ptr<Kernel> find(const std::string &key);
  /// Caches `kernel` under `key` unless another thread did first; returns
  /// the cached one.
  std::shared_ptr<Kernel> insert(const std::string &key,
                                 std::shared_ptr<Kernel> kernel);
  CompileCacheStats stats() const;

private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<Kernel>> kernels_;
  CompileCacheStats stats_;
};

} // namespace tessera

#endif // TESSERA_RUNTIME_CACHE_COMPILECACHE_H
