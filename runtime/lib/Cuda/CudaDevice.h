//===- CudaDevice.h - One GPU through the CUDA driver -----------*- C++ -*-===//
//
// A CUDA device (its primary context), its properties, and RAII owners for
// modules, device memory, streams and events. Every driver error becomes a
// Status naming the call and the CUDA error. Internal to the runtime.
//
// Thread-safety: a CudaDevice and the objects it creates may be used from
// any thread; each call makes the device's context current on the calling
// thread first. Objects created by a device must not outlive it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_CUDA_CUDADEVICE_H
#define TESSERA_RUNTIME_CUDA_CUDADEVICE_H

#include "Cuda/CudaDriver.h"
#include "tessera/Support/DType.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace tessera::cuda {

class CudaDevice;

/// Static properties of a device, read once when it is opened.
struct CudaDeviceProperties {
  int ordinal = 0;
  std::string name;
  int computeMajor = 0;
  int computeMinor = 0;
  int smCount = 0;
  int64_t totalMemoryBytes = 0;
  int64_t maxSharedPerBlock = 0;      ///< Without opt-in.
  int64_t maxSharedPerBlockOptin = 0; ///< With cuFuncSetAttribute opt-in.
  int64_t maxSharedPerSm = 0;
  int64_t l2CacheBytes = 0;
  int maxThreadsPerBlock = 0;
  int maxThreadsPerSm = 0;
  int maxRegistersPerBlock = 0;
  int warpSize = 0;
  int clockRateKHz = 0;
  int memoryClockRateKHz = 0;
  int memoryBusWidthBits = 0;
  int driverVersion = 0; ///< e.g. 13000 for CUDA 13.0.

  /// "sm_90a" style name of the device's architecture ("a" for 9.0 and 10.x
  /// and 12.x, whose arch-specific features Tessera may use).
  std::string archName() const;
  /// DRAM bandwidth in GB/s from memory clock and bus width (double data
  /// rate).
  double peakBandwidthGBs() const;
};

/// Owns one driver handle of type `Handle` and releases it with the driver
/// call bound at construction. Move-only.
template <typename Handle> class CudaResource {
public:
  using ReleaseFn = CuResult (*)(Handle);
  CudaResource() = default;
  CudaResource(const CudaDevice *device, Handle handle, ReleaseFn release)
      : device_(device), handle_(handle), release_(release) {}
  CudaResource(CudaResource &&other) noexcept { *this = std::move(other); }
  CudaResource &operator=(CudaResource &&other) noexcept {
    if (this != &other) {
      reset();
      device_ = std::exchange(other.device_, nullptr);
      handle_ = std::exchange(other.handle_, Handle());
      release_ = std::exchange(other.release_, nullptr);
    }
    return *this;
  }
  CudaResource(const CudaResource &) = delete;
  CudaResource &operator=(const CudaResource &) = delete;
  ~CudaResource() { reset(); }

  Handle get() const { return handle_; }
  const CudaDevice *device() const { return device_; }
  /// Releases the handle now (errors are ignored, as in a destructor).
  void reset();

private:
  const CudaDevice *device_ = nullptr;
  Handle handle_ = Handle();
  ReleaseFn release_ = nullptr;
};

/// A kernel of a loaded module; valid while the module is.
struct CudaKernel {
  CuFunction function = nullptr;
  std::string name;
};

/// A loaded cubin or PTX module.
class CudaModule : public CudaResource<CuModule> {
public:
  using CudaResource::CudaResource;
  /// The kernel named `name` (a mangled name for C++ kernels); NOT_FOUND
  /// when the module has none.
  StatusOr<CudaKernel> kernel(const std::string &name) const;
};

/// Device memory.
class DeviceBuffer : public CudaResource<CuDevicePtr> {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const CudaDevice *device, CuDevicePtr ptr, size_t bytes,
               ReleaseFn release)
      : CudaResource(device, ptr, release), bytes_(bytes) {}
  size_t size() const { return bytes_; }
  /// The address for a kernel parameter slot.
  CuDevicePtr address() const { return get(); }

private:
  size_t bytes_ = 0;
};

