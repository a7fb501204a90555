//===- GPUMatmulToMMA.cpp - Tile matmuls on tensor cores ------------------===//
//
// Two steps of the tensor-core path (see Passes.td):
//   tessera-gpu-matmul-to-mma  (before the GPU mapping) rewrites a static
//     linalg.matmul on tile buffers as warp-level vector code: each warp
//     owns warp tiles of C, keeps them in vector registers across the K
//     loop and issues one 16x8xK vector.contract per fragment (K = 16 for
//     f16/bf16 inputs, 8 for f32 inputs on tf32 tensor cores, which the
//     precision policy "tf32" allows, 32 for fp8 inputs on sm_89+);
//   tessera-gpu-mma-sync       (after the mapping, when the tiles live in
//     shared memory) hands that code to MLIR's convert-vector-to-gpu in its
//     nvgpu flavour, which picks nvgpu.ldmatrix for the A/B fragments and
//     nvgpu.mma.sync for the products from its fragment-layout tables.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"
#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "ConversionUtils.h"

#include "mlir/Conversion/VectorToGPU/VectorToGPU.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_GPUMATMULTOMMAPASS
#define GEN_PASS_DEF_GPUMMASYNCPASS
#define GEN_PASS_DEF_GPUMMATONVVMPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using mlir::tessera::tile::isFloat8;

namespace {

constexpr int64_t kWarp = 32;
/// Marks the warp-tile loops for tessera-gpu-mma-sync.
constexpr const char *kMmaAttr = "tile.mma_warp_tiles";
/// On an nvgpu.mma.sync with i8 fragments: the fp8 format they hold
/// ("e4m3" or "e5m2").
constexpr const char *kFp8Attr = "tile.fp8";
/// On a warp-tile loop: its accumulator tile is only read and written by
/// it within the enclosing loop, so the fragments may stay in registers
/// across that loop (see hoistAccumulators).
constexpr const char *kHoistAttr = "tile.mma_hoist_accumulators";
// The mma.sync instruction shape (m16n8k16 for 16-bit inputs, m16n8k8 for
// tf32, m16n8k32 for fp8) with f32 accumulation.
constexpr int64_t kM = 16, kN = 8;
int64_t instructionK(Type in) {
  return in.isF32() ? 8 : in.getIntOrFloatBitWidth() == 8 ? 32 : 16;
}

bool isStaticRowMajor(MemRefType t) {
  return t && t.hasStaticShape() && t.getRank() == 2 &&
         t.getLayout().isIdentity();
}

/// Whether the tensor-core path handles `op`: static row-major buffers,
/// f16 x f16 or bf16 x bf16 (or f32 x f32 when `tf32` allows rounding the
/// inputs, or fp8 x fp8 of one format when the target has `fp8` tensor
/// cores) into f32, extents multiples of the instruction.
bool eligible(linalg::MatmulOp op, bool tf32, bool fp8) {
  if (!op.hasPureBufferSemantics() || op.hasUserDefinedMaps())
    return false;
  auto a = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto b = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
  auto c = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!isStaticRowMajor(a) || !isStaticRowMajor(b) || !isStaticRowMajor(c))
    return false;
  Type in = a.getElementType();
  if (in != b.getElementType() ||
      !(in.isF16() || in.isBF16() || (tf32 && in.isF32()) ||
        (fp8 && isFloat8(in))) ||
      !c.getElementType().isF32())
    return false;
  int64_t m = c.getDimSize(0), n = c.getDimSize(1), k = a.getDimSize(1);
  return a.getDimSize(0) == m && b.getDimSize(0) == k && b.getDimSize(1) == n &&
         m % kM == 0 && n % kN == 0 && k % instructionK(in) == 0;
}

/// Whether `op` is directly in the body of an scf.for that its accumulator
/// is defined outside of and that uses the accumulator in nothing but `op`
/// (the kernel's K loop of `acc = tile.dot(a, b, acc)`).
bool accumulatesAcrossLoop(linalg::MatmulOp op) {
  auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
  Value c = op.getDpsInits()[0];
  if (!loop || !loop.isDefinedOutsideOfLoop(c) ||
      !c.getDefiningOp<memref::AllocOp>())
    return false;
  // The buffer and every view of it made outside the loop.
  SmallVector<Value> work = {c};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user == op)
        continue;
      if (loop->isAncestor(user))
        return false;
      if (isa<ViewLikeOpInterface>(user))
        work.append(user->result_begin(), user->result_end());
    }
  }
  return true;
}

