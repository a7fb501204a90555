//===- GPUToHost.cpp - GPU kernels as per-thread host functions -----------===//
//
// The `sim` device runs the GPU lowering on the CPU: each GPU thread is a
// fiber executing the host function this pass produces (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "ConversionUtils.h"
#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/IntEqClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_GPUTOHOSTPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

constexpr const char *kBarrierFn = "tessera_sim_barrier";
constexpr const char *kNamedBarrierFn = "tessera_sim_named_barrier";
constexpr const char *kNamedBarrierArriveFn =
    "tessera_sim_named_barrier_arrive";

constexpr const char *kFaultFn = "tessera_sim_fault";
constexpr const char *kShuffleFn = "tessera_sim_shuffle";
constexpr const char *kAccessFn = "tessera_sim_access";
/// The access hook of code compiled with counters: checks, then counts.
constexpr const char *kCountedAccessFn = "tessera_sim_access_counted";
constexpr const char *kLdMatrixFn = "tessera_sim_ldmatrix";
constexpr const char *kMmaFn = "tessera_sim_mma";
constexpr const char *kWgmmaFn = "tessera_sim_wgmma";
constexpr const char *kWgmmaFenceFn = "tessera_sim_wgmma_fence";
constexpr const char *kWgmmaCommitFn = "tessera_sim_wgmma_commit";
constexpr const char *kWgmmaWaitFn = "tessera_sim_wgmma_wait";
constexpr const char *kWgmmaReadFn = "tessera_sim_wgmma_read";
constexpr const char *kMbarrierCreateFn = "tessera_sim_mbarrier_create";
constexpr const char *kMbarrierInitFn = "tessera_sim_mbarrier_init";
constexpr const char *kMbarrierArriveFn = "tessera_sim_mbarrier_arrive";
constexpr const char *kMbarrierTestWaitFn = "tessera_sim_mbarrier_test_wait";
constexpr const char *kMbarrierWaitParityFn =
    "tessera_sim_mbarrier_wait_parity";
constexpr const char *kTmaLoadFn = "tessera_sim_tma_load";
constexpr const char *kCpAsyncFn = "tessera_sim_cp_async";
constexpr const char *kCpAsyncCommitFn = "tessera_sim_cp_async_commit";
constexpr const char *kCpAsyncWaitFn = "tessera_sim_cp_async_wait";
constexpr const char *kBranchFn = "tessera_sim_branch";

func::FuncOp declare(ModuleOp module, StringRef name, FunctionType type) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name, type);
  f.setPrivate();
  return f;
}

/// An i64 constant before `ob`'s insertion point.
Value i64Constant(OpBuilder &ob, Location l, int64_t v) {
  return arith::ConstantIntOp::create(ob, l, ob.getI64Type(), v);
}

/// A call of simulator entry point `name` with the thread's context and
/// the i64 values `args`, before `ob`'s insertion point: its i64 result
/// when `returns`.
Value callSimWith(ModuleOp module, OpBuilder &ob, Location l, StringRef name,
                  Value simCtx, ValueRange args, bool returns = false) {
  Type i64 = ob.getI64Type();
  SmallVector<Type> types(args.size() + 1, i64);
  SmallVector<Value> operands{simCtx};
  operands.append(args.begin(), args.end());
  auto call = func::CallOp::create(
      ob, l,
      declare(
          module, name,
          ob.getFunctionType(types, returns ? TypeRange{i64} : TypeRange{})),
      operands);
  return returns ? call.getResult(0) : Value();
}

/// The same with the i64 constants `args`.
void callSim(ModuleOp module, OpBuilder &ob, Location l, StringRef name,
             Value simCtx, ArrayRef<int64_t> args = {}) {
  SmallVector<Value> values;
  for (int64_t a : args)
    values.push_back(i64Constant(ob, l, a));
  callSimWith(module, ob, l, name, simCtx, values);
}

std::string describe(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName() << " at " << op->getLoc();
  return s;
}

/// A stack slot for a warp-collective operand or result (allocated once at
/// function entry, so that loops do not grow the fiber's stack), and its
/// address as an i64.
struct Slot {
  Value buffer;
  Value address;
};

Slot makeSlot(OpBuilder &entryBuilder, OpBuilder &b, Location l,
              VectorType type) {
  auto memType =
      MemRefType::get({type.getNumElements()}, type.getElementType());
  Value buf = memref::AllocaOp::create(entryBuilder, l, memType);
  Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, l, buf);
  return {buf, arith::IndexCastOp::create(b, l, b.getI64Type(), ptr)};
}

/// Stores `v` into `slot` (flattened).
void storeSlot(OpBuilder &b, Location l, Value v, const Slot &slot) {
  auto t = cast<VectorType>(v.getType());
  auto flat = VectorType::get({t.getNumElements()}, t.getElementType());
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  vector::StoreOp::create(b, l, vector::ShapeCastOp::create(b, l, flat, v),
                          slot.buffer, ValueRange{zero});
}

/// Loads a value of `type` from `slot`.
Value loadSlot(OpBuilder &b, Location l, VectorType type, const Slot &slot) {
  auto flat = VectorType::get({type.getNumElements()}, type.getElementType());
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value v = vector::LoadOp::create(b, l, flat, slot.buffer, ValueRange{zero});
  return vector::ShapeCastOp::create(b, l, type, v);
}

/// The simulator's checker entry points, declared once per module.
struct CheckHooks {
  func::FuncOp fault, access;
};

/// Whether `extent` consecutive elements from memref[indices] along the
/// innermost dimension are all in bounds.
Value inBounds(OpBuilder &b, Location l, Value memref, ValueRange indices,
               int64_t extent) {
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value ok = arith::ConstantIntOp::create(b, l, b.getI1Type(), 1);
  for (auto [d, ix] : llvm::enumerate(indices)) {
    Value dim = memref::DimOp::create(b, l, memref, d);
    Value ge = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, ix, zero);
    Value last = ix;
    if (d + 1 == indices.size() && extent > 1)
      last = arith::AddIOp::create(
          b, l, ix, arith::ConstantIndexOp::create(b, l, extent - 1));
    Value lt =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, last, dim);
    ok = arith::AndIOp::create(b, l, ok, arith::AndIOp::create(b, l, ge, lt));
  }
  return ok;
}

