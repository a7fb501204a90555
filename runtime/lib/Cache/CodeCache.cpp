//===- CodeCache.cpp - Where kernel code comes from -----------------------===//

#include "Cache/CodeCache.h"

#include "Cache/KernelArtifact.h"

#include <cstdlib>
#include <string_view>

using namespace tessera;

DiskCache *CodeCache::disk() {
  std::call_once(diskOnce_, [this] {
    const char *env = std::getenv("TESSERA_KERNEL_CACHE");
    if (env && (std::string_view(env) == "off" || std::string_view(env) == "0"))
      return;
    auto c = DiskCache::open({});
    if (c.ok())
      disk_ = std::move(*c);
  });
  return disk_.get();
}

void CodeCache::addBundled(std::string key, std::string bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  bundled_[std::move(key)] =
      std::make_shared<const std::string>(std::move(bytes));
}

CodeCache::Counts CodeCache::counts() const {
  return {compiles_.load(), diskLoads_.load(), bundleLoads_.load()};
}

std::shared_ptr<const std::string>
CodeCache::bundled(const char *kind, const std::string &target,
                   const driver::SourceModule &module,
                   const std::string &kernel, const Specialization &spec) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bundled_.empty())
    return nullptr;
  auto it = bundled_.find(kernelArtifactKey(kind, target, module.sourceHash(),
                                            kernel, spec, /*thisBuild=*/false));
  return it == bundled_.end() ? nullptr : it->second;
}

StatusOr<std::shared_ptr<hal::Executable>>
CodeCache::get(hal::Device &device, const driver::SourceModule &module,
               const std::string &kernel, const Specialization &spec,
               bool counters) {
  std::string target;
  if (!counters) {
    // A device whose target cannot be named (a GPU that is not there)
    // compiles, and says why it cannot.
    auto t = device.codeTarget();
    if (t.ok())
      target = std::move(*t);
  }
  const char *kind = deviceKindName(device.kind());
  if (std::shared_ptr<const std::string> bytes =
          target.empty() ? nullptr
                         : bundled(kind, target, module, kernel, spec)) {
    auto exe = device.load(kernel, *bytes);
    if (exe.ok()) {
      ++bundleLoads_;
      return exe;
    }
  }
  DiskCache *cache = target.empty() ? nullptr : disk();
  std::string key;
  if (cache) {
    key = kernelArtifactKey(kind, target, module.sourceHash(), kernel, spec,
                            /*thisBuild=*/true);
    if (std::optional<std::string> bytes = cache->get(key)) {
      auto exe = device.load(kernel, *bytes);
      if (exe.ok()) {
        ++diskLoads_;
        return exe;
      }
      // Verified bytes this build cannot load: compiled again below, and
      // replaced.
    }
  }
  ++compiles_;
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<hal::Executable> exe,
                           device.compile(module, kernel, spec, counters));
  // The cache is an optimisation: a write that fails costs a compile next
  // time, nothing else.
  if (cache)
    if (auto bytes = device.pack(*exe); bytes.ok())
      (void)cache->put(key, *bytes);
  return exe;
}
