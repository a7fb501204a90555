//===- WarpSpecialize.cpp - A producer warpgroup feeding TMA rings --------===//
//
// Splits a kernel that tessera-distribute-tiles lowered for warp
// specialisation into consumer warpgroups, which run the kernel, and a
// producer warpgroup, whose first thread issues the TMA copies of its rings
// (the ops marked `tile.producer`) from a slice of the kernel: what those
// copies need and nothing else. See the pass description in Passes.td.
//
// Upstream MLIR has no such transform for the nvgpu dialect: the slice, the
// split and the register counts (setmaxnreg) are written here.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_WARPSPECIALIZEPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

/// The named barrier the consumer warpgroups synchronise on (0 is the
/// whole block's).
constexpr int32_t kConsumerBarrier = 1;

/// The producer's part of the code after the split point: the ops marked
/// `tile.producer` and, closed under use, what they need.
class ProducerSlice {
public:
  ProducerSlice(Block &top, Operation *split) : top(top), split(split) {}

  /// Collects the slice from `roots`; fails (with an error on the op) when
  /// it would need an op with memory effects other than the per-thread
  /// ring state's loads and stores.
  LogicalResult collect(ArrayRef<Operation *> roots);

  /// Clones the slice of the ops in [begin, end) (of the code after the
  /// split, or nested in it) at `b`.
  void clone(Block::iterator begin, Block::iterator end, OpBuilder &b,
             IRMapping &map);

private:
  Block &top;
  Operation *split;
  llvm::SetVector<Operation *> kept;
  /// Per loop or conditional of the slice, the results (and loop-carried
  /// values) it needs, in order.
  DenseMap<Operation *, llvm::SmallSetVector<unsigned, 4>> carried;
  SmallVector<Value> values;
  SmallVector<Operation *> pending;
  bool failed = false;

  /// Whether `op` is in the code after the split point.
  bool after(Operation *op) const {
    Operation *a = top.findAncestorOpInBlock(*op);
    return a && split->isBeforeInBlock(a) && a != top.getTerminator();
  }
  void keep(Operation *op) {
    if (after(op) && kept.insert(op))
      pending.push_back(op);
  }
  void needIndex(Operation *op, unsigned i);
  void need(Value v);
  void visit(Operation *op);
  void cloneOp(Operation &op, OpBuilder &b, IRMapping &map);
};

void ProducerSlice::needIndex(Operation *op, unsigned i) {
  if (!carried[op].insert(i))
    return;
  if (auto f = dyn_cast<scf::ForOp>(op)) {
    values.push_back(f.getInitArgs()[i]);
    values.push_back(f.getBody()->getTerminator()->getOperand(i));
    return;
  }
  for (Region &r : op->getRegions())
    if (!r.empty())
      values.push_back(r.front().getTerminator()->getOperand(i));
}

void ProducerSlice::need(Value v) {
  if (auto r = dyn_cast<OpResult>(v)) {
    Operation *def = r.getOwner();
    if (!after(def))
      return;
    if (isa<scf::ForOp, scf::IfOp>(def))
      needIndex(def, r.getResultNumber());
    keep(def);
    return;
  }
  auto a = cast<BlockArgument>(v);
  Operation *owner = a.getOwner()->getParentOp();
  if (!after(owner))
    return;
  auto f = dyn_cast<scf::ForOp>(owner);
  if (!f) {
    owner->emitOpError("defines a value the producer warpgroup needs "
                       "through a block argument it cannot slice");
    failed = true;
    return;
  }
  if (a.getArgNumber() > 0)
    needIndex(f, a.getArgNumber() - 1);
  keep(f);
}

/// The alloca `op` loads from or stores to (per-thread state), if any.
static memref::AllocaOp allocaOf(Operation *op) {
  Value m;
  if (auto ld = dyn_cast<memref::LoadOp>(op))
    m = ld.getMemRef();
  else if (auto st = dyn_cast<memref::StoreOp>(op))
    m = st.getMemRef();
  return m ? m.getDefiningOp<memref::AllocaOp>() : memref::AllocaOp();
}

