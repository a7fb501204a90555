//===- NarrowIndexLoops.cpp - 32-bit induction variables under index32 ----===//
//
// The tile language computes offsets in 64 bits. In a kernel specialised
// for 31-bit tensors (tile.index32), a loop over offsets (a grid-stride
// loop, a K loop) can count in 32 bits when its bounds are known to stay
// within 31 bits; its body sees the same values, zero-extended. See the
// pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_NARROWINDEXLOOPSPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

constexpr int64_t kMax31 = (int64_t(1) << 31) - 1;
/// Steps below this keep 64 steps past a 31-bit bound below 2^32.
constexpr int64_t kMaxStep = int64_t(1) << 24;

bool narrowable(scf::ForOp loop) {
  if (!loop.getInductionVar().getType().isInteger(64) || loop.getUnsignedCmp())
    return false;
  for (Value bound : {loop.getLowerBound(), loop.getUpperBound()}) {
    std::optional<int64_t> b = tessera::index32Bound(bound);
    if (!b || *b > kMax31 || !tessera::knownNonNegative(bound))
      return false;
  }
  std::optional<int64_t> step = tessera::index32Bound(loop.getStep());
  return step && *step < kMaxStep;
}

void narrow(scf::ForOp loop) {
  OpBuilder b(loop);
  Location l = loop.getLoc();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto trunc = [&](Value v) -> Value {
    return arith::TruncIOp::create(b, l, i32, v);
  };
  loop.getLowerBoundMutable().assign(trunc(loop.getLowerBound()));
  loop.getUpperBoundMutable().assign(trunc(loop.getUpperBound()));
  loop.getStepMutable().assign(trunc(loop.getStep()));
  loop.setUnsignedCmp(true);
  Value iv = loop.getInductionVar();
  iv.setType(i32);
  OpBuilder ib = OpBuilder::atBlockBegin(loop.getBody());
  Value wide = arith::ExtUIOp::create(ib, l, i64, iv);
  iv.replaceAllUsesExcept(wide, wide.getDefiningOp());
}

struct NarrowIndexLoopsPass
    : mlir::tessera::impl::NarrowIndexLoopsPassBase<NarrowIndexLoopsPass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (!f->hasAttr("tile.index32"))
      return;
    // Outer loops first: an inner loop's bounds may be an outer one's
    // induction variable, whose bound is read through the loop.
    SmallVector<scf::ForOp> loops;
    f.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
      if (narrowable(loop))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      narrow(loop);
  }
};

} // namespace
