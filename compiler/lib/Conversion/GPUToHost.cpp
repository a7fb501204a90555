//===- GPUToHost.cpp - GPU kernels as per-thread host functions -----------===//
//
// The `sim` device runs the GPU lowering on the CPU: each GPU thread is a
// fiber executing the host function this pass produces (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_GPUTOHOSTPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

constexpr const char *kBarrierFn = "tessera_sim_barrier";

struct GPUToHostPass
    : mlir::tessera::impl::GPUToHostPassBase<GPUToHostPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gm : gpuModules) {
      // Globals first (kernels refer to them by name).
      for (Operation &op : llvm::make_early_inc_range(gm.getBody()->getOperations()))
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
        b.getFunctionType({b.getI64Type()}, {}));
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
    if (!arenas.empty())
      types.push_back(arenaType);
    for (int i = 0; i < 7; ++i)
      types.push_back(index);
    types.push_back(b.getI64Type());

    b.setInsertionPointToEnd(module.getBody());
    auto f = func::FuncOp::create(b, k.getLoc(), (k.getName() + "_sim").str(),
                                  b.getFunctionType(types, {}));
    for (StringRef a : {"tile.num_warps", "tile.num_stages", "tile.shared_bytes"})
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
    if (!arenas.empty()) {
      BlockArgument arena = entry.addArgument(arenaType, k.getLoc());
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
            auto cast = dyn_cast<memref::MemorySpaceCastOp>(use.getOwner());
            if (!cast || cast.getType() != nv.getType())
              return use.getOwner()->emitOpError(
                  "uses a shared view in a way sim does not support");
            cast.replaceAllUsesWith(nv.getResult());
            cast.erase();
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
        func::CallOp::create(ob, l, barrier, ValueRange{simCtx});
        toErase.push_back(op);
      } else if (auto ret = dyn_cast<gpu::ReturnOp>(op)) {
        func::ReturnOp::create(ob, l);
        toErase.push_back(op);
      } else if (op->getDialect() &&
                 op->getDialect()->getNamespace() == "gpu") {
        return op->emitOpError("is not supported by the sim device");
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return failure();
    for (Operation *op : toErase)
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
    return success();
  }
};

} // namespace