/// A non-blocking stream.
class CudaStream : public CudaResource<CuStream> {
public:
  using CudaResource::CudaResource;
  Status synchronize() const;
};

/// An event with timing.
class CudaEvent : public CudaResource<CuEvent> {
public:
  using CudaResource::CudaResource;
  /// Records the event on `stream` (nullptr: the default stream).
  Status record(CuStream stream = nullptr) const;
  Status synchronize() const;
  /// Milliseconds between two recorded, completed events.
  static StatusOr<float> elapsedMs(const CudaEvent &start,
                                   const CudaEvent &end);
};

/// Launch geometry.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

class CudaDevice {
public:
  /// Number of devices; UNAVAILABLE when the driver cannot be used.
  static StatusOr<int> deviceCount();
  /// Opens device `ordinal` and retains its primary context. UNAVAILABLE
  /// with the reason when libcuda is missing, cuInit fails or there is no
  /// such device.
  static StatusOr<std::unique_ptr<CudaDevice>> open(int ordinal);
  ~CudaDevice();
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  const CudaDeviceProperties &properties() const { return properties_; }
  const CudaDriverApi &api() const { return *api_; }

  /// Makes this device's context current on the calling thread.
  Status makeCurrent() const;

  /// Loads a cubin (ELF), fatbin or PTX image (text; need not be
  /// NUL-terminated). INVALID_ARGUMENT for an image the driver rejects.
  StatusOr<CudaModule> loadModule(std::string_view image) const;
  /// Blocks of `blockSize` threads with `dynamicSharedBytes` of dynamic
  /// shared memory that run at once on one multiprocessor.
  StatusOr<int> activeBlocksPerSm(const CudaKernel &kernel, int blockSize,
                                  size_t dynamicSharedBytes) const;
  /// Lets `kernel` use up to `bytes` of dynamic shared memory (needed above
  /// 48 KiB).
  Status setMaxDynamicSharedMemory(const CudaKernel &kernel, int bytes) const;
  /// Launches `kernel`; `params` holds one pointer per kernel parameter.
  Status launch(const CudaKernel &kernel, Dim3 grid, Dim3 block,
                unsigned dynamicSharedBytes, CuStream stream,
                void **params) const;
  /// Waits for all work on the device.
  Status synchronize() const;
  /// Encodes the tiled tensor map of a TMA copy (cuTensorMapEncodeTiled):
  /// `rank` dimensions innermost first, `strides` the rank - 1 byte
  /// strides of dimensions 1 and up, `swizzle` its span in bytes (0, 32,
  /// 64, 128); zeros outside the tensor, 256-byte L2 promotion.
  /// UNAVAILABLE with a driver older than CUDA 12, INVALID_ARGUMENT for a
  /// dtype TMA cannot copy or a geometry the driver refuses.
  Status encodeTensorMap(CuTensorMap *map, DType dtype, int rank, void *address,
                         const uint64_t *dims, const uint64_t *strides,
                         const unsigned *box, int swizzle) const;

  StatusOr<DeviceBuffer> allocate(size_t bytes) const;
  /// Copies; with a stream the copy is asynchronous on it.
  Status copyToDevice(CuDevicePtr dst, const void *src, size_t bytes,
                      CuStream stream = nullptr) const;
  Status copyToHost(void *dst, CuDevicePtr src, size_t bytes,
                    CuStream stream = nullptr) const;
  Status fill(CuDevicePtr dst, uint8_t value, size_t bytes) const;

  StatusOr<CudaStream> createStream() const;
  StatusOr<CudaEvent> createEvent() const;

private:
  CudaDevice(const CudaDriverApi *api, CuDevice device, CuContext context)
      : api_(api), device_(device), context_(context) {}
  Status readProperties(int ordinal);

  const CudaDriverApi *api_;
  CuDevice device_;
  CuContext context_;
  CudaDeviceProperties properties_;
};

template <typename Handle> void CudaResource<Handle>::reset() {
  if (device_ && release_) {
    (void)device_->makeCurrent();
    (void)release_(handle_);
  }
  device_ = nullptr;
  handle_ = Handle();
  release_ = nullptr;
}

} // namespace tessera::cuda

#endif // TESSERA_RUNTIME_CUDA_CUDADEVICE_H
