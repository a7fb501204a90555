//===- GPUMatmulToMMA.cpp - Tile matmuls on tensor cores ------------------===//
//
// Two steps of the tensor-core path (see Passes.td):
//   tessera-gpu-matmul-to-mma  (before the GPU mapping) rewrites a static
//     linalg.matmul on tile buffers as warp-level vector code: each warp
//     owns warp tiles of C, keeps them in vector registers across the K
//     loop and issues one 16x8x16 vector.contract per fragment;
//   tessera-gpu-mma-sync       (after the mapping, when the tiles live in
//     shared memory) hands that code to MLIR's convert-vector-to-gpu in its
//     nvgpu flavour, which picks nvgpu.ldmatrix for the A/B fragments and
//     nvgpu.mma.sync for the products from its fragment-layout tables.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Conversion/VectorToGPU/VectorToGPU.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_GPUMATMULTOMMAPASS
#define GEN_PASS_DEF_GPUMMASYNCPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

constexpr int64_t kWarp = 32;
/// Marks the warp-tile loops for tessera-gpu-mma-sync.
constexpr const char *kMmaAttr = "tile.mma_warp_tiles";
// The mma.sync instruction shape for 16-bit inputs with f32 accumulation.
constexpr int64_t kM = 16, kN = 8, kK = 16;

bool isStaticRowMajor(MemRefType t) {
  return t && t.hasStaticShape() && t.getRank() == 2 &&
         t.getLayout().isIdentity();
}

/// Whether the tensor-core path handles `op`: static row-major buffers,
/// f16 x f16 into f32, extents multiples of the instruction. (bf16 is not
/// yet handled by MLIR 22's vector-to-nvgpu conversion: its fragment
/// register types cover f16, tf32 and integers only.)
bool eligible(linalg::MatmulOp op) {
  if (!op.hasPureBufferSemantics() || op.hasUserDefinedMaps())
    return false;
  auto a = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto b = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
  auto c = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!isStaticRowMajor(a) || !isStaticRowMajor(b) || !isStaticRowMajor(c))
    return false;
  Type in = a.getElementType();
  if (in != b.getElementType() || !in.isF16() || !c.getElementType().isF32())
    return false;
  int64_t m = c.getDimSize(0), n = c.getDimSize(1), k = a.getDimSize(1);
  return a.getDimSize(0) == m && b.getDimSize(0) == k && b.getDimSize(1) == n &&
         m % kM == 0 && n % kN == 0 && k % kK == 0;
}

/// Largest of `options` that divides `count`.
int64_t largestDivisor(int64_t count, std::initializer_list<int64_t> options) {
  for (int64_t o : options)
    if (count % o == 0)
      return o;
  return 1;
}

