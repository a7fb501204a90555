//===- DeviceBuffer.h - Memory owned by a device ----------------*- C++ -*-===//
//
// DeviceBuffer: memory from Runtime::allocate, host memory for cpu and sim,
// GPU memory for cuda. Plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_DEVICEBUFFER_H
#define TESSERA_RUNTIME_DEVICEBUFFER_H

#include "tessera/Support/DType.h"
#include "tessera/Support/Status.h"
#include "tessera/runtime/Device.h"
#include "tessera/runtime/Tensor.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace tessera {

class Runtime;

/// Memory owned by a device, from `Runtime::allocate`: host memory for
/// `cpu` and `sim`, device memory for `cuda` (kernels launched on views of
/// it read and write it in place; host views are copied in and out around
/// every launch). Movable, freed on destruction; must not outlive its
/// Runtime.
class DeviceBuffer {
public:
  DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&) noexcept;
  ~DeviceBuffer();

  DeviceKind device() const;
  size_t bytes() const;
  /// The buffer's address on its device (not dereferenceable on the host
  /// for `cuda`).
  void *data() const;
  /// Copies `bytes` bytes from host memory to the buffer at `offset`.
  Status copyFrom(const void *host, size_t bytes, size_t offset = 0);
  /// Copies `bytes` bytes at `offset` of the buffer to host memory.
  Status copyTo(void *host, size_t bytes, size_t offset = 0) const;
  /// A row-major view of the buffer (from its start) as a tensor of
  /// `shape`; INVALID_ARGUMENT when it does not fit.
  StatusOr<TensorView> view(DType dtype, std::vector<int64_t> shape) const;

private:
  friend class Runtime;
  struct Impl;
  explicit DeviceBuffer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera

#endif // TESSERA_RUNTIME_DEVICEBUFFER_H
