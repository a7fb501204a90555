//===- GPUMatmulToMMA.cpp - Tile matmuls on tensor cores ------------------===//
//
// Two steps of the tensor-core path (see Passes.td):
//   tessera-gpu-matmul-to-mma  (before the GPU mapping) rewrites a static
//     linalg.matmul on tile buffers as warp-level vector code: each warp
//     owns warp tiles of C, keeps them in vector registers across the K
//     loop and issues one 16x8xK vector.contract per fragment (K = 16 for
//     f16/bf16 inputs, 8 for f32 inputs on tf32 tensor cores, which the
//     precision policy "tf32" allows);
//   tessera-gpu-mma-sync       (after the mapping, when the tiles live in
//     shared memory) hands that code to MLIR's convert-vector-to-gpu in its
//     nvgpu flavour, which picks nvgpu.ldmatrix for the A/B fragments and
//     nvgpu.mma.sync for the products from its fragment-layout tables.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "mlir/Conversion/VectorToGPU/VectorToGPU.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_GPUMATMULTOMMAPASS
#define GEN_PASS_DEF_GPUMMASYNCPASS
#define GEN_PASS_DEF_GPUMMATONVVMPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

constexpr int64_t kWarp = 32;
/// Marks the warp-tile loops for tessera-gpu-mma-sync.
constexpr const char *kMmaAttr = "tile.mma_warp_tiles";
// The mma.sync instruction shape (m16n8k16 for 16-bit inputs, m16n8k8 for
// tf32) with f32 accumulation.
constexpr int64_t kM = 16, kN = 8;
int64_t instructionK(Type in) { return in.isF32() ? 8 : 16; }

bool isStaticRowMajor(MemRefType t) {
  return t && t.hasStaticShape() && t.getRank() == 2 &&
         t.getLayout().isIdentity();
}