/// Whether `fragments` f32 accumulator fragments (4 registers each) per
/// thread may stay in registers across the kernel's K loop: the registers a
/// thread may have with `warps` warps per block (65536 per SM, at most 255)
/// must leave room for the A/B fragments and addresses of the dots and for
/// the vectorised tile fills of the pipelined loads (104 registers; 128 for
/// fp8, whose B fragments are assembled from byte loads). Otherwise ptxas
/// spills: with 64 accumulator registers and 64 to spare of the 128 that 16
/// warps allow, 128x256 f16/tf32 tiles did; with 32 and 96 to spare,
/// 128x128 f16 tiles did once the fills became 16-byte stores; and so did
/// 128x128 fp8 tiles on 4 warps (128 + 112 of 255) with cp.async copies.
bool fitsInRegisters(int64_t fragments, int64_t warps, Type in) {
  int64_t cap = std::min<int64_t>(255, 65536 / (32 * warps));
  int64_t reserve = in.getIntOrFloatBitWidth() == 8 ? 128 : 104;
  return 4 * fragments + reserve <= cap;
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
  using GPUMatmulToMMAPassBase::GPUMatmulToMMAPassBase;
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (!f->hasAttr("tile.kernel"))
      return;
    int64_t warps = tessera::tile::numWarps(f);
    auto precision = f->getAttrOfType<StringAttr>("tile.dot_precision");
    bool tf32 = precision && precision.getValue() == "tf32";
    SmallVector<linalg::MatmulOp> matmuls;
    f.walk([&](linalg::MatmulOp op) {
      // fp8 tiles need more registers than the others (their B fragments
      // are assembled from byte loads): with 16 warps, i.e. at most 128
      // registers per thread, ptxas spilled on them, so those keep the
      // generic lowering.
      if (eligible(op, tf32, fp8 && warps <= 8))
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
    // Decided before the rewrite adds its own uses of C to the loop.
    const bool acrossLoop = accumulatesAcrossLoop(op);
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

    // The code of one warp tile `t` (an index value).
    auto emitTile = [&](OpBuilder &wb, Value t) {
      AffineExpr d0 = getAffineDimExpr(0, wb.getContext());
      auto rowOf = [&](OpBuilder &rb, int64_t mi) -> Value {
        return apply(rb, d0.floorDiv(tilesN) * (kM * mt) + mi * kM, t);
      };
      auto colOf = [&](OpBuilder &rb, int64_t ni) -> Value {
        return apply(rb, (d0 % tilesN) * (kN * nt) + ni * kN, t);
      };
      Value accZero = arith::ConstantOp::create(
          wb, l, cast<TypedAttr>(wb.getZeroAttr(acc)));
      Value inZero =
          arith::ConstantOp::create(wb, l, cast<TypedAttr>(wb.getZeroAttr(in)));
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
                    kb, l, as[mi], bs[ni], iter[mi * nt + ni], maps, iters));
            scf::YieldOp::create(kb, l, out);
          });
      for (int64_t mi = 0; mi < mt; ++mi)
        for (int64_t ni = 0; ni < nt; ++ni)
          vector::TransferWriteOp::create(
              wb, l, kLoop.getResult(mi * nt + ni), C,
              ValueRange{rowOf(wb, mi), colOf(wb, ni)}, inBounds);
    };
    // When every warp owns the same number of tiles, they are unrolled: the
    // loop `warp to tiles step tiles` runs once per warp (a loop rather than
    // straight-line code, so that it stays one unit through the mapping).
    // tessera-gpu-mma-sync can then keep each fragment in registers across
    // the kernel's K loop (kHoistAttr).
    scf::ForOp tileLoop;
    if (tiles % warps == 0) {
      tileLoop = scf::ForOp::create(
          b, l, warp, cst(b, tiles), cst(b, tiles), ValueRange{},
          [&](OpBuilder &wb, Location, Value t, ValueRange) {
            AffineExpr d0 = getAffineDimExpr(0, wb.getContext());
            for (int64_t j = 0; j < tiles / warps; ++j)
              emitTile(wb, apply(wb, d0 + j * warps, t));
            scf::YieldOp::create(wb, l);
          });
      if (acrossLoop && fitsInRegisters(tiles / warps * mt * nt, warps, in))
        tileLoop->setAttr(kHoistAttr, b.getUnitAttr());
    } else {
      tileLoop = scf::ForOp::create(
          b, l, warp, cst(b, tiles), cst(b, warps), ValueRange{},
          [&](OpBuilder &wb, Location, Value t, ValueRange) {
            emitTile(wb, t);
            scf::YieldOp::create(wb, l);
          });
    }
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

