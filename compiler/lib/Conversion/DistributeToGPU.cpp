//===- DistributeToGPU.cpp - Tile programs onto GPU thread blocks ---------===//
//
// The first GPU mapping: a SIMT lowering in which every tile lives in shared
// memory and every tile operation is a loop spread over the block's threads.
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <limits>

namespace mlir::tessera {
#define GEN_PASS_DEF_DISTRIBUTETOGPUPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

bool containsParallel(Operation *op) {
  return op->walk([](scf::ParallelOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

struct Mapper {
  Value tid;      // gpu.thread_id x (index)
  Value nthreads; // constant block size (index)

  /// Rewrites an outermost scf.parallel as a loop over linear ids
  /// tid, tid + nthreads, ... of its iteration space.
  LogicalResult distribute(scf::ParallelOp par) {
    if (!par.getInitVals().empty())
      return par.emitOpError("with reductions is not supported on the GPU");
    OpBuilder b(par);
    Location l = par.getLoc();
    Value one = arith::ConstantIndexOp::create(b, l, 1);
    SmallVector<Value> counts;
    Value total = one;
    for (auto [lb, ub, step] :
         llvm::zip(par.getLowerBound(), par.getUpperBound(), par.getStep())) {
      Value span = arith::SubIOp::create(b, l, ub, lb);
      Value n = arith::CeilDivSIOp::create(b, l, span, step);
      n = arith::MaxSIOp::create(b, l, n,
                                 arith::ConstantIndexOp::create(b, l, 0));
      counts.push_back(n);
      total = arith::MulIOp::create(b, l, total, n);
    }
    auto loop = scf::ForOp::create(b, l, tid, total, nthreads);
    OpBuilder ib = OpBuilder::atBlockBegin(loop.getBody());
    // Innermost dimension fastest: consecutive threads touch consecutive
    // elements.
    IRMapping map;
    Value rest = loop.getInductionVar();
    unsigned rank = counts.size();
    SmallVector<Value> ivs(rank);
    for (int d = rank - 1; d >= 0; --d) {
      Value idx =
          d == 0 ? rest
                 : arith::RemSIOp::create(ib, l, rest, counts[d]).getResult();
      if (d > 0)
        rest = arith::DivSIOp::create(ib, l, rest, counts[d]);
      Value iv = arith::AddIOp::create(
          ib, l, par.getLowerBound()[d],
          arith::MulIOp::create(ib, l, idx, par.getStep()[d]));
      map.map(par.getInductionVars()[d], iv);
    }
    for (Operation &op : par.getBody()->without_terminator())
      ib.clone(op, map);
    b.setInsertionPointAfter(loop);
    gpu::BarrierOp::create(b, l);
    par.erase();
    return success();
  }

  /// Runs `op` on thread 0 only, then synchronises the block.
  void singleThread(Operation *op) {
    OpBuilder b(op);
    Location l = op->getLoc();
    Value zero = arith::ConstantIndexOp::create(b, l, 0);
    Value first =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, tid, zero);
    auto ifOp = scf::IfOp::create(b, l, first, /*withElse=*/false);
    op->moveBefore(ifOp.thenBlock()->getTerminator());
    b.setInsertionPointAfter(ifOp);
    gpu::BarrierOp::create(b, l);
  }

  /// Maps the operations of `block`, recursing into those that contain
  /// parallel loops (their control flow is uniform across the block).
  LogicalResult mapBlock(Block &block) {
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops) {
      // Already spread over the threads (tessera-gpu-warp-reduce).
      if (op->hasAttr("tile.distributed")) {
        OpBuilder b(op->getContext());
        b.setInsertionPointAfter(op);
        gpu::BarrierOp::create(b, op->getLoc());
        continue;
      }
      if (auto par = dyn_cast<scf::ParallelOp>(op)) {
        if (failed(distribute(par)))
          return failure();
        continue;
      }
      if (containsParallel(op)) {
        for (Region &r : op->getRegions())
          for (Block &b : r)
            if (failed(mapBlock(b)))
              return failure();
        continue;
      }
      if (isa<memref::AllocOp, memref::AllocaOp>(op) ||
          !mlir::tessera::writesMemory(op))
        continue;
      // Results are needed by every thread: such an op runs redundantly
      // (it may only write values every thread computes alike).
      if (op->getNumResults() == 0)
        singleThread(op);
    }
    return success();
  }
};

/// Program-order live ranges of the tile buffers, for packing them into the
/// shared-memory arena (buffers whose ranges do not overlap share bytes).
class Liveness {
public:
  explicit Liveness(Operation *root) {
    root->walk<WalkOrder::PreOrder>([&](Operation *op) {
      pos[op] = next++;
      if (isa<gpu::BarrierOp>(op))
        barriers.push_back(op);
    });
    root->walk([&](Operation *op) {
      int64_t end = pos[op];
      for (Region &r : op->getRegions())
        r.walk([&](Operation *n) { end = std::max(end, pos[n]); });
      endPos[op] = end;
    });
  }

  /// [first, last] position during which the buffer `root` (an alloc
  /// result) and everything aliasing it may be accessed. The end extends to
  /// the next barrier that every thread passes, so that memory reused by a
  /// later buffer is first written in a later barrier epoch.
  std::pair<int64_t, int64_t> range(Value root) {
    Operation *def = root.getDefiningOp();
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = pos[def];
    Operation *last = def;
    SmallVector<Value> work{root};
    DenseSet<Value> seen{root};
    auto push = [&](Value v) {
      if (seen.insert(v).second)
        work.push_back(v);
    };
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        int64_t p = pos[user];
        lo = std::min(lo, p);
        if (p > hi) {
          hi = p;
          last = user;
        }
        // A use inside a loop the buffer outlives keeps it alive for the
        // whole loop.
        for (Operation *a = user->getParentOp(); a; a = a->getParentOp()) {
          if (!isa<LoopLikeOpInterface>(a) || a->isAncestor(def))
            continue;
          lo = std::min(lo, pos[a]);
          if (endPos[a] > hi) {
            hi = endPos[a];
            last = a;
          }
        }
        if (isa<ViewLikeOpInterface, memref::CastOp, memref::MemorySpaceCastOp,
                memref::CollapseShapeOp, memref::ExpandShapeOp,
                arith::SelectOp>(user)) {
          for (Value r : user->getResults())
            push(r);
        } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
          unsigned first = loop.getNumControlOperands();
          if (use.getOperandNumber() >= first) {
            unsigned i = use.getOperandNumber() - first;
            push(loop.getRegionIterArgs()[i]);
            push(loop.getResult(i));
          }
        } else if (auto y = dyn_cast<scf::YieldOp>(user)) {
          unsigned i = use.getOperandNumber();
          Operation *parent = y->getParentOp();
          if (auto loop = dyn_cast<scf::ForOp>(parent)) {
            push(loop.getRegionIterArgs()[i]);
            push(loop.getResult(i));
          } else if (auto ifOp = dyn_cast<scf::IfOp>(parent)) {
            push(ifOp.getResult(i));
          }
        }
      }
    }
    if (lo == std::numeric_limits<int64_t>::max())
      lo = pos[def];
    for (Operation *b : barriers)
      if (pos[b] > hi && b->getBlock()->findAncestorOpInBlock(*last))
        return {lo, pos[b]};
    return {lo, next};
  }