struct GPUMatmulToMMAPass
    : mlir::tessera::impl::GPUMatmulToMMAPassBase<GPUMatmulToMMAPass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (!f->hasAttr("tile.kernel"))
      return;
    int64_t warps = 4;
    if (auto a = f->getAttrOfType<IntegerAttr>("tile.num_warps"))
      warps = a.getInt();
    SmallVector<linalg::MatmulOp> matmuls;
    f.walk([&](linalg::MatmulOp op) {
      if (eligible(op))
        matmuls.push_back(op);
    });
    for (linalg::MatmulOp op : matmuls)
      rewrite(op, warps);
  }

  void rewrite(linalg::MatmulOp op, int64_t warps) {
    Value A = op.getDpsInputs()[0], B = op.getDpsInputs()[1],
          C = op.getDpsInits()[0];
    auto aType = cast<MemRefType>(A.getType());
    auto cType = cast<MemRefType>(C.getType());
    Type in = aType.getElementType(), acc = cType.getElementType();
    int64_t m = cType.getDimSize(0), n = cType.getDimSize(1),
            k = aType.getDimSize(1);
    // A warp tile of mt x nt instructions: up to 32x32 elements, so that
    // each A fragment feeds nt products and each B fragment mt.
    int64_t mt = largestDivisor(m / kM, {2, 1});
    int64_t nt = largestDivisor(n / kN, {4, 2, 1});
    int64_t tilesN = n / (kN * nt);
    int64_t tiles = (m / (kM * mt)) * tilesN;

    Location l = op.getLoc();
    OpBuilder b(op);
    auto region = scf::ExecuteRegionOp::create(b, l, TypeRange{});
    region->setAttr("tile.distributed", b.getUnitAttr());
    b.createBlock(&region.getRegion());
    auto cst = [&](OpBuilder &cb, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(cb, l, v);
    };
    // Index arithmetic is affine.apply rather than arith: the nvgpu
    // conversion's slice analysis follows arith integer ops feeding the
    // fragment reads into the set of ops it must convert, and fails on them.
    auto apply = [&](OpBuilder &ab, AffineExpr e, ValueRange operands) {
      return affine::AffineApplyOp::create(
          ab, l, AffineMap::get(operands.size(), 0, e), operands);
    };
    Value tid = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
    Value warp =
        apply(b, getAffineDimExpr(0, b.getContext()).floorDiv(kWarp), tid);
    auto fragType = VectorType::get({kM, kN}, acc);
    auto aFrag = VectorType::get({kM, kK}, in);
    auto bFrag = VectorType::get({kK, kN}, in);
    MLIRContext *ctx = b.getContext();
    AffineExpr dm, dn, dk;
    bindDims(ctx, dm, dn, dk);
    auto maps = b.getAffineMapArrayAttr({AffineMap::get(3, 0, {dm, dk}, ctx),
                                         AffineMap::get(3, 0, {dk, dn}, ctx),
                                         AffineMap::get(3, 0, {dm, dn}, ctx)});
    auto iters = b.getArrayAttr(
        {vector::IteratorTypeAttr::get(ctx, vector::IteratorType::parallel),
         vector::IteratorTypeAttr::get(ctx, vector::IteratorType::parallel),
         vector::IteratorTypeAttr::get(ctx, vector::IteratorType::reduction)});
    SmallVector<bool> inBounds = {true, true};

    auto tileLoop = scf::ForOp::create(
        b, l, warp, cst(b, tiles), cst(b, warps), ValueRange{},
        [&](OpBuilder &wb, Location, Value t, ValueRange) {
          AffineExpr d0 = getAffineDimExpr(0, wb.getContext());
          auto rowOf = [&](OpBuilder &rb, int64_t mi) -> Value {
            return apply(rb, d0.floorDiv(tilesN) * (kM * mt) + mi * kM, t);
          };
          auto colOf = [&](OpBuilder &rb, int64_t ni) -> Value {
            return apply(rb, (d0 % tilesN) * (kN * nt) + ni * kN, t);
          };
          Value accZero = arith::ConstantOp::create(
              wb, l, cast<TypedAttr>(wb.getZeroAttr(acc)));
          Value inZero = arith::ConstantOp::create(
              wb, l, cast<TypedAttr>(wb.getZeroAttr(in)));
          SmallVector<Value> accs;
          for (int64_t mi = 0; mi < mt; ++mi)
            for (int64_t ni = 0; ni < nt; ++ni)
              accs.push_back(vector::TransferReadOp::create(
                  wb, l, fragType, C, ValueRange{rowOf(wb, mi), colOf(wb, ni)},
                  accZero, inBounds));
          auto kLoop = scf::ForOp::create(
              wb, l, cst(wb, 0), cst(wb, k), cst(wb, kK), accs,
              [&](OpBuilder &kb, Location, Value kk, ValueRange iter) {
                SmallVector<Value> as, bs, out;
                for (int64_t mi = 0; mi < mt; ++mi)
                  as.push_back(vector::TransferReadOp::create(
                      kb, l, aFrag, A, ValueRange{rowOf(kb, mi), kk}, inZero,
                      inBounds));
                for (int64_t ni = 0; ni < nt; ++ni)
                  bs.push_back(vector::TransferReadOp::create(
                      kb, l, bFrag, B, ValueRange{kk, colOf(kb, ni)}, inZero,
                      inBounds));
                for (int64_t mi = 0; mi < mt; ++mi)
                  for (int64_t ni = 0; ni < nt; ++ni)
                    out.push_back(vector::ContractionOp::create(
                        kb, l, as[mi], bs[ni], iter[mi * nt + ni], maps,
                        iters));
                scf::YieldOp::create(kb, l, out);
              });
          for (int64_t mi = 0; mi < mt; ++mi)
            for (int64_t ni = 0; ni < nt; ++ni)
              vector::TransferWriteOp::create(
                  wb, l, kLoop.getResult(mi * nt + ni), C,
                  ValueRange{rowOf(wb, mi), colOf(wb, ni)}, inBounds);
          scf::YieldOp::create(wb, l);
        });
    tileLoop->setAttr(kMmaAttr, b.getUnitAttr());
    scf::YieldOp::create(b, l);
    op.erase();
  }
};

