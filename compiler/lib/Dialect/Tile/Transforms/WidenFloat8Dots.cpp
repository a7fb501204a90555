//===- WidenFloat8Dots.cpp - fp8 dot operands as f16 ----------------------===//
//
// The register lowering's tensor-core products take 16-bit operands: fp8
// operands are extended to f16 (exactly) where they are defined.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

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

struct WidenFloat8DotsPass
    : mlir::tessera::tile::impl::WidenFloat8DotsPassBase<WidenFloat8DotsPass> {
  void runOnOperation() override {
    getOperation().walk([](DotOp d) {
      for (OpOperand *operand : {&d.getLhsMutable(), &d.getRhsMutable()})
        if (isFloat8(cast<RankedTensorType>(operand->get().getType())
                         .getElementType()))
          widen(*operand);
    });
  }
};

} // namespace