/// `t` with element type `from` (of a vector or memref, or `t` itself)
/// replaced by `to`; other types unchanged.
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
/// has element type `from` to `to`, and constants of type `from` to `to`
/// (float to float: the same value; fp8 to and from i8: the same bits).
/// Used to run the f16 fragment machinery on bf16 data and the i8 one on
/// fp8 data: the widths match and ldmatrix/mma.sync fragments are bit
/// patterns until the mma.sync itself, which keeps the real type.
void swapElementTypes(Operation *root, Type from, Type to) {
  root->walk([&](Operation *op) {
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      if (auto f = dyn_cast<FloatAttr>(c.getValue());
          f && f.getType() == from && isa<FloatType>(to)) {
        bool lost = false;
        llvm::APFloat v = f.getValue();
        v.convert(cast<FloatType>(to).getFloatSemantics(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
        c.setValueAttr(FloatAttr::get(to, v));
      } else if (auto i = dyn_cast<IntegerAttr>(c.getValue());
                 i && i.getType() == from && isa<FloatType>(to)) {
        // An i8 stand-in constant back to fp8: the same bits.
        c.setValueAttr(FloatAttr::get(
            to, llvm::APFloat(cast<FloatType>(to).getFloatSemantics(),
                              i.getValue())));
      } else if (auto f = dyn_cast<FloatAttr>(c.getValue());
                 f && f.getType() == from && isa<IntegerType>(to)) {
        // fp8 to its i8 stand-in: the same bits.
        c.setValueAttr(IntegerAttr::get(to, f.getValue().bitcastToAPInt()));
      } else if (auto d = dyn_cast<DenseElementsAttr>(c.getValue());
                 d && d.getElementType() == from) {
        // Vector constants here are fragment initialisers (zeros): the
        // same bits are the same value in both types.
        c.setValueAttr(d.bitcast(to));
      }
    }
    for (Value r : op->getResults())
      r.setType(swapElementType(r.getType(), from, to));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument a : block.getArguments())
          a.setType(swapElementType(a.getType(), from, to));
  });
}

/// An i8 memref over the same bytes as the fp8 memref `v`, rebuilt from
/// the memref.view of the shared arena it comes from (through subviews,
/// collapse_shapes and memory-space casts); null if `v` has another origin.
Value i8Alias(OpBuilder &b, Value v) {
  Type i8 = b.getI8Type();
  Operation *def = v.getDefiningOp();
  if (!def)
    return nullptr;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(def);
  Location l = def->getLoc();
  auto retyped = [&](Type t) {
    auto m = cast<MemRefType>(t);
    return MemRefType::get(m.getShape(), i8, m.getLayout(), m.getMemorySpace());
  };
  if (auto view = dyn_cast<memref::ViewOp>(def)) {
    if (!view.getSource().getType().getElementType().isInteger(8))
      return nullptr;
    return memref::ViewOp::create(b, l, retyped(v.getType()), view.getSource(),
                                  view.getByteShift(), view.getSizes());
  }
  if (auto cast = dyn_cast<memref::MemorySpaceCastOp>(def)) {
    Value src = i8Alias(b, cast.getSource());
    return src ? memref::MemorySpaceCastOp::create(b, l, retyped(v.getType()),
                                                   src)
                     .getResult()
               : nullptr;
  }
  if (auto sub = dyn_cast<memref::SubViewOp>(def)) {
    Value src = i8Alias(b, sub.getSource());
    return src ? memref::SubViewOp::create(
                     b, l, retyped(v.getType()), src, sub.getMixedOffsets(),
                     sub.getMixedSizes(), sub.getMixedStrides())
                     .getResult()
               : nullptr;
  }
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def)) {
    Value src = i8Alias(b, collapse.getSrc());
    return src ? memref::CollapseShapeOp::create(
                     b, l, src, collapse.getReassociationIndices())
                     .getResult()
               : nullptr;
  }
  return nullptr;
}

