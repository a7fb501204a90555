//===- CpuDevice.h - The cpu device -----------------------------*- C++ -*-===//
//
// Kernels compiled to host code and run on the runtime's thread pool.
// Internal to the runtime; made by hal::createDevice.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_CPU_CPUDEVICE_H
#define TESSERA_RUNTIME_CPU_CPUDEVICE_H

#include "Hal/Device.h"

namespace tessera::hal {
std::unique_ptr<Device> createCpuDevice(ThreadPool &pool);
} // namespace tessera::hal

#endif // TESSERA_RUNTIME_CPU_CPUDEVICE_H
