//===- CudaDevice.cpp - One GPU through the CUDA driver -------------------===//

#include "Cuda/CudaDevice.h"

#include <cstring>

using namespace tessera;
using namespace tessera::cuda;

std::string CudaDeviceProperties::archName() const {
  std::string arch =
      "sm_" + std::to_string(computeMajor) + std::to_string(computeMinor);
  if ((computeMajor == 9 && computeMinor == 0) || computeMajor == 10 ||
      computeMajor == 12)
    arch += "a";
  return arch;
}

double CudaDeviceProperties::peakBandwidthGBs() const {
  return 2.0 * memoryClockRateKHz * 1e3 * (memoryBusWidthBits / 8.0) / 1e9;
}

StatusOr<CudaKernel> CudaModule::kernel(const std::string &name) const {
  if (!device())
    return failedPrecondition("kernel '%s' looked up in an empty module",
                              name.c_str());
  const CudaDriverApi &api = device()->api();
  TESSERA_RETURN_IF_ERROR(device()->makeCurrent());
  CudaKernel kernel;
  kernel.name = name;
  TESSERA_CU_RETURN_IF_ERROR(api, cuModuleGetFunction, &kernel.function, get(),
                             name.c_str());
  return kernel;
}

Status CudaStream::synchronize() const {
  const CudaDriverApi &api = device()->api();
  TESSERA_RETURN_IF_ERROR(device()->makeCurrent());
  TESSERA_CU_RETURN_IF_ERROR(api, cuStreamSynchronize, get());
  return okStatus();
}

Status CudaEvent::record(CuStream stream) const {
  const CudaDriverApi &api = device()->api();
  TESSERA_RETURN_IF_ERROR(device()->makeCurrent());
  TESSERA_CU_RETURN_IF_ERROR(api, cuEventRecord, get(), stream);
  return okStatus();
}

Status CudaEvent::synchronize() const {
  const CudaDriverApi &api = device()->api();
  TESSERA_RETURN_IF_ERROR(device()->makeCurrent());
  TESSERA_CU_RETURN_IF_ERROR(api, cuEventSynchronize, get());
  return okStatus();
}

StatusOr<float> CudaEvent::elapsedMs(const CudaEvent &start,
                                     const CudaEvent &end) {
  if (!start.device() || start.device() != end.device())
    return invalidArgument("elapsed time between events of different devices");
  const CudaDriverApi &api = start.device()->api();
  TESSERA_RETURN_IF_ERROR(start.device()->makeCurrent());
  float ms = 0;
  TESSERA_CU_RETURN_IF_ERROR(api, cuEventElapsedTime, &ms, start.get(),
                             end.get());
  return ms;
}

StatusOr<int> CudaDevice::deviceCount() {
  TESSERA_ASSIGN_OR_RETURN(const CudaDriverApi *api, loadCudaDriver());
  int count = 0;
  TESSERA_CU_RETURN_IF_ERROR(*api, cuDeviceGetCount, &count);
  return count;
}

StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::open(int ordinal) {
  TESSERA_ASSIGN_OR_RETURN(const CudaDriverApi *api, loadCudaDriver());
  TESSERA_ASSIGN_OR_RETURN(int count, deviceCount());
  if (count == 0)
    return unavailable("CUDA driver libcuda ('%s') reports no CUDA device",
                       api->path.c_str());
  if (ordinal < 0 || ordinal >= count)
    return unavailable("no CUDA device %d (libcuda reports %d)", ordinal,
                       count);
  CuDevice device = 0;
  TESSERA_CU_RETURN_IF_ERROR(*api, cuDeviceGet, &device, ordinal);
  CuContext context = nullptr;
  TESSERA_CU_RETURN_IF_ERROR(*api, cuDevicePrimaryCtxRetain, &context, device);
  std::unique_ptr<CudaDevice> result(new CudaDevice(api, device, context));
  TESSERA_RETURN_IF_ERROR(result->readProperties(ordinal),
                          "reading the properties of CUDA device %d", ordinal);
  return result;
}

CudaDevice::~CudaDevice() { (void)api_->cuDevicePrimaryCtxRelease_v2(device_); }

