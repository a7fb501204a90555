//===- WarpgroupPingpong.cpp - Two consumer warpgroups taking turns -------===//
//
// In a warp-specialised kernel with two consumer warpgroups, orders their
// wgmma issue so that they take turns at the tensor cores: while one
// warpgroup's products run, the other does the loop's other work (an
// attention kernel's softmax). See the pass description in Passes.td.
//
// Upstream MLIR has no such schedule for the nvgpu or NVVM dialects: the
// turn protocol on named barriers (bar.sync / bar.arrive) is written here.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_WARPGROUPPINGPONGPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

/// The named barriers of the turns: warpgroup g waits at kFirstTurn + g
/// for its turn and hands the turn over by arriving at the other one.
/// (0 is the whole block's barrier, 1 the consumers'.)
constexpr int32_t kFirstTurn = 2;
/// Both consumer warpgroups take part in each turn barrier.
constexpr int32_t kTurnThreads = 256;

/// A loop whose iterations issue products in two or more commit groups
/// with other work between them, and no barrier: the first group ends a
/// turn, the last one starts the next.
struct TurnLoop {
  scf::ForOp loop;
  Operation *firstCommit = nullptr; ///< end of the first group
  Operation *lastStart = nullptr;   ///< first op of the last group
};

bool isBarrier(Operation *op) {
  return isa<gpu::BarrierOp, NVVM::BarrierOp, NVVM::BarrierArriveOp,
             NVVM::Barrier0Op>(op);
}

std::optional<TurnLoop> turnLoop(scf::ForOp loop) {
  SmallVector<Operation *> commits;
  for (Operation &op : *loop.getBody())
    if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op))
      commits.push_back(&op);
  if (commits.size() < 2)
    return std::nullopt;
  bool barrier = false;
  loop.getBody()->walk([&](Operation *op) { barrier |= isBarrier(op); });
  if (barrier)
    return std::nullopt;
  // The last group starts at its fence (the accumulator registers were
  // written by other code) or, without one, at its first product.
  Operation *start = nullptr;
  for (Operation *op = commits.back()->getPrevNode();
       op != commits[commits.size() - 2]; op = op->getPrevNode()) {
    if (isa<NVVM::WgmmaFenceAlignedOp>(op))
      start = op;
    else if (!start &&
             (isa<NVVM::WgmmaMmaAsyncOp>(op) || op->hasAttr("tile.wgmma")))
      start = op;
  }
  if (!start)
    return std::nullopt;
  return TurnLoop{loop, commits.front(), start};
}

Value i32Constant(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantIntOp::create(b, l, b.getI32Type(), v);
}

void waitTurn(OpBuilder &b, Location l, Value own) {
  NVVM::BarrierOp::create(b, l, TypeRange{}, own,
                          i32Constant(b, l, kTurnThreads),
                          /*reductionOp=*/{}, Value());
}

void handTurn(OpBuilder &b, Location l, Value other) {
  NVVM::BarrierArriveOp::create(b, l, other, i32Constant(b, l, kTurnThreads));
}

/// Warpgroup `g` arrives at barrier kFirstTurn + 1 - g (a warpgroup-uniform
/// condition).
void handTurnIf(OpBuilder &b, Location l, Value group, int64_t g) {
  Value is = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, group,
                                   i32Constant(b, l, g));
  auto i = scf::IfOp::create(b, l, TypeRange{}, is, /*withElseRegion=*/false);
  OpBuilder ib(i.thenBlock()->getTerminator());
  handTurn(ib, l, i32Constant(ib, l, kFirstTurn + 1 - g));
}

/// The turn protocol around one loop (g: this warpgroup, o: the other):
///
///   before: warpgroup 1 arrives at 2 (warpgroup 0 goes first);
///           wait at 2 + g                      -- turn: the first group
///   body:   first group; arrive at 2 + o       -- hand over
///           ...; wait at 2 + g; last group ... -- turn: last group and
///                                                 the next iteration's
///                                                 first group
///   after:  warpgroup 0 arrives at 3           -- warpgroup 1's last turn
///
/// Each barrier phase is one warpgroup's wait and the other's arrival, and
/// no warpgroup can arrive twice at a barrier before the other has waited
/// there, so loops in sequence (or in a loop) compose.
void addTurns(TurnLoop t, Value group) {
  Location l = t.loop.getLoc();
  OpBuilder b(t.loop);
  Value own = arith::AddIOp::create(b, l, group, i32Constant(b, l, kFirstTurn));
  Value other =
      arith::SubIOp::create(b, l, i32Constant(b, l, kFirstTurn + 1), group);
  handTurnIf(b, l, group, 1);
  waitTurn(b, l, own);
  OpBuilder ib(t.firstCommit->getContext());
  ib.setInsertionPointAfter(t.firstCommit);
  handTurn(ib, l, other);
  ib.setInsertionPoint(t.lastStart);
  waitTurn(ib, l, own);
  b.setInsertionPointAfter(t.loop);
  handTurnIf(b, l, group, 0);
}

LogicalResult schedule(gpu::GPUFuncOp kernel) {
  kernel->removeAttr("tile.pingpong");
  auto consumers = kernel->getAttrOfType<IntegerAttr>("tile.consumer_threads");
  // Two consumer warpgroups of a warp-specialised kernel, or nothing to
  // order.
  if (!consumers || consumers.getInt() != kTurnThreads)
    return success();
  SmallVector<TurnLoop> loops;
  kernel.walk([&](scf::ForOp f) {
    if (auto t = turnLoop(f))
      loops.push_back(*t);
  });
  if (loops.empty())
    return success();
  // The warpgroup index, at entry (every thread computes it; only the
  // consumers use it).
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location l = kernel.getLoc();
  Value tid = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
  Value g = arith::DivUIOp::create(b, l, tid,
                                   arith::ConstantIndexOp::create(b, l, 128));
  Value group = arith::IndexCastUIOp::create(b, l, b.getI32Type(), g);
  for (const TurnLoop &t : loops)
    addTurns(t, group);
  return success();
}

struct WarpgroupPingpongPass
    : mlir::tessera::impl::WarpgroupPingpongPassBase<WarpgroupPingpongPass> {
  void runOnOperation() override {
    SmallVector<gpu::GPUFuncOp> kernels;
    getOperation()->walk([&](gpu::GPUFuncOp f) {
      if (f->hasAttr("tile.pingpong"))
        kernels.push_back(f);
    });
    for (gpu::GPUFuncOp f : kernels)
      if (failed(schedule(f)))
        return signalPassFailure();
  }
};

} // namespace
