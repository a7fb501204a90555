//===- Device.cpp - The runtime's device interface ------------------------===//

#include "Hal/Device.h"

#include "Cpu/CpuDevice.h"
#include "Cuda/CudaHalDevice.h"
#include "Sim/SimDevice.h"
#include "tessera/Support/Host.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace tessera;
using namespace tessera::hal;

Executable::~Executable() = default;
Memory::~Memory() = default;
Device::~Device() = default;

StatusOr<std::shared_ptr<Executable>>
Device::compileCudaSource(const CudaKernelSource &source) {
  return unimplemented("CUDA C++ kernel '%s' (%s) runs on the cuda device "
                       "only, not on %s",
                       source.kernel.c_str(), source.name.c_str(),
                       deviceKindName(kind()));
}

StatusOr<double> Device::timeBatch(int launches, bool,
                                   const std::function<Status()> &enqueue) {
  TESSERA_RETURN_IF_ERROR(status());
  return timeOnHost(launches, enqueue);
}

std::unique_ptr<Device> hal::createDevice(DeviceKind kind, ThreadPool &pool) {
  switch (kind) {
  case DeviceKind::Cpu:
    return createCpuDevice(pool);
  case DeviceKind::Sim:
    return createSimDevice(pool);
  case DeviceKind::Cuda:
    return createCudaDevice();
  }
  return nullptr;
}

namespace {
/// 64-byte aligned host memory.
class HostMemory final : public Memory {
public:
  explicit HostMemory(void *p) : p_(p) {}
  ~HostMemory() override { std::free(p_); }
  void *address() const override { return p_; }
  Status copyFrom(const void *host, size_t bytes, size_t offset) override {
    std::memcpy(static_cast<char *>(p_) + offset, host, bytes);
    return okStatus();
  }
  Status copyTo(void *host, size_t bytes, size_t offset) const override {
    std::memcpy(host, static_cast<const char *>(p_) + offset, bytes);
    return okStatus();
  }

private:
  void *p_;
};
} // namespace

StatusOr<std::unique_ptr<Memory>> hal::allocateHostMemory(DeviceKind kind,
                                                          size_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() - 64)
    return resourceExhausted("cannot allocate %zu bytes", bytes);
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded);
  if (!p)
    return resourceExhausted("cannot allocate %zu bytes of %s memory", bytes,
                             deviceKindName(kind));
  return std::unique_ptr<Memory>(std::make_unique<HostMemory>(p));
}

DeviceInfo hal::hostDeviceInfo(DeviceKind kind, unsigned threads) {
  DeviceInfo d;
  d.kind = kind;
  d.name = hostCpuModelName();
  if (d.name.empty())
    d.name = "unknown CPU";
  d.arch = "host";
  d.computeUnits = int(threads);
  return d;
}

StatusOr<double> hal::timeOnHost(int launches,
                                 const std::function<Status()> &enqueue) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i)
    TESSERA_RETURN_IF_ERROR(enqueue());
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
             .count() /
         double(launches);
}
