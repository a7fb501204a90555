//===- ExpandArithForGPU.cpp - arith expansions the NVPTX back end needs --===//
//
// Upstream's `arith-expand` also rewrites the NaN-propagating maximumf /
// minimumf into compares and selects, which costs three instructions per
// element on a GPU that has them as one (`max.NaN.f32`, sm_80+). This pass
// makes them LLVM intrinsics first, turns the f32 divisions the language
// lets be approximate into `div.full.f32`, then expands the rest as
// upstream does. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_EXPANDARITHFORGPUPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {
struct ExpandArithForGPUPass
    : mlir::tessera::impl::ExpandArithForGPUPassBase<ExpandArithForGPUPass> {
  void runOnOperation() override {
    // Float max/min first become the LLVM intrinsics NVPTX lowers to
    // max.NaN / min.NaN, out of the expansion's reach.
    SmallVector<Operation *> minmax;
    getOperation()->walk([&](Operation *op) {
      if (isa<arith::MaximumFOp, arith::MinimumFOp>(op))
        minmax.push_back(op);
    });
    // Divisions marked `afn` (the language's `/`) need not be rounded
    // correctly: in f32 they become div.full, as Triton's `/` does, instead
    // of the IEEE division whose slow path ptxas emits as a call.
    SmallVector<arith::DivFOp> divisions;
    getOperation()->walk([&](arith::DivFOp op) {
      if (arith::bitEnumContainsAll(op.getFastmath(),
                                    arith::FastMathFlags::afn) &&
          getElementTypeOrSelf(op.getType()).isF32())
        divisions.push_back(op);
    });
    for (arith::DivFOp op : divisions) {
      OpBuilder b(op);
      // PTX div.full.f32: at most 2 ulp over the whole range, no slow path.
      op.getResult().replaceAllUsesWith(mlir::tessera::callF32Intrinsic(
          b, op.getLoc(), "llvm.nvvm.div.full",
          ValueRange{op.getLhs(), op.getRhs()}));
      op.erase();
    }
    for (Operation *op : minmax) {
      OpBuilder b(op);
      Value a = op->getOperand(0), c = op->getOperand(1);
      Value r =
          isa<arith::MaximumFOp>(op)
              ? LLVM::MaximumOp::create(b, op->getLoc(), a, c).getResult()
              : LLVM::MinimumOp::create(b, op->getLoc(), a, c).getResult();
      op->getResult(0).replaceAllUsesWith(r);
      op->erase();
    }
    RewritePatternSet patterns(&getContext());
    arith::populateArithExpandOpsPatterns(patterns);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