Status CudaDevice::readProperties(int ordinal) {
  const CudaDriverApi &api = *api_;
  CudaDeviceProperties &p = properties_;
  p.ordinal = ordinal;
  char name[256] = {};
  TESSERA_CU_RETURN_IF_ERROR(api, cuDeviceGetName, name,
                             static_cast<int>(sizeof(name) - 1), device_);
  p.name = name;
  size_t total = 0;
  TESSERA_CU_RETURN_IF_ERROR(api, cuDeviceTotalMem_v2, &total, device_);
  p.totalMemoryBytes = static_cast<int64_t>(total);
  TESSERA_CU_RETURN_IF_ERROR(api, cuDriverGetVersion, &p.driverVersion);

  auto read = [&](CuDeviceAttribute attribute, auto &field) -> Status {
    int value = 0;
    TESSERA_CU_RETURN_IF_ERROR(api, cuDeviceGetAttribute, &value, attribute,
                               device_);
    field = value;
    return okStatus();
  };
  TESSERA_RETURN_IF_ERROR(
      read(kCuDevAttrComputeCapabilityMajor, p.computeMajor));
  TESSERA_RETURN_IF_ERROR(
      read(kCuDevAttrComputeCapabilityMinor, p.computeMinor));
  TESSERA_RETURN_IF_ERROR(read(kCuDevAttrMultiprocessorCount, p.smCount));
  TESSERA_RETURN_IF_ERROR(
      read(kCuDevAttrMaxSharedMemoryPerBlock, p.maxSharedPerBlock));
  TESSERA_RETURN_IF_ERROR(
      read(kCuDevAttrMaxSharedMemoryPerBlockOptin, p.maxSharedPerBlockOptin));
  TESSERA_RETURN_IF_ERROR(
      read(kCuDevAttrMaxSharedMemoryPerMultiprocessor, p.maxSharedPerSm));
  TESSERA_RETURN_IF_ERROR(read(kCuDevAttrL2CacheSize, p.l2CacheBytes));
  TESSERA_RETURN_IF_ERROR(
      read(kCuDevAttrMaxThreadsPerBlock, p.maxThreadsPerBlock));
  TESSERA_RETURN_IF_ERROR(
      read(kCuDevAttrMaxThreadsPerMultiprocessor, p.maxThreadsPerSm));
  TESSERA_RETURN_IF_ERROR(
      read(kCuDevAttrMaxRegistersPerBlock, p.maxRegistersPerBlock));
  TESSERA_RETURN_IF_ERROR(read(kCuDevAttrWarpSize, p.warpSize));
  TESSERA_RETURN_IF_ERROR(read(kCuDevAttrClockRate, p.clockRateKHz));
  TESSERA_RETURN_IF_ERROR(
      read(kCuDevAttrMemoryClockRate, p.memoryClockRateKHz));
  TESSERA_RETURN_IF_ERROR(
      read(kCuDevAttrGlobalMemoryBusWidth, p.memoryBusWidthBits));
  return okStatus();
}

Status CudaDevice::makeCurrent() const {
  TESSERA_CU_RETURN_IF_ERROR(*api_, cuCtxSetCurrent, context_);
  return okStatus();
}

StatusOr<CudaModule> CudaDevice::loadModule(std::string_view image) const {
  if (image.empty())
    return invalidArgument("empty module image");
  TESSERA_RETURN_IF_ERROR(makeCurrent());
  // ELF cubins and fatbins carry their size; PTX is read as a C string.
  static constexpr char kElfMagic[] = "\x7f"
                                      "ELF";
  bool binary = image.starts_with(std::string_view(kElfMagic, 4));
  uint32_t magic = 0;
  if (image.size() >= sizeof(magic)) {
    std::memcpy(&magic, image.data(), sizeof(magic));
    binary |= magic == 0xBA55ED50u; // fatbin
  }
  std::string text;
  const void *data = image.data();
  if (!binary) {
    text.assign(image);
    data = text.c_str();
  }
  CuModule module = nullptr;
  TESSERA_CU_RETURN_IF_ERROR(*api_, cuModuleLoadData, &module, data);
  return CudaModule(this, module, api_->cuModuleUnload);
}

Status CudaDevice::setMaxDynamicSharedMemory(const CudaKernel &kernel,
                                             int bytes) const {
  TESSERA_RETURN_IF_ERROR(makeCurrent());
  TESSERA_CU_RETURN_IF_ERROR(*api_, cuFuncSetAttribute, kernel.function,
                             kCuFuncAttrMaxDynamicSharedSizeBytes, bytes);
  return okStatus();
}

StatusOr<int> CudaDevice::activeBlocksPerSm(const CudaKernel &kernel,
                                            int blockSize,
                                            size_t dynamicSharedBytes) const {
  TESSERA_RETURN_IF_ERROR(makeCurrent());
  int blocks = 0;
  TESSERA_CU_RETURN_IF_ERROR(*api_, cuOccupancyMaxActiveBlocksPerMultiprocessor,
                             &blocks, kernel.function, blockSize,
                             dynamicSharedBytes);
  return blocks;
}

Status CudaDevice::launch(const CudaKernel &kernel, Dim3 grid, Dim3 block,
                          unsigned dynamicSharedBytes, CuStream stream,
                          void **params) const {
  if (!kernel.function)
    return invalidArgument("launch of an unresolved kernel");
  TESSERA_RETURN_IF_ERROR(makeCurrent());
  TESSERA_RETURN_IF_ERROR(
      cudaResultToStatus(*api_,
                         api_->cuLaunchKernel(kernel.function, grid.x, grid.y,
                                              grid.z, block.x, block.y, block.z,
                                              dynamicSharedBytes, stream,
                                              params, nullptr),
                         "cuLaunchKernel", __FILE__, __LINE__),
      "launching '%s' on grid (%u,%u,%u) x block (%u,%u,%u), %u B dynamic "
      "shared memory",
      kernel.name.c_str(), grid.x, grid.y, grid.z, block.x, block.y, block.z,
      dynamicSharedBytes);
  return okStatus();
}

