//===- CudaLibraries.cpp - nvJitLink and NVRTC loaded at run time ---------===//

#include "tessera/Target/CUDA/CudaLibraries.h"

using namespace tessera;
using namespace tessera::cuda;

const char *tessera::cuda::nvJitLinkResultName(NvJitLinkCode result) {
  // The enumerators of nvJitLinkResult in nvJitLink.h, in value order.
  static const char *const kNames[] = {
      "NVJITLINK_SUCCESS",
      "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
      "NVJITLINK_ERROR_MISSING_ARCH",
      "NVJITLINK_ERROR_INVALID_INPUT",
      "NVJITLINK_ERROR_PTX_COMPILE",
      "NVJITLINK_ERROR_NVVM_COMPILE",
      "NVJITLINK_ERROR_INTERNAL",
      "NVJITLINK_ERROR_THREADPOOL",
      "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
      "NVJITLINK_ERROR_FINALIZE",
      "NVJITLINK_ERROR_NULL_INPUT",
      "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
      "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
      "NVJITLINK_ERROR_ARCH_MISMATCH",
      "NVJITLINK_ERROR_OUTDATED_LIBRARY",
      "NVJITLINK_ERROR_MISSING_FATBIN",
      "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
      "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
      "NVJITLINK_ERROR_LTO_NOT_ENABLED",
  };
  if (result >= 0 &&
      static_cast<size_t>(result) < sizeof(kNames) / sizeof(kNames[0]))
    return kNames[result];
  return "NVJITLINK_ERROR_UNKNOWN";
}

namespace {

LibrarySearch makeSearch(const char *displayName, const char *envVar,
                         const char *soname) {
  LibrarySearch search;
  search.displayName = displayName;
  search.envVar = envVar;
  search.sonames = {std::string(soname) + ".13", soname};
  search.directories = cudaLibraryDirectories();
  return search;
}

StatusOr<NvJitLinkApi> bindNvJitLink() {
  TESSERA_ASSIGN_OR_RETURN(
      DynamicLibrary lib,
      DynamicLibrary::open(makeSearch("nvJitLink", "TESSERA_NVJITLINK_PATH",
                                      "libnvJitLink.so")));
  NvJitLinkApi api;
#define TESSERA_CUDA_SYMBOL(name, returnType, params)                          \
  TESSERA_RETURN_IF_ERROR(lib.bind(#name, api.name));
#include "tessera/Target/CUDA/NvJitLinkSymbols.def"
  api.path = lib.path();
  return api;
}

StatusOr<NvrtcApi> bindNvrtc() {
  TESSERA_ASSIGN_OR_RETURN(DynamicLibrary lib,
                           DynamicLibrary::open(makeSearch(
                               "NVRTC", "TESSERA_NVRTC_PATH", "libnvrtc.so")));
  NvrtcApi api;
#define TESSERA_CUDA_SYMBOL(name, returnType, params)                          \
  TESSERA_RETURN_IF_ERROR(lib.bind(#name, api.name));
#include "tessera/Target/CUDA/NvrtcSymbols.def"
  api.path = lib.path();
  return api;
}

/// Converts a loaded table held in a function-local static into the pointer
/// form the public API returns.
template <typename Api>
StatusOr<const Api *> pointerTo(const StatusOr<Api> &loaded) {
  if (!loaded.ok())
    return loaded.status();
  return &loaded.value();
}

} // namespace

StatusOr<const NvJitLinkApi *> tessera::cuda::loadNvJitLink() {
  // C++ guarantees thread-safe one-time initialisation of function statics.
  static const StatusOr<NvJitLinkApi> loaded = bindNvJitLink();
  return pointerTo(loaded);
}

StatusOr<const NvrtcApi *> tessera::cuda::loadNvrtc() {
  static const StatusOr<NvrtcApi> loaded = bindNvrtc();
  return pointerTo(loaded);
}
