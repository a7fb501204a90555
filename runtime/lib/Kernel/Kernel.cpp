//===- Kernel.cpp - Compiled kernels and their launches -------------------===//

#include "Kernel/KernelImpl.h"

#include "StreamImpl.h"

using namespace tessera;

StatusOr<std::shared_ptr<hal::Executable>>
Kernel::Impl::variant(const launch::VariantKey &key, bool counters) {
  if (fixed)
    return fixed;
  launch::VariantKey codeKey = device->codeKey(key);
  std::lock_guard<std::mutex> lock(mutex);
  auto &cache = counters ? countingVariants : variants;
  if (auto it = cache.find(codeKey); it != cache.end())
    return it->second;
  TESSERA_ASSIGN_OR_RETURN(
      std::shared_ptr<hal::Executable> exe,
      code->get(*device, *signature.module, signature.name,
                launch::variantSpec(signature.spec, *signature.info, codeKey),
                counters));
  cache[codeKey] = exe;
  return exe;
}

uint64_t Kernel::Impl::contiguousMask(const launch::Signature &sig) {
  uint64_t mask = 0;
  for (size_t i = 0; i < sig.info->params.size(); ++i)
    if (sig.info->params[i].kind == ParamKind::Tensor &&
        !sig.info->params[i].dims.empty())
      mask |= uint64_t(1) << i;
  return mask;
}

launch::VariantKey Kernel::Impl::firstKey(const launch::Signature &sig,
                                          uint64_t unitMask) {
  return {unitMask, 0, unitMask, true, true, sig.defaultHeuristics()};
}

Status Kernel::Impl::compileFirst(uint64_t unitMask) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<hal::Executable> exe,
                           variant(firstKey(signature, unitMask)));
  const driver::StageTimes &t = exe->times;
  times = {t.parse, t.sema, t.tilePasses, t.lowering, t.codegen};
  fingerprint = exe->fingerprint;
  return okStatus();
}

Status Kernel::Impl::launch(const std::vector<Arg> &args,
                            const LaunchOptions &opts, int launches, double *ms,
                            bool flush) {
  if (opts.counters && !device->countsAccesses())
    return invalidArgument("kernel '%s': counters are counted by the sim "
                           "device only; this kernel runs on %s",
                           name().c_str(), deviceKindName(device->kind()));
  hal::Queue *queue = nullptr;
  if (opts.stream.valid()) {
    const Stream::Impl &stream = *opts.stream.impl_;
    if (stream.device != device->kind())
      return invalidArgument("kernel '%s' runs on %s; the stream is a %s "
                             "stream",
                             name().c_str(), deviceKindName(device->kind()),
                             deviceKindName(stream.device));
    if (ms)
      return invalidArgument("kernel '%s': a timed launch runs to completion; "
                             "time work on a stream with events",
                             name().c_str());
    if (opts.counters)
      return invalidArgument("kernel '%s': a launch that counts runs to "
                             "completion, not on a stream",
                             name().c_str());
    queue = stream.queue.get();
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    lastCounters.reset();
  }
  TESSERA_ASSIGN_OR_RETURN(launch::Plan plan,
                           signature.check(args, opts, device->kind()));
  if (plan.grid[0] * plan.grid[1] * plan.grid[2] == 0) {
    // An empty grid is a no-op (that counts nothing).
    if (opts.counters) {
      std::lock_guard<std::mutex> lock(mutex);
      lastCounters = SimCounters{};
    }
    return okStatus();
  }
  std::optional<SimCounters> counted;
  hal::KernelLaunch l{signature, args, plan};
  l.launches = launches;
  l.ms = ms;
  l.flushCaches = flush;
  l.counters = opts.counters;
  l.counted = &counted;
  l.queue = queue;
  l.variant = [this](const launch::VariantKey &key, bool counters) {
    return variant(key, counters);
  };
  TESSERA_RETURN_IF_ERROR(device->run(l));
  if (counted) {
    std::lock_guard<std::mutex> lock(mutex);
    lastCounters = std::move(counted);
  }
  return okStatus();
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Kernel::~Kernel() = default;
const KernelInfo &Kernel::info() const { return *impl_->signature.info; }
DeviceKind Kernel::device() const { return impl_->device->kind(); }
const Specialization &Kernel::specialization() const {
  return impl_->signature.spec;
}
const CompileTimes &Kernel::compileTimes() const { return impl_->times; }
uint64_t Kernel::codeFingerprint() const { return impl_->fingerprint; }

StatusOr<std::array<int64_t, 3>>
Kernel::check(const std::vector<Arg> &args, const LaunchOptions &opts) const {
  TESSERA_ASSIGN_OR_RETURN(
      launch::Plan plan,
      impl_->signature.check(args, opts, impl_->device->kind()));
  return plan.grid;
}

Status Kernel::launch(const std::vector<Arg> &args, const LaunchOptions &opts) {
  return impl_->launch(args, opts, 1, nullptr, false);
}

StatusOr<double> Kernel::launchTimed(const std::vector<Arg> &args,
                                     const LaunchOptions &opts,
                                     bool flushCaches) {
  return launchTimedBatch(args, opts, 1, flushCaches);
}

StatusOr<double> Kernel::launchTimedBatch(const std::vector<Arg> &args,
                                          const LaunchOptions &opts,
                                          int launches, bool flushCaches) {
  if (launches < 1)
    return invalidArgument("kernel '%s': a batch needs at least one launch, "
                           "got %d",
                           impl_->name().c_str(), launches);
  double ms = 0;
  TESSERA_RETURN_IF_ERROR(
      impl_->launch(args, opts, launches, &ms, flushCaches));
  return ms;
}

StatusOr<SimCounters> Kernel::lastCounters() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (!impl_->lastCounters)
    return failedPrecondition(
        "kernel '%s': the last launch did not count (launch on the sim "
        "device with LaunchOptions::counters)",
        impl_->name().c_str());
  return *impl_->lastCounters;
}