void ProducerSlice::visit(Operation *op) {
  // The loops and conditionals around it.
  for (Operation *p = op->getParentOp(); p && after(p); p = p->getParentOp())
    keep(p);
  if (auto f = dyn_cast<scf::ForOp>(op)) {
    need(f.getLowerBound());
    need(f.getUpperBound());
    need(f.getStep());
    return;
  }
  if (auto i = dyn_cast<scf::IfOp>(op)) {
    need(i.getCondition());
    return;
  }
  if (op->getNumRegions() ||
      (!op->hasAttr("tile.producer") && !allocaOf(op) &&
       !isa<memref::AllocaOp>(op) && !isMemoryEffectFree(op))) {
    op->emitOpError("is needed by the producer warpgroup of a warp-"
                    "specialised kernel, which runs only the ring's copies "
                    "and what addresses them");
    failed = true;
    return;
  }
  // A load of per-thread state needs every store to it.
  if (memref::AllocaOp a = allocaOf(op))
    for (Operation *user : a->getUsers())
      if (isa<memref::StoreOp>(user))
        keep(user);
  for (Value v : op->getOperands())
    need(v);
}

LogicalResult ProducerSlice::collect(ArrayRef<Operation *> roots) {
  for (Operation *r : roots)
    r->walk([&](Operation *op) { keep(op); });
  while (!pending.empty() || !values.empty()) {
    if (!values.empty()) {
      need(values.pop_back_val());
      continue;
    }
    visit(pending.pop_back_val());
  }
  return failure(failed);
}

void ProducerSlice::cloneOp(Operation &op, OpBuilder &b, IRMapping &map) {
  Location l = op.getLoc();
  SmallVector<unsigned> idx;
  if (auto it = carried.find(&op); it != carried.end())
    idx.assign(it->second.begin(), it->second.end());
  llvm::sort(idx);
  auto finish = [&](Block *from, Block *to) {
    if (!to->empty() && to->back().hasTrait<OpTrait::IsTerminator>())
      to->back().erase();
    OpBuilder bb = OpBuilder::atBlockEnd(to);
    clone(from->begin(), from->getTerminator()->getIterator(), bb, map);
    SmallVector<Value> yielded;
    for (unsigned i : idx)
      yielded.push_back(map.lookupOrDefault(from->getTerminator()->getOperand(i)));
    scf::YieldOp::create(bb, l, yielded);
  };
  if (auto f = dyn_cast<scf::ForOp>(op)) {
    SmallVector<Value> inits;
    for (unsigned i : idx)
      inits.push_back(map.lookupOrDefault(f.getInitArgs()[i]));
    auto nf = scf::ForOp::create(b, l, map.lookupOrDefault(f.getLowerBound()),
                                 map.lookupOrDefault(f.getUpperBound()),
                                 map.lookupOrDefault(f.getStep()), inits);
    nf.setUnsignedCmp(f.getUnsignedCmp());
    if (Attribute a = f->getAttr("llvm.loop_annotation"))
      nf->setAttr("llvm.loop_annotation", a);
    map.map(f.getInductionVar(), nf.getInductionVar());
    for (auto [k, i] : llvm::enumerate(idx)) {
      map.map(f.getRegionIterArgs()[i], nf.getRegionIterArgs()[k]);
      map.map(f.getResult(i), nf.getResult(k));
    }
    finish(f.getBody(), nf.getBody());
    return;
  }
  if (auto i = dyn_cast<scf::IfOp>(op)) {
    SmallVector<Type> types;
    for (unsigned k : idx)
      types.push_back(i.getResult(k).getType());
    bool withElse = !i.getElseRegion().empty();
    auto ni = scf::IfOp::create(b, l, types, map.lookupOrDefault(i.getCondition()),
                                withElse);
    finish(i.thenBlock(), ni.thenBlock());
    if (withElse)
      finish(i.elseBlock(), ni.elseBlock());
    for (auto [k, r] : llvm::enumerate(idx))
      map.map(i.getResult(r), ni.getResult(k));
    return;
  }
  b.clone(op, map)->removeAttr("tile.producer");
}

void ProducerSlice::clone(Block::iterator begin, Block::iterator end,
                          OpBuilder &b, IRMapping &map) {
  for (Operation &op : llvm::make_range(begin, end))
    if (kept.contains(&op))
      cloneOp(op, b, map);
}

