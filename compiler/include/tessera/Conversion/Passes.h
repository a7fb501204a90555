//===- Passes.h - Tessera conversions ---------------------------*- C++ -*-===//

#ifndef TESSERA_CONVERSION_PASSES_H
#define TESSERA_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tessera {

#define GEN_PASS_DECL
#include "tessera/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessera/Conversion/Passes.h.inc"

/// The module's tile kernels (functions marked `tile.kernel`), collected
/// so that passes may rewrite or replace them while iterating.
inline SmallVector<func::FuncOp> tileKernels(ModuleOp module) {
  SmallVector<func::FuncOp> kernels;
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr("tile.kernel"))
      kernels.push_back(f);
  return kernels;
}

} // namespace mlir::tessera

#endif // TESSERA_CONVERSION_PASSES_H