/// Whether the tensor-core path handles `op`: static row-major buffers,
/// f16 x f16 or bf16 x bf16 (or f32 x f32 when `tf32` allows rounding the
/// inputs) into f32, extents multiples of the instruction.
bool eligible(linalg::MatmulOp op, bool tf32) {
  if (!op.hasPureBufferSemantics() || op.hasUserDefinedMaps())
    return false;
  auto a = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto b = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
  auto c = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!isStaticRowMajor(a) || !isStaticRowMajor(b) || !isStaticRowMajor(c))
    return false;
  Type in = a.getElementType();
  if (in != b.getElementType() ||
      !(in.isF16() || in.isBF16() || (tf32 && in.isF32())) ||
      !c.getElementType().isF32())
    return false;
  int64_t m = c.getDimSize(0), n = c.getDimSize(1), k = a.getDimSize(1);
  return a.getDimSize(0) == m && b.getDimSize(0) == k && b.getDimSize(1) == n &&
         m % kM == 0 && n % kN == 0 && k % instructionK(in) == 0;
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
    auto precision = f->getAttrOfType<StringAttr>("tile.dot_precision");
    bool tf32 = precision && precision.getValue() == "tf32";
    SmallVector<linalg::MatmulOp> matmuls;
    f.walk([&](linalg::MatmulOp op) {
      if (eligible(op, tf32))
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
    const int64_t kK = instructionK(in);
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
/// The workgroup-space form of `v` when `v` is a collapse_shape of the
/// generic-space cast of a shared view (a reshaped tile): the same
/// collapse_shape rebuilt on the view. Null otherwise.
Value sharedReshape(Value v) {
  auto collapse = v.getDefiningOp<memref::CollapseShapeOp>();
  if (!collapse)
    return nullptr;
  auto c = collapse.getSrc().getDefiningOp<memref::MemorySpaceCastOp>();
  if (!c)
    return nullptr;
  if (!mlir::tessera::isWorkgroupMemRef(c.getSource().getType()))
    return nullptr;
  OpBuilder b(collapse);
  return memref::CollapseShapeOp::create(b, collapse.getLoc(), c.getSource(),
                                         collapse.getReassociationIndices());
}

void foldSharedCasts(Operation *root) {
  // Reshaped tiles (attention's [1, 1, M, D] loads used as M x D matrices)
  // are read through a collapse_shape of the shared view itself, so that
  // their fragments can come from ldmatrix too.
  root->walk([](scf::ForOp loop) {
    if (!loop->hasAttr(kMmaAttr))
      return;
    loop->walk([](vector::TransferReadOp r) {
      if (Value shared = sharedReshape(r.getBase()))
        r.getBaseMutable().assign(shared);
    });
  });
  root->walk([](memref::MemorySpaceCastOp c) {
    if (!mlir::tessera::isWorkgroupMemRef(c.getSource().getType()))
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

/// `t` with every bf16 element type (of a vector or memref) replaced by
/// `to`; other types unchanged.
Type swapElementType(Type t, Type from, Type to) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.getElementType() == from ? VectorType::get(v.getShape(), to) : t;
  if (auto m = dyn_cast<MemRefType>(t))
    return m.getElementType() == from
               ? MemRefType::get(m.getShape(), to, m.getLayout(),
                                 m.getMemorySpace())
               : t;
  return t == from ? to : t;
}

/// Retypes every value in `root` (results and block arguments) whose type
/// has element type `from` to `to`, and float constants of type `from` to
/// the same value in `to`. Used to run the f16 fragment machinery on bf16
/// data: both are 16-bit and ldmatrix/mma.sync fragments are bit patterns
/// until the mma.sync itself, which keeps the real type.
void swapElementTypes(Operation *root, Type from, Type to) {
  root->walk([&](Operation *op) {
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      if (auto f = dyn_cast<FloatAttr>(c.getValue()); f && f.getType() == from) {
        bool lost = false;
        llvm::APFloat v = f.getValue();
        v.convert(cast<FloatType>(to).getFloatSemantics(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
        c.setValueAttr(FloatAttr::get(to, v));
      }
    for (Value r : op->getResults())
      r.setType(swapElementType(r.getType(), from, to));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument a : block.getArguments())
          a.setType(swapElementType(a.getType(), from, to));
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
  // MLIR 22's vector-to-nvgpu conversion has fragment types for f16 but
  // not bf16: bf16 fragments are converted as f16 (same width, same
  // layouts) and retyped back afterwards; the mma.sync keeps bf16.
  Type bf16 = BFloat16Type::get(ctx);
  Type f16 = Float16Type::get(ctx);
  bool isBF16 = false;
  loop->walk([&](vector::ContractionOp c) {
    isBF16 |= cast<VectorType>(c.getLhsType()).getElementType().isBF16();
  });
  SmallVector<Type> types;
  for (Value v : captured)
    types.push_back(isBF16 ? swapElementType(v.getType(), bf16, f16)
                           : v.getType());
  auto fn = func::FuncOp::create(b, loop.getLoc(), "warp_tiles",
                                 b.getFunctionType(types, {}));
  Block *entry = fn.addEntryBlock();
  IRMapping in;
  for (auto [v, arg] : llvm::zip(captured, entry->getArguments()))
    in.map(v, arg);
  b.setInsertionPointToEnd(entry);
  Operation *copy = b.clone(*loop, in);
  if (isBF16)
    swapElementTypes(copy, bf16, f16);
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
  for (Operation &op : entry->without_terminator()) {
    Operation *c = back.clone(op, out);
    c->removeAttr(kMmaAttr);
    if (isBF16)
      swapElementTypes(c, f16, bf16);
  }
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

/// nvgpu.mma.sync m16n8k16 bf16 x bf16 + f32 and m16n8k8 tf32 (f32
/// fragments) + f32 -> nvvm.mma.sync.
struct MmaToNVVM : OpRewritePattern<nvgpu::MmaSyncOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nvgpu::MmaSyncOp op,
                                PatternRewriter &b) const override {
    auto aType = cast<VectorType>(op.getMatrixA().getType());
    auto bType = cast<VectorType>(op.getMatrixB().getType());
    auto cType = cast<VectorType>(op.getMatrixC().getType());
    SmallVector<int64_t> mnk;
    for (Attribute a : op.getMmaShape())
      mnk.push_back(cast<IntegerAttr>(a).getInt());
    Type in = aType.getElementType();
    if (in != bType.getElementType() || !(in.isBF16() || in.isF32()) ||
        !cType.getElementType().isF32())
      return failure();
    const bool tf32 = in.isF32();
    // Fragment shapes of the PTX ISA: A 4 registers, B 2, C/D 2x2 f32;
    // a bf16 register holds a row of two elements, a tf32 one one element.
    int64_t width = tf32 ? 1 : 2;
    if (mnk != SmallVector<int64_t>{16, 8, tf32 ? 8 : 16} ||
        aType.getShape() != ArrayRef<int64_t>{4, width} ||
        bType.getShape() != ArrayRef<int64_t>{2, width} ||
        cType.getShape() != ArrayRef<int64_t>{2, 2})
      return op.emitOpError(tf32 ? "tf32 mma.sync supports m16n8k8 fragments "
                                   "only"
                                 : "bf16 mma.sync supports m16n8k16 "
                                   "fragments only");
    Location l = op.getLoc();
    Type i32 = b.getI32Type(), f32 = b.getF32Type();
    auto packedRow = VectorType::get({1}, i32);
    auto regs = [&](Value frag, int64_t n) {
      SmallVector<Value> out;
      for (int64_t i = 0; i < n; ++i) {
        Value row = vector::ExtractOp::create(b, l, frag, ArrayRef<int64_t>{i});
        if (tf32) {
          Value x = vector::ExtractOp::create(b, l, row, ArrayRef<int64_t>{0});
          out.push_back(NVVM::ConvertFloatToTF32Op::create(
              b, l, i32, x, NVVM::FPRoundingMode::RNA,
              NVVM::SaturationMode::NONE, /*relu=*/false));
          continue;
        }
        Value packed = vector::BitCastOp::create(b, l, packedRow, row);
        out.push_back(
            vector::ExtractOp::create(b, l, packed, ArrayRef<int64_t>{0}));
      }
      return out;
    };
    SmallVector<Value> a = regs(op.getMatrixA(), 4), bs = regs(op.getMatrixB(), 2);
    SmallVector<Value> c;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        c.push_back(vector::ExtractOp::create(b, l, op.getMatrixC(),
                                              ArrayRef<int64_t>{i, j}));
    auto resType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                    {f32, f32, f32, f32});
    NVVM::MMATypes type = tf32 ? NVVM::MMATypes::tf32 : NVVM::MMATypes::bf16;
    auto mma = NVVM::MmaOp::create(
        b, l, resType, a, bs, c, ArrayRef<int64_t>{16, 8, tf32 ? 8 : 16},
        /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
        std::array<NVVM::MMATypes, 2>{type, type},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(LLVM::ExtractValueOp::create(b, l, mma.getResult(),
                                               ArrayRef<int64_t>{i}));
    b.replaceOpWithNewOp<vector::FromElementsOp>(op, cType, d);
    return success();
  }
};

struct GPUMmaToNVVMPass
    : mlir::tessera::impl::GPUMmaToNVVMPassBase<GPUMmaToNVVMPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MmaToNVVM>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
