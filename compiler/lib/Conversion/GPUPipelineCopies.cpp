//===- GPUPipelineCopies.cpp - cp.async software pipelining ---------------===//
//
// A loop whose iterations first copy tiles into shared memory with cp.async
// (the "load" part: fills, copies, then commit + wait + barrier) and then
// use them (the "compute" part) is pipelined over `tile.num_stages` stages:
// the shared tiles the copies write get one buffer per stage, the loads of
// iteration k + S - 1 are issued before the compute of iteration k, and the
// compute waits only for its own group (cp.async.wait_group S - 1). The
// stage split is given to MLIR's loop pipeliner (scf::pipelineForLoop) with
// the loads predicated off past the end of the loop; an empty group is
// still committed there, so that the wait counts stay exact. See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_GPUPIPELINECOPIESPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

/// Marks the stage regions while the pass runs.
constexpr const char *kStageAttr = "tile.pipeline_stage";

/// The `memref.view` of the dynamic shared-memory arena (at a constant
/// byte offset, outside `loop`) that `v` is a subview or address-space
/// cast of; null when there is none.
memref::ViewOp rootView(Value v, scf::ForOp loop) {
  while (true) {
    if (auto view = v.getDefiningOp<memref::ViewOp>()) {
      if (!view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>() ||
          !view.getSizes().empty() ||
          !getConstantIntValue(view.getByteShift()) ||
          !loop.isDefinedOutsideOfLoop(view))
        return nullptr;
      return view;
    }
    if (auto c = v.getDefiningOp<memref::MemorySpaceCastOp>())
      v = c.getSource();
    else if (auto sv = v.getDefiningOp<memref::SubViewOp>())
      v = sv.getSource();
    else
      return nullptr;
  }
}

/// `view` and the other views of the same arena at the same constant byte
/// offset, with static shapes of the same size, made outside `loop`.
SmallVector<memref::ViewOp> aliasesOf(memref::ViewOp view, scf::ForOp loop) {
  SmallVector<memref::ViewOp> out = {view};
  auto bytesOf = [](memref::ViewOp v) -> std::optional<int64_t> {
    auto t = cast<MemRefType>(v.getType());
    if (!t.hasStaticShape())
      return std::nullopt;
    return t.getNumElements() * t.getElementTypeBitWidth() / 8;
  };
  std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
  for (Operation *user : view.getSource().getUsers())
    if (auto other = dyn_cast<memref::ViewOp>(user);
        other && other != view && other.getSizes().empty() &&
        loop.isDefinedOutsideOfLoop(other) &&
        getConstantIntValue(other.getByteShift()) == shift && bytesOf(other) &&
        bytesOf(other) == bytesOf(view))
      out.push_back(other);
  return out;
}

/// A commit + wait-for-all + barrier sequence starting at `op`.
bool isCommitWaitBarrier(Operation *op) {
  auto commit = dyn_cast<nvgpu::DeviceAsyncCreateGroupOp>(op);
  if (!commit)
    return false;
  auto wait = dyn_cast_or_null<nvgpu::DeviceAsyncWaitOp>(op->getNextNode());
  if (!wait || wait.getNumGroups().value_or(0) != 0)
    return false;
  return isa_and_nonnull<gpu::BarrierOp>(wait->getNextNode());
}

