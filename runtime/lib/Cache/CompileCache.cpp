//===- CompileCache.cpp - The in-process cache of compiled kernels --------===//

#include "Cache/CompileCache.h"

using namespace tessera;

std::string CompileCache::key(const Program &program, const std::string &kernel,
                              const Specialization &spec, DeviceKind device) {
  std::string key = program.name();
  key += '\0';
  key += std::to_string(program.sourceHash());
  key += '\0';
  key += kernel;
  key += '\0';
  key += spec.canonical();
  key += '\0';
  key += deviceKindName(device);
  return key;
}

std::shared_ptr<Kernel> CompileCache::find(const std::string &key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = kernels_.find(key);
  if (it == kernels_.end())
    return nullptr;
  ++stats_.hits;
  return it->second;
}

std::shared_ptr<Kernel> CompileCache::insert(const std::string &key,
                                             std::shared_ptr<Kernel> kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = kernels_.emplace(key, std::move(kernel));
  ++stats_.misses;
  stats_.entries = kernels_.size();
  return it->second;
}

CompileCacheStats CompileCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}
