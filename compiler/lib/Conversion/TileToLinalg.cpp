//===- TileToLinalg.cpp - Tile dialect to upstream dialects ---------------===//
//
// Lowers tile ops on tensors to linalg/tensor/memref/bufferization ops that
// one-shot bufferization and the upstream CPU pipeline understand:
//
//   tile.load     clipped memref.subview + bufferization.to_tensor inserted
//                 into a block filled with `other` only when the block
//                 overhangs the tensor (+ arith.select for the mask)
//   tile.store    tensor.extract_slice of the in-bounds part +
//                 bufferization.materialize_in_destination (masked stores
//                 become a loop nest of guarded memref.store)
//   tile.gather   tensor.generate with bounds-checked memref.load
//   tile.scatter  loop nest of guarded memref.store
//   tile.dot      linalg.matmul
//   tile.reduce   linalg.reduce (NaN-propagating max/min)
//   tile.splat    linalg.fill, tile.broadcast linalg.broadcast,
//   tile.trans    linalg.transpose, tile.reshape collapse/expand_shape,
//   tile.arange   a dense constant
//   tile.atomic_rmw  bounds-checked memref.atomic_rmw (separate pass, run
//                 after buffer deallocation)
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_CONVERTTILETOLINALGPASS
#define GEN_PASS_DEF_FORMPROGRAMLOOPPASS
#define GEN_PASS_DEF_LOWERTILEATOMICSPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

Value idx(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantIndexOp::create(b, l, v);
}

Value toIndex(OpBuilder &b, Location l, Value v) {
  if (v.getType().isIndex())
    return v;
  return arith::IndexCastOp::create(b, l, b.getIndexType(), v);
}

/// The in-bounds part of a block [off, off + size) of a dimension of extent
/// `dim`: where it starts in the tensor (`lo`), how many block elements lie
/// before it (`skip`) and how many are valid.
struct Clip {
  Value lo, skip, valid, high;
};

Clip clip(OpBuilder &b, Location l, Value off, Value dim, int64_t size) {
  Value zero = idx(b, l, 0);
  Value sz = idx(b, l, size);
  Value end = arith::AddIOp::create(b, l, off, sz);
  Value lo = arith::MaxSIOp::create(b, l, off, zero);
  lo = arith::MinSIOp::create(b, l, lo, dim);
  Value hi = arith::MinSIOp::create(b, l, end, dim);
  Value valid = arith::SubIOp::create(b, l, hi, lo);
  valid = arith::MaxSIOp::create(b, l, valid, zero);
  Value skip = arith::SubIOp::create(b, l, lo, off);
  skip = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, skip, zero),
                                sz);
  valid = arith::MinSIOp::create(b, l, valid,
                                 arith::SubIOp::create(b, l, sz, skip));
  Value high = arith::SubIOp::create(
      b, l, arith::SubIOp::create(b, l, sz, skip), valid);
  return {lo, skip, valid, high};
}

/// The in-bounds part of a block of `mem` starting at `offsets` with static
/// `shape`, per dimension (see Clip), as subview/slice/pad operands.
struct ClippedBlock {
  SmallVector<OpFoldResult> offsets, sizes, strides, skips, high;
  SmallVector<Value> valid;
};

ClippedBlock clipBlock(OpBuilder &b, Location l, Value mem, ValueRange offsets,
                       ArrayRef<int64_t> shape) {
  ClippedBlock c;
  for (auto [d, size] : llvm::enumerate(shape)) {
    Value dim = memref::DimOp::create(b, l, mem, d);
    Clip cl = clip(b, l, toIndex(b, l, offsets[d]), dim, size);
    c.offsets.push_back(cl.lo);
    c.sizes.push_back(cl.valid);
    c.valid.push_back(cl.valid);
    c.strides.push_back(b.getIndexAttr(1));
    c.skips.push_back(cl.skip);
    c.high.push_back(cl.high);
  }
  return c;
}

Value zeroOf(OpBuilder &b, Location l, Type t) {
  return arith::ConstantOp::create(b, l, b.getZeroAttr(t));
}

