//===- CpuDevice.cpp - The cpu device: host code through the ORC JIT ------===//
//
// Kernels compiled for the host CPU (driver::compileForCpu) into object
// code the ORC JIT links (and the disk cache and bundles keep, for hosts
// with the same instruction set); a launch runs the grid's program
// instances on the runtime's thread pool. The reference device: it needs
// nothing but the host. SIMT programs (one instance per GPU thread, with
// barriers and warp shuffles) run through the sim device's fiber scheduler
// instead: correct, not fast.
//
//===----------------------------------------------------------------------===//

#include "Hal/Device.h"

#include "Core/ThreadPool.h"

#include "tessera/Target/CPU/KernelAsserts.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace tessera;
using namespace tessera::hal;

namespace {

using CpuExecutable = HostExecutable<driver::CpuExecutable>;

class CpuDevice final : public HostDevice {
public:
  explicit CpuDevice(ThreadPool &pool)
      : HostDevice(DeviceKind::Cpu, pool), simt_(createSimDevice(pool)) {}

  launch::VariantKey codeKey(const launch::VariantKey &key) const override {
    // Host code depends on unit strides, absent tensors and @heuristics
    // only.
    launch::VariantKey cpu{key.unitMask, key.absentMask};
    cpu.heuristics = key.heuristics;
    return cpu;
  }

  StatusOr<std::shared_ptr<Executable>>
  compile(const driver::SourceModule &module, const std::string &kernel,
          const Specialization &spec, bool) override {
    if (const KernelInfo *k = module.findKernel(kernel); k && k->simt)
      return simt_->compile(module, kernel, spec, false);
    TESSERA_ASSIGN_OR_RETURN(auto code,
                             driver::compileForCpu(module, kernel, spec));
    return std::shared_ptr<Executable>(
        std::make_shared<CpuExecutable>(std::move(code)));
  }

  StatusOr<std::string> codeTarget() const override {
    return driver::cpuCodeTarget();
  }
  StatusOr<std::string> pack(const Executable &exe) const override {
    auto *cpu = dynamic_cast<const CpuExecutable *>(&exe);
    if (!cpu)
      return unimplemented("SIMT programs have no stored form on cpu (they "
                           "are compiled for the sim's scheduler)");
    return cpu->code->serialize();
  }
  StatusOr<std::shared_ptr<Executable>> load(const std::string &,
                                             std::string_view bytes) override {
    TESSERA_ASSIGN_OR_RETURN(auto code, driver::loadCpuExecutable(bytes));
    return std::shared_ptr<Executable>(
        std::make_shared<CpuExecutable>(std::move(code)));
  }

  Status run(const KernelLaunch &l) override {
    if (l.signature.info && l.signature.info->simt)
      return simt_->run(l);
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Executable> exe,
                             l.variant(l.plan.key, false));
    // What the grids need, owned by the work (which may run after this
    // returns, on a stream).
    auto grids = [this, exe, slots = l.signature.flatten(l.args),
                  grid = l.plan.grid, launches = l.launches]() mutable {
      const driver::CpuExecutable *code =
          static_cast<CpuExecutable &>(*exe).code.get();
      std::vector<void *> ptrs(slots.size());
      for (size_t i = 0; i < slots.size(); ++i)
        ptrs[i] = &slots[i];
      const int64_t g[3] = {grid[0], grid[1], grid[2]};
      const int64_t total = g[0] * g[1] * g[2];
      int64_t grain = std::max<int64_t>(1, total / (int64_t(pool_.size()) * 8));
      void **argv = ptrs.data();
      // Failed run-time assertions of the kernel (a zero range() step...).
      cpu::AssertSink asserts;
      for (int i = 0; i < launches && !asserts.failed(); ++i)
        pool_.parallelFor(total, grain, [&](int64_t b, int64_t e) {
          cpu::ScopedAssertSink scope(asserts);
          code->run(argv, b, e, g);
        });
      // Kernel prints (C printf) appear before what the caller prints next.
      std::fflush(stdout);
      if (asserts.failed())
        return failedPrecondition("kernel assertion failed: %s",
                                  asserts.message().c_str());
      return okStatus();
    };
    if (l.queue) {
      TESSERA_RETURN_IF_ERROR(enqueueOnHost(*l.queue, std::move(grids)));
      // Host tensors may be reused by the caller once launch returns.
      return hasHostTensors(l.args) ? l.queue->synchronize() : okStatus();
    }
    // The clock covers the grids only (the variant is compiled above).
    auto t0 = std::chrono::steady_clock::now();
    TESSERA_RETURN_IF_ERROR(grids());
    if (l.ms)
      *l.ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t0)
                  .count() /
              double(l.launches);
    return okStatus();
  }

private:
  /// Runs SIMT programs.
  std::unique_ptr<Device> simt_;
};

} // namespace

std::unique_ptr<Device> hal::createCpuDevice(ThreadPool &pool) {
  return std::make_unique<CpuDevice>(pool);
}