/// The address of a read of `bytes` at memref[indices] for a warp
/// collective: reported to the checkers when in bounds, else reported as a
/// fault and replaced by 0 (the simulator then delivers zeros).
Value guardedAddress(const CheckHooks &hooks, OpBuilder &b, Location l,
                     Value memref, ValueRange indices, int64_t extent,
                     int64_t bytes, Value simCtx, int64_t site,
                     int64_t kind = 0) {
  Type i64 = b.getI64Type();
  Value siteV = arith::ConstantIntOp::create(b, l, i64, site);
  auto ifOp = scf::IfOp::create(
      b, l, inBounds(b, l, memref, indices, extent),
      [&](OpBuilder &tb, Location) {
        Value addr = tessera::byteAddress(tb, l, memref, indices);
        func::CallOp::create(
            tb, l, hooks.access,
            ValueRange{simCtx, addr,
                       arith::ConstantIntOp::create(tb, l, i64, bytes),
                       arith::ConstantIntOp::create(tb, l, i64, kind), siteV});
        scf::YieldOp::create(
            tb, l, ValueRange{arith::IndexCastOp::create(tb, l, i64, addr)});
      },
      [&](OpBuilder &eb, Location) {
        func::CallOp::create(
            eb, l, hooks.fault,
            ValueRange{simCtx, siteV,
                       arith::ConstantIntOp::create(eb, l, i64, 0)});
        scf::YieldOp::create(
            eb, l, ValueRange{arith::ConstantIntOp::create(eb, l, i64, 0)});
      });
  return ifOp.getResult(0);
}

/// Bounds check and access report around one memory access of `extent`
/// consecutive elements along the innermost dimension from `indices`. A
/// vector access that promises `align` bytes of alignment (what the GPU
/// code relies on: ld.global.v4 faults on a misaligned address) is also
/// checked for it.
void instrument(const CheckHooks &hooks, Operation *op, Value memref,
                ValueRange indices, int kind, Value simCtx, int64_t site,
                int64_t extent = 1, int64_t align = 0) {
  OpBuilder b(op);
  Location l = op->getLoc();
  Type i64 = b.getI64Type();
  auto type = cast<MemRefType>(memref.getType());
  Value inside = inBounds(b, l, memref, indices, extent);
  Value ok = inside;
  // The address, when the alignment test needs it before the access (it is
  // plain arithmetic: computing it for an out-of-bounds index is harmless).
  Value early;
  if (align > 1) {
    early = tessera::byteAddress(b, l, memref, indices);
    Value r = arith::RemUIOp::create(
        b, l, early, arith::ConstantIndexOp::create(b, l, align));
    Value aligned =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, r,
                              arith::ConstantIndexOp::create(b, l, 0));
    ok = arith::AndIOp::create(b, l, ok, aligned);
  }
  Value siteV = arith::ConstantIntOp::create(b, l, i64, site);
  int64_t bytes =
      std::max<int64_t>(1, type.getElementTypeBitWidth() / 8) * extent;
  auto ifOp = scf::IfOp::create(
      b, l, ok,
      [&](OpBuilder &tb, Location) {
        Value addr =
            early ? early : tessera::byteAddress(tb, l, memref, indices);
        func::CallOp::create(
            tb, l, hooks.access,
            ValueRange{simCtx, addr,
                       arith::ConstantIntOp::create(tb, l, i64, bytes),
                       arith::ConstantIntOp::create(tb, l, i64, kind), siteV});
        Operation *moved = op->clone();
        tb.insert(moved);
        scf::YieldOp::create(tb, l, moved->getResults());
      },
      [&](OpBuilder &eb, Location) {
        // Reason: 0 out of bounds, 1 misaligned.
        Value reason = arith::SelectOp::create(
            eb, l, inside, arith::ConstantIntOp::create(eb, l, i64, 1),
            arith::ConstantIntOp::create(eb, l, i64, 0));
        func::CallOp::create(eb, l, hooks.fault,
                             ValueRange{simCtx, siteV, reason});
        SmallVector<Value> results;
        for (Type t : op->getResultTypes())
          results.push_back(arith::ConstantOp::create(
              eb, l, cast<TypedAttr>(eb.getZeroAttr(t))));
        scf::YieldOp::create(eb, l, results);
      });
  op->replaceAllUsesWith(ifOp.getResults());
  op->erase();
}

/// The wgmma.mma_async with A from registers, inline PTX the GPU lowering
/// marks with `tile.wgmma` (its operands: A's 4 words, B's descriptor, the
/// accumulators).
constexpr int64_t kRegisterWgmmaAccumulators = 5;
bool isRegisterWgmma(Operation *op) {
  return isa<LLVM::InlineAsmOp>(op) && op->hasAttr("tile.wgmma");
}
bool isWgmma(Operation *op) {
  return isa<NVVM::WgmmaMmaAsyncOp>(op) || isRegisterWgmma(op);
}
/// Whether `use` passes accumulators to a wgmma.mma_async.
bool isWgmmaAccumulator(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto wg = dyn_cast<NVVM::WgmmaMmaAsyncOp>(user))
    return use.get() == wg.getInouts();
  return isRegisterWgmma(user) &&
         use.getOperandNumber() >= kRegisterWgmmaAccumulators;
}

/// Where a kernel's wgmma.mma_async accumulators are read. An accumulator
/// is carried, not read, by the ops that move values unchanged (struct and
/// vector element moves, loop and branch yields) and by the next
/// wgmma.mma_async on it, which joins it to that product's chain; every
/// other user reads it, and must follow the wgmma.wait_group that retires
/// the products of the chains it reads.
struct WgmmaReads {
  /// Per wgmma.mma_async, its chain (dense ids from 0).
  DenseMap<Operation *, int64_t> chainOf;
  /// The readers and the chains each reads.
  SmallVector<std::pair<Operation *, SmallVector<int64_t>>> readers;
};

