//===- MathToSFU.cpp - f32 exp2 and rsqrt on the special-function unit ----===//
//
// The NVPTX back end lowers f32 `math.exp2` and `math.rsqrt` to the
// special-function unit's approximations without flush-to-zero, which ptxas
// wraps in a range test and two scalings per element so that subnormal
// inputs and results survive (three more SASS instructions around each
// MUFU). Triton's `exp2` and `rsqrt` flush them (its libdevice calls run
// with FTZ); this pass does the same. See the pass description in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_MATHTOSFUPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {
struct MathToSFUPass : mlir::tessera::impl::MathToSFUPassBase<MathToSFUPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::Exp2Op, math::RsqrtOp>(op) &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      const char *intrinsic = isa<math::Exp2Op>(op)
                                  ? "llvm.nvvm.ex2.approx.ftz.f32"
                                  : "llvm.nvvm.rsqrt.approx.ftz.f";
      op->getResult(0).replaceAllUsesWith(mlir::tessera::callF32Intrinsic(
          b, op->getLoc(), intrinsic, op->getOperands()));
      op->erase();
    }
  }
};
} // namespace