struct GPUPipelineCopiesPass
    : mlir::tessera::impl::GPUPipelineCopiesPassBase<GPUPipelineCopiesPass> {
  void runOnOperation() override {
    getOperation()->walk([&](gpu::GPUFuncOp f) {
      auto stagesAttr = f->getAttrOfType<IntegerAttr>("tile.num_stages");
      int64_t stages = stagesAttr ? stagesAttr.getInt() : 1;
      if (stages < 2)
        return;
      SmallVector<scf::ForOp> loops;
      f.walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops)
        if (failed(pipeline(f, loop, stages)))
          return signalPassFailure();
    });
  }

  /// Pipelines `loop` when it has the load/compute form; leaves it alone
  /// (success) when it does not.
  LogicalResult pipeline(gpu::GPUFuncOp f, scf::ForOp loop, int64_t stages) {
    Block *body = loop.getBody();
    // The split point: the last top-level commit + wait + barrier.
    Operation *split = nullptr;
    SmallVector<Operation *> syncs;
    for (Operation &op : body->without_terminator())
      if (isCommitWaitBarrier(&op)) {
        syncs.push_back(&op);
        split = &op;
      }
    if (!split)
      return success();
    Operation *computeStart =
        split->getNextNode()->getNextNode()->getNextNode();
    // Every cp.async is in the load part; the load part writes shared
    // memory only into arena views (the buffers to multiply) and reads no
    // shared memory; the compute part does not write those buffers and
    // uses nothing the load part defines.
    llvm::SetVector<Operation *> buffers;
    bool ok = true, inLoad = true;
    for (Operation &op : body->without_terminator()) {
      if (&op == computeStart)
        inLoad = false;
      op.walk([&](Operation *nested) {
        if (auto cp = dyn_cast<nvgpu::DeviceAsyncCopyOp>(nested)) {
          memref::ViewOp v = rootView(cp.getDst(), loop);
          ok &= inLoad && v && !mlir::tessera::reachesSharedMemory(cp.getSrc());
          if (v)
            buffers.insert(v);
        } else if (isa<memref::StoreOp, vector::StoreOp>(nested)) {
          // Fills of the tiles (vector stores where
          // tessera-gpu-vectorize-elementwise made them so).
          if (inLoad) {
            auto st = dyn_cast<memref::StoreOp>(nested);
            memref::ViewOp v = rootView(
                st ? st.getMemRef() : cast<vector::StoreOp>(nested).getBase(),
                loop);
            ok &= v != nullptr;
            if (v)
              buffers.insert(v);
          }
        } else if (isa<memref::LoadOp, vector::LoadOp>(nested)) {
          auto ld = dyn_cast<memref::LoadOp>(nested);
          if (inLoad)
            ok &= !mlir::tessera::reachesSharedMemory(
                ld ? ld.getMemRef() : cast<vector::LoadOp>(nested).getBase());
        } else if (inLoad && !isMemoryEffectFree(nested) &&
                   !isa<gpu::BarrierOp, nvgpu::DeviceAsyncCreateGroupOp,
                        nvgpu::DeviceAsyncWaitOp, scf::ForOp, scf::IfOp,
                        scf::YieldOp>(nested)) {
          ok = false;
        }
      });
    }
    if (!ok || buffers.empty())
      return success();
    // Iteration arguments must be carried by the compute part alone: the
    // load part may not read them (the loads of iteration k + S - 1 run
    // before the compute of iteration k) and every yielded value must come
    // from the compute part. Loops that thread buffers (memref arguments,
    // as the row loops of layernorm do with their accumulator tile) are
    // left alone: MLIR's pipeliner rejects them.
    for (BlockArgument arg : loop.getRegionIterArgs())
      if (isa<MemRefType>(arg.getType()))
        return success();
    for (BlockArgument arg : loop.getRegionIterArgs())
      for (Operation *user : arg.getUsers()) {
        Operation *top = body->findAncestorOpInBlock(*user);
        if (top && top->isBeforeInBlock(computeStart))
          return success();
      }
    for (Value y : body->getTerminator()->getOperands()) {
      Operation *d = y.getDefiningOp();
      if (!d || d->getBlock() != body || d->isBeforeInBlock(computeStart))
        return success();
    }
    for (Operation *c = computeStart; c != body->getTerminator();
         c = c->getNextNode()) {
      WalkResult r = c->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (Operation *d = operand.getDefiningOp();
              d && d->getBlock() == body && d->isBeforeInBlock(computeStart))
            return WalkResult::interrupt();
        Value written;
        if (auto st = dyn_cast<memref::StoreOp>(nested))
          written = st.getMemRef();
        else if (auto vs = dyn_cast<vector::StoreOp>(nested))
          written = vs.getBase();
        if (written)
          if (memref::ViewOp v = rootView(written, loop);
              v && buffers.contains(v))
            return WalkResult::interrupt();
        return WalkResult::advance();
      });
      if (r.wasInterrupted())
        return success();
    }

    // One buffer per stage: stage 0 keeps the tile's place in the arena,
    // the others are appended after the kernel's shared memory.
    auto bytesAttr = f->getAttrOfType<IntegerAttr>("tile.shared_bytes");
    int64_t total = bytesAttr ? bytesAttr.getInt() : 0;
    struct Buffer {
      memref::ViewOp view;
      int64_t extraBase, bytes;
    };
    SmallVector<Buffer> bufs;
    for (Operation *op : buffers) {
      auto view = cast<memref::ViewOp>(op);
      auto t = cast<MemRefType>(view.getType());
      if (!t.hasStaticShape())
        return success();
      int64_t bytes = t.getNumElements() * t.getElementTypeBitWidth() / 8;
      int64_t base = (total + 127) / 128 * 128;
      total = base + (stages - 1) * bytes;
      bufs.push_back({view, base, bytes});
    }

    IRRewriter rewriter(loop.getContext());
    Location l = loop.getLoc();
    // Drop the per-tile waits; the compute part waits for its stage.
    for (Operation *s : syncs) {
      Operation *wait = s->getNextNode(), *barrier = wait->getNextNode();
      rewriter.eraseOp(barrier);
      rewriter.eraseOp(wait);
      rewriter.eraseOp(s);
    }

    // Wrap both parts into regions, each computing its stage's buffers.
    // A region's results are the values it defines that are used after it
    // (the compute part's new iteration arguments, when the loop has some).
    auto wrap = [&](Operation *first, Operation *end) {
      SmallVector<Value> escaping;
      for (Operation *op = first; op != end; op = op->getNextNode())
        for (Value r : op->getResults())
          if (llvm::any_of(r.getUsers(), [&](Operation *u) {
                Operation *top = body->findAncestorOpInBlock(*u);
                return !top || top == end || end->isBeforeInBlock(top);
              }))
            escaping.push_back(r);
      rewriter.setInsertionPoint(first);
      auto region = scf::ExecuteRegionOp::create(
          rewriter, l, ValueRange(escaping).getTypes());
      Block *b = rewriter.createBlock(&region.getRegion());
      auto yield = scf::YieldOp::create(rewriter, l, escaping);
      for (Operation *op = region->getNextNode(); op != end;) {
        Operation *next = op->getNextNode();
        op->moveBefore(yield);
        op = next;
      }
      for (auto [v, r] : llvm::zip(escaping, region.getResults()))
        rewriter.replaceUsesWithIf(v, r, [&](OpOperand &use) {
          return !region->isAncestor(use.getOwner());
        });
      // The stage of this iteration and its buffers.
      rewriter.setInsertionPointToStart(b);
      Value iv = loop.getInductionVar();
      Type ivType = iv.getType();
      Value trip = arith::DivSIOp::create(
          rewriter, l,
          arith::SubIOp::create(rewriter, l, iv, loop.getLowerBound()),
          loop.getStep());
      Value stage = arith::RemSIOp::create(
          rewriter, l, trip,
          arith::ConstantOp::create(rewriter, l,
                                    rewriter.getIntegerAttr(ivType, stages)));
      if (!ivType.isIndex())
        stage = arith::IndexCastOp::create(rewriter, l, rewriter.getIndexType(),
                                           stage);
      Value zero = arith::ConstantIndexOp::create(rewriter, l, 0);
      Value one = arith::ConstantIndexOp::create(rewriter, l, 1);
      Value isFirst = arith::CmpIOp::create(
          rewriter, l, arith::CmpIPredicate::eq, stage, zero);
      for (Buffer &buf : bufs) {
        Value extra = arith::AddIOp::create(
            rewriter, l,
            arith::ConstantIndexOp::create(rewriter, l, buf.extraBase),
            arith::MulIOp::create(
                rewriter, l, arith::SubIOp::create(rewriter, l, stage, one),
                arith::ConstantIndexOp::create(rewriter, l, buf.bytes)));
        Value offset = arith::SelectOp::create(rewriter, l, isFirst,
                                               buf.view.getByteShift(), extra);
        // The view, its aliases (other views of the same arena bytes, such
        // as the i8 stand-ins of fp8 tiles that tessera-gpu-mma-sync reads
        // through) and the casts/subviews of them made outside the loop are
        // re-made inside the region on this stage's buffer.
        IRMapping map;
        SmallVector<Value> derived;
        for (memref::ViewOp root : aliasesOf(buf.view, loop)) {
          auto view =
              memref::ViewOp::create(rewriter, l, root.getType(),
                                     root.getSource(), offset, ValueRange{});
          map.map(root.getResult(), view.getResult());
          derived.push_back(root.getResult());
        }
        for (size_t i = 0; i < derived.size(); ++i)
          for (Operation *user : derived[i].getUsers())
            if (isa<memref::MemorySpaceCastOp, memref::SubViewOp>(user) &&
                loop.isDefinedOutsideOfLoop(user->getResult(0)) &&
                llvm::all_of(user->getOperands(),
                             [&](Value v) {
                               return map.contains(v) ||
                                      loop.isDefinedOutsideOfLoop(v);
                             }) &&
                !map.contains(user->getResult(0))) {
              map.map(user->getResult(0),
                      rewriter.clone(*user, map)->getResult(0));
              derived.push_back(user->getResult(0));
            }
        for (Value d : derived)
          rewriter.replaceUsesWithIf(d, map.lookup(d), [&](OpOperand &use) {
            return region->isProperAncestor(use.getOwner());
          });
      }
      region->setAttr(kStageAttr, rewriter.getUnitAttr());
      return region;
    };
    Operation *loadFirst = &body->front();
    auto compute = wrap(computeStart, body->getTerminator());
    auto load = wrap(loadFirst, compute);
    // The load part's group, committed even when the loads are predicated
    // off; the compute part waits until only the S - 1 newer groups may be
    // in flight, then publishes its tiles to the block.
    rewriter.setInsertionPointAfter(load);
    auto token = nvgpu::DeviceAsyncTokenType::get(rewriter.getContext());
    auto commit = nvgpu::DeviceAsyncCreateGroupOp::create(rewriter, l, token,
                                                          ValueRange{});
    rewriter.setInsertionPointToStart(&compute.getRegion().front());
    nvgpu::DeviceAsyncWaitOp::create(rewriter, l, commit.getResult(),
                                     rewriter.getI32IntegerAttr(stages - 1));
    gpu::BarrierOp::create(rewriter, l);

    scf::PipeliningOption opts;
    opts.getScheduleFn = [&](scf::ForOp,
                             std::vector<std::pair<Operation *, unsigned>> &s) {
      s = {{load, 0}, {commit, 0}, {compute, unsigned(stages - 1)}};
    };
    opts.peelEpilogue = false;
    opts.supportDynamicLoops = true;
    opts.predicateFn = [](RewriterBase &rw, Operation *op,
                          Value pred) -> Operation * {
      // The group commit is never predicated (an empty group keeps the
      // counts of later waits right); a region without results runs under
      // an scf.if.
      if (isa<nvgpu::DeviceAsyncCreateGroupOp>(op))
        return op;
      if (op->getNumResults() != 0)
        return nullptr;
      rw.setInsertionPoint(op);
      auto ifOp = scf::IfOp::create(rw, op->getLoc(), pred,
                                    /*withElseRegion=*/false);
      rw.moveOpBefore(op, ifOp.thenBlock()->getTerminator());
      return ifOp;
    };
    bool modified = false;
    // The pipeliner builds the prologue at the rewriter's insertion point.
    rewriter.setInsertionPoint(loop);
    FailureOr<scf::ForOp> result =
        scf::pipelineForLoop(rewriter, loop, opts, &modified);
    if (failed(result))
      return loop.emitOpError("cp.async pipelining over ")
             << stages << " stages failed";
    // The pipelined compute waits on the token of an earlier iteration's
    // commit, carried through the loop. cp.async.wait_group counts groups
    // and ignores the token: use this iteration's commit instead, so that
    // no token crosses iterations (the carried one then folds away).
    scf::ForOp kernelLoop = *result;
    Value current;
    kernelLoop.getBody()->walk([&](nvgpu::DeviceAsyncCreateGroupOp c) {
      if (c->getParentOp() == kernelLoop)
        current = c.getResult();
    });
    if (current)
      kernelLoop.getBody()->walk([&](nvgpu::DeviceAsyncWaitOp w) {
        if (isa<BlockArgument>(w.getAsyncDependencies()))
          w.getAsyncDependenciesMutable().assign(current);
      });
    {
      RewritePatternSet patterns(f.getContext());
      scf::ForOp::getCanonicalizationPatterns(patterns, f.getContext());
      (void)applyOpPatternsGreedily({kernelLoop.getOperation()},
                                    std::move(patterns));
    }
    f->setAttr("tile.shared_bytes",
               IntegerAttr::get(IntegerType::get(f.getContext(), 64), total));
    // Inline the stage regions again.
    SmallVector<scf::ExecuteRegionOp> regions;
    f.walk([&](scf::ExecuteRegionOp r) {
      if (r->hasAttr(kStageAttr))
        regions.push_back(r);
    });
    for (scf::ExecuteRegionOp r : regions) {
      Block &b = r.getRegion().front();
      if (!isa<scf::YieldOp>(b.getTerminator()) ||
          !llvm::hasSingleElement(r.getRegion()))
        continue;
      SmallVector<Value> yielded(b.getTerminator()->getOperands());
      rewriter.eraseOp(b.getTerminator());
      rewriter.inlineBlockBefore(&b, r);
      rewriter.replaceOp(r, yielded);
    }
    return success();
  }
};

} // namespace
