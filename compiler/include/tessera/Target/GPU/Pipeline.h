//===- Pipeline.h - Tile IR to GPU kernels ----------------------*- C++ -*-===//
//
// Internal to the compiler: lowering of tile IR to gpu-dialect kernels and
// to PTX through LLVM's NVPTX back end.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_GPU_PIPELINE_H
#define TESSERA_TARGET_GPU_PIPELINE_H

#include "tessera/Support/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace tessera::gpu {

/// An NVIDIA GPU architecture the compiler targets.
struct GpuArch {
  std::string name;       ///< "sm_90a"
  std::string ptxFeature; ///< "+ptx80": the PTX ISA version to emit
  int64_t maxSharedBytes; ///< opt-in shared memory per block
  int computeCapability;  ///< 10 * major + minor: 80, 86, 89, 90, 100
};

/// The architectures PTX can be generated for; `lookupArch` accepts these
/// names ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a").
StatusOr<GpuArch> lookupArch(const std::string &name);
std::string supportedArchList();

/// Lowers a tile module (after the tile passes) to one `gpu.module` per
/// kernel holding a `gpu.func` on scf/memref/arith (the IR the `sim` device
/// will execute). Fails with a clear message when the configuration needs
/// more shared memory than `arch` has.
Status lowerToGPUDialect(mlir::ModuleOp module, const GpuArch &arch);

/// Whether `lowerToGPUDialect` keeps the module's tiles in registers
/// (distributed layouts) rather than in shared memory: every kernel's
/// operations have a register lowering on `arch` (sm_90a's wgmma takes tf32
/// dots the others leave to shared memory), and `TESSERA_GPU_LOWERING` is
/// not `shared`.
bool usesRegisterLowering(mlir::ModuleOp module, const GpuArch &arch);

/// From the gpu-dialect module: NVVM, LLVM's NVPTX back end, PTX text of
/// the kernel's module.
StatusOr<std::string> translateToPTX(mlir::ModuleOp module,
                                     const GpuArch &arch);

/// From the gpu-dialect module: host code for the `sim` device, one
/// `@<kernel>_sim` function per GPU thread (tessera-gpu-to-host), lowered to
/// the LLVM dialect with the same float emulation and math as the GPU path.
/// `sites` receives the descriptions of the instrumented memory accesses
/// (indexed by the site ids the checker calls pass). With `counters` the
/// code also reports its conditional branches (tessera_sim_branch) for the
/// simulator's counters.
Status lowerForSim(mlir::ModuleOp module, std::vector<std::string> *sites,
                   bool counters = false);

/// Shared memory the kernel's tile buffers take (bytes), as recorded by
/// `lowerToGPUDialect`; 0 when unknown.
int64_t sharedBytes(mlir::ModuleOp module);

} // namespace tessera::gpu

#endif // TESSERA_TARGET_GPU_PIPELINE_H
