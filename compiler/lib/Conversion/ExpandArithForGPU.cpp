//===- ExpandArithForGPU.cpp - arith expansions the NVPTX back end needs --===//
//
// Upstream's `arith-expand` also rewrites the NaN-propagating maximumf /
// minimumf into compares and selects, which costs three instructions per
// element on a GPU that has them as one (`max.NaN.f32`, sm_80+). This pass
// makes them LLVM intrinsics first, then expands the rest as upstream
// does. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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