struct LoadLowering : OpRewritePattern<LoadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LoadOp op, PatternRewriter &b) const override {
    Location l = op.getLoc();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Value src = op.getSource();
    int64_t rank = type.getRank();
    ClippedBlock c = clipBlock(b, l, src, op.getOffsets(), type.getShape());
    Value sub =
        memref::SubViewOp::create(b, l, src, c.offsets, c.sizes, c.strides);
    auto dynType = RankedTensorType::get(
        SmallVector<int64_t>(rank, ShapedType::kDynamic), type.getElementType());
    Value t = bufferization::ToTensorOp::create(b, l, dynType, sub,
                                                /*restrict=*/true,
                                                /*writable=*/false);
    Value other = op.getOther() ? op.getOther()
                                : zeroOf(b, l, type.getElementType());
    // tensor.pad would fill the whole block before copying the in-bounds
    // part; most blocks lie wholly inside the tensor, so fill only when one
    // does not.
    Value partial = arith::ConstantIntOp::create(b, l, b.getI1Type(), 0);
    for (auto [d, size] : llvm::enumerate(type.getShape()))
      partial = arith::OrIOp::create(
          b, l, partial,
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, c.valid[d],
                                idx(b, l, size)));
    // The fill covers the whole block when it is partial and nothing
    // otherwise: its leading extent is 0 or the block's.
    // (alloc_tensor, not tensor.empty: a slice of an empty tensor folds to a
    // new empty tensor, which would cut the fill off from the block.)
    Value empty = bufferization::AllocTensorOp::create(b, l, type, ValueRange{});
    SmallVector<OpFoldResult> fillSizes, zeros(rank, b.getIndexAttr(0));
    for (int64_t d = 0; d < rank; ++d)
      fillSizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    if (rank > 0)
      fillSizes[0] = arith::SelectOp::create(b, l, partial,
                                             idx(b, l, type.getDimSize(0)),
                                             idx(b, l, 0))
                         .getResult();
    SmallVector<OpFoldResult> unit(rank, b.getIndexAttr(1));
    Value region =
        tensor::ExtractSliceOp::create(b, l, empty, zeros, fillSizes, unit);
    Value filled = linalg::FillOp::create(b, l, other, region).getResult(0);
    Value base = tensor::InsertSliceOp::create(b, l, filled, empty, zeros,
                                               fillSizes, unit);
    SmallVector<OpFoldResult> ones(rank, b.getIndexAttr(1));
    Value padded = tensor::InsertSliceOp::create(b, l, t, base,
                                                 c.skips, c.sizes, ones);
    if (Value mask = op.getMask()) {
      Value fill = linalg::FillOp::create(
                       b, l, other,
                       tensor::EmptyOp::create(b, l, type.getShape(),
                                               type.getElementType())
                           .getResult())
                       .getResult(0);
      padded = arith::SelectOp::create(b, l, mask, padded, fill);
    }
    b.replaceOp(op, padded);
    return success();
  }
};

/// Builds a loop nest over [0, ub_d) and calls `body` with the induction
/// variables.
void loopNest(OpBuilder &b, Location l, ArrayRef<Value> ubs,
              function_ref<void(OpBuilder &, ValueRange)> body) {
  SmallVector<Value> ivs;
  std::function<void(OpBuilder &, size_t)> rec = [&](OpBuilder &bb, size_t d) {
    if (d == ubs.size()) {
      body(bb, ivs);
      return;
    }
    scf::ForOp::create(bb, l, idx(bb, l, 0), ubs[d], idx(bb, l, 1),
                       ValueRange{},
                       [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                         ivs.push_back(iv);
                         rec(nb, d + 1);
                         ivs.pop_back();
                         scf::YieldOp::create(nb, l);
                       });
  };
  rec(b, 0);
}

