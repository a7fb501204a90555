//===- StreamImpl.h - Stream's and Event's storage --------------*- C++ -*-===//
//
// A Stream is a device's hal::Queue, an Event a hal::Marker. Internal to
// the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_STREAMIMPL_H
#define TESSERA_RUNTIME_STREAMIMPL_H

#include "Hal/Device.h"

namespace tessera {

struct Stream::Impl {
  DeviceKind device = DeviceKind::Cpu;
  std::shared_ptr<hal::Queue> queue;
};

struct Event::Impl {
  DeviceKind device = DeviceKind::Cpu;
  std::shared_ptr<hal::Marker> marker;
};

} // namespace tessera

#endif // TESSERA_RUNTIME_STREAMIMPL_H
