//===- PassUtils.h - Running pass pipelines with Status results -*- C++ -*-===//
//
// Internal to the compiler: the CPU and GPU pipelines build pass managers
// from textual pipelines and turn MLIR diagnostics into a Status.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_PASSUTILS_H
#define TESSERA_TARGET_PASSUTILS_H

#include "tessera/Support/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace tessera {

/// Appends a textual pass pipeline to `pm` (INTERNAL if it does not parse).
Status addPipeline(mlir::PassManager &pm, const std::string &text);

/// Appends the final conversion to the LLVM dialect shared by the CPU and
/// sim pipelines: vector and math first (math ops with LLVM intrinsics,
/// then libm), then one convert-to-llvm for every other dialect (a single
/// IR walk instead of one per dialect). Loads the dialects that conversion
/// must know into `pm`'s context: it converts those loaded when it starts.
Status addLLVMConversion(mlir::PassManager &pm);

/// Runs `pm` on `module`; a failure becomes a Status with code `onFailure`
/// carrying every diagnostic (with its location) under `stage`.
Status runPasses(mlir::PassManager &pm, mlir::ModuleOp module,
                 const char *stage,
                 StatusCode onFailure = StatusCode::kInternal);

} // namespace tessera

#endif // TESSERA_TARGET_PASSUTILS_H
