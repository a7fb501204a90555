//===- Nvrtc.h - CUDA C++ to PTX and cubin with NVRTC -----------*- C++ -*-===//
//
// Compiles CUDA C++ source at run time through NVRTC (loaded with dlopen),
// with in-memory headers and name expressions for templated kernels.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_CUDA_NVRTC_H
#define TESSERA_TARGET_CUDA_NVRTC_H

#include "tessera/Support/Status.h"
#include "tessera/Target/CUDA/ResourceUsage.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::cuda {

struct NvrtcOptions {
  /// "sm_90a" (PTX and cubin) or "compute_90a" (PTX only).
  std::string arch = "sm_90a";
  /// Further NVRTC options, e.g. "-std=c++17", "-DBLOCK=128".
  std::vector<std::string> options;
  /// In-memory headers: (include name, contents).
  std::vector<std::pair<std::string, std::string>> headers;
  /// Expressions such as "saxpy<float>" whose mangled names are wanted.
  std::vector<std::string> nameExpressions;
};

struct NvrtcResult {
  std::string ptx;
  /// ELF bytes; empty for a virtual ("compute_") arch.
  std::string cubin;
  /// Name expression -> lowered (mangled) name.
  std::map<std::string, std::string> loweredNames;
  /// The NVRTC program log (warnings; ptxas info for a real arch).
  std::string log;
  /// For a real arch: what ptxas assigned (module summary and per function).
  std::optional<ResourceUsage> usage;
  std::vector<FunctionResourceUsage> functions;
  double seconds = 0; ///< Wall time of the compilation.
};

/// Compiles `source` (`name` is the file name shown in diagnostics). Returns
/// INVALID_ARGUMENT holding the NVRTC log when the source does not compile
/// or an option is rejected, UNAVAILABLE when NVRTC cannot be loaded,
/// INTERNAL for other NVRTC failures. Thread-safe.
StatusOr<NvrtcResult> compileCuda(std::string_view source,
                                  std::string_view name,
                                  const NvrtcOptions &options = {});

/// OK when NVRTC loads, otherwise the UNAVAILABLE reason.
Status nvrtcAvailable();

} // namespace tessera::cuda

#endif // TESSERA_TARGET_CUDA_NVRTC_H
