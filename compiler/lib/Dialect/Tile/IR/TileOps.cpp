//===- TileOps.cpp - Tessera tile dialect operations ----------------------===//

#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {
/// Prints a shape as `AxBxC` for diagnostics.
std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += "x";
    s += std::to_string(d);
  }
  return s.empty() ? "scalar" : s;
}

LogicalResult verifyMask(Operation *op, Value mask, ShapedType tileType) {
  if (!mask)
    return success();
  auto maskType = cast<ShapedType>(mask.getType());
  if (maskType.getShape() != tileType.getShape())
    return op->emitOpError("mask shape ")
           << shapeString(maskType.getShape()) << " does not match tile shape "
           << shapeString(tileType.getShape());
  return success();
}

LogicalResult verifyOther(Operation *op, Value other, Type elementType) {
  if (other && other.getType() != elementType)
    return op->emitOpError("padding value type ")
           << other.getType() << " does not match element type "
           << elementType;
  return success();
}

/// The element type a global tensor of `memrefType` yields as a tile.
bool elementTypesMatch(MemRefType memrefType, ShapedType tileType) {
  return memrefType.getElementType() == tileType.getElementType();
}
} // namespace

//===----------------------------------------------------------------------===//
// ArangeOp
//===----------------------------------------------------------------------===//

LogicalResult ArangeOp::verify() {
  auto type = cast<RankedTensorType>(getResult().getType());
  if (type.getRank() != 1)
    return emitOpError("result must be a 1-D tile");
  int64_t start = getStartValue();
  int64_t end = getEndValue();
  if (end <= start)
    return emitOpError("end (") << end << ") must be greater than start ("
                                << start << ")";
  int64_t length = 0;
  if (__builtin_sub_overflow(end, start, &length))
    return emitOpError("end - start overflows");
  if (type.getDimSize(0) != length)
    return emitOpError("result length ")
           << type.getDimSize(0) << " differs from end - start = " << length;
  return success();
}

//===----------------------------------------------------------------------===//
// SplatOp
//===----------------------------------------------------------------------===//

OpFoldResult SplatOp::fold(FoldAdaptor adaptor) {
  Attribute scalar = adaptor.getScalar();
  if (!scalar || !isa<IntegerAttr, FloatAttr>(scalar))
    return {};
  return SplatElementsAttr::get(cast<ShapedType>(getType()), scalar);
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  auto src = cast<RankedTensorType>(getSource().getType());
  auto res = cast<RankedTensorType>(getResult().getType());
  if (src.getElementType() != res.getElementType())
    return emitOpError("element types differ");
  if (src.getRank() != res.getRank())
    return emitOpError("source rank ")
           << src.getRank() << " differs from result rank " << res.getRank();
  for (int64_t i = 0; i < src.getRank(); ++i)
    if (src.getDimSize(i) != 1 && src.getDimSize(i) != res.getDimSize(i))
      return emitOpError("cannot broadcast ")
             << shapeString(src.getShape()) << " to "
             << shapeString(res.getShape());
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getSource().getType() == getType())
    return getSource();
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getSource()))
    return SplatElementsAttr::get(cast<ShapedType>(getType()),
                                  splat.getSplatValue<Attribute>());
  return {};
}

namespace {
/// broadcast(splat(x)) -> splat(x): the tile is uniform either way.
struct BroadcastOfSplat : OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    auto splat = op.getSource().getDefiningOp<SplatOp>();
    if (!splat)
      return failure();
    rewriter.replaceOpWithNewOp<SplatOp>(op, op.getType(), splat.getScalar());
    return success();
  }
};

/// broadcast(broadcast(x)) -> broadcast(x).
struct BroadcastOfBroadcast : OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getSource().getDefiningOp<BroadcastOp>();
    if (!inner)
      return failure();
    rewriter.replaceOpWithNewOp<BroadcastOp>(op, op.getType(),
                                             inner.getSource());
    return success();
  }
};
} // namespace

void BroadcastOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<BroadcastOfSplat, BroadcastOfBroadcast>(context);
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto src = cast<RankedTensorType>(getSource().getType());
  auto res = cast<RankedTensorType>(getResult().getType());
  if (src.getElementType() != res.getElementType())
    return emitOpError("element types differ");
  if (src.getNumElements() != res.getNumElements())
    return emitOpError("cannot reshape ")
           << shapeString(src.getShape()) << " (" << src.getNumElements()
           << " elements) to " << shapeString(res.getShape()) << " ("
           << res.getNumElements() << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getSource().getType() == getType())
    return getSource();
  if (auto inner = getSource().getDefiningOp<ReshapeOp>()) {
    getSourceMutable().assign(inner.getSource());
    return getResult();
  }
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getSource()))
    return SplatElementsAttr::get(cast<ShapedType>(getType()),
                                  splat.getSplatValue<Attribute>());
  return {};
}

