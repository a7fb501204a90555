//===- VectorizeMatmul.cpp - Register-tiled matmul micro-kernels ----------===//
//
// Turns a static linalg.matmul on buffers into an outer-product micro-kernel
// built from upstream transformations: linalg tiling, the linalg vectoriser,
// transfer hoisting and the vector contraction lowerings.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_VECTORIZEMATMULPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using mlir::tessera::fittingTile;

namespace {

bool isVectorizableOperand(Type t) {
  return t.isF32() || t.isF16() || t.isBF16();
}

struct VectorizeMatmulPass
    : mlir::tessera::impl::VectorizeMatmulPassBase<VectorizeMatmulPass> {
  using VectorizeMatmulPassBase::VectorizeMatmulPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<linalg::MatmulOp> matmuls;
    func.walk([&](linalg::MatmulOp op) { matmuls.push_back(op); });

    IRRewriter rewriter(&getContext());
    bool changed = false;
    for (linalg::MatmulOp op : matmuls) {
      if (!op.hasPureBufferSemantics())
        continue;
      auto a = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
      auto b = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
      auto c = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
      if (!a || !b || !c || !a.hasStaticShape() || !b.hasStaticShape() ||
          !c.hasStaticShape())
        continue;
      if (!isVectorizableOperand(a.getElementType()) ||
          !isVectorizableOperand(b.getElementType()) ||
          !c.getElementType().isF32())
        continue;
      // Default (row-major) indexing maps only: a matmul with transposed
      // or broadcast maps keeps the generic lowering.
      if (!op.getIndexingMaps().getValue().empty() &&
          op.getIndexingMapsArray() != op.getDefaultIndexingMaps(&getContext()))
        continue;
      int64_t m = c.getDimSize(0), n = c.getDimSize(1);
      int64_t tm = fittingTile(m, mr, 1), tn = fittingTile(n, nr, 8);
      if (tm == 0 || tn == 0)
        continue;

      rewriter.setInsertionPoint(op);
      linalg::LinalgTilingOptions options;
      options.setTileSizes({tm, tn, 1});
      FailureOr<linalg::TiledLinalgOp> tiled =
          linalg::tileLinalgOp(rewriter, op, options);
      if (failed(tiled)) {
        op.emitOpError("could not be tiled");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
      rewriter.setInsertionPoint(tiled->op);
      if (failed(linalg::vectorize(rewriter, tiled->op, {}, {}, false, false,
                                   false, /*createNamedContraction=*/true))) {
        tiled->op->emitOpError("could not be vectorised");
        return signalPassFailure();
      }
      rewriter.eraseOp(tiled->op);
      changed = true;
    }
    if (!changed)
      return;

    // Transfers on subviews index the base buffer directly, so that the
    // accumulator's transfers become loop invariant in the K loop. The
    // greedy driver may stop before a fixed point (a transfer through an
    // expand_shape, as a reshaped operand gives, is rewritten again on every
    // iteration); every rewrite keeps the IR equivalent, so that is no
    // error.
    {
      RewritePatternSet patterns(&getContext());
      memref::populateFoldMemRefAliasOpPatterns(patterns);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      (void)applyPatternsGreedily(func, std::move(patterns));
    }
    // One contraction, read and write per accumulator row, so that every
    // row becomes its own loop-carried 1-D vector (a register) once the
    // transfers are hoisted, rather than one 2-D aggregate.
    {
      RewritePatternSet patterns(&getContext());
      vector::UnrollVectorOptions unroll;
      unroll.setNativeShapeFn(
          [](Operation *op) -> std::optional<SmallVector<int64_t>> {
            if (auto c = dyn_cast<vector::ContractionOp>(op)) {
              SmallVector<int64_t> shape;
              c.getIterationBounds(shape);
              if (shape.size() != 3)
                return std::nullopt;
              return SmallVector<int64_t>{1, shape[1], 1};
            }
            if (isa<vector::TransferReadOp, vector::TransferWriteOp>(op)) {
              auto v = cast<VectorTransferOpInterface>(op).getVectorType();
              if (v.getRank() != 2)
                return std::nullopt;
              return SmallVector<int64_t>{1, v.getDimSize(1)};
            }
            return std::nullopt;
          });
      vector::populateVectorUnrollPatterns(patterns, unroll);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }
    // The unrolled transfers of a row compute the same indices separately;
    // hoisting matches reads and writes by SSA value.
    {
      DominanceInfo dom(func);
      eliminateCommonSubExpressions(rewriter, dom, func);
    }
    linalg::hoistRedundantVectorTransfers(func);
    {
      RewritePatternSet patterns(&getContext());
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorOuterProductLoweringPatterns(patterns);
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::EltWise);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }
  }
};

} // namespace