private:
  DenseMap<Operation *, int64_t> pos, endPos;
  SmallVector<Operation *> barriers;
  int64_t next = 0;
};

struct DistributeToGPUPass
    : mlir::tessera::impl::DistributeToGPUPassBase<DistributeToGPUPass> {
  using DistributeToGPUPassBase::DistributeToGPUPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp f : mlir::tessera::tileKernels(module))
      if (failed(convert(module, f)))
        return signalPassFailure();
  }

  LogicalResult convert(ModuleOp module, func::FuncOp f) {
    MLIRContext *ctx = &getContext();
    FailureOr<int64_t> blockThreads = mlir::tessera::blockThreads(f);
    if (failed(blockThreads))
      return failure();
    const int64_t threads = *blockThreads;

    gpu::GPUFuncOp kernel = mlir::tessera::outlineKernel(module, f, threads);
    if (!kernel)
      return failure();
    Block &entry = kernel.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    Location l = kernel.getLoc();
    Mapper m;
    m.tid = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
    m.nthreads = arith::ConstantIndexOp::create(b, l, threads);

    for (Block &blk : kernel.getBody())
      if (failed(m.mapBlock(blk)))
        return failure();
    // A barrier after each outermost loop that holds one: the buffers of
    // its body end there, and a later loop's buffers take their bytes.
    kernel.walk([&](scf::ForOp loop) {
      for (Operation *p = loop->getParentOp(); p; p = p->getParentOp())
        if (isa<LoopLikeOpInterface>(p))
          return;
      Operation *after = loop->getNextNode();
      bool synced = false;
      loop.getBody()->walk([&](gpu::BarrierOp) { synced = true; });
      if (synced && after && !isa<gpu::BarrierOp>(after)) {
        OpBuilder ab(after);
        gpu::BarrierOp::create(ab, loop.getLoc());
      }
    });

    // Tile buffers become views into the block's dynamic shared memory
    // (static `.shared` arrays are capped at 48 KiB; the dynamic arena can
    // use the architecture's opt-in maximum). The views are made once, at
    // the kernel's entry.
    SmallVector<Operation *> allocs;
    kernel.walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::AllocaOp>(op) &&
          !cast<MemRefType>(op->getResult(0).getType()).getMemorySpace())
        allocs.push_back(op);
    });
    auto wgSpace = gpu::AddressSpaceAttr::get(
        ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
    OpBuilder eb = OpBuilder::atBlockBegin(&entry);
    eb.setInsertionPointAfter(m.nthreads.getDefiningOp());
    Value arena;
    if (!allocs.empty())
      arena = gpu::DynamicSharedMemoryOp::create(
          eb, l,
          MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8),
                          MemRefLayoutAttrInterface(), wgSpace));

    // Buffers to place: one per alloc, two for a loop-carried one (see
    // below), each with its size and live range.
    struct Request {
      Operation *alloc;
      int64_t bytes, lo, hi, offset = -1;
    };
    SmallVector<Request> requests;
    DenseMap<Operation *, BlockArgument> carriedOf;
    DenseMap<Operation *, Operation *> takesOver;
    Liveness live(kernel);
    for (Operation *op : allocs) {
      auto type = cast<MemRefType>(op->getResult(0).getType());
      if (!type.hasStaticShape() || !type.getLayout().isIdentity())
        return op->emitOpError("needs a static tile buffer on the GPU, got ")
               << type;
      int64_t bytes = type.getNumElements() *
                      std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      bytes = (bytes + 15) / 16 * 16;
      // A buffer allocated in a loop body and yielded as a loop-carried
      // value: the next iteration reads the previous one's buffer while it
      // writes the new one, so they must not be the same memory. Two
      // buffers alternate (ping-pong): each iteration writes the one the
      // loop-carried value does not point to.
      if (auto loop = dyn_cast<scf::ForOp>(op->getParentOp()))
        for (OpOperand &use : op->getResult(0).getUses())
          if (use.getOwner() == loop.getBody()->getTerminator())
            carriedOf[op] = loop.getRegionIterArgs()[use.getOperandNumber()];
      auto [lo, hi] = live.range(op->getResult(0));
      // A loop that continues what an earlier loop carried (its initial
      // value is that loop's result, used nowhere else) writes its
      // ping-pong pair into the earlier loop's: the two pairs are never
      // needed at once.
      if (auto it = carriedOf.find(op); it != carriedOf.end()) {
        auto loop = cast<scf::ForOp>(op->getParentOp());
        Value init = loop.getTiedLoopInit(it->second)->get();
        auto prev = init.getDefiningOp<scf::ForOp>();
        if (prev && init.hasOneUse()) {
          Value yielded = prev.getBody()->getTerminator()->getOperand(
              cast<OpResult>(init).getResultNumber());
          Operation *from = yielded.getDefiningOp();
          if (auto t = takesOver.find(from); t != takesOver.end())
            from = t->second;
          if (from && carriedOf.count(from) &&
              from->getResult(0).getType() == op->getResult(0).getType()) {
            takesOver[op] = from;
            for (Request &r : requests)
              if (r.alloc == from) {
                r.lo = std::min(r.lo, lo);
                r.hi = std::max(r.hi, hi);
              }
            continue;
          }
        }
      }
      requests.push_back({op, bytes, lo, hi});
      if (carriedOf.count(op))
        requests.push_back({op, bytes, lo, hi});
    }
    // First fit, largest first: the lowest offset not overlapping a placed
    // buffer whose live range overlaps.
    SmallVector<Request *> order;
    for (Request &r : requests)
      order.push_back(&r);
    llvm::stable_sort(
        order, [](Request *a, Request *b) { return a->bytes > b->bytes; });
    int64_t shared = 0;
    SmallVector<Request *> placed;
    for (Request *r : order) {
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (Request *q : placed)
        if (q->lo <= r->hi && r->lo <= q->hi)
          busy.push_back({q->offset, q->offset + q->bytes});
      llvm::sort(busy);
      int64_t off = 0;
      for (auto [b, e] : busy) {
        if (off + r->bytes <= b)
          break;
        off = std::max(off, e);
      }
      r->offset = off;
      shared = std::max(shared, off + r->bytes);
      placed.push_back(r);
    }

    for (Operation *op : allocs) {
      auto type = cast<MemRefType>(op->getResult(0).getType());
      auto wgType = MemRefType::get(type.getShape(), type.getElementType(),
                                    MemRefLayoutAttrInterface(), wgSpace);
      Location ol = op->getLoc();
      SmallVector<Value> buffers;
      Operation *owner = takesOver.lookup(op);
      for (Request &r : requests)
        if (r.alloc == (owner ? owner : op)) {
          Value offset = arith::ConstantIndexOp::create(eb, ol, r.offset);
          Value view = memref::ViewOp::create(eb, ol, wgType, arena, offset,
                                              ValueRange{});
          buffers.push_back(
              memref::MemorySpaceCastOp::create(eb, ol, type, view));
        }
      Value replacement = buffers.front();
      if (auto it = carriedOf.find(op); it != carriedOf.end()) {
        OpBuilder ab(op);
        Value x = buffers[0], y = buffers[1];
        Value px =
            memref::ExtractAlignedPointerAsIndexOp::create(ab, ol, it->second);
        Value pxBuf = memref::ExtractAlignedPointerAsIndexOp::create(ab, ol, x);
        Value same =
            arith::CmpIOp::create(ab, ol, arith::CmpIPredicate::eq, px, pxBuf);
        replacement = arith::SelectOp::create(ab, ol, same, y, x);
      }
      op->getResult(0).replaceAllUsesWith(replacement);
      op->erase();
    }
    kernel->setAttr("tile.shared_bytes",
                    IntegerAttr::get(IntegerType::get(ctx, 64), shared));
    if (maxSharedBytes > 0 && shared > maxSharedBytes)
      return kernel.emitError()
             << "this configuration needs " << shared
             << " bytes of shared memory per block; the target allows "
             << static_cast<int64_t>(maxSharedBytes);
    // MLIR 22 lowers a workgroup-space memref.alloca inside a gpu.func to
    // thread-local memory without a word: every thread would get its own
    // "shared" buffer. Refuse it.
    WalkResult bad = kernel.walk([&](memref::AllocaOp a) {
      if (gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(a.getType())) {
        a.emitOpError("allocates workgroup memory on the stack; it would "
                      "silently become thread-local memory (use the "
                      "kernel's shared-memory arena)");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (bad.wasInterrupted())
      return failure();
    // Deallocations of the former heap buffers go away with them.
    SmallVector<memref::DeallocOp> deallocs;
    kernel.walk([&](memref::DeallocOp d) { deallocs.push_back(d); });
    for (auto d : deallocs)
      d.erase();
    return success();
  }
};

} // namespace