LogicalResult specialise(gpu::GPUFuncOp kernel) {
  auto consumers = kernel->getAttrOfType<IntegerAttr>("tile.consumer_threads");
  kernel->removeAttr("tile.warp_specialize");
  if (!consumers)
    return success();
  kernel->removeAttr("tile.consumer_threads");
  int64_t c = consumers.getInt();
  if (c % 128 || !llvm::hasSingleElement(kernel.getBody()))
    return kernel.emitOpError("cannot be warp-specialised: its consumers are "
                              "not whole warpgroups or its body is not one "
                              "block");
  Block &top = kernel.getBody().front();
  Operation *split = nullptr;
  for (Operation &op : top)
    if (op.hasAttr("tile.ring_entry"))
      split = &op;
  if (!split)
    return kernel.emitOpError("is marked for warp specialisation but has no "
                              "barrier after its rings' initialisation "
                              "(tile.ring_entry)");
  split->removeAttr("tile.ring_entry");
  SmallVector<Operation *> roots;
  kernel.walk([&](Operation *op) {
    if (op->hasAttr("tile.producer"))
      roots.push_back(op);
  });
  ProducerSlice slice(top, split);
  if (failed(slice.collect(roots)))
    return failure();

  Location l = kernel.getLoc();
  MLIRContext *ctx = kernel.getContext();
  Operation *term = top.getTerminator();
  OpBuilder b(term);
  Value tid = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
  Value isConsumer = arith::CmpIOp::create(
      b, l, arith::CmpIPredicate::ult, tid,
      arith::ConstantIndexOp::create(b, l, c));
  auto roles = scf::IfOp::create(b, l, TypeRange{}, isConsumer,
                                 /*withElseRegion=*/true);

  // The producer: fewer registers for the whole warpgroup, then its first
  // thread runs the slice.
  OpBuilder pb(roles.elseBlock()->getTerminator());
  NVVM::SetMaxRegisterOp::create(pb, l, tessera::kProducerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  Value first = arith::CmpIOp::create(pb, l, arith::CmpIPredicate::eq, tid,
                                      arith::ConstantIndexOp::create(pb, l, c));
  auto lead = scf::IfOp::create(pb, l, TypeRange{}, first,
                                /*withElseRegion=*/false);
  OpBuilder sb(lead.thenBlock()->getTerminator());
  IRMapping map;
  slice.clone(std::next(split->getIterator()), roles->getIterator(), sb, map);

  // The consumers: the kernel without the producer's ops.
  Block *consumer = roles.thenBlock();
  SmallVector<Operation *> moved;
  for (Operation *op = split->getNextNode(); op != tid.getDefiningOp();
       op = op->getNextNode())
    moved.push_back(op);
  for (Operation *op : moved)
    op->moveBefore(consumer->getTerminator());
  OpBuilder cb = OpBuilder::atBlockBegin(consumer);
  NVVM::SetMaxRegisterOp::create(cb, l, tessera::consumerRegisters(c / 32),
                                 NVVM::SetMaxRegisterAction::increase);
  // Marked ops nested in marked ops go with them.
  SmallVector<Operation *> outermost;
  consumer->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!op->hasAttr("tile.producer"))
      return WalkResult::advance();
    outermost.push_back(op);
    return WalkResult::skip();
  });
  for (Operation *op : outermost)
    op->erase();
  SmallVector<gpu::BarrierOp> barriers;
  consumer->walk([&](gpu::BarrierOp op) { barriers.push_back(op); });
  for (gpu::BarrierOp op : barriers) {
    OpBuilder nb(op);
    Type i32 = nb.getI32Type();
    NVVM::BarrierOp::create(
        nb, op.getLoc(), TypeRange{},
        arith::ConstantIntOp::create(nb, op.getLoc(), i32, kConsumerBarrier),
        arith::ConstantIntOp::create(nb, op.getLoc(), i32, c),
        /*reductionOp=*/{}, Value());
    op.erase();
  }
  kernel.setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {int32_t(c + 128), 1, 1}));
  kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  IntegerAttr::get(IntegerType::get(ctx, 32), 1));
  return success();
}

struct WarpSpecializePass
    : mlir::tessera::impl::WarpSpecializePassBase<WarpSpecializePass> {
  void runOnOperation() override {
    SmallVector<gpu::GPUFuncOp> kernels;
    getOperation()->walk([&](gpu::GPUFuncOp f) {
      if (f->hasAttr("tile.warp_specialize"))
        kernels.push_back(f);
    });
    for (gpu::GPUFuncOp f : kernels)
      if (failed(specialise(f)))
        return signalPassFailure();
  }
};

} // namespace
