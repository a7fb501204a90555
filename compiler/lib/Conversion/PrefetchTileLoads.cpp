//===- PrefetchTileLoads.cpp - Row loops load their next tiles ahead ------===//
//
// A loop over the chunks of a row (layer norm's passes, softmax's online
// statistics, a grid-stride reduction) loads a tile and then computes on
// it: each iteration waits for its own loads. This pass issues the loads
// of the next num_stages - 1 iterations ahead and carries them in
// registers through the loop, as the GEMM's K loop carries its operand
// copies through shared memory. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_PREFETCHTILELOADSPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
namespace tile = mlir::tessera::tile;

namespace {

/// The operations of `loop`'s body that the operands of `load` are computed
/// from (defined before used), when they can be computed again for another
/// value of the induction variable: pure, without regions, reading only
/// the induction variable, values from outside the loop and each other
/// (not a loop-carried value, nor anything nested in the body). Fails
/// otherwise.
FailureOr<SmallVector<Operation *>> indexSlice(scf::ForOp loop,
                                               tile::LoadOp load) {
  Block *body = loop.getBody();
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  options.filter = [&](Operation *op) { return op->getBlock() == body; };
  llvm::SetVector<Operation *> slice;
  if (failed(getBackwardSlice(load.getOperation(), &slice, options)))
    return failure();
  auto recomputable = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() != body || arg == loop.getInductionVar();
    Operation *def = v.getDefiningOp();
    return !loop->isAncestor(def) || slice.contains(def);
  };
  if (!llvm::all_of(load->getOperands(), recomputable))
    return failure();
  for (Operation *op : slice)
    if (op->getNumRegions() || !isMemoryEffectFree(op) ||
        !llvm::all_of(op->getOperands(), recomputable))
      return failure();
  return SmallVector<Operation *>(slice.begin(), slice.end());
}

/// `load` and its slice again at `iv`, built at `b`.
Value loadAt(OpBuilder &b, scf::ForOp loop, tile::LoadOp load,
             ArrayRef<Operation *> slice, Value iv) {
  IRMapping map;
  map.map(loop.getInductionVar(), iv);
  for (Operation *op : slice)
    b.clone(*op, map);
  return b.clone(*load, map)->getResult(0);
}

/// min(from + k * step, ub) for k > 0 (`from` itself for k = 0): the value
/// the induction variable has k iterations after `from`, clamped to the
/// loop's end. A tile loaded there
/// for an iteration that does not run is never used; its load is clipped
/// to the tensor like any other, and the clamp keeps its offsets within
/// the range of the loop's (31-bit) bounds.
Value ahead(OpBuilder &b, Location l, scf::ForOp loop, Value from, int64_t k) {
  if (k == 0)
    return from;
  // The loops this pass rewrites have a constant step.
  int64_t delta = *getConstantIntValue(loop.getStep()) * k;
  Type t = from.getType();
  Value c = isa<IndexType>(t)
                ? arith::ConstantIndexOp::create(b, l, delta).getResult()
                : arith::ConstantIntOp::create(b, l, t, delta).getResult();
  return arith::MinSIOp::create(b, l, arith::AddIOp::create(b, l, from, c),
                                loop.getUpperBound());
}

/// Whether `loop` is one this pass pipelines: a walk along a row (its step
/// a constant; a grid-stride loop, whose step counts the programs, spreads
/// its iterations over as many programs as the device holds and is left to
/// occupancy), whose body writes no memory (a store could alias what a
/// load ahead reads) and has no products (the GEMM and attention loops
/// pipeline their operands through shared memory in
/// tessera-distribute-tiles).
bool pipelinable(scf::ForOp loop) {
  if (!getConstantIntValue(loop.getStep()))
    return false;
  bool ok = true;
  loop.getBody()->walk([&](Operation *op) {
    if (isa<tile::DotOp>(op) || tessera::writesMemory(op))
      ok = false;
  });
  return ok;
}

void prefetch(scf::ForOp loop, int64_t depth) {
  if (!pipelinable(loop))
    return;
  SmallVector<std::pair<tile::LoadOp, SmallVector<Operation *>>> loads;
  for (Operation &op : *loop.getBody())
    if (auto ld = dyn_cast<tile::LoadOp>(op))
      if (auto slice = indexSlice(loop, ld); succeeded(slice))
        loads.emplace_back(ld, std::move(*slice));
  if (loads.empty())
    return;
  Location l = loop.getLoc();
  // Prologue: the tiles of the first `depth` iterations.
  OpBuilder pb(loop);
  SmallVector<Value> inits;
  for (auto &[ld, slice] : loads)
    for (int64_t k = 0; k < depth; ++k)
      inits.push_back(loadAt(pb, loop, ld, slice,
                             ahead(pb, l, loop, loop.getLowerBound(), k)));
  IRRewriter rewriter(loop.getContext());
  auto yields = [&](OpBuilder &, Location,
                    ArrayRef<BlockArgument> carried) -> SmallVector<Value> {
    // At the top of the body, before anything that waits: the tiles of
    // the iteration `depth` ahead.
    OpBuilder bb = OpBuilder::atBlockBegin(loop.getBody());
    Value iv = loop.getInductionVar();
    Value at = ahead(bb, l, loop, iv, depth);
    SmallVector<Value> out;
    for (auto [i, entry] : llvm::enumerate(loads)) {
      auto &[ld, slice] = entry;
      ArrayRef<BlockArgument> ring = carried.slice(i * depth, depth);
      for (int64_t k = 1; k < depth; ++k)
        out.push_back(ring[k]);
      out.push_back(loadAt(bb, loop, ld, slice, at));
    }
    return out;
  };
  FailureOr<LoopLikeOpInterface> rebuilt = loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false, yields);
  if (failed(rebuilt))
    return;
  auto nl = cast<scf::ForOp>(rebuilt->getOperation());
  unsigned first = nl.getNumRegionIterArgs() - inits.size();
  for (auto [i, entry] : llvm::enumerate(loads)) {
    tile::LoadOp ld = entry.first;
    ld.getResult().replaceAllUsesWith(
        nl.getRegionIterArgs()[first + i * depth]);
    ld.erase();
  }
}

struct PrefetchTileLoadsPass
    : mlir::tessera::impl::PrefetchTileLoadsPassBase<PrefetchTileLoadsPass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    auto stages = f->getAttrOfType<IntegerAttr>("tile.num_stages");
    if (!f->hasAttr("tile.kernel") || !stages || stages.getInt() < 2)
      return;
    SmallVector<scf::ForOp> loops;
    f.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      prefetch(loop, stages.getInt() - 1);
  }
};
} // namespace
