//===- CudaLibraries.h - nvJitLink and NVRTC loaded at run time -*- C++ -*-===//
//
// The C types of the nvJitLink and NVRTC APIs (declared here with the values
// of the CUDA 13 headers, which Tessera never includes) and lazily loaded,
// process-wide tables of their entry points. Each table is filled from one
// X-macro file (NvJitLinkSymbols.def, NvrtcSymbols.def).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_CUDA_CUDALIBRARIES_H
#define TESSERA_TARGET_CUDA_CUDALIBRARIES_H

#include "tessera/Support/Status.h"
#include "tessera/Target/CUDA/DynamicLibrary.h"

#include <cstddef>
#include <cstdint>

namespace tessera::cuda {

//===----------------------------------------------------------------------===//
// nvJitLink (nvJitLink.h)
//===----------------------------------------------------------------------===//

/// nvJitLinkResult; 0 is success.
using NvJitLinkCode = int;
inline constexpr NvJitLinkCode kNvJitLinkSuccess = 0;
/// nvJitLinkInputType.
enum NvJitLinkInputType : int {
  kNvJitLinkInputNone = 0,
  kNvJitLinkInputCubin = 1,
  kNvJitLinkInputPtx = 2,
  kNvJitLinkInputLtoIr = 3,
  kNvJitLinkInputFatbin = 4,
  kNvJitLinkInputObject = 5,
  kNvJitLinkInputLibrary = 6,
  kNvJitLinkInputIndex = 7,
  kNvJitLinkInputAny = 10,
};
struct NvJitLinkOpaque;
using NvJitLinkHandle = NvJitLinkOpaque *;

/// "NVJITLINK_ERROR_PTX_COMPILE" etc. for a result code.
const char *nvJitLinkResultName(NvJitLinkCode result);

/// The bound nvJitLink entry points.
struct NvJitLinkApi {
#define TESSERA_CUDA_SYMBOL(name, returnType, params)                          \
  returnType(*name) params = nullptr;
#include "tessera/Target/CUDA/NvJitLinkSymbols.def"
  /// Where the library was loaded from.
  std::string path;
};

/// Loads nvJitLink on first use (TESSERA_NVJITLINK_PATH, then
/// libnvJitLink.so.13, libnvJitLink.so, then $CUDA_HOME/lib64 and
/// /usr/local/cuda/lib64) and binds every entry point. Thread-safe; the
/// outcome (table or UNAVAILABLE status naming the library or symbol) is
/// computed once per process.
StatusOr<const NvJitLinkApi *> loadNvJitLink();

//===----------------------------------------------------------------------===//
// NVRTC (nvrtc.h)
//===----------------------------------------------------------------------===//

/// nvrtcResult; 0 is success.
using NvrtcCode = int;
inline constexpr NvrtcCode kNvrtcSuccess = 0;
inline constexpr NvrtcCode kNvrtcErrorInvalidOption = 5;
inline constexpr NvrtcCode kNvrtcErrorCompilation = 6;
struct NvrtcOpaque;
using NvrtcProgram = NvrtcOpaque *;

/// The bound NVRTC entry points.
struct NvrtcApi {
#define TESSERA_CUDA_SYMBOL(name, returnType, params)                          \
  returnType(*name) params = nullptr;
#include "tessera/Target/CUDA/NvrtcSymbols.def"
  /// Where the library was loaded from.
  std::string path;
};

/// Loads NVRTC on first use (TESSERA_NVRTC_PATH, then libnvrtc.so.13,
/// libnvrtc.so, then $CUDA_HOME/lib64 and /usr/local/cuda/lib64). Same
/// contract as loadNvJitLink().
StatusOr<const NvrtcApi *> loadNvrtc();

} // namespace tessera::cuda

#endif // TESSERA_TARGET_CUDA_CUDALIBRARIES_H
