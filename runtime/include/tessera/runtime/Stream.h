//===- Stream.h - Ordered queues of device work and events ------*- C++ -*-===//
//
// A Stream is an ordered queue of work on one device: kernel launches
// (LaunchOptions::stream), host functions, event records. Work queued on a
// stream runs in order, and asynchronously with the host: a launch on a
// stream checks its arguments, queues the kernel and returns. On cuda a
// stream is a CUstream (Runtime::createStream makes one; wrapStream adopts
// the application's own, such as a framework's current stream); on cpu and
// sim it is a queue served by a thread of its own that runs each kernel's
// grid on the runtime's thread pool. An Event records the point a stream
// has reached, for waiting and for timing. Plain C++.
//
// Handles are cheap to copy (they share the queue). The Runtime, and every
// Kernel launched on a stream, must outlive the work queued on it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_STREAM_H
#define TESSERA_RUNTIME_STREAM_H

#include "tessera/Support/Status.h"
#include "tessera/runtime/Device.h"

#include <functional>
#include <memory>

namespace tessera {

class Runtime;
class Kernel;
class Event;

class Stream {
public:
  /// No stream: launches with it run synchronously (LaunchOptions' default).
  Stream();
  bool valid() const { return impl_ != nullptr; }
  DeviceKind device() const;
  /// Waits until everything queued so far has run. Returns the first error
  /// a queued launch met since the last synchronize (then forgotten).
  Status synchronize() const;
  /// Queues `fn` to run on the host once the work queued before it has
  /// run; work queued after it waits for it. `fn` must not queue work on,
  /// or synchronize, this stream.
  Status enqueueHostFunction(std::function<void()> fn) const;
  /// The device's own handle: the CUstream on cuda, null on cpu and sim.
  void *nativeHandle() const;

private:
  friend class Runtime;
  friend class Kernel;
  friend class Event;
  struct Impl;
  explicit Stream(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

class Event {
public:
  Event();
  bool valid() const { return impl_ != nullptr; }
  /// Records the point `stream` has reached: the event completes when the
  /// work queued on it before this call has run. The stream must be of the
  /// event's device.
  Status record(const Stream &stream);
  /// Waits until the recorded point is reached (FAILED_PRECONDITION when
  /// the event was never recorded).
  Status synchronize() const;
  /// Milliseconds between two recorded events of one device, once both
  /// are reached (synchronize() first).
  static StatusOr<double> elapsedMs(const Event &start, const Event &end);

private:
  friend class Runtime;
  struct Impl;
  explicit Event(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

} // namespace tessera

#endif // TESSERA_RUNTIME_STREAM_H