/// Runs MLIR's vector-to-nvgpu conversion on one warp-tile loop. The loop
/// is converted in a scratch function whose arguments are the values it
/// uses from above: the conversion's slice analysis otherwise follows
/// unrelated integer arithmetic of the surrounding kernel (index math of
/// other tile loads) into the set of ops it must rewrite, and fails on it.
FailureOr<scf::ForOp> convertWarpTiles(scf::ForOp loop) {
  MLIRContext *ctx = loop.getContext();
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(loop->getRegions(), captured);
  for (Value v : loop->getOperands())
    captured.insert(v);
  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(loop.getLoc());
  b.setInsertionPointToEnd(scratch->getBody());
  // MLIR 22's vector-to-nvgpu conversion has fragment types for f16 and i8
  // but not bf16 or fp8: those fragments are converted as f16 or i8 (same
  // width, same layouts) and retyped back afterwards; the mma.sync keeps
  // the real type. Inside the warp-tile loop no other value has the
  // stand-in type (the accumulators are f32).
  Type real, standIn;
  loop->walk([&](vector::ContractionOp c) {
    Type in = cast<VectorType>(c.getLhsType()).getElementType();
    if (in.isBF16() || isFloat8(in)) {
      real = in;
      standIn = in.isBF16() ? Type(Float16Type::get(ctx))
                            : Type(IntegerType::get(ctx, 8));
    }
  });
  SmallVector<Type> types;
  for (Value v : captured)
    types.push_back(real ? swapElementType(v.getType(), real, standIn)
                         : v.getType());
  auto fn = func::FuncOp::create(b, loop.getLoc(), "warp_tiles",
                                 b.getFunctionType(types, {}));
  Block *entry = fn.addEntryBlock();
  IRMapping in;
  for (auto [v, arg] : llvm::zip(captured, entry->getArguments()))
    in.map(v, arg);
  b.setInsertionPointToEnd(entry);
  Operation *copy = b.clone(*loop, in);
  if (real)
    swapElementTypes(copy, real, standIn);
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

  // Move the converted code back in place of the loop. fp8 code stays on
  // its i8 stand-in (nvgpu.ldmatrix and nvgpu.mma.sync have no fp8 forms):
  // the fp8 tiles it reads are replaced by i8 aliases of the same shared
  // bytes, other fp8 values (padding constants) by bitcasts, and each
  // mma.sync names the real format in kFp8Attr for
  // tessera-gpu-mma-to-nvvm and the sim.
  const bool keepStandIn = real && isFloat8(real);
  IRMapping out;
  OpBuilder back(loop);
  for (auto [v, arg] : llvm::zip(captured, entry->getArguments())) {
    Value mapped = v;
    if (keepStandIn && v.getType() != arg.getType()) {
      if (isa<MemRefType>(v.getType()))
        mapped = i8Alias(back, v);
      else
        mapped = arith::BitcastOp::create(back, v.getLoc(), arg.getType(), v);
      if (!mapped)
        return loop.emitOpError("reads an fp8 tile that is not a view of "
                                "the shared-memory arena: ")
               << v;
    }
    out.map(arg, mapped);
  }
  scf::ForOp converted;
  for (Operation &op : entry->without_terminator()) {
    Operation *c = back.clone(op, out);
    if (c->hasAttr(kMmaAttr))
      converted = dyn_cast<scf::ForOp>(c);
    c->removeAttr(kMmaAttr);
    if (real && !keepStandIn)
      swapElementTypes(c, standIn, real);
    if (keepStandIn)
      c->walk([&](nvgpu::MmaSyncOp mma) {
        mma->setAttr(
            kFp8Attr,
            back.getStringAttr(isa<Float8E4M3FNType>(real) ? "e4m3" : "e5m2"));
      });
  }
  loop.erase();
  if (!converted)
    return failure();
  return converted;
}

