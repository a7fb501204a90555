//===- OutlineSimtKernels.cpp - SIMT programs as gpu.func kernels ---------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_OUTLINESIMTKERNELSPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

struct OutlineSimtKernelsPass
    : mlir::tessera::impl::OutlineSimtKernelsPassBase<OutlineSimtKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    module.walk([&](func::FuncOp f) {
      if (f->hasAttr("tile.kernel") && f->hasAttr("tile.simt"))
        kernels.push_back(f);
    });
    for (func::FuncOp f : kernels)
      if (failed(convert(module, f)))
        return signalPassFailure();
  }

  LogicalResult convert(ModuleOp module, func::FuncOp f) {
    MLIRContext *ctx = &getContext();
    FailureOr<int64_t> threads = mlir::tessera::blockThreads(f);
    if (failed(threads))
      return failure();
    gpu::GPUFuncOp kernel = mlir::tessera::outlineKernel(module, f, *threads);
    if (!kernel)
      return failure();

    // Shared arrays: one view each of the dynamic shared memory, made at
    // the entry (an alloca in a loop or branch is still one array per
    // block, as `__shared__` declarations are).
    SmallVector<memref::AllocaOp> arrays;
    kernel.walk([&](memref::AllocaOp a) {
      if (gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(a.getType()))
        arrays.push_back(a);
    });
    Block &entry = kernel.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    Location l = kernel.getLoc();
    int64_t bytes = 0;
    if (!arrays.empty()) {
      auto wg = gpu::AddressSpaceAttr::get(
          ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
      Value arena = gpu::DynamicSharedMemoryOp::create(
          b, l,
          MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8),
                          MemRefLayoutAttrInterface(), wg));
      for (memref::AllocaOp a : arrays) {
        MemRefType type = a.getType();
        if (!type.hasStaticShape())
          return a.emitOpError("a shared array needs a static size");
        bytes = (bytes + 15) / 16 * 16;
        Value offset = arith::ConstantIndexOp::create(b, a.getLoc(), bytes);
        Value view = memref::ViewOp::create(b, a.getLoc(), type, arena, offset,
                                            ValueRange{});
        int64_t elementBits = type.getElementTypeBitWidth();
        bytes += type.getNumElements() * std::max<int64_t>(elementBits / 8, 1);
        a.getResult().replaceAllUsesWith(view);
        a.erase();
      }
    }
    kernel->setAttr("tile.shared_bytes",
                    IntegerAttr::get(IntegerType::get(ctx, 64), bytes));
    kernel->setAttr("tile.simt", UnitAttr::get(ctx));
    return success();
  }
};

} // namespace
