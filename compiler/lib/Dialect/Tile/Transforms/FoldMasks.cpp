//===- FoldMasks.cpp - Drop constant masks --------------------------------===//
//
// Constant masks arise after constexpr folding (e.g. `offs < N` where both
// sides are known): an all-true mask is removed, an all-false one turns the
// access into its padding value or into nothing. A mask that only repeats
// the bounds check every load and store does anyway (`k0 + arange(0, B) <
// x.shape[i]` along the axis whose offset is k0) is removed too.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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

/// The `tile.dim_symbols` name of dimension `axis` of a kernel argument, or
/// an empty string when unknown.
StringRef dimSymbol(Value memref, int64_t axis) {
  auto arg = dyn_cast<BlockArgument>(memref);
  if (!arg)
    return {};
  auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getFunctionBody().front())
    return {};
  auto syms =
      func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), "tile.dim_symbols");
  if (!syms || axis >= (int64_t)syms.size())
    return {};
  auto s = dyn_cast<StringAttr>(syms[axis]);
  return s ? s.getValue() : StringRef();
}

/// Looks through integer casts.
Value stripCasts(Value v) {
  while (Operation *d = v.getDefiningOp()) {
    if (!isa<arith::ExtSIOp, arith::ExtUIOp, arith::IndexCastOp,
             arith::TruncIOp>(d))
      break;
    v = d->getOperand(0);
  }
  return v;
}

/// True when `bound` is the size of dimension `axis` of `source`: a
/// `memref.dim` of `source` itself, or of a kernel argument whose dimension
/// has the same shape symbol (the launch checks that they agree).
bool isDimOf(Value bound, Value source, int64_t axis) {
  auto dim = stripCasts(bound).getDefiningOp<memref::DimOp>();
  if (!dim)
    return false;
  std::optional<int64_t> d = dim.getConstantIndex();
  if (!d)
    return false;
  if (dim.getSource() == source)
    return *d == axis;
  StringRef a = dimSymbol(dim.getSource(), *d), b = dimSymbol(source, axis);
  return !a.empty() && a == b;
}

/// Matches a 1-D `offset + arange(0, n) < bound` (the usual bounds mask of
/// one axis); returns the offset and bound.
bool matchBoundsCompare(Value v, Value &offset, Value &bound, int64_t &n) {
  auto cmp = v.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return false;
  Value idx, lim;
  if (cmp.getPredicate() == arith::CmpIPredicate::slt) {
    idx = cmp.getLhs();
    lim = cmp.getRhs();
  } else if (cmp.getPredicate() == arith::CmpIPredicate::sgt) {
    idx = cmp.getRhs();
    lim = cmp.getLhs();
  } else {
    return false;
  }
  auto limSplat = lim.getDefiningOp<SplatOp>();
  auto add = idx.getDefiningOp<arith::AddIOp>();
  if (!limSplat || !add)
    return false;
  for (int i = 0; i < 2; ++i) {
    auto offSplat = add->getOperand(i).getDefiningOp<SplatOp>();
    auto range = stripCasts(add->getOperand(1 - i)).getDefiningOp<ArangeOp>();
    if (!offSplat || !range || range.getStartValue() != 0)
      continue;
    offset = offSplat.getScalar();
    bound = limSplat.getScalar();
    n = range.getEndValue();
    return true;
  }
  return false;
}

/// True when every element of `mask` (of the load/store's tile shape) is
/// true exactly where the element lies inside `source`, at least along the
/// axes the mask tests; such a mask repeats the automatic boundary handling
/// of loads and stores. Recognised: conjunctions of `offset + arange < dim`
/// tests, each reshaped (inserting unit dimensions) and/or broadcast onto
/// one axis, where `offset` is the access offset of that axis.
bool isBoundsMask(Value mask, Value source, ValueRange offsets) {
  if (auto andOp = mask.getDefiningOp<arith::AndIOp>())
    return isBoundsMask(andOp.getLhs(), source, offsets) &&
           isBoundsMask(andOp.getRhs(), source, offsets);
  auto full = cast<RankedTensorType>(mask.getType());
  // mask = broadcast?(reshape?(v)) with v the 1-D test.
  Value pre = mask;
  if (auto bc = pre.getDefiningOp<BroadcastOp>())
    pre = bc.getSource();
  Value v = pre;
  if (auto rs = v.getDefiningOp<ReshapeOp>())
    v = rs.getSource();
  auto base = cast<RankedTensorType>(v.getType());
  if (base.getRank() != 1)
    return false;
  // The axis of the access the 1-D test runs along: the only dimension of
  // the (pre-broadcast) mask with the test's extent, the others being 1.
  auto preType = cast<RankedTensorType>(pre.getType());
  if (preType.getRank() != full.getRank())
    return false;
  int64_t axis = -1;
  for (int64_t d = 0; d < preType.getRank(); ++d) {
    if (preType.getDimSize(d) == 1 && base.getDimSize(0) != 1)
      continue;
    if (axis >= 0 || preType.getDimSize(d) != base.getDimSize(0))
      return false;
    axis = d;
  }
  if (axis < 0 || axis >= (int64_t)offsets.size())
    return false;
  Value offset, bound;
  int64_t n;
  if (!matchBoundsCompare(v, offset, bound, n) || n != full.getDimSize(axis))
    return false;
  return stripCasts(offset) == stripCasts(offsets[axis]) &&
         isDimOf(bound, source, axis);
}

/// Drops a mask that only repeats the bounds check of a load or store (the
/// load keeps its `other` value for the elements outside the tensor).
template <typename OpTy>
struct DropBoundsMask : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value mask = op.getMask();
    Value source;
    if constexpr (std::is_same_v<OpTy, StoreOp>)
      source = op.getDest();
    else
      source = op.getSource();
    if (!mask || !isBoundsMask(mask, source, op.getOffsets()))
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.getMaskMutable().clear(); });
    return success();
  }
};

struct FoldMasksPass
    : mlir::tessera::tile::impl::FoldMasksPassBase<FoldMasksPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldReadMask<LoadOp>, FoldReadMask<GatherOp>,
                 FoldWriteMask<StoreOp>, FoldWriteMask<ScatterOp>,
                 DropBoundsMask<LoadOp>, DropBoundsMask<StoreOp>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
