//===- FuseElementwiseKeepDots.cpp - Element-wise fusion around dots ------===//
//
// MLIR's linalg-fuse-elementwise-ops, except that contractions (tile.dot's
// linalg.matmul) are never fused into and never expanded through reshapes:
// upstream, the reshape propagation turns a matmul whose operands come from
// tile.reshape (e.g. attention's [1, 1, M, D] loads) into a many-dimensional
// generic, which the tensor-core path no longer recognises. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_FUSEELEMENTWISEKEEPDOTSPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

/// A linalg op that reduces (a contraction such as linalg.matmul).
bool isContraction(Operation *op) {
  auto l = dyn_cast_or_null<linalg::LinalgOp>(op);
  return l && l.getNumReductionLoops() > 0 && l.getNumDpsInputs() >= 2;
}

struct FuseElementwiseKeepDotsPass
    : mlir::tessera::impl::FuseElementwiseKeepDotsPassBase<
          FuseElementwiseKeepDotsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() &&
             !isContraction(fused->getOwner()) && !isContraction(producer);
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
