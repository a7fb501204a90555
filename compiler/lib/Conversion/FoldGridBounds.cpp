//===- FoldGridBounds.cpp - Program ids below the extents of the grid -----===//
//
// A kernel launched on the grid it declares, `grid=(S, B)`, has program ids
// below S and B: the bounds tests of its tile accesses on those ids
// (`pid < S`) always hold. This pass folds them to true where the kernel
// carries `tile.grid_extents` (set for a launch that guarantees the declared
// grid). See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_FOLDGRIDBOUNDSPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

/// `v` without the integer casts that keep its value: extensions, index
/// casts, and (when `narrowing`) truncations.
Value stripCasts(Value v, bool narrowing) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp,
            arith::ExtSIOp>(def) ||
        (narrowing && isa<arith::TruncIOp>(def))) {
      v = def->getOperand(0);
      continue;
    }
    break;
  }
  return v;
}

struct FoldGridBoundsPass
    : mlir::tessera::impl::FoldGridBoundsPassBase<FoldGridBoundsPass> {
  void runOnOperation() override {
    getOperation()->walk([](gpu::GPUFuncOp kernel) {
      auto extents =
          kernel->getAttrOfType<DenseI64ArrayAttr>("tile.grid_extents");
      if (!extents || extents.size() != 6)
        return;
      // Under index32 every extent and program id is below 2^31, so a
      // truncation to 32 bits keeps their values.
      bool narrowing = kernel->hasAttr("tile.index32");
      SmallVector<arith::CmpIOp> folded;
      kernel.walk([&](arith::CmpIOp cmp) {
        if (cmp.getPredicate() != arith::CmpIPredicate::ult &&
            cmp.getPredicate() != arith::CmpIPredicate::slt)
          return;
        auto id =
            stripCasts(cmp.getLhs(), narrowing).getDefiningOp<gpu::BlockIdOp>();
        auto dim =
            stripCasts(cmp.getRhs(), narrowing).getDefiningOp<memref::DimOp>();
        if (!id || !dim)
          return;
        auto arg = dyn_cast<BlockArgument>(dim.getSource());
        std::optional<int64_t> d = dim.getConstantIndex();
        if (!arg || arg.getOwner() != &kernel.getBody().front() || !d)
          return;
        int axis = static_cast<int>(id.getDimension());
        if (extents[2 * axis] == int64_t(arg.getArgNumber()) &&
            extents[2 * axis + 1] == *d)
          folded.push_back(cmp);
      });
      for (arith::CmpIOp cmp : folded) {
        OpBuilder b(cmp);
        cmp.replaceAllUsesWith(
            arith::ConstantIntOp::create(b, cmp.getLoc(), b.getI1Type(), 1)
                .getResult());
        cmp.erase();
      }
    });
  }
};
} // namespace