struct StoreLowering : OpRewritePattern<StoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StoreOp op, PatternRewriter &b) const override {
    Location l = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    Value dst = op.getDest();
    ClippedBlock c = clipBlock(b, l, dst, op.getOffsets(), type.getShape());
    Value sub =
        memref::SubViewOp::create(b, l, dst, c.offsets, c.sizes, c.strides);
    Value slice = tensor::ExtractSliceOp::create(b, l, op.getValue(), c.skips,
                                                 c.sizes, c.strides);
    if (!op.getMask()) {
      auto m = bufferization::MaterializeInDestinationOp::create(b, l, slice,
                                                                 sub);
      m.setRestrict(true);
      m.setWritable(true);
      b.eraseOp(op);
      return success();
    }
    Value mslice = tensor::ExtractSliceOp::create(b, l, op.getMask(), c.skips,
                                                  c.sizes, c.strides);
    loopNest(b, l, c.valid, [&](OpBuilder &nb, ValueRange ivs) {
      Value m = tensor::ExtractOp::create(nb, l, mslice, ivs);
      scf::IfOp::create(nb, l, m, [&](OpBuilder &ib, Location) {
        Value v = tensor::ExtractOp::create(ib, l, slice, ivs);
        memref::StoreOp::create(ib, l, v, sub, ivs);
        scf::YieldOp::create(ib, l);
      });
    });
    b.eraseOp(op);
    return success();
  }
};

/// `inBounds && mask` for element indices `ix` of `mem`.
Value boundsCheck(OpBuilder &b, Location l, Value mem, ValueRange ix) {
  Value ok;
  Value zero = idx(b, l, 0);
  for (auto [d, i] : llvm::enumerate(ix)) {
    Value dim = memref::DimOp::create(b, l, mem, d);
    Value ge = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, i, zero);
    Value lt = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, dim);
    Value both = arith::AndIOp::create(b, l, ge, lt);
    ok = ok ? arith::AndIOp::create(b, l, ok, both).getResult() : both;
  }
  if (!ok) // rank 0: always in bounds
    ok = arith::ConstantIntOp::create(b, l, b.getI1Type(), 1);
  return ok;
}

struct GatherLowering : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op, PatternRewriter &b) const override {
    Location l = op.getLoc();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Value src = op.getSource();
    Value other = op.getOther() ? op.getOther()
                                : zeroOf(b, l, type.getElementType());
    auto gen = tensor::GenerateOp::create(
        b, l, type, ValueRange{},
        [&](OpBuilder &nb, Location, ValueRange ivs) {
          SmallVector<Value> ix;
          for (Value t : op.getIndices())
            ix.push_back(toIndex(nb, l, tensor::ExtractOp::create(nb, l, t, ivs)));
          Value ok = boundsCheck(nb, l, src, ix);
          if (Value mask = op.getMask())
            ok = arith::AndIOp::create(
                nb, l, ok, tensor::ExtractOp::create(nb, l, mask, ivs));
          auto ifOp = scf::IfOp::create(
              nb, l, ok,
              [&](OpBuilder &ib, Location) {
                scf::YieldOp::create(
                    ib, l, ValueRange{memref::LoadOp::create(ib, l, src, ix)});
              },
              [&](OpBuilder &ib, Location) {
                scf::YieldOp::create(ib, l, ValueRange{other});
              });
          tensor::YieldOp::create(nb, l, ifOp.getResult(0));
        });
    b.replaceOp(op, gen.getResult());
    return success();
  }
};

struct ScatterLowering : OpRewritePattern<ScatterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterOp op,
                                PatternRewriter &b) const override {
    Location l = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    Value dst = op.getDest();
    SmallVector<Value> ubs;
    for (int64_t d : type.getShape())
      ubs.push_back(idx(b, l, d));
    loopNest(b, l, ubs, [&](OpBuilder &nb, ValueRange ivs) {
      SmallVector<Value> ix;
      for (Value t : op.getIndices())
        ix.push_back(toIndex(nb, l, tensor::ExtractOp::create(nb, l, t, ivs)));
      Value ok = boundsCheck(nb, l, dst, ix);
      if (Value mask = op.getMask())
        ok = arith::AndIOp::create(nb, l, ok,
                                   tensor::ExtractOp::create(nb, l, mask, ivs));
      scf::IfOp::create(nb, l, ok, [&](OpBuilder &ib, Location) {
        Value v = tensor::ExtractOp::create(ib, l, op.getValue(), ivs);
        memref::StoreOp::create(ib, l, v, dst, ix);
        scf::YieldOp::create(ib, l);
      });
    });
    b.eraseOp(op);
    return success();
  }
};

