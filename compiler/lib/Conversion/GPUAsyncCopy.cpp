//===- GPUAsyncCopy.cpp - Tile loads through cp.async ---------------------===//
//
// After the GPU mapping a tile load is a thread-strided loop that reads an
// element of global memory and stores it into a shared-memory tile, followed
// by a barrier. With 4- or 8-byte elements and a unit-stride source, each
// such element copy becomes an nvgpu.device_async_copy (cp.async: global to
// shared without a register round trip), and the loop is followed by a
// commit and a wait before the barrier. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_GPUASYNCCOPYPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

bool isWorkgroup(BaseMemRefType t) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(t.getMemorySpace());
  return space &&
         space.getValue() == gpu::GPUDialect::getWorkgroupAddressSpace();
}

/// The shared-memory (workgroup address space) form of `v`, a tile reached
/// through the generic-space cast of its shared view, possibly through one
/// subview; null when `v` is something else.
Value sharedForm(OpBuilder &b, Value v) {
  if (auto cast = v.getDefiningOp<memref::MemorySpaceCastOp>())
    return isWorkgroup(cast.getSource().getType()) ? cast.getSource() : Value();
  auto sv = v.getDefiningOp<memref::SubViewOp>();
  if (!sv)
    return nullptr;
  auto cast = sv.getSource().getDefiningOp<memref::MemorySpaceCastOp>();
  if (!cast || !isWorkgroup(cast.getSource().getType()))
    return nullptr;
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointAfter(sv);
  return memref::SubViewOp::create(b, sv.getLoc(), cast.getSource(),
                                   sv.getMixedOffsets(), sv.getMixedSizes(),
                                   sv.getMixedStrides());
}

/// Whether `v` is reached from shared memory at all (then it is not a
/// global source).
bool fromShared(Value v) {
  while (true) {
    if (auto t = dyn_cast<MemRefType>(v.getType()); t && isWorkgroup(t))
      return true;
    if (auto cast = v.getDefiningOp<memref::MemorySpaceCastOp>())
      v = cast.getSource();
    else if (auto sv = v.getDefiningOp<memref::SubViewOp>())
      v = sv.getSource();
    else if (auto sel = v.getDefiningOp<arith::SelectOp>())
      return fromShared(sel.getTrueValue()) || fromShared(sel.getFalseValue());
    else
      return false;
  }
}

bool unitInnerStride(MemRefType t) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return t.getRank() > 0 && succeeded(t.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

struct GPUAsyncCopyPass
    : mlir::tessera::impl::GPUAsyncCopyPassBase<GPUAsyncCopyPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp f) { loops.push_back(f); });
    for (scf::ForOp f : loops)
      rewrite(f);
  }

  void rewrite(scf::ForOp loop) {
    // The loop is followed by the mapping's barrier.
    Operation *next = loop->getNextNode();
    if (!next || !isa<gpu::BarrierOp>(next))
      return;
    memref::StoreOp store;
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (auto s = dyn_cast<memref::StoreOp>(op)) {
        if (store)
          return;
        store = s;
      } else if (!isMemoryEffectFree(&op) && !isa<memref::LoadOp>(op)) {
        return;
      }
    }
    if (!store)
      return;
    auto load = store.getValue().getDefiningOp<memref::LoadOp>();
    if (!load || load->getBlock() != loop.getBody() ||
        !load.getResult().hasOneUse())
      return;
    auto srcType = load.getMemRefType();
    int64_t bits = srcType.getElementTypeBitWidth();
    if ((bits != 32 && bits != 64) || !unitInnerStride(srcType) ||
        fromShared(load.getMemRef()))
      return;
    OpBuilder b(store);
    Value dst = sharedForm(b, store.getMemRef());
    if (!dst || !unitInnerStride(cast<MemRefType>(dst.getType())))
      return;
    b.setInsertionPoint(store);
    nvgpu::DeviceAsyncCopyOp::create(
        b, store.getLoc(), nvgpu::DeviceAsyncTokenType::get(b.getContext()),
        dst, store.getIndices(), load.getMemRef(), load.getIndices(),
        b.getIndexAttr(1), /*srcElements=*/Value(), /*bypassL1=*/UnitAttr());
    store.erase();
    load.erase();
    // Commit this thread's copies and wait for all of them before the
    // barrier that publishes the tile to the block.
    b.setInsertionPoint(next);
    Value group = nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loop.getLoc(), nvgpu::DeviceAsyncTokenType::get(b.getContext()),
        ValueRange{});
    nvgpu::DeviceAsyncWaitOp::create(b, loop.getLoc(), group,
                                     b.getI32IntegerAttr(0));
  }
};

} // namespace
