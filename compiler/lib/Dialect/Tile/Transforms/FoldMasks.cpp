//===- FoldMasks.cpp - Drop constant masks --------------------------------===//
//
// Constant masks arise after constexpr folding (e.g. `offs < N` where both
// sides are known): an all-true mask is removed, an all-false one turns the
// access into its padding value or into nothing.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_FOLDMASKSPASS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {
enum class MaskValue { Unknown, AllTrue, AllFalse };

MaskValue classify(Value mask) {
  if (!mask)
    return MaskValue::Unknown;
  DenseElementsAttr attr;
  if (!matchPattern(mask, m_Constant(&attr)) || !attr.isSplat())
    return MaskValue::Unknown;
  return attr.getSplatValue<bool>() ? MaskValue::AllTrue : MaskValue::AllFalse;
}

/// The padding value of a load/gather as a tile of `type`.
Value paddingTile(PatternRewriter &rewriter, Location loc, Value other,
                  RankedTensorType type) {
  if (other)
    return SplatOp::create(rewriter, loc, type, other);
  return arith::ConstantOp::create(rewriter, loc, type,
                                   rewriter.getZeroAttr(type));
}

template <typename OpTy>
struct FoldReadMask : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    switch (classify(op.getMask())) {
    case MaskValue::Unknown:
      return failure();
    case MaskValue::AllTrue:
      rewriter.modifyOpInPlace(op, [&] { op.getMaskMutable().clear(); });
      return success();
    case MaskValue::AllFalse:
      rewriter.replaceOp(
          op, paddingTile(rewriter, op.getLoc(), op.getOther(),
                          cast<RankedTensorType>(op.getResult().getType())));
      return success();
    }
    return failure();
  }
};

template <typename OpTy>
struct FoldWriteMask : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    switch (classify(op.getMask())) {
    case MaskValue::Unknown:
      return failure();
    case MaskValue::AllTrue:
      rewriter.modifyOpInPlace(op, [&] { op.getMaskMutable().clear(); });
      return success();
    case MaskValue::AllFalse:
      rewriter.eraseOp(op);
      return success();
    }
    return failure();
  }
};

struct FoldMasksPass
    : mlir::tessera::tile::impl::FoldMasksPassBase<FoldMasksPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldReadMask<LoadOp>, FoldReadMask<GatherOp>,
                 FoldWriteMask<StoreOp>, FoldWriteMask<ScatterOp>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