struct AtomicLowering : OpRewritePattern<AtomicRMWOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtomicRMWOp op,
                                PatternRewriter &b) const override {
    Location l = op.getLoc();
    SmallVector<Value> ix;
    for (Value v : op.getIndices())
      ix.push_back(toIndex(b, l, v));
    Value dst = op.getDest();
    Value ok = boundsCheck(b, l, dst, ix);
    Value val = op.getValue();
    bool isFloat = isa<FloatType>(val.getType());
    AtomicKind kind = op.getKind();
    scf::IfOp::create(b, l, ok, [&](OpBuilder &ib, Location) {
      arith::AtomicRMWKind k;
      if (kind == AtomicKind::add)
        k = isFloat ? arith::AtomicRMWKind::addf : arith::AtomicRMWKind::addi;
      else if (kind == AtomicKind::max)
        k = isFloat ? arith::AtomicRMWKind::maximumf : arith::AtomicRMWKind::maxs;
      else
        k = isFloat ? arith::AtomicRMWKind::minimumf : arith::AtomicRMWKind::mins;
      memref::AtomicRMWOp::create(ib, l, k, val, dst, ix);
      scf::YieldOp::create(ib, l);
    });
    b.eraseOp(op);
    return success();
  }
};

struct DotLowering : OpRewritePattern<DotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DotOp op, PatternRewriter &b) const override {
    auto mm = linalg::MatmulOp::create(
        b, op.getLoc(), TypeRange{op.getResult().getType()},
        ValueRange{op.getLhs(), op.getRhs()}, ValueRange{op.getAcc()});
    b.replaceOp(op, mm.getResult(0));
    return success();
  }
};

struct ReduceLowering : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op, PatternRewriter &b) const override {
    Location l = op.getLoc();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Type et = type.getElementType();
    ReduceKind kind = op.getKind();
    TypedAttr init;
    if (auto ft = dyn_cast<FloatType>(et)) {
      const llvm::fltSemantics &sem = ft.getFloatSemantics();
      if (kind == ReduceKind::sum)
        init = b.getFloatAttr(et, 0.0);
      else
        init = b.getFloatAttr(
            et, llvm::APFloat::getInf(sem, /*Negative=*/kind == ReduceKind::max));
    } else {
      unsigned w = et.getIntOrFloatBitWidth();
      if (kind == ReduceKind::sum)
        init = b.getIntegerAttr(et, 0);
      else if (kind == ReduceKind::max)
        init = b.getIntegerAttr(et, llvm::APInt::getSignedMinValue(w));
      else
        init = b.getIntegerAttr(et, llvm::APInt::getSignedMaxValue(w));
    }
    Value initV = arith::ConstantOp::create(b, l, init);
    Value empty =
        tensor::EmptyOp::create(b, l, type.getShape(), et).getResult();
    Value filled = linalg::FillOp::create(b, l, initV, empty).getResult(0);
    bool isFloat = isa<FloatType>(et);
    auto red = linalg::ReduceOp::create(
        b, l, ValueRange{op.getSource()}, ValueRange{filled},
        SmallVector<int64_t>{(int64_t)op.getAxis()},
        [&](OpBuilder &nb, Location, ValueRange args) {
          Value x = args[0], acc = args[1], r;
          switch (kind) {
          case ReduceKind::sum:
            r = isFloat ? arith::AddFOp::create(nb, l, x, acc).getResult()
                        : arith::AddIOp::create(nb, l, x, acc).getResult();
            break;
          case ReduceKind::max:
            r = isFloat ? arith::MaximumFOp::create(nb, l, x, acc).getResult()
                        : arith::MaxSIOp::create(nb, l, x, acc).getResult();
            break;
          case ReduceKind::min:
            r = isFloat ? arith::MinimumFOp::create(nb, l, x, acc).getResult()
                        : arith::MinSIOp::create(nb, l, x, acc).getResult();
            break;
          }
          linalg::YieldOp::create(nb, l, r);
        });
    b.replaceOp(op, red.getResult(0));
    return success();
  }
};

