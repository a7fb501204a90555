//===- ExpandFloat8.cpp - fp8 conversions as integer arithmetic -----------===//
//
// LLVM has no fp8 types: the LLVM type converter stores f8E4M3FN/f8E5M2 as
// i8, and casts to and from them must become integer code. This pass runs
// on scalar code (after linalg has become loops) and rewrites
//
// - arith.extf from f8 to f16: the bits placed in an f16 (exact);
// - arith.extf from f8 to other floats: bit manipulation to f32 (exact),
//   then extf/truncf;
// - arith.truncf to f8: to f32 first, then round to nearest even (E4M3FN:
//   overflow and inf -> NaN; E5M2: overflow -> inf), NaN -> NaN;
// - arith.constant f8: an i8 constant with the same bits;
//
// matching llvm::APFloat and tessera::f32ToF8*Bits bit for bit (NaN payloads
// aside).
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"
#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_EXPANDFLOAT8CASTSPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using mlir::tessera::tile::isFloat8;

namespace {

Value cI32(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantIntOp::create(b, l, b.getI32Type(), v);
}

/// f8 bits (i8) -> f32.
Value f8ToF32(OpBuilder &b, Location l, Value bits8, bool e4m3) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  Value x = arith::ExtUIOp::create(b, l, i32, bits8);
  Value sign = arith::ShLIOp::create(
      b, l, arith::ShRUIOp::create(b, l, x, cI32(b, l, 7)), cI32(b, l, 31));
  int manBits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  int expMask = e4m3 ? 0xF : 0x1F, manMask = (1 << manBits) - 1;
  Value exp = arith::AndIOp::create(
      b, l, arith::ShRUIOp::create(b, l, x, cI32(b, l, manBits)),
      cI32(b, l, expMask));
  Value man = arith::AndIOp::create(b, l, x, cI32(b, l, manMask));
  // Normal numbers (and, for E5M2, inf/NaN handled below).
  Value e32 = arith::AddIOp::create(b, l, exp, cI32(b, l, 127 - bias));
  Value normalBits = arith::OrIOp::create(
      b, l,
      arith::OrIOp::create(b, l, sign,
                           arith::ShLIOp::create(b, l, e32, cI32(b, l, 23))),
      arith::ShLIOp::create(b, l, man, cI32(b, l, 23 - manBits)));
  Value normal = arith::BitcastOp::create(b, l, f32, normalBits);
  // Subnormals: man * 2^(1 - bias - manBits), exact in f32.
  Value subMag = arith::MulFOp::create(
      b, l, arith::UIToFPOp::create(b, l, f32, man),
      arith::ConstantOp::create(
          b, l, b.getF32FloatAttr(std::ldexp(1.0f, 1 - bias - manBits))));
  Value negSub = arith::NegFOp::create(b, l, subMag);
  Value isNeg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, sign,
                                      cI32(b, l, 0));
  Value sub = arith::SelectOp::create(b, l, isNeg, negSub, subMag);
  Value isSub =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, exp, cI32(b, l, 0));
  Value r = arith::SelectOp::create(b, l, isSub, sub, normal);
  Value nan = arith::ConstantOp::create(
      b, l, b.getF32FloatAttr(std::numeric_limits<float>::quiet_NaN()));
  if (e4m3) {
    Value isNaN = arith::CmpIOp::create(
        b, l, arith::CmpIPredicate::eq,
        arith::AndIOp::create(b, l, x, cI32(b, l, 0x7F)), cI32(b, l, 0x7F));
    return arith::SelectOp::create(b, l, isNaN, nan, r);
  }
  Value isSpecial = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, exp,
                                          cI32(b, l, 0x1F));
  Value inf = arith::ConstantOp::create(
      b, l, b.getF32FloatAttr(std::numeric_limits<float>::infinity()));
  Value signedInf = arith::SelectOp::create(
      b, l, isNeg, arith::NegFOp::create(b, l, inf), inf);
  Value isInfMan =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, man, cI32(b, l, 0));
  Value special = arith::SelectOp::create(b, l, isInfMan, signedInf, nan);
  return arith::SelectOp::create(b, l, isSpecial, special, r);
}