WgmmaReads wgmmaReads(Region &body) {
  SmallVector<Operation *> products;
  body.walk([&](Operation *op) {
    if (isWgmma(op))
      products.push_back(op);
  });
  WgmmaReads out;
  if (products.empty())
    return out;
  DenseMap<Operation *, unsigned> index;
  for (auto [i, op] : llvm::enumerate(products))
    index[op] = i;
  unsigned n = products.size();
  // Per value, the products it may hold.
  DenseMap<Value, llvm::BitVector> holds;
  SmallVector<Value> work;
  auto carry = [&](Value v, const llvm::BitVector &bits) {
    llvm::BitVector &h = holds[v];
    h.resize(n);
    llvm::BitVector before = h;
    h |= bits;
    if (h != before)
      work.push_back(v);
  };
  llvm::IntEqClasses chains(n);
  llvm::MapVector<Operation *, llvm::BitVector> readBits;
  for (Operation *op : products) {
    llvm::BitVector own(n);
    own.set(index[op]);
    carry(op->getResult(0), own);
  }
  while (!work.empty()) {
    Value v = work.pop_back_val();
    llvm::BitVector bits = holds[v];
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isWgmmaAccumulator(use)) {
        for (unsigned b : bits.set_bits())
          chains.join(b, index[user]);
        continue;
      }
      if (isa<LLVM::ExtractValueOp, LLVM::InsertValueOp, vector::FromElementsOp,
              vector::ExtractOp, vector::InsertOp, vector::BroadcastOp,
              vector::ShuffleOp, UnrealizedConversionCastOp>(user)) {
        for (Value r : user->getResults())
          carry(r, bits);
        continue;
      }
      unsigned i = use.getOperandNumber();
      if (isa<scf::YieldOp>(user)) {
        Operation *parent = user->getParentOp();
        if (auto loop = dyn_cast<scf::ForOp>(parent)) {
          carry(loop.getRegionIterArgs()[i], bits);
          carry(loop.getResult(i), bits);
          continue;
        }
        if (isa<scf::IfOp>(parent)) {
          carry(parent->getResult(i), bits);
          continue;
        }
      }
      if (auto loop = dyn_cast<scf::ForOp>(user);
          loop && i >= loop.getNumControlOperands()) {
        unsigned arg = i - loop.getNumControlOperands();
        carry(loop.getRegionIterArgs()[arg], bits);
        carry(loop.getResult(arg), bits);
        continue;
      }
      llvm::BitVector &r = readBits[user];
      r.resize(n);
      r |= bits;
    }
  }
  chains.compress();
  for (Operation *op : products)
    out.chainOf[op] = chains[index[op]];
  for (auto &[op, bits] : readBits) {
    SmallVector<int64_t> read;
    for (unsigned b : bits.set_bits())
      read.push_back(chains[b]);
    llvm::sort(read);
    read.erase(std::unique(read.begin(), read.end()), read.end());
    out.readers.push_back({op, std::move(read)});
  }
  return out;
}

/// The conditional branches of a kernel body (before any instrumentation
/// adds its own): scf.if, cf.cond_br, scf.while, and scf.for loops whose
/// bounds are not all constants (a loop of a constant trip count takes the
/// same path in every lane).
SmallVector<Operation *> kernelBranches(Region &body) {
  SmallVector<Operation *> out;
  body.walk([&](Operation *op) {
    if (isa<scf::IfOp, cf::CondBranchOp, scf::WhileOp>(op)) {
      out.push_back(op);
    } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
      bool constant = getConstantIntValue(loop.getLowerBound()) &&
                      getConstantIntValue(loop.getUpperBound()) &&
                      getConstantIntValue(loop.getStep());
      if (!constant)
        out.push_back(op);
    }
  });
  return out;
}

/// Reports the branch `op` (site `site`) to the simulator's counters: the
/// direction each lane takes, just before it takes it (see Passes.td).
void reportBranch(func::FuncOp hook, Operation *op, Value simCtx,
                  int64_t site) {
  auto call = [&](OpBuilder &b, Location l, Value taken) {
    Type i64 = b.getI64Type();
    Value t = taken.getType().isInteger(1)
                  ? arith::ExtUIOp::create(b, l, i64, taken).getResult()
                  : taken;
    func::CallOp::create(
        b, l, hook,
        ValueRange{simCtx, arith::ConstantIntOp::create(b, l, i64, site), t});
  };
  Location l = op->getLoc();
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    // Each iteration starts after an exit test that continued; the test
    // that ends the loop follows the last iteration.
    OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
    call(b, l, arith::ConstantIntOp::create(b, l, b.getI64Type(), 1));
    b.setInsertionPointAfter(loop);
    call(b, l, arith::ConstantIntOp::create(b, l, b.getI64Type(), 0));
    return;
  }
  if (auto loop = dyn_cast<scf::WhileOp>(op)) {
    scf::ConditionOp cond = loop.getConditionOp();
    OpBuilder b(cond);
    call(b, l, cond.getCondition());
    return;
  }
  OpBuilder b(op);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    call(b, l, ifOp.getCondition());
  else if (auto br = dyn_cast<cf::CondBranchOp>(op))
    call(b, l, br.getCondition());
}

