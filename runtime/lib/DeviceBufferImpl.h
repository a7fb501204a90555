//===- DeviceBufferImpl.h - DeviceBuffer's storage --------------*- C++ -*-===//
//
// A DeviceBuffer is a device's Memory with its size. Internal to the
// runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_DEVICEBUFFERIMPL_H
#define TESSERA_RUNTIME_DEVICEBUFFERIMPL_H

#include "Hal/Device.h"

namespace tessera {

struct DeviceBuffer::Impl {
  DeviceKind device = DeviceKind::Cpu;
  size_t bytes = 0;
  std::unique_ptr<hal::Memory> memory;

  void *address() const { return memory->address(); }
  Status checkRange(size_t n, size_t offset) const {
    if (offset > bytes || n > bytes - offset)
      return invalidArgument("a copy of %zu bytes at offset %zu is outside "
                             "the %zu-byte %s buffer",
                             n, offset, bytes, deviceKindName(device));
    return okStatus();
  }
};

} // namespace tessera

#endif // TESSERA_RUNTIME_DEVICEBUFFERIMPL_H
