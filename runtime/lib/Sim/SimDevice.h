//===- SimDevice.h - The sim device -----------------------------*- C++ -*-===//
//
// The GPU lowering executed on CPU fibers, with its checkers and counters.
// Internal to the runtime; made by hal::createDevice.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_SIM_SIMDEVICE_H
#define TESSERA_RUNTIME_SIM_SIMDEVICE_H

#include "Hal/Device.h"

namespace tessera::hal {
std::unique_ptr<Device> createSimDevice(ThreadPool &pool);
} // namespace tessera::hal

#endif // TESSERA_RUNTIME_SIM_SIMDEVICE_H
