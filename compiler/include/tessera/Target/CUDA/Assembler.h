//===- Assembler.h - PTX to cubin with nvJitLink or ptxas -------*- C++ -*-===//
//
// Assembles PTX into a cubin for one real architecture and reports the
// resources ptxas assigned. The ptxas executable is used when it is found:
// it compiles the module as a whole program, where nvJitLink (the fallback,
// used when its library loads) always compiles PTX as relocatable device
// code, which costs registers (softmax on sm_90a: 72 against 40). Neither is
// linked: both are found at run time, and their absence is an UNAVAILABLE
// status.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_CUDA_ASSEMBLER_H
#define TESSERA_TARGET_CUDA_ASSEMBLER_H

#include "tessera/Support/Status.h"
#include "tessera/Target/CUDA/ResourceUsage.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::cuda {

enum class AssemblerBackend {
  kAuto,      ///< The ptxas executable when found, otherwise nvJitLink.
  kNvJitLink, ///< libnvJitLink only.
  kPtxas,     ///< The ptxas executable only.
};

/// "auto", "nvjitlink" or "ptxas".
const char *assemblerBackendName(AssemblerBackend backend);

struct AssembleOptions {
  AssemblerBackend backend = AssemblerBackend::kAuto;
  /// ptxas optimisation level (0..3; nvJitLink accepts only 0 and 3).
  int optLevel = 3;
  /// Register cap per thread (ptxas --maxrregcount).
  std::optional<int> maxRegisters;
  /// Emit line information.
  bool lineInfo = false;
  /// Further ptxas options, e.g. "--warn-on-spills" (passed through -Xptxas=
  /// to nvJitLink).
  std::vector<std::string> extraPtxasOptions;
};

struct CubinResult {
  std::string cubin;   ///< ELF bytes.
  ResourceUsage usage; ///< Module summary (see summarizeResourceUsage).
  std::vector<FunctionResourceUsage> functions;
  AssemblerBackend backend = AssemblerBackend::kAuto; ///< The one that ran.
  /// Whether the module was compiled as a whole program (ptxas) rather than
  /// as relocatable device code (nvJitLink).
  bool wholeProgram = false;
  double seconds = 0; ///< Wall time of the assembly.
};

/// Assembles `ptx` for `arch` ("sm_80", "sm_90a", ...). Returns
/// INVALID_ARGUMENT for a malformed arch or PTX that does not assemble (the
/// message holds the assembler's error log), UNAVAILABLE when the requested
/// backend (or, for kAuto, both) cannot be found, INTERNAL for other tool
/// failures. Thread-safe; each call uses its own handle or process.
StatusOr<CubinResult> assemblePtx(std::string_view ptx, std::string_view arch,
                                  const AssembleOptions &options = {});

/// OK when `backend` can run here, otherwise the UNAVAILABLE reason.
Status assemblerAvailable(AssemblerBackend backend);

/// The ptxas executable: $TESSERA_PTXAS, then PATH, then $CUDA_HOME/bin and
/// /usr/local/cuda/bin. UNAVAILABLE listing the places searched.
StatusOr<std::string> findPtxas();

/// OK for "sm_<digits>" with an optional "a" or "f" suffix.
Status checkRealArch(std::string_view arch);

} // namespace tessera::cuda

#endif // TESSERA_TARGET_CUDA_ASSEMBLER_H