/// f32 -> f8 bits (i8), round to nearest even.
Value f32ToF8(OpBuilder &b, Location l, Value v, bool e4m3) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  Value bits = arith::BitcastOp::create(b, l, i32, v);
  Value a = arith::AndIOp::create(b, l, bits, cI32(b, l, 0x7FFFFFFF));
  Value sign = arith::ShLIOp::create(
      b, l, arith::ShRUIOp::create(b, l, bits, cI32(b, l, 31)), cI32(b, l, 7));
  int manBits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  int drop = 23 - manBits;
  // Smallest normal: 2^(1 - bias).
  int64_t minNormal = int64_t(127 + 1 - bias) << 23;
  int64_t maxFinite = e4m3 ? 0x7E : 0x7B;
  int64_t overflow = e4m3 ? 0x7F : 0x7C; // NaN for E4M3FN, inf for E5M2
  int64_t nanBits = e4m3 ? 0x7F : 0x7E;
  // Normal path: round the mantissa to `manBits` bits (ties to even).
  Value lsb = arith::AndIOp::create(
      b, l, arith::ShRUIOp::create(b, l, a, cI32(b, l, drop)), cI32(b, l, 1));
  Value rounded = arith::AddIOp::create(
      b, l, a,
      arith::AddIOp::create(b, l, cI32(b, l, (1 << (drop - 1)) - 1), lsb));
  Value r = arith::SubIOp::create(
      b, l, arith::ShRUIOp::create(b, l, rounded, cI32(b, l, drop)),
      cI32(b, l, int64_t(127 - bias) << manBits));
  Value isOverflow = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, r,
                                           cI32(b, l, maxFinite));
  Value normal =
      arith::SelectOp::create(b, l, isOverflow, cI32(b, l, overflow), r);
  // Subnormal path: |x| / 2^(1 - bias - manBits), rounded to even.
  Value absF = arith::BitcastOp::create(b, l, f32, a);
  Value scaled = arith::MulFOp::create(
      b, l, absF,
      arith::ConstantOp::create(
          b, l, b.getF32FloatAttr(std::ldexp(1.0f, bias - 1 + manBits))));
  Value sub = arith::FPToUIOp::create(b, l, i32,
                                      math::RoundEvenOp::create(b, l, scaled));
  Value isSub = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, a,
                                      cI32(b, l, minNormal));
  Value mag = arith::SelectOp::create(b, l, isSub, sub, normal);
  Value isNaN = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt, a,
                                      cI32(b, l, 0x7F800000));
  mag = arith::SelectOp::create(b, l, isNaN, cI32(b, l, nanBits), mag);
  Value out = arith::OrIOp::create(b, l, mag, sign);
  return arith::TruncIOp::create(b, l, b.getI8Type(), out);
}

/// f8 bits (i8) -> f16, exact: E5M2 is the upper byte of an f16; E4M3FN's
/// sign, exponent and mantissa placed in an f16 give its value times 2^-8
/// (subnormals included), scaled back in f32.
Value f8ToF16(OpBuilder &b, Location l, Value bits8, bool e4m3) {
  Type i16 = b.getI16Type(), f16 = b.getF16Type(), f32 = b.getF32Type();
  auto c16 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, l, i16, v).getResult();
  };
  Value x = arith::ExtUIOp::create(b, l, i16, bits8);
  if (!e4m3)
    return arith::BitcastOp::create(b, l, f16,
                                    arith::ShLIOp::create(b, l, x, c16(8)));
  Value mag = arith::AndIOp::create(b, l, x, c16(0x7F));
  Value sign = arith::ShLIOp::create(
      b, l, arith::AndIOp::create(b, l, x, c16(0x80)), c16(8));
  Value scaled = arith::BitcastOp::create(
      b, l, f16,
      arith::OrIOp::create(b, l, sign,
                           arith::ShLIOp::create(b, l, mag, c16(7))));
  Value f = arith::MulFOp::create(
      b, l, arith::ExtFOp::create(b, l, f32, scaled),
      arith::ConstantOp::create(b, l, b.getF32FloatAttr(256.0f)));
  Value isNaN =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, mag, c16(0x7F));
  Value nan = arith::ConstantOp::create(
      b, l, b.getF32FloatAttr(std::numeric_limits<float>::quiet_NaN()));
  return arith::TruncFOp::create(b, l, f16,
                                 arith::SelectOp::create(b, l, isNaN, nan, f));
}

struct ExpandExt : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &b) const override {
    Type src = op.getIn().getType();
    if (!isFloat8(src))
      return failure();
    Location l = op.getLoc();
    Value bits = arith::BitcastOp::create(b, l, b.getI8Type(), op.getIn());
    if (op.getType().isF16()) {
      b.replaceOp(op, f8ToF16(b, l, bits, isa<Float8E4M3FNType>(src)));
      return success();
    }
    Value f = f8ToF32(b, l, bits, isa<Float8E4M3FNType>(src));
    Type dst = op.getType();
    if (!dst.isF32())
      f = dst.getIntOrFloatBitWidth() > 32
              ? arith::ExtFOp::create(b, l, dst, f).getResult()
              : arith::TruncFOp::create(b, l, dst, f).getResult();
    b.replaceOp(op, f);
    return success();
  }
};

