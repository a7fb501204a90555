//===- Stream.cpp - Streams and events ------------------------------------===//

#include "StreamImpl.h"

using namespace tessera;

Stream::Stream() = default;
Stream::Stream(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

DeviceKind Stream::device() const {
  return impl_ ? impl_->device : DeviceKind::Cpu;
}

Status Stream::synchronize() const {
  if (!impl_)
    return okStatus();
  return impl_->queue->synchronize();
}

Status Stream::enqueueHostFunction(std::function<void()> fn) const {
  if (!impl_)
    return failedPrecondition("enqueueHostFunction on no stream");
  return impl_->queue->enqueueHostFunction(std::move(fn));
}

void *Stream::nativeHandle() const {
  return impl_ ? impl_->queue->native() : nullptr;
}

Event::Event() = default;
Event::Event(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Status Event::record(const Stream &stream) {
  if (!impl_)
    return failedPrecondition("record of an empty Event");
  if (!stream.impl_)
    return invalidArgument("an event is recorded on a stream, got none");
  if (stream.impl_->device != impl_->device)
    return invalidArgument("a %s event cannot be recorded on a %s stream",
                           deviceKindName(impl_->device),
                           deviceKindName(stream.impl_->device));
  return impl_->marker->record(*stream.impl_->queue);
}

Status Event::synchronize() const {
  if (!impl_)
    return failedPrecondition("synchronize of an empty Event");
  return impl_->marker->synchronize();
}

StatusOr<double> Event::elapsedMs(const Event &start, const Event &end) {
  if (!start.impl_ || !end.impl_)
    return failedPrecondition("elapsedMs of an empty Event");
  if (start.impl_->device != end.impl_->device)
    return invalidArgument("elapsedMs between a %s and a %s event",
                           deviceKindName(start.impl_->device),
                           deviceKindName(end.impl_->device));
  return end.impl_->marker->elapsedSince(*start.impl_->marker);
}