/// Whether `op` only reads memory (or has no effects) and has no regions.
bool isReadOnlyLeaf(Operation *op) {
  if (op->getNumRegions() != 0)
    return false;
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.onlyHasEffect<MemoryEffects::Read>();
}

/// Collects into `slice` the ops of `loop`'s body that the values `roots`
/// are computed from, through the ops `allowed` accepts and stopping at
/// values defined outside the body and at ops `skip` names. False when the
/// slice depends on the loop's induction variable or iteration arguments or
/// needs an op `allowed` rejects.
bool collectInvariantSlice(scf::ForOp loop, ArrayRef<Value> roots,
                           llvm::SetVector<Operation *> &slice,
                           function_ref<bool(Operation *)> allowed,
                           function_ref<bool(Operation *)> skip) {
  SmallVector<Value> work(roots);
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == loop.getInductionVar() ||
        llvm::is_contained(loop.getRegionIterArgs(), v))
      return false;
    Operation *d = v.getDefiningOp();
    if (!d || d->getBlock() != loop.getBody() || slice.contains(d) || skip(d))
      continue;
    if (!allowed(d))
      return false;
    slice.insert(d);
    work.append(d->operand_begin(), d->operand_end());
  }
  return true;
}

/// Keeps the accumulator fragments of a converted, unrolled warp-tile unit
/// (a loop marked kHoistAttr that runs once per warp, from the warp index,
/// in a tile.distributed region directly in the kernel's K loop) in
/// registers across that K loop: the fragment
/// reads of the accumulator tile run once before the loop, the fragments
/// become iteration arguments of the K loop (each dot's K loop starts from
/// them and yields the new ones), and the writes back run once after it,
/// followed by a barrier. Leaves the code as it is (success) when it does
/// not have that form.
LogicalResult hoistAccumulators(scf::ForOp unit) {
  // The region may already have been inlined by the canonicalizer.
  auto region = dyn_cast<scf::ExecuteRegionOp>(unit->getParentOp());
  if (region &&
      (!region->hasAttr("tile.distributed") || region->getNumResults() != 0 ||
       !region.getRegion().hasOneBlock()))
    return success();
  auto kLoop = dyn_cast<scf::ForOp>(region ? region->getParentOp()
                                           : unit->getParentOp());
  if (!kLoop)
    return success();
  IRRewriter rewriter(unit.getContext());
  // Each accumulator fragment's chain through the unit: where its initial
  // value enters (an iteration argument of a dot's K loop, or the C operand
  // of the first mma.sync when that loop had one iteration and was folded
  // away) and its final value.
  struct Chain {
    OpOperand *init;
    Value final;
  };
  SmallVector<Chain> chains;
  for (Operation &op : unit.getBody()->without_terminator()) {
    if (auto f = dyn_cast<scf::ForOp>(op); f && f.getNumResults() != 0) {
      for (auto [init, result] :
           llvm::zip(f.getInitArgsMutable(), f.getResults()))
        chains.push_back({&init, result});
    } else if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op);
               mma && !mma.getMatrixC().getDefiningOp<nvgpu::MmaSyncOp>()) {
      Operation *last = mma;
      while (true) {
        nvgpu::MmaSyncOp next;
        for (OpOperand &use : last->getResult(0).getUses())
          if (auto m = dyn_cast<nvgpu::MmaSyncOp>(use.getOwner());
              m && &use == &m.getMatrixCMutable())
            next = m;
        if (!next)
          break;
        last = next;
      }
      chains.push_back({&mma.getMatrixCMutable(), last->getResult(0)});
    }
  }
  if (chains.empty())
    return success();
  auto isChainOp = [&](Operation *d) {
    return isa<scf::ForOp, nvgpu::MmaSyncOp>(d) &&
           llvm::any_of(chains, [&](const Chain &c) {
             return c.final.getDefiningOp() == d || c.init->getOwner() == d;
           });
  };
  // Flatten the unit loop (its one iteration is its lower bound) and the
  // region into the K loop's body.
  rewriter.eraseOp(unit.getBody()->getTerminator());
  rewriter.inlineBlockBefore(unit.getBody(), unit, {unit.getLowerBound()});
  rewriter.eraseOp(unit);
  if (region) {
    Block &regionBlock = region.getRegion().front();
    rewriter.eraseOp(regionBlock.getTerminator());
    rewriter.inlineBlockBefore(&regionBlock, region, {});
    rewriter.eraseOp(region);
  }

  // The ops computing the dots' initial fragments (reads of the
  // accumulator tile and index math): read-only and independent of the K
  // loop, so they can run before it.
  Block *body = kLoop.getBody();
  llvm::SetVector<Operation *> reads;
  SmallVector<Value> roots;
  for (const Chain &c : chains)
    roots.push_back(c.init->get());
  if (!collectInvariantSlice(kLoop, roots, reads, isReadOnlyLeaf,
                             [](Operation *) { return false; }))
    return success();
  // The ops writing the final fragments back (extracts and stores), and the
  // pure ops their other operands need, to run after the loop.
  llvm::SetVector<Operation *> writes, writeInputs;
  SmallVector<Operation *> stores;
  for (const Chain &c : chains)
    for (Operation *user : c.final.getUsers())
      writes.insert(user);
  for (size_t i = 0; i < writes.size(); ++i)
    for (Value r : writes[i]->getResults())
      for (Operation *user : r.getUsers())
        writes.insert(user);
  for (Operation *w : writes) {
    if (w->getBlock() != body || w->getNumRegions() != 0)
      return success();
    if (isMemoryEffectFree(w))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(w);
    if (!effects || !effects.onlyHasEffect<MemoryEffects::Write>() ||
        w->getNumResults() != 0)
      return success();
    stores.push_back(w);
  }
  roots.clear();
  for (Operation *w : writes)
    roots.append(w->operand_begin(), w->operand_end());
  if (!collectInvariantSlice(
          kLoop, roots, writeInputs,
          [](Operation *d) {
            return isMemoryEffectFree(d) && d->getNumRegions() == 0;
          },
          [&](Operation *d) { return writes.contains(d) || isChainOp(d); }))
    return success();

  // Reads before the loop, in program order.
  IRMapping before;
  rewriter.setInsertionPoint(kLoop);
  for (Operation &op : *body)
    if (reads.contains(&op))
      rewriter.clone(op, before);
  SmallVector<Value> inits;
  for (const Chain &c : chains)
    inits.push_back(before.lookupOrDefault(c.init->get()));
  // The fragments as iteration arguments of the K loop.
  auto newLoop =
      cast<LoopLikeOpInterface>(kLoop.getOperation())
          .replaceWithAdditionalYields(
              rewriter, inits,
              /*replaceInitOperandUsesInLoop=*/false,
              [&](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
                SmallVector<Value> yields;
                size_t i = 0;
                for (const Chain &c : chains) {
                  c.init->set(args[i++]);
                  yields.push_back(c.final);
                }
                return yields;
              });
  if (failed(newLoop))
    return failure();
  Operation *loopOp = newLoop->getOperation();
  // Writes after the loop, from its new results, then a barrier: the
  // epilogue's threads read what other threads wrote.
  IRMapping after;
  size_t i = loopOp->getNumResults() - inits.size();
  for (const Chain &c : chains)
    after.map(c.final, loopOp->getResult(i++));
  rewriter.setInsertionPointAfter(loopOp);
  Block *newBody = &loopOp->getRegion(0).front();
  for (Operation &op : *newBody)
    if (writeInputs.contains(&op) || writes.contains(&op))
      rewriter.clone(op, after);
  gpu::BarrierOp::create(rewriter, loopOp->getLoc());
  // The writes in the loop go; so do the reads and extracts left unused.
  for (Operation *st : stores)
    rewriter.eraseOp(st);
  SmallVector<Operation *> dead;
  for (Operation &op : *newBody)
    if (reads.contains(&op) || writes.contains(&op) ||
        writeInputs.contains(&op))
      dead.push_back(&op);
  for (Operation *op : llvm::reverse(dead))
    if (op->use_empty())
      rewriter.eraseOp(op);
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
    for (scf::ForOp loop : loops) {
      bool hoist = loop->hasAttr(kHoistAttr);
      FailureOr<scf::ForOp> converted = convertWarpTiles(loop);
      if (failed(converted))
        return signalPassFailure();
      (*converted)->removeAttr(kHoistAttr);
      if (hoist && failed(hoistAccumulators(*converted)))
        return signalPassFailure();
    }
  }
};