//===----------------------------------------------------------------------===//
// TransOp
//===----------------------------------------------------------------------===//

LogicalResult TransOp::verify() {
  auto src = cast<RankedTensorType>(getSource().getType());
  auto res = cast<RankedTensorType>(getResult().getType());
  ArrayRef<int64_t> perm = getPermutation();
  if (src.getElementType() != res.getElementType())
    return emitOpError("element types differ");
  if (static_cast<int64_t>(perm.size()) != src.getRank() ||
      res.getRank() != src.getRank())
    return emitOpError("permutation size must equal the tile rank");
  SmallVector<bool> seen(perm.size(), false);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= src.getRank() || seen[p])
      return emitOpError("invalid permutation");
    seen[p] = true;
    if (res.getDimSize(i) != src.getDimSize(p))
      return emitOpError("result dimension ")
             << i << " is " << res.getDimSize(i) << ", expected "
             << src.getDimSize(p);
  }
  return success();
}

OpFoldResult TransOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return getSource();
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getSource()))
    return SplatElementsAttr::get(cast<ShapedType>(getType()),
                                  splat.getSplatValue<Attribute>());
  if (auto inner = getSource().getDefiningOp<TransOp>()) {
    // trans(trans(x, p), q)[i] = x[p[q[i]]].
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t q : perm)
      composed.push_back(innerPerm[q]);
    getSourceMutable().assign(inner.getSource());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// LoadOp / StoreOp
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::verify() {
  auto memType = cast<MemRefType>(getSource().getType());
  auto tileType = cast<RankedTensorType>(getResult().getType());
  if (static_cast<int64_t>(getOffsets().size()) != memType.getRank())
    return emitOpError("expected ")
           << memType.getRank() << " offsets, got " << getOffsets().size();
  if (tileType.getRank() != memType.getRank())
    return emitOpError("tile rank ")
           << tileType.getRank() << " differs from tensor rank "
           << memType.getRank();
  if (!elementTypesMatch(memType, tileType))
    return emitOpError("tile element type ")
           << tileType.getElementType() << " differs from tensor element type "
           << memType.getElementType();
  if (failed(verifyMask(*this, getMask(), tileType)))
    return failure();
  return verifyOther(*this, getOther(), tileType.getElementType());
}

void LoadOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getSourceMutable(),
                       SideEffects::DefaultResource::get());
}

LogicalResult StoreOp::verify() {
  auto memType = cast<MemRefType>(getDest().getType());
  auto tileType = cast<RankedTensorType>(getValue().getType());
  if (static_cast<int64_t>(getOffsets().size()) != memType.getRank())
    return emitOpError("expected ")
           << memType.getRank() << " offsets, got " << getOffsets().size();
  if (tileType.getRank() != memType.getRank())
    return emitOpError("tile rank ")
           << tileType.getRank() << " differs from tensor rank "
           << memType.getRank();
  if (!elementTypesMatch(memType, tileType))
    return emitOpError("tile element type ")
           << tileType.getElementType() << " differs from tensor element type "
           << memType.getElementType();
  return verifyMask(*this, getMask(), tileType);
}

void StoreOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), &getDestMutable(),
                       SideEffects::DefaultResource::get());
}

//===----------------------------------------------------------------------===//
// GatherOp / ScatterOp
//===----------------------------------------------------------------------===//

namespace {
LogicalResult verifyIndices(Operation *op, MemRefType memType,
                            ValueRange indices, ShapedType tileType) {
  if (static_cast<int64_t>(indices.size()) != memType.getRank())
    return op->emitOpError("expected ")
           << memType.getRank() << " index tiles, got " << indices.size();
  for (Value index : indices) {
    auto indexType = cast<ShapedType>(index.getType());
    if (indexType.getShape() != tileType.getShape())
      return op->emitOpError("index tile shape ")
             << shapeString(indexType.getShape())
             << " does not match tile shape "
             << shapeString(tileType.getShape());
  }
  if (memType.getElementType() != tileType.getElementType())
    return op->emitOpError("tile element type ")
           << tileType.getElementType() << " differs from tensor element type "
           << memType.getElementType();
  return success();
}
} // namespace

