//===- GPUWarpReduce.cpp - Innermost reductions as warp reductions --------===//

#include "tessera/Conversion/Passes.h"
#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_GPUWARPREDUCEPASS
#define GEN_PASS_DEF_LOWERSUBGROUPREDUCEPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

constexpr int64_t kWarp = 32;

/// The combiner of a single-op reduce body, as a subgroup reduction and its
/// identity element.
struct Combiner {
  gpu::AllReduceOperation kind;
  TypedAttr identity;
};

std::optional<Combiner> combinerOf(linalg::ReduceOp op) {
  Block &body = op.getCombiner().front();
  if (body.getOperations().size() != 2)
    return std::nullopt;
  Operation *c = &body.front();
  Type t = c->getResult(0).getType();
  auto f = dyn_cast<FloatType>(t);
  Builder b(op.getContext());
  if (isa<arith::AddFOp>(c) && f)
    return Combiner{gpu::AllReduceOperation::ADD, b.getFloatAttr(t, 0.0)};
  if (isa<arith::MaximumFOp>(c) && f)
    return Combiner{gpu::AllReduceOperation::MAXIMUMF,
                    b.getFloatAttr(t, APFloat::getInf(f.getFloatSemantics(),
                                                      /*Negative=*/true))};
  if (isa<arith::MinimumFOp>(c) && f)
    return Combiner{gpu::AllReduceOperation::MINIMUMF,
                    b.getFloatAttr(t, APFloat::getInf(f.getFloatSemantics()))};
  if (auto it = dyn_cast<IntegerType>(t); it && it.getWidth() == 32) {
    if (isa<arith::AddIOp>(c))
      return Combiner{gpu::AllReduceOperation::ADD, b.getIntegerAttr(t, 0)};
    if (isa<arith::MaxSIOp>(c))
      return Combiner{gpu::AllReduceOperation::MAXSI,
                      b.getIntegerAttr(t, APInt::getSignedMinValue(32))};
    if (isa<arith::MinSIOp>(c))
      return Combiner{gpu::AllReduceOperation::MINSI,
                      b.getIntegerAttr(t, APInt::getSignedMaxValue(32))};
  }
  return std::nullopt;
}

struct GPUWarpReducePass
    : mlir::tessera::impl::GPUWarpReducePassBase<GPUWarpReducePass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (!f->hasAttr("tile.kernel"))
      return;
    int64_t warps = tessera::tile::numWarps(f);
    SmallVector<linalg::ReduceOp> reduces;
    f.walk([&](linalg::ReduceOp op) { reduces.push_back(op); });
    for (linalg::ReduceOp op : reduces)
      rewrite(op, warps);
  }

  void rewrite(linalg::ReduceOp op, int64_t warps) {
    if (!op.hasPureBufferSemantics() || op.getInputs().size() != 1 ||
        op.getDimensions().size() != 1)
      return;
    auto in = dyn_cast<MemRefType>(op.getInputs()[0].getType());
    auto out = dyn_cast<MemRefType>(op.getInits()[0].getType());
    if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape() ||
        op.getDimensions()[0] != in.getRank() - 1)
      return;
    std::optional<Combiner> comb = combinerOf(op);
    if (!comb || in.getElementType() != comb->identity.getType())
      return;
    int64_t rows = out.getNumElements();
    int64_t len = in.getShape().back();
    Location l = op.getLoc();
    OpBuilder b(op);
    auto region = scf::ExecuteRegionOp::create(b, l, TypeRange{});
    region->setAttr("tile.distributed", b.getUnitAttr());
    Block *block = b.createBlock(&region.getRegion());
    b.setInsertionPointToStart(block);
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, l, v);
    };
    Value tid = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
    Value warp = arith::DivUIOp::create(b, l, tid, cst(kWarp));
    Value lane = arith::RemUIOp::create(b, l, tid, cst(kWarp));
    Value identity = arith::ConstantOp::create(b, l, comb->identity);
    Block &body = op.getCombiner().front();
    auto combine = [&](OpBuilder &cb, Value acc, Value x) -> Value {
      IRMapping map;
      map.map(body.getArgument(0), x);
      map.map(body.getArgument(1), acc);
      Operation *c = cb.clone(body.front(), map);
      return c->getResult(0);
    };
    // Multi-dimensional buffers are addressed through their row index:
    // delinearise it over the leading (kept) dimensions.
    auto rowIndices = [&](OpBuilder &rb, Value row, MemRefType t,
                          int64_t keptRank) {
      SmallVector<Value> ix(keptRank);
      Value rest = row;
      for (int64_t d = keptRank - 1; d >= 0; --d) {
        Value ext = arith::ConstantIndexOp::create(rb, l, t.getShape()[d]);
        ix[d] = d == 0 ? rest : arith::RemUIOp::create(rb, l, rest, ext);
        if (d > 0)
          rest = arith::DivUIOp::create(rb, l, rest, ext);
      }
      return ix;
    };
    scf::ForOp::create(
        b, l, warp, cst(rows), cst(warps), ValueRange{},
        [&](OpBuilder &rb, Location, Value row, ValueRange) {
          auto acc = scf::ForOp::create(
              rb, l, lane, arith::ConstantIndexOp::create(rb, l, len),
              arith::ConstantIndexOp::create(rb, l, kWarp),
              ValueRange{identity},
              [&](OpBuilder &eb, Location, Value r, ValueRange iter) {
                SmallVector<Value> ix =
                    rowIndices(eb, row, in, in.getRank() - 1);
                ix.push_back(r);
                Value x = memref::LoadOp::create(eb, l, op.getInputs()[0], ix);
                scf::YieldOp::create(eb, l, combine(eb, iter[0], x));
              });
          Value total = gpu::SubgroupReduceOp::create(
              rb, l, acc.getResult(0), comb->kind, /*uniform=*/true);
          Value first =
              arith::CmpIOp::create(rb, l, arith::CmpIPredicate::eq, lane,
                                    arith::ConstantIndexOp::create(rb, l, 0));
          scf::IfOp::create(rb, l, first, [&](OpBuilder &ib, Location) {
            SmallVector<Value> ox = rowIndices(ib, row, out, out.getRank());
            Value old = memref::LoadOp::create(ib, l, op.getInits()[0], ox);
            memref::StoreOp::create(ib, l, combine(ib, old, total),
                                    op.getInits()[0], ox);
            scf::YieldOp::create(ib, l);
          });
          scf::YieldOp::create(rb, l);
        });
    scf::YieldOp::create(b, l);
    op.erase();
  }
};

struct LowerSubgroupReducePass
    : mlir::tessera::impl::LowerSubgroupReducePassBase<
          LowerSubgroupReducePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateGpuBreakDownSubgroupReducePatterns(patterns, 32);
    populateGpuLowerSubgroupReduceToShufflePatterns(patterns, kWarp, 32);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
