//===- WidenFloat8Dots.cpp - fp8 dot operands as f16 ----------------------===//
//
// The register lowering's tensor-core products take 16-bit operands: fp8
// operands are extended to f16 (exactly) where they are defined, except
// those sm_90a's wgmma k32 reads as they are (keepsFloat8Operands).
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "tessera/Dialect/Tile/IR/Layouts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_WIDENFLOAT8DOTSPASS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

/// Widens the fp8 tile that `use` reads. The extension goes right after
/// the tile's definition, before the transpositions and reshapes that
/// lead from it to the dot (which then move f16 tiles): the register
/// lowering converts the tile as it stages it in shared memory.
void widen(OpOperand &use) {
  SmallVector<Operation *> views; // outermost first
  OpOperand *at = &use;
  while (Operation *def = at->get().getDefiningOp()) {
    if (!isa<TransOp, ReshapeOp>(def) || !def->getResult(0).hasOneUse())
      break;
    views.push_back(def);
    at = &def->getOpOperand(0);
  }
  Value root = at->get();
  OpBuilder b(root.getContext());
  b.setInsertionPointAfterValue(root);
  auto type = cast<RankedTensorType>(root.getType());
  at->set(arith::ExtFOp::create(b, root.getLoc(), type.clone(b.getF16Type()),
                                root));
  for (Operation *view : llvm::reverse(views)) {
    Value r = view->getResult(0);
    r.setType(cast<RankedTensorType>(r.getType()).clone(b.getF16Type()));
  }
}

/// The load `operand` comes from through unit reshapes and transpositions
/// of one use each, with the number of transpositions; null when it comes
/// from elsewhere, or the block has other uses, a mask or padding.
std::pair<LoadOp, int> soleLoad(Value operand) {
  int transposes = 0;
  Value v = operand;
  while (Operation *def = v.getDefiningOp()) {
    if (!v.hasOneUse())
      return {};
    if (auto ld = dyn_cast<LoadOp>(def)) {
      if (ld.getMask() || ld.getOther())
        return {};
      return {ld, transposes};
    }
    if (isa<TransOp>(def))
      ++transposes;
    else if (!isa<ReshapeOp>(def))
      return {};
    v = def->getOperand(0);
  }
  return {};
}

struct WidenFloat8DotsPass
    : mlir::tessera::tile::impl::WidenFloat8DotsPassBase<WidenFloat8DotsPass> {
  using WidenFloat8DotsPassBase::WidenFloat8DotsPassBase;

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    int64_t warps = numWarps(f);
    f.walk([&](DotOp d) {
      if (warpgroupMma && keepsFloat8Operands(d, warps))
        return;
      for (OpOperand *operand : {&d.getLhsMutable(), &d.getRhsMutable()})
        if (isFloat8(cast<RankedTensorType>(operand->get().getType())
                         .getElementType()))
          widen(*operand);
    });
  }
};

} // namespace

/// Whether both operands of `d` are loads wgmma reads K-major as stored: A
/// a [M, K] block, B a [N, K] block transposed (through unit reshapes), of
/// no other use and without mask, with whole 8-row groups; K a multiple of
/// `kStep` and a product on wgmma's warp grid. With `storedB`, B may also
/// be a rank-2 [K, N] block as it is (the register lowering stores it
/// transposed).
static bool readsKMajorBlocks(DotOp d, int64_t warps, int64_t kStep,
                              bool storedB = false) {
  int64_t k = d.getLhs().getType().getShape()[1];
  if (!fitsWarpgroupGrid(d.getType().getShape(), warps) || k % kStep != 0)
    return false;
  auto kInner = [&](std::pair<LoadOp, int> src, int transposes) {
    auto [ld, t] = src;
    if (!ld || t != transposes)
      return false;
    ArrayRef<int64_t> block = ld.getType().getShape();
    int64_t rank = block.size();
    for (int64_t i = 0; i + 2 < rank; ++i)
      if (block[i] != 1)
        return false;
    return rank >= 2 && block[rank - 1] == k && block[rank - 2] % 8 == 0;
  };
  auto kOuter = [&](std::pair<LoadOp, int> src) {
    auto [ld, t] = src;
    if (!ld || t != 0 || ld.getType().getRank() != 2)
      return false;
    ArrayRef<int64_t> block = ld.getType().getShape();
    return block[0] == k && block[1] % 8 == 0;
  };
  std::pair<LoadOp, int> b = soleLoad(d.getRhs());
  return kInner(soleLoad(d.getLhs()), 0) &&
         (kInner(b, 1) || (storedB && kOuter(b)));
}

bool mlir::tessera::tile::keepsFloat8Operands(DotOp d, int64_t warps) {
  Type in = d.getLhs().getType().getElementType();
  if (!isFloat8(in) || d.getRhs().getType().getElementType() != in ||
      !d.getType().getElementType().isF32())
    return false;
  return readsKMajorBlocks(d, warps, 32);
}

bool mlir::tessera::tile::takesTf32Wgmma(DotOp d, int64_t warps) {
  auto f = d->getParentOfType<func::FuncOp>();
  auto precision =
      f ? f->getAttrOfType<StringAttr>("tile.dot_precision") : StringAttr();
  if (!precision || precision.getValue() != "tf32" ||
      !d.getLhs().getType().getElementType().isF32() ||
      !d.getRhs().getType().getElementType().isF32() ||
      !d.getType().getElementType().isF32())
    return false;
  return readsKMajorBlocks(d, warps, 8, /*storedB=*/true);
}