struct GPUToHostPass : mlir::tessera::impl::GPUToHostPassBase<GPUToHostPass> {
  using GPUToHostPassBase::GPUToHostPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gm : gpuModules) {
      // Globals first (kernels refer to them by name).
      for (Operation &op :
           llvm::make_early_inc_range(gm.getBody()->getOperations()))
        if (auto g = dyn_cast<memref::GlobalOp>(op))
          if (!module.lookupSymbol(g.getSymName()))
            op.moveBefore(module.getBody(), module.getBody()->end());
      SmallVector<gpu::GPUFuncOp> kernels(gm.getOps<gpu::GPUFuncOp>());
      for (gpu::GPUFuncOp k : kernels)
        if (failed(convert(module, k)))
          return signalPassFailure();
      gm.erase();
    }
  }

  func::FuncOp barrierDecl(ModuleOp module) {
    if (auto f = module.lookupSymbol<func::FuncOp>(kBarrierFn))
      return f;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto f = func::FuncOp::create(
        b, module.getLoc(), kBarrierFn,
        b.getFunctionType({b.getI64Type(), b.getI64Type()}, {}));
    f.setPrivate();
    return f;
  }

  LogicalResult convert(ModuleOp module, gpu::GPUFuncOp k) {
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Type index = b.getIndexType();
    SmallVector<Type> types(k.getArgumentTypes());
    SmallVector<MemRefType> shared;
    for (BlockArgument a : k.getWorkgroupAttributions()) {
      auto t = cast<MemRefType>(a.getType());
      shared.push_back(MemRefType::get(t.getShape(), t.getElementType()));
    }
    if (!k.getPrivateAttributions().empty())
      return k.emitOpError("private attributions are not supported by sim");
    types.append(shared.begin(), shared.end());
    // The dynamic shared memory arena, if the kernel uses one.
    SmallVector<gpu::DynamicSharedMemoryOp> arenas;
    k.walk([&](gpu::DynamicSharedMemoryOp op) { arenas.push_back(op); });
    auto arenaType =
        MemRefType::get({ShapedType::kDynamic}, b.getIntegerType(8));
    // Always present (the simulator's calling convention does not depend on
    // whether the kernel, after clean-ups, still uses shared memory).
    types.push_back(arenaType);
    for (int i = 0; i < 7; ++i)
      types.push_back(index);
    types.push_back(b.getI64Type());

    b.setInsertionPointToEnd(module.getBody());
    auto f = func::FuncOp::create(b, k.getLoc(), (k.getName() + "_sim").str(),
                                  b.getFunctionType(types, {}));
    for (StringRef a :
         {"tile.num_warps", "tile.num_stages", "tile.shared_bytes"})
      if (Attribute v = k->getAttr(a))
        f->setAttr(a, v);
    int64_t blockSize = 1;
    if (auto known = k.getKnownBlockSizeAttr())
      blockSize = known[0];
    f->setAttr("tile.block_size", b.getI64IntegerAttr(blockSize));

    // Move the body; the entry block gets the new arguments.
    Region &body = f.getBody();
    body.takeBody(k.getBody());
    Block &entry = body.front();
    unsigned nArgs = k.getNumArguments();
    unsigned nShared = shared.size();
    // Entry block arguments: [kernel args][workgroup][private] -> retype
    // the workgroup ones, then append the ids and the context.
    for (unsigned i = 0; i < nShared; ++i)
      entry.getArgument(nArgs + i).setType(shared[i]);
    BlockArgument arena = entry.addArgument(arenaType, k.getLoc());
    {
      for (gpu::DynamicSharedMemoryOp op : arenas) {
        // Views of the arena lose the workgroup address space with it.
        for (Operation *user : llvm::make_early_inc_range(op->getUsers())) {
          auto view = dyn_cast<memref::ViewOp>(user);
          if (!view)
            return user->emitOpError(
                "uses dynamic shared memory in a way sim does not support");
          auto t = view.getType();
          OpBuilder vb(view);
          auto nv = memref::ViewOp::create(
              vb, view.getLoc(),
              MemRefType::get(t.getShape(), t.getElementType()), arena,
              view.getByteShift(), view.getSizes());
          for (OpOperand &use : llvm::make_early_inc_range(view->getUses())) {
            Operation *owner = use.getOwner();
            if (auto cast = dyn_cast<memref::MemorySpaceCastOp>(owner)) {
              if (cast.getType() != nv.getType())
                return owner->emitOpError(
                    "uses a shared view in a way sim does not support");
              cast.replaceAllUsesWith(nv.getResult());
              cast.erase();
            } else if (auto sv = dyn_cast<memref::SubViewOp>(owner)) {
              // A view of the tile in the (former) workgroup space.
              OpBuilder sb(sv);
              auto nsv = memref::SubViewOp::create(
                  sb, sv.getLoc(), nv.getResult(), sv.getMixedOffsets(),
                  sv.getMixedSizes(), sv.getMixedStrides());
              sv.replaceAllUsesWith(nsv.getResult());
              sv.erase();
            } else if (auto cs = dyn_cast<memref::CollapseShapeOp>(owner)) {
              // A reshaped tile (e.g. [1, 1, M, D] read as M x D).
              OpBuilder cb(cs);
              auto ncs = memref::CollapseShapeOp::create(
                  cb, cs.getLoc(), nv.getResult(),
                  cs.getReassociationIndices());
              cs.replaceAllUsesWith(ncs.getResult());
              cs.erase();
            } else if (isa<vector::LoadOp, vector::StoreOp,
                           vector::TransferReadOp, vector::TransferWriteOp,
                           nvgpu::LdMatrixOp, nvgpu::DeviceAsyncCopyOp,
                           nvgpu::TmaAsyncLoadOp, memref::LoadOp,
                           memref::StoreOp, memref::AtomicRMWOp,
                           memref::ExtractAlignedPointerAsIndexOp>(owner)) {
              // Accesses whose result types do not depend on the memref's
              // address space read the view directly.
              use.set(nv.getResult());
            } else {
              return owner->emitOpError(
                  "uses a shared view in a way sim does not support");
            }
          }
          view.erase();
        }
        op.erase();
      }
    }
    SmallVector<BlockArgument> extra;
    for (int i = 0; i < 7; ++i)
      extra.push_back(entry.addArgument(index, k.getLoc()));
    BlockArgument simCtx = entry.addArgument(b.getI64Type(), k.getLoc());
    Value tid = extra[0];
    Value bid[3] = {extra[1], extra[2], extra[3]};
    Value grid[3] = {extra[4], extra[5], extra[6]};

    func::FuncOp barrier = barrierDecl(module);
    OpBuilder entryBuilder = OpBuilder::atBlockBegin(&entry);
    Type i64 = b.getI64Type();
    // The counters need every access reported, as the checkers do.
    const bool report = checks || counters;
    // The kernel's own branches, before the lowering below adds its own.
    SmallVector<Operation *> branches;
    if (counters)
      branches = kernelBranches(body);
    CheckHooks hooks;
    if (report)
      hooks = {
          declare(module, kFaultFn, b.getFunctionType({i64, i64, i64}, {})),
          declare(
              module, counters ? kCountedAccessFn : kAccessFn,
              b.getFunctionType({i64, b.getIndexType(), i64, i64, i64}, {}))};
    // Site table shared by barriers and (with checks) memory accesses.
    SmallVector<Attribute> sites;
    auto newSite = [&](Operation *op) -> int64_t {
      sites.push_back(b.getStringAttr(describe(op)));
      return int64_t(sites.size()) - 1;
    };
    auto siteValue = i64Constant;
    auto laneOf = [&](OpBuilder &ob, Location l) -> Value {
      return arith::RemUIOp::create(ob, l, tid,
                                    arith::ConstantIndexOp::create(ob, l, 32));
    };
    // The address a warp collective or async copy passes for `extent`
    // elements at memref[indices]: checked and reported when the checkers
    // are on (0 when out of bounds), plain otherwise.
    auto collectiveAddress = [&](OpBuilder &ob, Location l, Value memref,
                                 ValueRange indices, int64_t extent,
                                 int64_t site, int64_t kind) -> Value {
      int64_t bytes =
          extent * cast<MemRefType>(memref.getType()).getElementTypeBitWidth() /
          8;
      if (report)
        return guardedAddress(hooks, ob, l, memref, indices, extent, bytes,
                              simCtx, site, kind);
      return arith::IndexCastOp::create(
          ob, l, ob.getI64Type(), tessera::byteAddress(ob, l, memref, indices));
    };
    // Accumulator reads are checked against the reader's wgmma.wait_group.
    WgmmaReads accumulators = wgmmaReads(body);
    for (auto &[reader, chains] : accumulators.readers) {
      OpBuilder rb(reader);
      int64_t site = newSite(reader);
      for (int64_t chain : chains)
        callSim(module, rb, reader->getLoc(), kWgmmaReadFn, simCtx,
                {chain, site});
    }
    // mbarriers: a group is the i64 number of its first barrier in the
    // block's table, a token the phase its arrival counted in.
    DenseMap<Value, Value> mbarrierValues;
    // Tensor maps: the i64 address of each descriptor's SimTensorMap.
    DenseMap<Value, Value> tensorMaps;
    auto simCall = [&](OpBuilder &ob, Location l, StringRef name,
                       ValueRange args, bool returns) -> Value {
      return callSimWith(module, ob, l, name, simCtx, args, returns);
    };
    auto asI64 = [](OpBuilder &ob, Location l, Value v) -> Value {
      if (v.getType().isIndex())
        return arith::IndexCastOp::create(ob, l, ob.getI64Type(), v);
      return arith::ExtUIOp::create(ob, l, ob.getI64Type(), v);
    };
    auto barrierId = [&](OpBuilder &ob, Location l, Value group,
                         Value index) -> Value {
      return arith::AddIOp::create(ob, l, mbarrierValues.lookup(group),
                                   asI64(ob, l, index));
    };
    auto predicateOf = [&](OpBuilder &ob, Location l, Value pred) -> Value {
      return pred ? asI64(ob, l, pred) : i64Constant(ob, l, 1);
    };
    // One wgmma.mma_async, a warpgroup collective: this thread's
    // accumulators `accIn` (none with scale-d 0: ignored, perhaps poison)
    // go through a slot the simulator updates with D, returned as the
    // struct `st`. `config` packs the instruction as tessera_sim_wgmma
    // reads it (runtime/lib/Sim/FiberScheduler.h), less its chain.
    auto simWgmma = [&](OpBuilder &ob, Operation *op,
                        LLVM::LLVMStructType st, ValueRange accIn,
                        int64_t config, Value descA, Value descB) -> Value {
      Location l = op->getLoc();
      int64_t fields = st.getBody().size();
      auto accType = VectorType::get({fields}, ob.getF32Type());
      Slot acc = makeSlot(entryBuilder, ob, l, accType);
      if (!accIn.empty())
        storeSlot(ob, l, vector::FromElementsOp::create(ob, l, accType, accIn),
                  acc);
      simCall(ob, l, kWgmmaFn,
              {i64Constant(ob, l,
                           config | accumulators.chainOf.lookup(op) << 16),
               descA, descB, acc.address, siteValue(ob, l, newSite(op))},
              /*returns=*/false);
      Value d = loadSlot(ob, l, accType, acc);
      Value result = LLVM::PoisonOp::create(ob, l, st);
      for (int64_t i = 0; i < fields; ++i)
        result = LLVM::InsertValueOp::create(
            ob, l, result, vector::ExtractOp::create(ob, l, d, i), i);
      return result;
    };
    SmallVector<Operation *> toErase;
    WalkResult r = f.walk([&](Operation *op) -> WalkResult {
      OpBuilder ob(op);
      Location l = op->getLoc();
      auto dimIndex = [](gpu::Dimension d) { return static_cast<int>(d); };
      if (auto t = dyn_cast<gpu::ThreadIdOp>(op)) {
        Value v = t.getDimension() == gpu::Dimension::x
                      ? tid
                      : arith::ConstantIndexOp::create(ob, l, 0).getResult();
        t.replaceAllUsesWith(v);
        toErase.push_back(op);
      } else if (auto bi = dyn_cast<gpu::BlockIdOp>(op)) {
        bi.replaceAllUsesWith(bid[dimIndex(bi.getDimension())]);
        toErase.push_back(op);
      } else if (auto g = dyn_cast<gpu::GridDimOp>(op)) {
        g.replaceAllUsesWith(grid[dimIndex(g.getDimension())]);
        toErase.push_back(op);
      } else if (auto bd = dyn_cast<gpu::BlockDimOp>(op)) {
        int64_t n = bd.getDimension() == gpu::Dimension::x ? blockSize : 1;
        bd.replaceAllUsesWith(
            arith::ConstantIndexOp::create(ob, l, n).getResult());
        toErase.push_back(op);
      } else if (isa<gpu::BarrierOp>(op)) {
        Value site = siteValue(ob, l, newSite(op));
        func::CallOp::create(ob, l, barrier, ValueRange{simCtx, site});
        toErase.push_back(op);
      } else if (auto nb = dyn_cast<NVVM::BarrierOp>(op)) {
        // bar.sync id, count (a warp-specialised kernel's consumers).
        if (nb.getReductionOp() || nb.getRes())
          return op->emitOpError("sim supports barriers without reduction");
        simCall(ob, l, kNamedBarrierFn,
                {nb.getBarrierId() ? asI64(ob, l, nb.getBarrierId())
                                   : i64Constant(ob, l, 0),
                 nb.getNumberOfThreads() ? asI64(ob, l, nb.getNumberOfThreads())
                                         : i64Constant(ob, l, 0),
                 siteValue(ob, l, newSite(op))},
                /*returns=*/false);
        toErase.push_back(op);
      } else if (auto na = dyn_cast<NVVM::BarrierArriveOp>(op)) {
        // bar.arrive id, count (the turns of ping-pong warpgroups).
        simCall(ob, l, kNamedBarrierArriveFn,
                {na.getBarrierId() ? asI64(ob, l, na.getBarrierId())
                                   : i64Constant(ob, l, 0),
                 asI64(ob, l, na.getNumberOfThreads()),
                 siteValue(ob, l, newSite(op))},
                /*returns=*/false);
        toErase.push_back(op);
      } else if (isa<NVVM::SetMaxRegisterOp>(op)) {
        // The sim's threads have no register file to share.
        toErase.push_back(op);
      } else if (auto sh = dyn_cast<gpu::ShuffleOp>(op)) {
        // A warp collective: the simulator exchanges the 32-bit values of
        // the warp's lanes and returns (valid << 32) | value.
        Type t = sh.getValue().getType();
        if (t.getIntOrFloatBitWidth() != 32)
          return op->emitOpError("sim supports 32-bit shuffles only");
        Type i32 = ob.getI32Type(), i64 = ob.getI64Type();
        Value bits = sh.getValue();
        if (!t.isInteger())
          bits = arith::BitcastOp::create(ob, l, i32, bits);
        bits = arith::ExtUIOp::create(ob, l, i64, bits);
        Value off = arith::ExtUIOp::create(ob, l, i64, sh.getOffset());
        Value width = arith::ExtUIOp::create(ob, l, i64, sh.getWidth());
        Value mode = arith::ConstantIntOp::create(
            ob, l, i64, static_cast<int64_t>(sh.getMode()));
        Value site = siteValue(ob, l, newSite(op));
        func::FuncOp fn =
            declare(module, kShuffleFn,
                    ob.getFunctionType({i64, i64, i64, i64, i64, i64}, {i64}));
        Value r =
            func::CallOp::create(
                ob, l, fn, ValueRange{simCtx, bits, off, width, mode, site})
                .getResult(0);
        Value v = arith::TruncIOp::create(ob, l, i32, r);
        if (!t.isInteger())
          v = arith::BitcastOp::create(ob, l, t, v);
        Value valid = arith::TruncIOp::create(
            ob, l, ob.getI1Type(),
            arith::ShRUIOp::create(
                ob, l, r, arith::ConstantIntOp::create(ob, l, i64, 32)));
        sh.getResult(0).replaceAllUsesWith(v);
        sh.getResult(1).replaceAllUsesWith(valid);
        toErase.push_back(op);
      } else if (isa<gpu::LaneIdOp>(op)) {
        op->getResult(0).replaceAllUsesWith(laneOf(ob, l));
        toErase.push_back(op);
      } else if (auto ld = dyn_cast<nvgpu::LdMatrixOp>(op)) {
        // Every lane passes the address of its row; the simulator hands
        // out the fragments once the whole warp has arrived.
        Type i64 = ob.getI64Type();
        auto resType = cast<VectorType>(ld.getType());
        Slot out = makeSlot(entryBuilder, ob, l, resType);
        int64_t siteId = newSite(op);
        Value site = siteValue(ob, l, siteId);
        // Each lane reads one 16-byte row; only lanes 0 .. 8*tiles-1
        // supply rows (the others' addresses are ignored, and not checked).
        int64_t rowElems = 128 / cast<MemRefType>(ld.getSrcMemref().getType())
                                     .getElementTypeBitWidth();
        Value supplies = arith::CmpIOp::create(
            ob, l, arith::CmpIPredicate::ult, laneOf(ob, l),
            arith::ConstantIndexOp::create(ob, l, 8 * ld.getNumTiles()));
        Value addr =
            scf::IfOp::create(
                ob, l, supplies,
                [&](OpBuilder &tb, Location) {
                  scf::YieldOp::create(
                      tb, l,
                      ValueRange{collectiveAddress(tb, l, ld.getSrcMemref(),
                                                   ld.getIndices(), rowElems,
                                                   siteId, /*kind=*/0)});
                },
                [&](OpBuilder &eb, Location) {
                  scf::YieldOp::create(
                      eb, l,
                      ValueRange{arith::ConstantIntOp::create(eb, l, i64, 0)});
                })
                .getResult(0);
        func::FuncOp fn =
            declare(module, kLdMatrixFn,
                    ob.getFunctionType({i64, i64, i64, i64, i64, i64}, {}));
        func::CallOp::create(
            ob, l, fn,
            ValueRange{
                simCtx, addr,
                arith::ConstantIntOp::create(ob, l, i64, ld.getNumTiles()),
                arith::ConstantIntOp::create(ob, l, i64, ld.getTranspose()),
                out.address, site});
        ld.getResult().replaceAllUsesWith(loadSlot(ob, l, resType, out));
        toErase.push_back(op);
      } else if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
        Type i64 = ob.getI64Type();
        auto aType = cast<VectorType>(mma.getMatrixA().getType());
        auto cType = cast<VectorType>(mma.getMatrixC().getType());
        SmallVector<int64_t> mnk;
        for (Attribute a : mma.getMmaShape())
          mnk.push_back(cast<IntegerAttr>(a).getInt());
        Type in = aType.getElementType();
        bool half = (in.isF16() || in.isBF16()) &&
                    mnk == SmallVector<int64_t>{16, 8, 16};
        bool tf32 = in.isF32() && mnk == SmallVector<int64_t>{16, 8, 8};
        // fp8 fragments travel as i8, the format in tile.fp8 (see
        // tessera-gpu-mma-sync).
        auto fp8Format = op->getAttrOfType<StringAttr>("tile.fp8");
        bool fp8 = fp8Format && in.isInteger(8) &&
                   mnk == SmallVector<int64_t>{16, 8, 32};
        if (!cType.getElementType().isF32() || !(half || tf32 || fp8))
          return op->emitOpError(
              "sim supports mma.sync m16n8k16 with f16/bf16 inputs, m16n8k8 "
              "with tf32 (f32) inputs, m16n8k32 with fp8 inputs, and f32 "
              "accumulation only");
        // The kinds of tessera_sim_mma (runtime/lib/Sim/FiberScheduler.cpp).
        int64_t kind = tf32                             ? 2
                       : in.isBF16()                    ? 1
                       : in.isF16()                     ? 0
                       : fp8Format.getValue() == "e4m3" ? 3
                                                        : 4;
        Slot a = makeSlot(entryBuilder, ob, l, aType);
        Slot bs = makeSlot(entryBuilder, ob, l,
                           cast<VectorType>(mma.getMatrixB().getType()));
        Slot c = makeSlot(entryBuilder, ob, l, cType);
        Slot d = makeSlot(entryBuilder, ob, l, cType);
        storeSlot(ob, l, mma.getMatrixA(), a);
        storeSlot(ob, l, mma.getMatrixB(), bs);
        storeSlot(ob, l, mma.getMatrixC(), c);
        Value site = siteValue(ob, l, newSite(op));
        func::FuncOp fn = declare(
            module, kMmaFn,
            ob.getFunctionType({i64, i64, i64, i64, i64, i64, i64}, {}));
        func::CallOp::create(
            ob, l, fn,
            ValueRange{simCtx, arith::ConstantIntOp::create(ob, l, i64, kind),
                       a.address, bs.address, c.address, d.address, site});
        mma.getResult().replaceAllUsesWith(loadSlot(ob, l, cType, d));
        toErase.push_back(op);
      } else if (auto wg = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
        auto st = cast<LLVM::LLVMStructType>(wg.getInouts().getType());
        NVVM::MMAShapeAttr shape = wg.getShape();
        NVVM::WGMMATypes ta = wg.getTypeA(), tb = wg.getTypeB();
        bool scaleD = wg.getScaleD() == NVVM::WGMMAScaleOut::one;
        std::optional<int64_t> config = tessera::simWgmmaConfig(
            ta, shape.getN(), wg.getLayoutA() == NVVM::MMALayout::col,
            wg.getLayoutB() == NVVM::MMALayout::row, scaleD,
            /*registerA=*/false);
        // K: 32 bytes of operands (k16 for 16-bit inputs, k32 for fp8, k8
        // for tf32).
        int64_t k = ta == NVVM::WGMMATypes::f16 || ta == NVVM::WGMMATypes::bf16
                        ? 16
                    : ta == NVVM::WGMMATypes::tf32 ? 8
                                                   : 32;
        bool f32Fields =
            llvm::all_of(st.getBody(), [](Type t) { return t.isF32(); });
        if (shape.getM() != 64 || !config || shape.getK() != k || ta != tb ||
            wg.getTypeD() != NVVM::WGMMATypes::f32 || !f32Fields ||
            int64_t(st.getBody().size()) != shape.getN() / 2 ||
            wg.getScaleA() != NVVM::WGMMAScaleIn::one ||
            wg.getScaleB() != NVVM::WGMMAScaleIn::one)
          return op->emitOpError(
              "sim supports wgmma.mma_async m64nNk16 with f16/bf16 inputs, "
              "m64nNk32 with e4m3/e5m2 inputs and m64nNk8 with K-major tf32 "
              "inputs, from shared memory, with f32 accumulation only");
        SmallVector<Value> accIn;
        for (int64_t i = 0; scaleD && i < int64_t(st.getBody().size()); ++i)
          accIn.push_back(
              LLVM::ExtractValueOp::create(ob, l, wg.getInouts(), i));
        wg.getResults().replaceAllUsesWith(simWgmma(ob, op, st, accIn, *config,
                                                    wg.getDescriptorA(),
                                                    wg.getDescriptorB()));
        toErase.push_back(op);
      } else if (isRegisterWgmma(op)) {
        // The same with A's 4 words in a slot of their own, whose address
        // stands for A's descriptor (bit 15 of the instruction).
        auto config = dyn_cast<IntegerAttr>(op->getAttr("tile.wgmma"));
        auto st = dyn_cast<LLVM::LLVMStructType>(op->getResult(0).getType());
        int64_t fields = op->getNumOperands() - kRegisterWgmmaAccumulators;
        if (!config || !st || int64_t(st.getBody().size()) != fields ||
            (config.getInt() & 0x3ff) != 2 * fields ||
            !(config.getInt() & (1 << 15)))
          return op->emitOpError("is not a wgmma.mma_async the sim knows");
        auto wordsType = VectorType::get({4}, ob.getI32Type());
        Slot words = makeSlot(entryBuilder, ob, l, wordsType);
        storeSlot(ob, l,
                  vector::FromElementsOp::create(
                      ob, l, wordsType, op->getOperands().take_front(4)),
                  words);
        ValueRange accIn;
        if (config.getInt() & (1 << 14))
          accIn = op->getOperands().drop_front(kRegisterWgmmaAccumulators);
        op->getResult(0).replaceAllUsesWith(
            simWgmma(ob, op, st, accIn, config.getInt(), words.address,
                     op->getOperand(4)));
        toErase.push_back(op);
      } else if (isa<nvgpu::MBarrierInitOp, nvgpu::MBarrierArriveOp,
                     nvgpu::MBarrierArriveExpectTxOp, nvgpu::MBarrierTestWaitOp,
                     nvgpu::MBarrierTryWaitParityOp, nvgpu::TmaAsyncLoadOp>(
                     op) &&
                 llvm::any_of(op->getOperands(), [&](Value v) {
                   return isa<nvgpu::MBarrierGroupType,
                              nvgpu::MBarrierTokenType>(v.getType()) &&
                          !mbarrierValues.count(v);
                 })) {
        op->emitOpError("sim supports mbarrier groups and tokens used as "
                        "nvgpu.mbarrier.create and nvgpu.mbarrier.arrive "
                        "define them (not through block arguments)");
        return WalkResult::interrupt();
      } else if (auto mc = dyn_cast<nvgpu::MBarrierCreateOp>(op)) {
        auto group = cast<nvgpu::MBarrierGroupType>(mc.getType());
        mbarrierValues[mc.getResult()] =
            simCall(ob, l, kMbarrierCreateFn,
                    {i64Constant(ob, l, group.getNumBarriers()),
                     siteValue(ob, l, newSite(op))},
                    /*returns=*/true);
        toErase.push_back(op);
      } else if (auto mi = dyn_cast<nvgpu::MBarrierInitOp>(op)) {
        simCall(ob, l, kMbarrierInitFn,
                {barrierId(ob, l, mi.getBarriers(), mi.getMbarId()),
                 asI64(ob, l, mi.getCount()),
                 predicateOf(ob, l, mi.getPredicate()),
                 siteValue(ob, l, newSite(op))},
                /*returns=*/false);
        toErase.push_back(op);
      } else if (auto ma = dyn_cast<nvgpu::MBarrierArriveOp>(op)) {
        mbarrierValues[ma.getToken()] =
            simCall(ob, l, kMbarrierArriveFn,
                    {barrierId(ob, l, ma.getBarriers(), ma.getMbarId()),
                     i64Constant(ob, l, 0), i64Constant(ob, l, 1),
                     siteValue(ob, l, newSite(op))},
                    /*returns=*/true);
        toErase.push_back(op);
      } else if (auto mx = dyn_cast<nvgpu::MBarrierArriveExpectTxOp>(op)) {
        simCall(ob, l, kMbarrierArriveFn,
                {barrierId(ob, l, mx.getBarriers(), mx.getMbarId()),
                 asI64(ob, l, mx.getTxcount()),
                 predicateOf(ob, l, mx.getPredicate()),
                 siteValue(ob, l, newSite(op))},
                /*returns=*/true);
        toErase.push_back(op);
      } else if (auto mt = dyn_cast<nvgpu::MBarrierTestWaitOp>(op)) {
        Value done =
            simCall(ob, l, kMbarrierTestWaitFn,
                    {barrierId(ob, l, mt.getBarriers(), mt.getMbarId()),
                     mbarrierValues.lookup(mt.getToken()),
                     siteValue(ob, l, newSite(op))},
                    /*returns=*/true);
        mt.getWaitComplete().replaceAllUsesWith(arith::CmpIOp::create(
            ob, l, arith::CmpIPredicate::ne, done, i64Constant(ob, l, 0)));
        toErase.push_back(op);
      } else if (auto mw = dyn_cast<nvgpu::MBarrierTryWaitParityOp>(op)) {
        simCall(ob, l, kMbarrierWaitParityFn,
                {barrierId(ob, l, mw.getBarriers(), mw.getMbarId()),
                 asI64(ob, l, mw.getPhaseParity()),
                 siteValue(ob, l, newSite(op))},
                /*returns=*/false);
        toErase.push_back(op);
      } else if (auto c = dyn_cast<UnrealizedConversionCastOp>(op);
                 c && c->getNumResults() == 1 &&
                 isa<nvgpu::TensorMapDescriptorType>(c.getType(0))) {
        // A tensor map argument: the address of the runtime's SimTensorMap.
        if (c->getNumOperands() != 1 ||
            !isa<LLVM::LLVMPointerType>(c->getOperand(0).getType())) {
          op->emitOpError("sim supports tensor maps passed as !llvm.ptr "
                          "kernel arguments only");
          return WalkResult::interrupt();
        }
        tensorMaps[c.getResult(0)] =
            LLVM::PtrToIntOp::create(ob, l, ob.getI64Type(), c->getOperand(0));
        toErase.push_back(op);
      } else if (auto tma = dyn_cast<nvgpu::TmaAsyncLoadOp>(op)) {
        Value map = tensorMaps.lookup(tma.getTensorMapDescriptor());
        if (!map || tma.getMulticastMask()) {
          op->emitOpError("sim supports TMA loads through tensor-map kernel "
                          "arguments, without multicast");
          return WalkResult::interrupt();
        }
        auto dstType = cast<MemRefType>(tma.getDst().getType());
        SmallVector<Value> zeros(dstType.getRank(),
                                 arith::ConstantIndexOp::create(ob, l, 0));
        SmallVector<Value> args = {
            map, barrierId(ob, l, tma.getBarriers(), tma.getMbarId()),
            arith::IndexCastOp::create(
                ob, l, ob.getI64Type(),
                tessera::byteAddress(ob, l, tma.getDst(), zeros))};
        for (Value c : tma.getCoordinates())
          args.push_back(asI64(ob, l, c));
        while (args.size() < 8)
          args.push_back(i64Constant(ob, l, 0));
        args.push_back(predicateOf(ob, l, tma.getPredicate()));
        args.push_back(siteValue(ob, l, newSite(op)));
        simCall(ob, l, kTmaLoadFn, args, /*returns=*/false);
        toErase.push_back(op);
      } else if (isa<NVVM::WgmmaFenceAlignedOp>(op)) {
        callSim(module, ob, l, kWgmmaFenceFn, simCtx);
        toErase.push_back(op);
      } else if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op)) {
        callSim(module, ob, l, kWgmmaCommitFn, simCtx);
        toErase.push_back(op);
      } else if (isa<NVVM::FenceProxyOp>(op)) {
        // Every proxy of the sim sees the same memory at once.
        toErase.push_back(op);
      } else if (auto w = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
        callSim(module, ob, l, kWgmmaWaitFn, simCtx, {int64_t(w.getGroup())});
        toErase.push_back(op);
      } else if (auto cp = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
        // Deferred until the thread waits for its group: a read of the
        // destination before the wait sees the old contents, as it may on
        // a GPU.
        Type i64 = ob.getI64Type();
        auto dstType = cast<MemRefType>(cp.getDst().getType());
        int64_t elemBytes = dstType.getElementTypeBitWidth() / 8;
        int64_t n = cp.getDstElements().getZExtValue();
        int64_t bytes = n * elemBytes;
        Value srcBytes = arith::ConstantIntOp::create(ob, l, i64, bytes);
        if (Value se = cp.getSrcElements())
          srcBytes = arith::MulIOp::create(
              ob, l, arith::IndexCastOp::create(ob, l, i64, se),
              arith::ConstantIntOp::create(ob, l, i64, elemBytes));
        int64_t site = newSite(op);
        Value src = collectiveAddress(ob, l, cp.getSrc(), cp.getSrcIndices(), n,
                                      site, /*kind=*/0);
        Value dst = collectiveAddress(ob, l, cp.getDst(), cp.getDstIndices(), n,
                                      site, /*kind=*/1);
        func::FuncOp fn =
            declare(module, kCpAsyncFn,
                    ob.getFunctionType({i64, i64, i64, i64, i64, i64}, {}));
        func::CallOp::create(
            ob, l, fn,
            ValueRange{simCtx, dst, src,
                       arith::ConstantIntOp::create(ob, l, i64, bytes),
                       srcBytes, siteValue(ob, l, site)});
        toErase.push_back(op);
      } else if (isa<nvgpu::DeviceAsyncCreateGroupOp>(op)) {
        callSim(module, ob, l, kCpAsyncCommitFn, simCtx);
        toErase.push_back(op);
      } else if (auto w = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op)) {
        callSim(module, ob, l, kCpAsyncWaitFn, simCtx,
                {int64_t(w.getNumGroups().value_or(0))});
        toErase.push_back(op);
      } else if (auto ret = dyn_cast<gpu::ReturnOp>(op)) {
        func::ReturnOp::create(ob, l);
        toErase.push_back(op);
      } else if (isa<gpu::PrintfOp>(op)) {
        // Printed on the host by tessera-lower-kernel-prints.
      } else if (isa<LLVM::InlineAsmOp>(op) ||
                 (op->getDialect() &&
                  op->getDialect()->getNamespace() == "gpu")) {
        return op->emitOpError("is not supported by the sim device");
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return failure();
    // Last first: an async group token is used by the wait that follows.
    for (Operation *op : llvm::reverse(toErase))
      op->erase();
    // Casts from the (former) workgroup space are now identities.
    SmallVector<memref::MemorySpaceCastOp> casts;
    f.walk([&](memref::MemorySpaceCastOp c) { casts.push_back(c); });
    for (auto c : casts) {
      if (c.getSource().getType() != c.getType())
        return c.emitOpError("unexpected address space cast for sim");
      c.replaceAllUsesWith(c.getSource());
      c.erase();
    }
    k.erase();
    if (counters) {
      func::FuncOp hook =
          declare(module, kBranchFn, b.getFunctionType({i64, i64, i64}, {}));
      for (Operation *op : branches)
        reportBranch(hook, op, simCtx, newSite(op));
    }
    if (!report) {
      f->setAttr("tile.sim_sites", b.getArrayAttr(sites));
      return success();
    }
    SmallVector<Operation *> accesses;
    f.walk([&](Operation *op) {
      if (isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp>(op))
        accesses.push_back(op);
      // Vector accesses, except those of the collectives' stack slots.
      if (auto v = dyn_cast<vector::LoadOp>(op);
          v && !v.getBase().getDefiningOp<memref::AllocaOp>())
        accesses.push_back(op);
      if (auto v = dyn_cast<vector::StoreOp>(op);
          v && !v.getBase().getDefiningOp<memref::AllocaOp>())
        accesses.push_back(op);
    });
    for (Operation *op : accesses) {
      int64_t site = newSite(op);
      if (auto ld = dyn_cast<memref::LoadOp>(op))
        instrument(hooks, op, ld.getMemRef(), ld.getIndices(), 0, simCtx, site);
      else if (auto st = dyn_cast<memref::StoreOp>(op))
        instrument(hooks, op, st.getMemRef(), st.getIndices(), 1, simCtx, site);
      else if (auto at = dyn_cast<memref::AtomicRMWOp>(op))
        instrument(hooks, op, at.getMemref(), at.getIndices(), 2, simCtx, site);
      else if (auto vl = dyn_cast<vector::LoadOp>(op))
        instrument(hooks, op, vl.getBase(), vl.getIndices(), 0, simCtx, site,
                   vl.getVectorType().getNumElements(),
                   vl.getAlignment().value_or(0));
      else if (auto vs = dyn_cast<vector::StoreOp>(op))
        instrument(hooks, op, vs.getBase(), vs.getIndices(), 1, simCtx, site,
                   vs.getVectorType().getNumElements(),
                   vs.getAlignment().value_or(0));
    }
    f->setAttr("tile.sim_sites", b.getArrayAttr(sites));
    return success();
  }
};

} // namespace
