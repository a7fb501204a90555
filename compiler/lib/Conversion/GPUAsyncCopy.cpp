//===- GPUAsyncCopy.cpp - Tile loads through cp.async ---------------------===//
//
// After the GPU mapping a tile load is a thread-strided loop that reads an
// element of global memory and stores it into a shared-memory tile, followed
// by a barrier. From a unit-stride source, the copy is versioned on
// alignment at run time: aligned, each thread copies chunks of up to 16
// bytes with one nvgpu.device_async_copy (cp.async: global to shared
// without a register round trip) each; otherwise the element loop runs,
// with a cp.async per element for 4- and 8-byte elements. The loop is
// followed by a commit and a wait before the barrier. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_GPUASYNCCOPYPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using namespace mlir::tessera;

namespace {

/// The shared-memory (workgroup address space) form of `v`, a tile reached
/// through the generic-space cast of its shared view, possibly through one
/// subview; null when `v` is something else.
Value sharedForm(OpBuilder &b, Value v) {
  if (auto cast = v.getDefiningOp<memref::MemorySpaceCastOp>())
    return isWorkgroupMemRef(cast.getSource().getType()) ? cast.getSource()
                                                         : Value();
  auto sv = v.getDefiningOp<memref::SubViewOp>();
  if (!sv)
    return nullptr;
  auto cast = sv.getSource().getDefiningOp<memref::MemorySpaceCastOp>();
  if (!cast || !isWorkgroupMemRef(cast.getSource().getType()))
    return nullptr;
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointAfter(sv);
  return memref::SubViewOp::create(b, sv.getLoc(), cast.getSource(),
                                   sv.getMixedOffsets(), sv.getMixedSizes(),
                                   sv.getMixedStrides());
}

/// The largest chunk (elements) of at most 16 bytes and at least 4 bytes
/// that divides every outer static stride of `dst` (the shared tile), or
/// 0 when there is none.
int64_t chunkElements(MemRefType dst, int64_t bytes) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(dst.getStridesAndOffset(strides, offset)))
    return 0;
  for (int64_t v = 16 / bytes; v >= 1 && v * bytes >= 4; v /= 2) {
    bool ok = true;
    for (size_t d = 0; d + 1 < strides.size(); ++d)
      ok &= !ShapedType::isDynamic(strides[d]) && strides[d] % v == 0;
    if (ok)
      return v;
  }
  return 0;
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
    if (bits % 8 || bits > 64 || !hasUnitInnerStride(srcType) ||
        reachesSharedMemory(load.getMemRef()))
      return;
    OpBuilder b(store);
    Value dst = sharedForm(b, store.getMemRef());
    if (!dst || !hasUnitInnerStride(cast<MemRefType>(dst.getType())))
      return;
    bool vectorized = vectorize(loop, load, store, dst, bits / 8);
    bool scalar = bits == 32 || bits == 64;
    if (scalar) {
      b.setInsertionPoint(store);
      nvgpu::DeviceAsyncCopyOp::create(
          b, store.getLoc(), nvgpu::DeviceAsyncTokenType::get(b.getContext()),
          dst, store.getIndices(), load.getMemRef(), load.getIndices(),
          b.getIndexAttr(1), /*srcElements=*/Value(), /*bypassL1=*/UnitAttr());
      store.erase();
      load.erase();
    }
    if (!vectorized && !scalar)
      return;
    // Commit this thread's copies and wait for all of them before the
    // barrier that publishes the tile to the block.
    b.setInsertionPoint(next);
    Value group = nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loop.getLoc(), nvgpu::DeviceAsyncTokenType::get(b.getContext()),
        ValueRange{});
    nvgpu::DeviceAsyncWaitOp::create(b, loop.getLoc(), group,
                                     b.getI32IntegerAttr(0));
  }

  /// Versions the copy loop on alignment: when the source and the shared
  /// tile are aligned to the chunk size at run time, each thread copies
  /// whole chunks of up to 16 bytes along the innermost dimension with one
  /// cp.async each (the last, partial chunk of a row element by element);
  /// otherwise the original loop runs. Returns false (and changes nothing)
  /// when the copy does not have that form.
  bool vectorize(scf::ForOp loop, memref::LoadOp load, memref::StoreOp store,
                 Value dst, int64_t bytes) {
    Value src = load.getMemRef(), gdst = store.getMemRef();
    int64_t rank = load.getMemRefType().getRank();
    if (rank < 1 || !loop.isDefinedOutsideOfLoop(src) ||
        !loop.isDefinedOutsideOfLoop(gdst) ||
        load.getIndices() != store.getIndices())
      return false;
    // The mapping's copy loop covers exactly the region both subviews
    // (of the tensor and of the shared tile) describe; the chunked loop is
    // built over those sizes.
    auto srcView = src.getDefiningOp<memref::SubViewOp>();
    auto dstView = gdst.getDefiningOp<memref::SubViewOp>();
    if (!srcView || !dstView ||
        srcView.getMixedSizes() != dstView.getMixedSizes())
      return false;
    int64_t vec = chunkElements(cast<MemRefType>(dst.getType()), bytes);
    if (vec <= 1)
      return false;
    Location l = loop.getLoc();
    OpBuilder b(loop);
    Value cond =
        arith::AndIOp::create(b, l, alignedAt(b, l, src, bytes, vec * bytes),
                              alignedAt(b, l, gdst, bytes, vec * bytes));
    auto ifOp = scf::IfOp::create(b, l, cond, /*withElseRegion=*/true);
    loop->moveBefore(ifOp.elseBlock()->getTerminator());

    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(memref::DimOp::create(b, l, src, d));
    Value width = sizes.back();
    Value vecV = arith::ConstantIndexOp::create(b, l, vec);
    Value chunks = arith::CeilDivUIOp::create(b, l, width, vecV);
    Value total = chunks;
    for (int64_t d = 0; d + 1 < rank; ++d)
      total = arith::MulIOp::create(b, l, total, sizes[d]);
    auto token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
    scf::ForOp::create(
        b, l, loop.getLowerBound(), total, loop.getStep(), ValueRange{},
        [&](OpBuilder &lb, Location, Value i, ValueRange) {
          Value q = arith::DivUIOp::create(lb, l, i, chunks);
          Value col = arith::MulIOp::create(
              lb, l, arith::RemUIOp::create(lb, l, i, chunks), vecV);
          SmallVector<Value> idx(rank);
          idx[rank - 1] = col;
          for (int64_t d = rank - 2; d >= 0; --d) {
            idx[d] = d == 0 ? q : arith::RemUIOp::create(lb, l, q, sizes[d]);
            if (d > 0)
              q = arith::DivUIOp::create(lb, l, q, sizes[d]);
          }
          Value left = arith::SubIOp::create(lb, l, width, col);
          Value whole = arith::CmpIOp::create(lb, l, arith::CmpIPredicate::uge,
                                              left, vecV);
          scf::IfOp::create(
              lb, l, whole,
              [&](OpBuilder &tb, Location) {
                nvgpu::DeviceAsyncCopyOp::create(
                    tb, l, token, dst, idx, src, idx, tb.getIndexAttr(vec),
                    /*srcElements=*/Value(),
                    /*bypassL1=*/vec * bytes == 16 ? tb.getUnitAttr()
                                                   : UnitAttr());
                scf::YieldOp::create(tb, l);
              },
              [&](OpBuilder &eb, Location) {
                Value zero = arith::ConstantIndexOp::create(eb, l, 0);
                Value one = arith::ConstantIndexOp::create(eb, l, 1);
                scf::ForOp::create(
                    eb, l, zero, left, one, ValueRange{},
                    [&](OpBuilder &sb, Location, Value j, ValueRange) {
                      SmallVector<Value> at = idx;
                      at[rank - 1] = arith::AddIOp::create(sb, l, col, j);
                      Value v = memref::LoadOp::create(sb, l, src, at);
                      memref::StoreOp::create(sb, l, v, gdst, at);
                      scf::YieldOp::create(sb, l);
                    });
                scf::YieldOp::create(eb, l);
              });
          scf::YieldOp::create(lb, l);
        });
    return true;
  }
};

} // namespace