struct ExpandTrunc : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &b) const override {
    Type dst = op.getType();
    if (!isFloat8(dst))
      return failure();
    Location l = op.getLoc();
    Value in = op.getIn();
    if (!in.getType().isF32())
      in = isFloat8(in.getType()) || in.getType().getIntOrFloatBitWidth() < 32
               ? arith::ExtFOp::create(b, l, b.getF32Type(), in).getResult()
               : arith::TruncFOp::create(b, l, b.getF32Type(), in).getResult();
    Value bits = f32ToF8(b, l, in, isa<Float8E4M3FNType>(dst));
    b.replaceOpWithNewOp<arith::BitcastOp>(op, dst, bits);
    return success();
  }
};

struct ExpandConstant : OpRewritePattern<arith::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op,
                                PatternRewriter &b) const override {
    auto attr = dyn_cast<FloatAttr>(op.getValue());
    if (!attr || !isFloat8(attr.getType()))
      return failure();
    APInt bits = attr.getValue().bitcastToAPInt();
    Value c = arith::ConstantOp::create(
        b, op.getLoc(), b.getIntegerAttr(b.getI8Type(), bits.getZExtValue()));
    b.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), c);
    return success();
  }
};

/// A cast of a vector with fp8 elements (the register lowering's per-thread
/// tiles): one scalar cast per element, which the patterns above expand.
template <typename CastOp> struct UnrollVectorCast : OpRewritePattern<CastOp> {
  using OpRewritePattern<CastOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op, PatternRewriter &b) const override {
    auto from = dyn_cast<VectorType>(op.getIn().getType());
    auto to = dyn_cast<VectorType>(op.getType());
    if (!from || !to || from.getRank() != 1 ||
        (!isFloat8(from.getElementType()) && !isFloat8(to.getElementType())))
      return failure();
    Location l = op.getLoc();
    SmallVector<Value> elems;
    for (int64_t i = 0; i < from.getNumElements(); ++i) {
      Value x = vector::ExtractOp::create(b, l, op.getIn(), i);
      OperationState st(l, op->getName().getStringRef(), ValueRange{x},
                        TypeRange{to.getElementType()}, op->getAttrs());
      elems.push_back(b.create(st)->getResult(0));
    }
    b.replaceOpWithNewOp<vector::FromElementsOp>(op, to, elems);
    return success();
  }
};

/// fp8 vector -> f16 vector, two elements per sm_89+ conversion.
struct WidenPairs : OpRewritePattern<arith::ExtFOp> {
  WidenPairs(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &b) const override {
    auto from = dyn_cast<VectorType>(op.getIn().getType());
    auto to = dyn_cast<VectorType>(op.getType());
    if (!from || !to || from.getRank() != 1 || from.getNumElements() % 2 ||
        !isFloat8(from.getElementType()) || !to.getElementType().isF16())
      return failure();
    Location l = op.getLoc();
    Value bits = arith::BitcastOp::create(
        b, l, VectorType::get(from.getShape(), b.getI8Type()), op.getIn());
    auto pairType = VectorType::get({2}, b.getF16Type());
    SmallVector<Value> elems;
    for (int64_t i = 0; i < from.getNumElements(); i += 2) {
      Value pair = vector::ShuffleOp::create(b, l, bits, bits,
                                             ArrayRef<int64_t>{i, i + 1});
      Value wide = NVVM::ConvertF8x2ToF16x2Op::create(
          b, l, pairType, pair, /*relu=*/b.getBoolAttr(false),
          TypeAttr::get(from.getElementType()));
      for (int64_t e = 0; e < 2; ++e)
        elems.push_back(vector::ExtractOp::create(b, l, wide, e));
    }
    b.replaceOpWithNewOp<vector::FromElementsOp>(op, to, elems);
    return success();
  }
};

struct ExpandFloat8CastsPass
    : mlir::tessera::impl::ExpandFloat8CastsPassBase<ExpandFloat8CastsPass> {
  using ExpandFloat8CastsPassBase::ExpandFloat8CastsPassBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    if (f16x2Conversions)
      patterns.add<WidenPairs>(&getContext());
    patterns.add<ExpandExt, ExpandTrunc, ExpandConstant,
                 UnrollVectorCast<arith::ExtFOp>,
                 UnrollVectorCast<arith::TruncFOp>>(&getContext());
    GreedyRewriteConfig config;
    config.enableFolding(false); // keep bitcasts of constants as written
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
