//===- DeviceBuffer.cpp - Memory owned by a device ------------------------===//

#include "DeviceBufferImpl.h"

#include <limits>

using namespace tessera;

DeviceBuffer::DeviceBuffer() = default;
DeviceBuffer::DeviceBuffer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
DeviceBuffer::DeviceBuffer(DeviceBuffer &&) noexcept = default;
DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&) noexcept = default;
DeviceBuffer::~DeviceBuffer() = default;

DeviceKind DeviceBuffer::device() const {
  return impl_ ? impl_->device : DeviceKind::Cpu;
}
size_t DeviceBuffer::bytes() const { return impl_ ? impl_->bytes : 0; }
void *DeviceBuffer::data() const { return impl_ ? impl_->address() : nullptr; }

Status DeviceBuffer::copyFrom(const void *host, size_t bytes, size_t offset) {
  if (!impl_)
    return failedPrecondition("copy into an empty DeviceBuffer");
  TESSERA_RETURN_IF_ERROR(impl_->checkRange(bytes, offset));
  if (!bytes)
    return okStatus();
  return impl_->memory->copyFrom(host, bytes, offset);
}

Status DeviceBuffer::copyTo(void *host, size_t bytes, size_t offset) const {
  if (!impl_)
    return failedPrecondition("copy from an empty DeviceBuffer");
  TESSERA_RETURN_IF_ERROR(impl_->checkRange(bytes, offset));
  if (!bytes)
    return okStatus();
  return impl_->memory->copyTo(host, bytes, offset);
}

StatusOr<TensorView> DeviceBuffer::view(DType dtype,
                                        std::vector<int64_t> shape) const {
  if (!impl_)
    return failedPrecondition("view of an empty DeviceBuffer");
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return invalidArgument("negative dimension %lld in a view", (long long)d);
    if (d && n > std::numeric_limits<int64_t>::max() / d)
      return invalidArgument("view shape overflows");
    n *= d;
  }
  int64_t bits = dtypeBits(dtype);
  if (n > int64_t(impl_->bytes) * 8 / bits)
    return invalidArgument(
        "a %s view of %lld elements needs %zu bytes; the buffer has %zu",
        dtypeName(dtype), (long long)n, storageBytes(dtype, size_t(n)),
        impl_->bytes);
  TensorView v =
      TensorView::contiguous(impl_->address(), dtype, std::move(shape));
  v.device = impl_->device;
  return v;
}
