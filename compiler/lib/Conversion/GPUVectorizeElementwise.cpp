//===- GPUVectorizeElementwise.cpp - Vector accesses for tile loops -------===//
//
// Before the GPU mapping spreads a tile operation's scf.parallel over the
// threads, an element-wise loop (loads, stores and element-wise arithmetic
// along a unit-stride innermost dimension) is rewritten to work on chunks
// of up to 16 bytes per thread: one vector.load / vector.store per access
// (ld/st.global.v4 in PTX), the arithmetic on vectors. The rewrite is
// versioned on alignment at run time, and the last, partial chunk of a row
// runs element by element. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"
#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "ConversionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_GPUVECTORIZEELEMENTWISEPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using namespace mlir::tessera;

namespace {

/// Element types of the vector arithmetic: integers and floats except fp8
/// (its casts are expanded on scalars only).
bool vectorElement(Type t) {
  return t.isIntOrFloat() && !tessera::tile::isFloat8(t);
}

/// Element types a vector access may carry: whole bytes, at most 8 of
/// them.
bool vectorizableElement(Type t) {
  if (!vectorElement(t))
    return false;
  unsigned bits = t.getIntOrFloatBitWidth();
  return bits % 8 == 0 && bits <= 64;
}

/// The memref `v` is a view of: its memref.alloc (a tile buffer, shared
/// memory after the mapping) or null.
Operation *tileBufferOf(Value v) {
  while (true) {
    if (auto sv = v.getDefiningOp<memref::SubViewOp>())
      v = sv.getSource();
    else if (auto c = v.getDefiningOp<memref::CastOp>())
      v = c.getSource();
    else
      return v.getDefiningOp<memref::AllocOp>();
  }
}

/// What the rewrite of one loop needs to know.
struct Plan {
  int64_t width = 0;
  /// The accesses that move along the innermost dimension, and their
  /// memrefs with element sizes (for the alignment test).
  DenseSet<Operation *> vectorAccesses;
  llvm::SetVector<std::pair<Value, int64_t>> memrefs;
  /// Values of the body that depend on the innermost induction variable.
  DenseSet<Value> varying;
};

/// The plan for `par`, or failure when its body is not element-wise along
/// a unit-stride innermost dimension. `cap` bounds the vector width.
FailureOr<Plan> planLoop(scf::ParallelOp par, int64_t cap) {
  Plan p;
  if (!par.getInitVals().empty() || par.getNumLoops() == 0)
    return failure();
  unsigned inner = par.getNumLoops() - 1;
  auto lb = getConstantIntValue(par.getLowerBound()[inner]);
  auto step = getConstantIntValue(par.getStep()[inner]);
  if (!lb || *lb != 0 || !step || *step != 1)
    return failure();
  Value iv = par.getInductionVars()[inner];
  p.varying.insert(iv);
  auto isVarying = [&](Value v) { return p.varying.contains(v); };

  int64_t maxBytes = 0;
  DenseSet<Value> stored, scalarLoaded;
  unsigned loads = 0, stores = 0;
  // An access along the innermost dimension: `iv` last, the other indices
  // independent of it, a unit-stride memref defined outside the loop.
  auto vectorAccess = [&](Value memref, ValueRange indices) -> bool {
    auto type = cast<MemRefType>(memref.getType());
    if (indices.empty() || indices.back() != iv ||
        llvm::any_of(indices.drop_back(), isVarying) ||
        !hasUnitInnerStride(type) ||
        !vectorizableElement(type.getElementType()) ||
        par->isAncestor(memref.getParentBlock()->getParentOp()))
      return false;
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    maxBytes = std::max(maxBytes, bytes);
    p.memrefs.insert({memref, bytes});
    return true;
  };
  for (Operation &op : par.getBody()->without_terminator()) {
    bool dependent = llvm::any_of(op.getOperands(), isVarying);
    if (auto ld = dyn_cast<memref::LoadOp>(op)) {
      ++loads;
      if (!dependent) {
        scalarLoaded.insert(ld.getMemRef());
        continue;
      }
      if (!vectorAccess(ld.getMemRef(), ld.getIndices()))
        return failure();
      p.vectorAccesses.insert(&op);
    } else if (auto st = dyn_cast<memref::StoreOp>(op)) {
      ++stores;
      // A store independent of the innermost index writes one location
      // from many iterations: leave such loops alone.
      if (llvm::none_of(st.getIndices(), isVarying) ||
          !vectorAccess(st.getMemRef(), st.getIndices()))
        return failure();
      stored.insert(st.getMemRef());
      p.vectorAccesses.insert(&op);
      continue;
    } else if (op.getNumRegions() || !isMemoryEffectFree(&op)) {
      return failure();
    } else if (!dependent) {
      continue; // computed once per chunk, broadcast where needed
    } else if (!op.hasTrait<OpTrait::Elementwise>() ||
               !op.hasTrait<OpTrait::Vectorizable>() ||
               !llvm::all_of(op.getOperandTypes(), vectorElement) ||
               !llvm::all_of(op.getResultTypes(), vectorElement)) {
      return failure();
    }
    for (Value r : op.getResults())
      p.varying.insert(r);
  }
  if (p.vectorAccesses.empty())
    return failure();
  // Read once per chunk instead of once per element: not if the loop also
  // writes that memref.
  for (Value m : scalarLoaded)
    if (stored.contains(m))
      return failure();
  // A tile load (global memory into a tile buffer, nothing else) is
  // tessera-gpu-async-copy's: cp.async moves it without registers.
  if (loads == 1 && stores == 1 && par.getBody()->getOperations().size() == 3) {
    auto st = cast<memref::StoreOp>(*std::next(par.getBody()->begin()));
    auto ld = st.getValue().getDefiningOp<memref::LoadOp>();
    if (ld && tileBufferOf(st.getMemRef()) && !tileBufferOf(ld.getMemRef()))
      return failure();
  }
  p.width = 16 / maxBytes;
  while (p.width > cap)
    p.width /= 2;
  if (p.width < 2)
    return failure();
  return p;
}

/// Rewrites `par` according to `p`:
///
///   scf.if (every vector access aligned to its chunk) {
///     scf.parallel (..., c) = (..., 0) to (..., ceildiv(n, W)) {
///       if (n - c*W >= W)  vector body at column c*W
///       else               original body for columns c*W .. n-1
///     }
///   } else { original loop }
void rewrite(scf::ParallelOp par, const Plan &p) {
  Location l = par.getLoc();
  OpBuilder b(par);
  unsigned inner = par.getNumLoops() - 1;
  int64_t w = p.width;
  Value cond;
  for (auto [m, bytes] : p.memrefs) {
    Value ok = alignedAt(b, l, m, bytes, w * bytes);
    cond = cond ? arith::AndIOp::create(b, l, cond, ok).getResult() : ok;
  }
  auto ifOp = scf::IfOp::create(b, l, cond, /*withElseRegion=*/true);
  par->moveBefore(ifOp.elseBlock()->getTerminator());

  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  Value width = par.getUpperBound()[inner];
  Value wV = arith::ConstantIndexOp::create(b, l, w);
  SmallVector<Value> ubs(par.getUpperBound());
  ubs[inner] = arith::CeilDivUIOp::create(b, l, width, wV);
  Block *body = par.getBody();
  scf::ParallelOp::create(
      b, l, par.getLowerBound(), ubs, par.getStep(),
      [&](OpBuilder &cb, Location, ValueRange ivs) {
        IRMapping outer;
        for (unsigned d = 0; d < inner; ++d)
          outer.map(par.getInductionVars()[d], ivs[d]);
        Value col = arith::MulIOp::create(cb, l, ivs[inner], wV);
        Value left = arith::SubIOp::create(cb, l, width, col);
        Value whole =
            arith::CmpIOp::create(cb, l, arith::CmpIPredicate::uge, left, wV);
        scf::IfOp::create(
            cb, l, whole,
            [&](OpBuilder &vb, Location) {
              IRMapping scalar = outer;
              scalar.map(par.getInductionVars()[inner], col);
              DenseMap<Value, Value> vec;
              auto vectorOf = [&](Value v) -> Value {
                if (p.varying.contains(v))
                  return vec.lookup(v);
                Value s = scalar.lookupOrDefault(v);
                return vector::BroadcastOp::create(
                    vb, l, VectorType::get({w}, s.getType()), s);
              };
              for (Operation &op : body->without_terminator()) {
                if (!p.vectorAccesses.contains(&op) &&
                    llvm::none_of(op.getResults(), [&](Value r) {
                      return p.varying.contains(r);
                    })) {
                  vb.clone(op, scalar);
                  continue;
                }
                auto align = [&](Value m) {
                  return llvm::MaybeAlign(
                      w *
                      cast<MemRefType>(m.getType()).getElementTypeBitWidth() /
                      8);
                };
                if (auto ld = dyn_cast<memref::LoadOp>(op)) {
                  SmallVector<Value> idx;
                  for (Value i : ld.getIndices())
                    idx.push_back(scalar.lookupOrDefault(i));
                  auto type = VectorType::get({w}, ld.getType());
                  vec[ld.getResult()] = vector::LoadOp::create(
                      vb, l, type, ld.getMemRef(), idx, /*nontemporal=*/false,
                      align(ld.getMemRef()));
                } else if (auto st = dyn_cast<memref::StoreOp>(op)) {
                  SmallVector<Value> idx;
                  for (Value i : st.getIndices())
                    idx.push_back(scalar.lookupOrDefault(i));
                  vector::StoreOp::create(
                      vb, l, vectorOf(st.getValue()), st.getMemRef(), idx,
                      /*nontemporal=*/false, align(st.getMemRef()));
                } else {
                  IRMapping operands;
                  for (Value v : op.getOperands())
                    operands.map(v, vectorOf(v));
                  Operation *c = vb.clone(op, operands);
                  for (auto [old, now] :
                       llvm::zip(op.getResults(), c->getResults())) {
                    now.setType(VectorType::get({w}, old.getType()));
                    vec[old] = now;
                  }
                }
              }
              scf::YieldOp::create(vb, l);
            },
            [&](OpBuilder &sb, Location) {
              Value zero = arith::ConstantIndexOp::create(sb, l, 0);
              Value one = arith::ConstantIndexOp::create(sb, l, 1);
              scf::ForOp::create(
                  sb, l, zero, left, one, ValueRange{},
                  [&](OpBuilder &eb, Location, Value j, ValueRange) {
                    IRMapping scalar = outer;
                    scalar.map(par.getInductionVars()[inner],
                               arith::AddIOp::create(eb, l, col, j));
                    for (Operation &op : body->without_terminator())
                      eb.clone(op, scalar);
                    scf::YieldOp::create(eb, l);
                  });
              scf::YieldOp::create(sb, l);
            });
      });
}

struct GPUVectorizeElementwisePass
    : mlir::tessera::impl::GPUVectorizeElementwisePassBase<
          GPUVectorizeElementwisePass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    int64_t cap = 16;
    if (auto a = f->getAttrOfType<IntegerAttr>("tile.vector_width"))
      cap = a.getInt();
    // Outermost loops only: those are what the mapping spreads over the
    // threads.
    SmallVector<scf::ParallelOp> loops;
    f.walk([&](scf::ParallelOp par) {
      if (!par->getParentOfType<scf::ParallelOp>())
        loops.push_back(par);
    });
    for (scf::ParallelOp par : loops)
      if (FailureOr<Plan> p = planLoop(par, cap); succeeded(p))
        rewrite(par, *p);
  }
};

} // namespace
