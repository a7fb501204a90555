//===- RemoveLayoutConversions.cpp - Fewer tile.convert_layout ------------===//
//
// A layout conversion moves a whole tile through shared memory with two
// block barriers; recomputing a splat, a constant or an arange in the wanted
// layout costs a few instructions per thread. See the pass description in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/IR/Layouts.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_REMOVELAYOUTCONVERSIONSPASS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

/// Tiles every thread can compute in any layout from scalars alone.
bool isRematerialisable(Value v, unsigned depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 4)
    return false;
  if (isa<SplatOp, ArangeOp>(def))
    return true;
  if (auto c = dyn_cast<arith::ConstantOp>(def))
    if (auto d = dyn_cast<DenseElementsAttr>(c.getValue()))
      return d.isSplat();
  Dialect *d = def->getDialect();
  if (!d || !isa<arith::ArithDialect, math::MathDialect>(d) ||
      def->getNumResults() != 1 || def->getNumRegions() != 0)
    return false;
  return llvm::all_of(def->getOperands(), [&](Value o) {
    return !isa<RankedTensorType>(o.getType()) ||
           isRematerialisable(o, depth + 1);
  });
}

/// `v` recomputed in the layout `layout`, before `at`.
Value rematerialise(PatternRewriter &rw, Value v, Attribute layout) {
  Operation *def = v.getDefiningOp();
  auto type = withLayout(cast<RankedTensorType>(v.getType()), layout);
  if (auto c = dyn_cast<arith::ConstantOp>(def))
    return arith::ConstantOp::create(
        rw, c.getLoc(), type,
        cast<DenseElementsAttr>(c.getValue()).reshape(type));
  IRMapping map;
  for (Value o : def->getOperands())
    if (auto ot = dyn_cast<RankedTensorType>(o.getType()); ot && ot.getRank())
      map.map(o, rematerialise(rw, o, layout));
  Operation *clone = rw.clone(*def, map);
  clone->getResult(0).setType(type);
  return clone->getResult(0);
}

struct RematerialiseSource : OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertLayoutOp op,
                                PatternRewriter &rw) const override {
    Value src = op.getSource();
    if (!isRematerialisable(src))
      return failure();
    // Operands must keep their shapes under the new layout: element-wise
    // operations and splats do; an arange is 1-D like its result.
    rw.replaceOp(op, rematerialise(rw, src, getLayout(op.getType())));
    return success();
  }
};

struct RemoveLayoutConversionsPass
    : mlir::tessera::tile::impl::RemoveLayoutConversionsPassBase<
          RemoveLayoutConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // The greedy driver also applies ConvertLayoutOp's folder (same-layout
    // conversions and chains).
    patterns.add<RematerialiseSource>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
