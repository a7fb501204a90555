//===- Device.h - Device kinds and what a device is -------------*- C++ -*-===//
//
// The device kinds kernels run on (cpu, sim, cuda), their names, and
// DeviceInfo. Plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_DEVICE_H
#define TESSERA_RUNTIME_DEVICE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

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

} // namespace tessera

#endif // TESSERA_RUNTIME_DEVICE_H