LogicalResult GatherOp::verify() {
  auto memType = cast<MemRefType>(getSource().getType());
  auto tileType = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyIndices(*this, memType, getIndices(), tileType)) ||
      failed(verifyMask(*this, getMask(), tileType)))
    return failure();
  return verifyOther(*this, getOther(), tileType.getElementType());
}

void GatherOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getSourceMutable(),
                       SideEffects::DefaultResource::get());
}

LogicalResult ScatterOp::verify() {
  auto memType = cast<MemRefType>(getDest().getType());
  auto tileType = cast<RankedTensorType>(getValue().getType());
  if (failed(verifyIndices(*this, memType, getIndices(), tileType)))
    return failure();
  return verifyMask(*this, getMask(), tileType);
}

void ScatterOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), &getDestMutable(),
                       SideEffects::DefaultResource::get());
}

//===----------------------------------------------------------------------===//
// AtomicRMWOp
//===----------------------------------------------------------------------===//

LogicalResult AtomicRMWOp::verify() {
  auto memType = cast<MemRefType>(getDest().getType());
  if (static_cast<int64_t>(getIndices().size()) != memType.getRank())
    return emitOpError("expected ")
           << memType.getRank() << " indices, got " << getIndices().size();
  if (getValue().getType() != memType.getElementType())
    return emitOpError("value type ")
           << getValue().getType() << " differs from tensor element type "
           << memType.getElementType();
  Type elem = memType.getElementType();
  if (!elem.isF32() && !elem.isF64() && !elem.isInteger(32) &&
      !elem.isInteger(64))
    return emitOpError("atomics support f32, f64, i32 and i64 tensors, not ")
           << elem;
  return success();
}

void AtomicRMWOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getDestMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &getDestMutable(),
                       SideEffects::DefaultResource::get());
}

//===----------------------------------------------------------------------===//
// DotOp
//===----------------------------------------------------------------------===//

LogicalResult DotOp::verify() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  auto acc = cast<RankedTensorType>(getAcc().getType());
  if (lhs.getRank() != 2 || rhs.getRank() != 2 || acc.getRank() != 2)
    return emitOpError("operands must be 2-D tiles");
  if (lhs.getDimSize(1) != rhs.getDimSize(0))
    return emitOpError("inner dimensions differ: ")
           << shapeString(lhs.getShape()) << " x "
           << shapeString(rhs.getShape());
  if (acc.getDimSize(0) != lhs.getDimSize(0) ||
      acc.getDimSize(1) != rhs.getDimSize(1))
    return emitOpError("accumulator shape ")
           << shapeString(acc.getShape()) << " does not match "
           << lhs.getDimSize(0) << "x" << rhs.getDimSize(1);
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("operand element types differ: ")
           << lhs.getElementType() << " and " << rhs.getElementType();
  Type in = lhs.getElementType(), out = acc.getElementType();
  if (isa<FloatType>(in) && !isa<FloatType>(out))
    return emitOpError("floating-point operands need a floating-point "
                       "accumulator, got ")
           << out;
  if (isa<IntegerType>(in) && !out.isInteger(32))
    return emitOpError("integer operands need an i32 accumulator, got ")
           << out;
  if (!isa<FloatType, IntegerType>(in))
    return emitOpError("operands must have float or integer elements, got ")
           << in;
  if (isa<FloatType>(out) && isa<FloatType>(in) &&
      cast<FloatType>(out).getWidth() < cast<FloatType>(in).getWidth())
    return emitOpError("accumulator type ")
           << out << " is narrower than operand type " << in;
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  auto src = cast<RankedTensorType>(getSource().getType());
  auto res = cast<RankedTensorType>(getResult().getType());
  int64_t axis = getAxis();
  if (axis < 0 || axis >= src.getRank())
    return emitOpError("axis ") << axis << " out of range for a rank-"
                                << src.getRank() << " tile";
  if (src.getElementType() != res.getElementType())
    return emitOpError("element types differ");
  SmallVector<int64_t> expected(src.getShape());
  expected.erase(expected.begin() + axis);
  if (res.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << shapeString(res.getShape()) << ", expected "
           << shapeString(expected);
  return success();
}

#define GET_OP_CLASSES
#include "tessera/Dialect/Tile/IR/TileOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ConvertLayoutOp
//===----------------------------------------------------------------------===//

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSource().getType() == getType())
    return getSource();
  // convert(convert(x)) moves the data once.
  if (auto inner = getSource().getDefiningOp<ConvertLayoutOp>();
      inner) {
    if (inner.getSource().getType() == getType())
      return inner.getSource();
    getSourceMutable().assign(inner.getSource());
    return getResult();
  }
  return {};
}
