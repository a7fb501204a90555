//===- CudaDriver.cpp - libcuda loaded at run time ------------------------===//

#include "Cuda/CudaDriver.h"

#include "tessera/Target/CUDA/DynamicLibrary.h"

#include <cstring>

using namespace tessera;
using namespace tessera::cuda;

namespace {

StatusOr<CudaDriverApi> bindCudaDriver() {
  LibrarySearch search;
  search.displayName = "CUDA driver (libcuda.so.1)";
  search.envVar = "TESSERA_LIBCUDA_PATH";
  search.sonames = {"libcuda.so.1", "libcuda.so"};
  TESSERA_ASSIGN_OR_RETURN(DynamicLibrary lib, DynamicLibrary::open(search));
  CudaDriverApi api;
#define TESSERA_CUDA_SYMBOL(name, returnType, params)                          \
  TESSERA_RETURN_IF_ERROR(lib.bind(#name, api.name));
#include "Cuda/CudaDriverSymbols.def"
  // Optional: a driver older than CUDA 12 runs kernels without TMA.
  (void)lib.bind("cuTensorMapEncodeTiled", api.cuTensorMapEncodeTiled);
  api.path = lib.path();
  CuResult rc = api.cuInit(0);
  if (rc != kCudaSuccess) {
    Status status = cudaResultToStatus(api, rc, "cuInit", __FILE__, __LINE__);
    return unavailable("CUDA driver libcuda ('%s') cannot be initialised: %s",
                       api.path.c_str(), status.message().c_str());
  }
  return api;
}

const char *baseName(const char *path) {
  const char *slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

} // namespace

StatusOr<const CudaDriverApi *> tessera::cuda::loadCudaDriver() {
  // Function statics are initialised once, thread-safely.
  static const StatusOr<CudaDriverApi> loaded = bindCudaDriver();
  if (!loaded.ok())
    return loaded.status();
  return &loaded.value();
}

Status tessera::cuda::cudaResultToStatus(const CudaDriverApi &api,
                                         CuResult result, const char *call,
                                         const char *file, int line) {
  if (result == kCudaSuccess)
    return okStatus();
  const char *name = nullptr;
  const char *description = nullptr;
  if (api.cuGetErrorName(result, &name) != kCudaSuccess || !name)
    name = "CUDA_ERROR_UNKNOWN";
  if (api.cuGetErrorString(result, &description) != kCudaSuccess ||
      !description)
    description = "unrecognised error code";
  StatusCode code = StatusCode::kInternal;
  switch (result) {
  case 1:   // CUDA_ERROR_INVALID_VALUE
  case 200: // CUDA_ERROR_INVALID_IMAGE
  case 209: // CUDA_ERROR_NO_BINARY_FOR_GPU
  case 218: // CUDA_ERROR_INVALID_PTX
  case 222: // CUDA_ERROR_UNSUPPORTED_PTX_VERSION
  case 400: // CUDA_ERROR_INVALID_HANDLE
    code = StatusCode::kInvalidArgument;
    break;
  case 2:   // CUDA_ERROR_OUT_OF_MEMORY
  case 701: // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
    code = StatusCode::kResourceExhausted;
    break;
  case 500: // CUDA_ERROR_NOT_FOUND
    code = StatusCode::kNotFound;
    break;
  case 3:   // CUDA_ERROR_NOT_INITIALIZED
  case 35:  // CUDA_ERROR_INSUFFICIENT_DRIVER
  case 100: // CUDA_ERROR_NO_DEVICE
  case 101: // CUDA_ERROR_INVALID_DEVICE
    code = StatusCode::kUnavailable;
    break;
  default:
    break;
  }
  return makeStatus(code, "%s failed with %s (%d: %s) at %s:%d", call, name,
                    result, description, baseName(file), line);
}
