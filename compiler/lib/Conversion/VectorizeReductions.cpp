//===- VectorizeReductions.cpp - Vector accumulators for reductions -------===//
//
// A reduction along the innermost axis lowered to plain loops carries one
// scalar through every element; LLVM keeps that chain for floats (it may
// not reassociate) and the loop runs at one element per add latency. Here
// each row is combined in chunks into a vector accumulator instead (several
// registers wide, so independent lanes hide the latency), and the lanes
// are folded once at the end of the row with vector.reduction.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/TypeSwitch.h"

#include <optional>

namespace mlir::tessera {
#define GEN_PASS_DEF_VECTORIZEREDUCTIONSPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

/// The vector combining kind of a reduce body's single combiner op.
std::optional<vector::CombiningKind> combiningKind(Operation *op) {
  using K = vector::CombiningKind;
  return llvm::TypeSwitch<Operation *, std::optional<K>>(op)
      .Case<arith::AddFOp, arith::AddIOp>([](auto) { return K::ADD; })
      .Case<arith::MulFOp, arith::MulIOp>([](auto) { return K::MUL; })
      .Case<arith::MaximumFOp>([](auto) { return K::MAXIMUMF; })
      .Case<arith::MinimumFOp>([](auto) { return K::MINIMUMF; })
      .Case<arith::MaxNumFOp>([](auto) { return K::MAXNUMF; })
      .Case<arith::MinNumFOp>([](auto) { return K::MINNUMF; })
      .Case<arith::MaxSIOp>([](auto) { return K::MAXSI; })
      .Case<arith::MinSIOp>([](auto) { return K::MINSI; })
      .Case<arith::MaxUIOp>([](auto) { return K::MAXUI; })
      .Case<arith::MinUIOp>([](auto) { return K::MINUI; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The body's combiner when the body is exactly `yield(op(in, acc))`.
Operation *singleCombiner(linalg::ReduceOp op) {
  Block &body = op.getCombiner().front();
  if (body.getOperations().size() != 2 || body.getNumArguments() != 2)
    return nullptr;
  Operation *comb = &body.front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != comb->getResult(0) || comb->getNumOperands() != 2)
    return nullptr;
  Value a = comb->getOperand(0), b = comb->getOperand(1);
  Value in = body.getArgument(0), acc = body.getArgument(1);
  if (!((a == in && b == acc) || (a == acc && b == in)))
    return nullptr;
  return comb;
}

struct VectorizeReductionsPass
    : mlir::tessera::impl::VectorizeReductionsPassBase<
          VectorizeReductionsPass> {
  using VectorizeReductionsPassBase::VectorizeReductionsPassBase;

  void runOnOperation() override {
    SmallVector<linalg::ReduceOp> reduces;
    getOperation().walk([&](linalg::ReduceOp op) { reduces.push_back(op); });
    for (linalg::ReduceOp op : reduces)
      rewrite(op);
  }

  void rewrite(linalg::ReduceOp op) {
    if (!op.hasPureBufferSemantics() || op.getInputs().size() != 1 ||
        op.getInits().size() != 1)
      return;
    Value in = op.getInputs()[0], out = op.getInits()[0];
    auto inType = dyn_cast<MemRefType>(in.getType());
    if (!inType || !inType.hasStaticShape() || inType.getRank() < 1)
      return;
    int64_t rank = inType.getRank();
    if (op.getDimensions().size() != 1 || op.getDimensions()[0] != rank - 1)
      return;
    if (!mlir::tessera::hasUnitInnerStride(inType))
      return;
    Type et = inType.getElementType();
    unsigned bits = et.isIntOrFloat() ? et.getIntOrFloatBitWidth() : 0;
    if (bits != 32 && bits != 64)
      return;
    Operation *comb = singleCombiner(op);
    if (!comb)
      return;
    std::optional<vector::CombiningKind> kind = combiningKind(comb);
    if (!kind)
      return;
    int64_t extent = inType.getShape().back();
    int64_t w = mlir::tessera::fittingTile(extent, width * 32 / bits, 4);
    if (!w)
      return;

    OpBuilder b(op);
    Location loc = op.getLoc();
    auto vecType = VectorType::get({w}, et);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      lbs.push_back(zero);
      ubs.push_back(
          arith::ConstantIndexOp::create(b, loc, inType.getShape()[d]));
      steps.push_back(one);
    }
    auto combine = [&](OpBuilder &nb, Value x, Value y) -> Value {
      OperationState state(loc, comb->getName().getIdentifier(),
                           ValueRange{x, y}, TypeRange{vecType},
                           comb->getAttrs());
      return nb.create(state)->getResult(0);
    };
    scf::buildLoopNest(
        b, loc, lbs, ubs, steps,
        [&](OpBuilder &nb, Location l, ValueRange ivs) {
          auto at = [&](Value k) {
            SmallVector<Value> idx(ivs.begin(), ivs.end());
            idx.push_back(k);
            return idx;
          };
          Value acc = vector::LoadOp::create(nb, l, vecType, in, at(zero));
          if (extent > w) {
            // The first chunk seeds the accumulator; the loop starts at the
            // second one (lower bound == step == w).
            Value step = arith::ConstantIndexOp::create(nb, l, w);
            Value ub = arith::ConstantIndexOp::create(nb, l, extent);
            auto loop = scf::ForOp::create(
                nb, l, step, ub, step, ValueRange{acc},
                [&](OpBuilder &lb2, Location l2, Value k, ValueRange iter) {
                  Value v = vector::LoadOp::create(lb2, l2, vecType, in, at(k));
                  scf::YieldOp::create(lb2, l2, combine(lb2, iter[0], v));
                });
            acc = loop.getResult(0);
          }
          SmallVector<Value> outIdx(ivs.begin(), ivs.end());
          Value init = memref::LoadOp::create(nb, l, out, outIdx);
          Value r = vector::ReductionOp::create(nb, l, *kind, acc, init);
          memref::StoreOp::create(nb, l, r, out, outIdx);
        });
    op.erase();
  }
};

} // namespace