/// Points vector transfers at the shared-memory view itself rather than
/// its generic-address-space cast, so that the nvgpu conversion sees that
/// the fragments come from shared memory (and may use ldmatrix).
void foldSharedCasts(Operation *root) {
  root->walk([](memref::MemorySpaceCastOp c) {
    auto src = dyn_cast<MemRefType>(c.getSource().getType());
    auto space =
        src ? dyn_cast_or_null<gpu::AddressSpaceAttr>(src.getMemorySpace())
            : nullptr;
    if (!space ||
        space.getValue() != gpu::GPUDialect::getWorkgroupAddressSpace())
      return;
    for (OpOperand &use : llvm::make_early_inc_range(c->getUses())) {
      Operation *user = use.getOwner();
      if (auto r = dyn_cast<vector::TransferReadOp>(user);
          r && use.getOperandNumber() == 0)
        use.set(c.getSource());
      else if (auto w = dyn_cast<vector::TransferWriteOp>(user);
               w && &use == &w.getBaseMutable())
        use.set(c.getSource());
    }
  });
}

/// Runs MLIR's vector-to-nvgpu conversion on one warp-tile loop. The loop
/// is converted in a scratch function whose arguments are the values it
/// uses from above: the conversion's slice analysis otherwise follows
/// unrelated integer arithmetic of the surrounding kernel (index math of
/// other tile loads) into the set of ops it must rewrite, and fails on it.
LogicalResult convertWarpTiles(scf::ForOp loop) {
  MLIRContext *ctx = loop.getContext();
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(loop->getRegions(), captured);
  for (Value v : loop->getOperands())
    captured.insert(v);
  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(loop.getLoc());
  b.setInsertionPointToEnd(scratch->getBody());
  SmallVector<Type> types;
  for (Value v : captured)
    types.push_back(v.getType());
  auto fn = func::FuncOp::create(b, loop.getLoc(), "warp_tiles",
                                 b.getFunctionType(types, {}));
  Block *entry = fn.addEntryBlock();
  IRMapping in;
  for (auto [v, arg] : llvm::zip(captured, entry->getArguments()))
    in.map(v, arg);
  b.setInsertionPointToEnd(entry);
  b.clone(*loop, in);
  func::ReturnOp::create(b, loop.getLoc());

  RewritePatternSet prepare(ctx);
  populatePrepareVectorToMMAPatterns(prepare, /*useNvGpu=*/true);
  if (failed(applyPatternsGreedily(fn, std::move(prepare))))
    return failure();
  IRRewriter rewriter(ctx);
  if (failed(convertVectorToNVVMCompatibleMMASync(rewriter, fn)))
    return failure();
  // The conversion leaves the vector form behind, dead but still threaded
  // through the K loop's iteration arguments: fold it away.
  RewritePatternSet cleanup(ctx);
  scf::ForOp::getCanonicalizationPatterns(cleanup, ctx);
  if (failed(applyPatternsGreedily(fn, std::move(cleanup))))
    return failure();
  // Every contraction must have become an mma.sync: a leftover one would
  // be a silent fall back to a path the GPU lowering does not have.
  WalkResult left = fn.walk([&](vector::ContractionOp c) {
    loop.emitOpError("has a contraction the nvgpu conversion left: ")
        << c.getOperation();
    return WalkResult::interrupt();
  });
  if (left.wasInterrupted())
    return failure();

  // Move the converted code back in place of the loop.
  IRMapping out;
  for (auto [v, arg] : llvm::zip(captured, entry->getArguments()))
    out.map(arg, v);
  OpBuilder back(loop);
  for (Operation &op : entry->without_terminator())
    back.clone(op, out)->removeAttr(kMmaAttr);
  loop.erase();
  return success();
}

struct GPUMMASyncPass
    : mlir::tessera::impl::GPUMMASyncPassBase<GPUMMASyncPass> {
  void runOnOperation() override {
    foldSharedCasts(getOperation());
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp f) {
      if (f->hasAttr(kMmaAttr))
        loops.push_back(f);
    });
    for (scf::ForOp loop : loops)
      if (failed(convertWarpTiles(loop)))
        return signalPassFailure();
  }
};

} // namespace