/// nvgpu.mma.sync m16n8k16 bf16 x bf16 + f32, m16n8k32 fp8 x fp8 + f32 and
/// m16n8k8 tf32 (f32 fragments) + f32 -> nvvm.mma.sync.
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
    // fp8 fragments travel as i8 with the format in kFp8Attr.
    if (auto f = op->getAttrOfType<StringAttr>(kFp8Attr); f && in.isInteger(8))
      in = f.getValue() == "e4m3" ? Type(Float8E4M3FNType::get(getContext()))
                                  : Type(Float8E5M2Type::get(getContext()));
    Type bIn = bType.getElementType().isInteger(8) && isFloat8(in)
                   ? in
                   : bType.getElementType();
    if (in != bIn || !(in.isBF16() || in.isF32() || isFloat8(in)) ||
        !cType.getElementType().isF32())
      return failure();
    const bool tf32 = in.isF32();
    // Fragment shapes of the PTX ISA: A 4 registers, B 2, C/D 2x2 f32;
    // a register holds a row of two bf16, four fp8 or one tf32 element.
    int64_t width = tf32 ? 1 : 32 / in.getIntOrFloatBitWidth();
    int64_t k = 16 * width / 2;
    if (mnk != SmallVector<int64_t>{16, 8, tf32 ? 8 : k} ||
        aType.getShape() != ArrayRef<int64_t>{4, width} ||
        bType.getShape() != ArrayRef<int64_t>{2, width} ||
        cType.getShape() != ArrayRef<int64_t>{2, 2})
      return op.emitOpError("mma.sync on ")
             << in << " supports m16n8k" << (tf32 ? 8 : k) << " fragments only";
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
    SmallVector<Value> a = regs(op.getMatrixA(), 4),
                       bs = regs(op.getMatrixB(), 2);
    SmallVector<Value> c;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        c.push_back(vector::ExtractOp::create(b, l, op.getMatrixC(),
                                              ArrayRef<int64_t>{i, j}));
    auto resType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    Value result;
    if (isFloat8(in)) {
      // MLIR 22's nvvm.mma.sync verifier rejects the fp8 multiplicands
      // that PTX has had since ISA 8.4 (sm_89): the instruction is emitted
      // as inline PTX, operands 0-3 the results, 4-7 A, 8-9 B, 10-13 C.
      std::string t = isa<Float8E4M3FNType>(in) ? "e4m3" : "e5m2";
      std::string text = "mma.sync.aligned.m16n8k32.row.col.f32." + t + "." +
                         t +
                         ".f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, "
                         "{$10, $11, $12, $13};";
      SmallVector<Value> operands(a);
      operands.append(bs.begin(), bs.end());
      operands.append(c.begin(), c.end());
      result = LLVM::InlineAsmOp::create(
                   b, l, resType, operands, b.getStringAttr(text),
                   b.getStringAttr("=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f"),
                   /*has_side_effects=*/nullptr, /*is_align_stack=*/nullptr,
                   LLVM::TailCallKindAttr::get(b.getContext(),
                                               LLVM::TailCallKind::None),
                   LLVM::AsmDialectAttr::get(b.getContext(),
                                             LLVM::AsmDialect::AD_ATT),
                   /*operand_attrs=*/nullptr)
                   .getRes();
    } else {
      NVVM::MMATypes type = tf32 ? NVVM::MMATypes::tf32 : NVVM::MMATypes::bf16;
      result =
          NVVM::MmaOp::create(
              b, l, resType, a, bs, c, ArrayRef<int64_t>{16, 8, tf32 ? 8 : k},
              /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
              std::array<NVVM::MMATypes, 2>{type, type},
              std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                             NVVM::MMALayout::col})
              .getResult();
    }
    SmallVector<Value> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(
          LLVM::ExtractValueOp::create(b, l, result, ArrayRef<int64_t>{i}));
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