struct SplatLowering : OpRewritePattern<SplatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplatOp op, PatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Value empty = tensor::EmptyOp::create(b, op.getLoc(), type.getShape(),
                                          type.getElementType());
    b.replaceOp(op, linalg::FillOp::create(b, op.getLoc(), op.getScalar(), empty)
                        .getResult(0));
    return success();
  }
};

struct ArangeLowering : OpRewritePattern<ArangeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ArangeOp op, PatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    unsigned w = type.getElementType().getIntOrFloatBitWidth();
    SmallVector<APInt> vals;
    // The I64Attr getters return uint64_t: iterate over the signed values.
    int64_t start = op.getStartValue();
    int64_t end = op.getEndValue();
    for (int64_t i = start; i < end; ++i)
      vals.push_back(APInt(w, i, /*isSigned=*/true));
    b.replaceOpWithNewOp<arith::ConstantOp>(
        op, type, DenseElementsAttr::get(type, vals));
    return success();
  }
};

/// Collapses `src` to rank 1 (or returns it if already rank 1).
Value collapseAll(OpBuilder &b, Location l, Value src) {
  auto t = cast<RankedTensorType>(src.getType());
  if (t.getRank() == 1)
    return src;
  ReassociationIndices all;
  for (int64_t i = 0; i < t.getRank(); ++i)
    all.push_back(i);
  return tensor::CollapseShapeOp::create(b, l, src,
                                         SmallVector<ReassociationIndices>{all});
}

struct ReshapeLowering : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &b) const override {
    Location l = op.getLoc();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Value flat = collapseAll(b, l, op.getSource());
    if (type.getRank() == 1) {
      b.replaceOp(op, flat);
      return success();
    }
    ReassociationIndices all;
    for (int64_t i = 0; i < type.getRank(); ++i)
      all.push_back(i);
    b.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, type, flat, SmallVector<ReassociationIndices>{all});
    return success();
  }
};

struct BroadcastLowering : OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &b) const override {
    Location l = op.getLoc();
    auto srcT = cast<RankedTensorType>(op.getSource().getType());
    auto dstT = cast<RankedTensorType>(op.getResult().getType());
    // Kept dims (same size) and broadcast dims (1 -> n).
    SmallVector<int64_t> bdims, keptShape;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (int64_t d = 0; d < srcT.getRank(); ++d) {
      pending.push_back(d);
      if (srcT.getDimSize(d) == dstT.getDimSize(d)) {
        groups.push_back(pending);
        pending.clear();
        keptShape.push_back(srcT.getDimSize(d));
      } else {
        bdims.push_back(d);
      }
    }
    if (!pending.empty()) {
      if (groups.empty())
        groups.push_back({}); // all unit: collapse to rank 0 below
      groups.back().append(pending.begin(), pending.end());
    }
    Value src = op.getSource();
    if (keptShape.empty()) {
      src = tensor::CollapseShapeOp::create(
          b, l, RankedTensorType::get({}, srcT.getElementType()), src,
          SmallVector<ReassociationIndices>{});
    } else if ((int64_t)keptShape.size() != srcT.getRank()) {
      src = tensor::CollapseShapeOp::create(
          b, l, RankedTensorType::get(keptShape, srcT.getElementType()), src,
          groups);
    }
    Value empty = tensor::EmptyOp::create(b, l, dstT.getShape(),
                                          dstT.getElementType());
    auto bc = linalg::BroadcastOp::create(b, l, src, empty, bdims);
    b.replaceOp(op, bc.getResult()[0]);
    return success();
  }
};