Status CudaDevice::synchronize() const {
  TESSERA_RETURN_IF_ERROR(makeCurrent());
  TESSERA_CU_RETURN_IF_ERROR(*api_, cuCtxSynchronize);
  return okStatus();
}

Status CudaDevice::encodeTensorMap(CuTensorMap *map, DType dtype, int rank,
                                   void *address, const uint64_t *dims,
                                   const uint64_t *strides, const unsigned *box,
                                   int swizzle) const {
  if (!api_->cuTensorMapEncodeTiled)
    return unavailable("the CUDA driver '%s' has no cuTensorMapEncodeTiled "
                       "(TMA copies need a CUDA 12 driver or later)",
                       api_->path.c_str());
  int type = -1;
  switch (dtype) {
  case DType::F16:
    type = kCuTensorMapFloat16;
    break;
  case DType::BF16:
    type = kCuTensorMapBfloat16;
    break;
  case DType::F32:
    type = kCuTensorMapFloat32;
    break;
  case DType::I32:
    type = kCuTensorMapInt32;
    break;
  case DType::I64:
    type = kCuTensorMapInt64;
    break;
  default:
    if (dtypeSize(dtype) == 1)
      type = kCuTensorMapUint8; // fp8 and 8-bit integers: raw bytes
    break;
  }
  if (type < 0)
    return invalidArgument("TMA copies of %s tensors are not supported",
                           dtypeName(dtype));
  int mode = swizzle == 128  ? kCuTensorMapSwizzle128B
             : swizzle == 64 ? kCuTensorMapSwizzle64B
             : swizzle == 32 ? kCuTensorMapSwizzle32B
                             : kCuTensorMapSwizzleNone;
  const unsigned elementStrides[5] = {1, 1, 1, 1, 1};
  const unsigned long long *d =
      reinterpret_cast<const unsigned long long *>(dims);
  const unsigned long long *st =
      reinterpret_cast<const unsigned long long *>(strides);
  TESSERA_CU_RETURN_IF_ERROR(*api_, cuTensorMapEncodeTiled, map, type,
                             unsigned(rank), address, d, st, box,
                             elementStrides, /*interleave=*/0, mode,
                             kCuTensorMapL2Promotion256B, /*oobFill=*/0);
  return okStatus();
}

StatusOr<DeviceBuffer> CudaDevice::allocate(size_t bytes) const {
  TESSERA_RETURN_IF_ERROR(makeCurrent());
  CuDevicePtr ptr = 0;
  TESSERA_CU_RETURN_IF_ERROR(*api_, cuMemAlloc_v2, &ptr, bytes);
  return DeviceBuffer(this, ptr, bytes, api_->cuMemFree_v2);
}

Status CudaDevice::copyToDevice(CuDevicePtr dst, const void *src, size_t bytes,
                                CuStream stream) const {
  TESSERA_RETURN_IF_ERROR(makeCurrent());
  if (stream)
    TESSERA_CU_RETURN_IF_ERROR(*api_, cuMemcpyHtoDAsync_v2, dst, src, bytes,
                               stream);
  else
    TESSERA_CU_RETURN_IF_ERROR(*api_, cuMemcpyHtoD_v2, dst, src, bytes);
  return okStatus();
}

Status CudaDevice::copyToHost(void *dst, CuDevicePtr src, size_t bytes,
                              CuStream stream) const {
  TESSERA_RETURN_IF_ERROR(makeCurrent());
  if (stream)
    TESSERA_CU_RETURN_IF_ERROR(*api_, cuMemcpyDtoHAsync_v2, dst, src, bytes,
                               stream);
  else
    TESSERA_CU_RETURN_IF_ERROR(*api_, cuMemcpyDtoH_v2, dst, src, bytes);
  return okStatus();
}

Status CudaDevice::fill(CuDevicePtr dst, uint8_t value, size_t bytes) const {
  TESSERA_RETURN_IF_ERROR(makeCurrent());
  TESSERA_CU_RETURN_IF_ERROR(*api_, cuMemsetD8_v2, dst, value, bytes);
  return okStatus();
}

StatusOr<CudaStream> CudaDevice::createStream() const {
  TESSERA_RETURN_IF_ERROR(makeCurrent());
  CuStream stream = nullptr;
  TESSERA_CU_RETURN_IF_ERROR(*api_, cuStreamCreate, &stream,
                             kCuStreamNonBlocking);
  return CudaStream(this, stream, api_->cuStreamDestroy_v2);
}

StatusOr<CudaEvent> CudaDevice::createEvent() const {
  TESSERA_RETURN_IF_ERROR(makeCurrent());
  CuEvent event = nullptr;
  TESSERA_CU_RETURN_IF_ERROR(*api_, cuEventCreate, &event, kCuEventDefault);
  return CudaEvent(this, event, api_->cuEventDestroy_v2);
}
