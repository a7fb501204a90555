//===- ResourceUsage.h - Registers, memory and spills of a kernel -*- C++ -*-=//
//
// What ptxas reports about each compiled function, and a pure parser for the
// info logs of ptxas -v, nvJitLink -verbose and NVRTC -Xptxas=-v.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_CUDA_RESOURCEUSAGE_H
#define TESSERA_TARGET_CUDA_RESOURCEUSAGE_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::cuda {

/// Per-thread and per-block resources of a compiled kernel. Sizes in bytes.
struct ResourceUsage {
  int registers = 0;         ///< 32-bit registers per thread.
  int64_t sharedBytes = 0;   ///< Static shared memory per block.
  int64_t localBytes = 0;    ///< Stack frame / local memory per thread.
  int64_t spillStores = 0;   ///< Bytes of register spill stores.
  int64_t spillLoads = 0;    ///< Bytes of register spill loads.
  int barriers = 0;          ///< Named barriers used (when reported).
  int64_t constantBytes = 0; ///< Bank-0 constant memory (when reported).
  /// The whole log the figures came from (empty in per-function records).
  std::string rawLog;
};

/// The figures for one function of a log.
struct FunctionResourceUsage {
  std::string name;
  bool isEntry = false; ///< A kernel ("Compiling entry function").
  ResourceUsage usage;
};

/// Parses every function record of a ptxas-style info log. Recognises the
/// lines of `ptxas -v` ("Compiling entry function 'f' for 'sm_90a'",
/// "Function properties for f", "N bytes stack frame, N bytes spill stores,
/// N bytes spill loads", "Used N registers, used N barriers, N bytes smem,
/// N bytes cmem[0]"), whatever their prefix ("ptxas info    :", "ptxas .",
/// none), and the link summary nvJitLink -verbose appends ("Function
/// properties for 'f':" + "used N registers, ..., N stack, N bytes smem, ...,
/// N bytes lmem"), which only fills in functions ptxas did not describe.
/// Unknown lines are ignored; an empty result means nothing was recognised.
/// Records are in order of first appearance.
std::vector<FunctionResourceUsage> parseResourceLog(std::string_view log);

/// The usage of a whole module: the field-wise maximum over its entry
/// functions (over all functions when the log names no entry), with `rawLog`
/// set to `log`.
ResourceUsage
summarizeResourceUsage(const std::vector<FunctionResourceUsage> &functions,
                       std::string_view log);

} // namespace tessera::cuda

#endif // TESSERA_TARGET_CUDA_RESOURCEUSAGE_H
