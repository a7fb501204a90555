//===- CudaDriver.h - libcuda loaded at run time ----------------*- C++ -*-===//
//
// The C types of the CUDA driver API that Tessera uses (declared here with
// the values of the CUDA 13 cuda.h, which is never included), the process-
// wide table of driver entry points filled from CudaDriverSymbols.def, and
// the conversion of CUresult codes into Status values. Internal to the
// runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_CUDA_CUDADRIVER_H
#define TESSERA_RUNTIME_CUDA_CUDADRIVER_H

#include "tessera/Support/Status.h"

#include <cstddef>
#include <string>

namespace tessera::cuda {

using CuResult = int; ///< CUresult; 0 is CUDA_SUCCESS.
inline constexpr CuResult kCudaSuccess = 0;
using CuDevice = int;
using CuDevicePtr = unsigned long long;
struct CuContextOpaque;
using CuContext = CuContextOpaque *;
struct CuModuleOpaque;
using CuModule = CuModuleOpaque *;
struct CuFunctionOpaque;
using CuFunction = CuFunctionOpaque *;
struct CuStreamOpaque;
using CuStream = CuStreamOpaque *;
struct CuEventOpaque;
using CuEvent = CuEventOpaque *;

/// CUdevice_attribute values used by Tessera.
enum CuDeviceAttribute : int {
  kCuDevAttrMaxThreadsPerBlock = 1,
  kCuDevAttrMaxSharedMemoryPerBlock = 8,
  kCuDevAttrWarpSize = 10,
  kCuDevAttrMaxRegistersPerBlock = 12,
  kCuDevAttrClockRate = 13,
  kCuDevAttrMultiprocessorCount = 16,
  kCuDevAttrMemoryClockRate = 36,
  kCuDevAttrGlobalMemoryBusWidth = 37,
  kCuDevAttrL2CacheSize = 38,
  kCuDevAttrMaxThreadsPerMultiprocessor = 39,
  kCuDevAttrComputeCapabilityMajor = 75,
  kCuDevAttrComputeCapabilityMinor = 76,
  kCuDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  kCuDevAttrMaxSharedMemoryPerBlockOptin = 97,
};

/// CUfunction_attribute values used by Tessera.
enum CuFunctionAttribute : int {
  kCuFuncAttrNumRegs = 4,
  kCuFuncAttrMaxDynamicSharedSizeBytes = 8,
};

/// CU_STREAM_NON_BLOCKING and CU_EVENT_DEFAULT.
inline constexpr unsigned kCuStreamNonBlocking = 1;
inline constexpr unsigned kCuEventDefault = 0;

/// CUtensorMap: 128 opaque bytes, 128-byte aligned as CUDA 13 declares it.
struct alignas(128) CuTensorMap {
  unsigned long long opaque[16];
};
/// The CUtensorMapDataType, CUtensorMapSwizzle and CUtensorMapL2promotion
/// values Tessera uses (interleave and OOB fill: 0, none).
enum CuTensorMapDataType : int {
  kCuTensorMapUint8 = 0,
  kCuTensorMapInt32 = 3,
  kCuTensorMapInt64 = 5,
  kCuTensorMapFloat16 = 6,
  kCuTensorMapFloat32 = 7,
  kCuTensorMapBfloat16 = 9,
};
enum CuTensorMapSwizzle : int {
  kCuTensorMapSwizzleNone = 0,
  kCuTensorMapSwizzle32B = 1,
  kCuTensorMapSwizzle64B = 2,
  kCuTensorMapSwizzle128B = 3,
};
inline constexpr int kCuTensorMapL2Promotion256B = 3;

/// The bound driver entry points.
struct CudaDriverApi {
#define TESSERA_CUDA_SYMBOL(name, returnType, params)                          \
  returnType(*name) params = nullptr;
#include "Cuda/CudaDriverSymbols.def"
  /// CUDA 12 and later (null before): tensor maps for TMA copies.
  CuResult (*cuTensorMapEncodeTiled)(CuTensorMap *, int, unsigned, void *,
                                     const unsigned long long *,
                                     const unsigned long long *,
                                     const unsigned *, const unsigned *, int,
                                     int, int, int) = nullptr;
  /// Where libcuda was loaded from.
  std::string path;
};

/// Loads libcuda on first use ($TESSERA_LIBCUDA_PATH, then libcuda.so.1,
/// libcuda.so), binds every entry point and calls cuInit(0). Thread-safe;
/// the outcome is computed once per process. UNAVAILABLE (the message
/// mentions libcuda and why: library or symbol missing, cuInit failed) when
/// the driver cannot be used.
StatusOr<const CudaDriverApi *> loadCudaDriver();

/// OK for CUDA_SUCCESS; otherwise a Status naming `call`, the CUDA error
/// name and description and `file:line`. Codes: out of memory and launch
/// resources -> RESOURCE_EXHAUSTED, invalid value/image/PTX ->
/// INVALID_ARGUMENT, not found -> NOT_FOUND, no device -> UNAVAILABLE, others
/// INTERNAL.
Status cudaResultToStatus(const CudaDriverApi &api, CuResult result,
                          const char *call, const char *file, int line);

} // namespace tessera::cuda

/// Calls `api.fn(args...)` and returns its error, if any, as a Status from
/// the enclosing function.
#define TESSERA_CU_RETURN_IF_ERROR(api, fn, ...)                               \
  TESSERA_RETURN_IF_ERROR(::tessera::cuda::cudaResultToStatus(                 \
      (api), (api).fn(__VA_ARGS__), #fn, __FILE__, __LINE__))

#endif // TESSERA_RUNTIME_CUDA_CUDADRIVER_H