struct TransLowering : OpRewritePattern<TransOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransOp op, PatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Value empty = tensor::EmptyOp::create(b, op.getLoc(), type.getShape(),
                                          type.getElementType());
    auto t = linalg::TransposeOp::create(b, op.getLoc(), op.getSource(), empty,
                                         op.getPermutation());
    b.replaceOp(op, t.getResult()[0]);
    return success();
  }
};

struct ConvertTileToLinalgPass
    : mlir::tessera::impl::ConvertTileToLinalgPassBase<
          ConvertTileToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LoadLowering, StoreLowering, GatherLowering, ScatterLowering,
                 DotLowering, ReduceLowering, SplatLowering,
                 ArangeLowering, ReshapeLowering, BroadcastLowering,
                 TransLowering>(&getContext());
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      return signalPassFailure();
    WalkResult r = getOperation()->walk([&](Operation *op) {
      if (isa<TileDialect>(op->getDialect()) && !isa<ProgramIdOp, NumProgramsOp, AtomicRMWOp>(op)) {
        op->emitOpError("was not lowered");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

struct LowerTileAtomicsPass
    : mlir::tessera::impl::LowerTileAtomicsPassBase<LowerTileAtomicsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<AtomicLowering>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

//===----------------------------------------------------------------------===//
// Program loop
//===----------------------------------------------------------------------===//

struct FormProgramLoopPass
    : mlir::tessera::impl::FormProgramLoopPassBase<FormProgramLoopPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp f : mlir::tessera::tileKernels(module))
      if (failed(formLoop(f)))
        return signalPassFailure();
  }

  LogicalResult formLoop(func::FuncOp f) {
    OpBuilder b(f.getContext());
    Location l = f.getLoc();
    Type i64 = b.getI64Type();
    unsigned n = f.getNumArguments();
    // Six trailing arguments: program id and grid extent per axis.
    for (int i = 0; i < 6; ++i)
      if (failed(f.insertArgument(n + i, i64, {}, l)))
        return failure();
    f.walk([&](ProgramIdOp op) {
      op.getResult().replaceAllUsesWith(f.getArgument(n + op.getAxis()));
      op.erase();
    });
    f.walk([&](NumProgramsOp op) {
      op.getResult().replaceAllUsesWith(f.getArgument(n + 3 + op.getAxis()));
      op.erase();
    });

    // @<name>_chunk(args..., begin, end, g0, g1, g2): runs linear program
    // ids [begin, end) of the grid, axis 0 fastest.
    SmallVector<Type> types(f.getArgumentTypes().begin(),
                            f.getArgumentTypes().begin() + n);
    for (int i = 0; i < 5; ++i)
      types.push_back(i64);
    b.setInsertionPointAfter(f);
    auto chunk = func::FuncOp::create(b, l, (f.getName() + "_chunk").str(),
                                      b.getFunctionType(types, {}));
    chunk->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    Block *entry = chunk.addEntryBlock();
    b.setInsertionPointToStart(entry);
    Value begin = entry->getArgument(n), end = entry->getArgument(n + 1);
    Value g0 = entry->getArgument(n + 2), g1 = entry->getArgument(n + 3),
          g2 = entry->getArgument(n + 4);
    Value one = arith::ConstantIntOp::create(b, l, i64, 1);
    scf::ForOp::create(
        b, l, begin, end, one, ValueRange{},
        [&](OpBuilder &nb, Location, Value lin, ValueRange) {
          Value plane = arith::MulIOp::create(nb, l, g0, g1);
          Value p2 = arith::DivSIOp::create(nb, l, lin, plane);
          Value rem = arith::RemSIOp::create(nb, l, lin, plane);
          Value p1 = arith::DivSIOp::create(nb, l, rem, g0);
          Value p0 = arith::RemSIOp::create(nb, l, rem, g0);
          SmallVector<Value> args(entry->getArguments().begin(),
                                  entry->getArguments().begin() + n);
          args.append({p0, p1, p2, g0, g1, g2});
          func::CallOp::create(nb, l, f, args);
          scf::YieldOp::create(nb, l);
        });
    func::ReturnOp::create(b, l);
    f.setPrivate();
    return success();
  }
};

} // namespace
