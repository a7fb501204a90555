//===- DistributeTiles.cpp - Tiles in registers on GPU threads ------------===//
//
// The register lowering: every tile carries a distributed layout
// (tessera-assign-layouts) and becomes, in each thread, a vector of the
// elements its layout gives that thread. See the pass description in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "tessera/Dialect/Tile/IR/Layouts.h"
#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/IRMapping.h"

#include <map>
#include <optional>

namespace mlir::tessera {
#define GEN_PASS_DEF_DISTRIBUTETILESPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

bool touchesTensors(Operation *op) {
  auto isT = [](Type t) { return isa<RankedTensorType>(t); };
  bool any = llvm::any_of(op->getOperandTypes(), isT) ||
             llvm::any_of(op->getResultTypes(), isT);
  if (any)
    return true;
  return op
      ->walk([&](Operation *n) {
        if (n != op && (llvm::any_of(n->getOperandTypes(), isT) ||
                        llvm::any_of(n->getResultTypes(), isT)))
          return WalkResult::interrupt();
        for (Region &r : n->getRegions())
          for (Block &b : r)
            for (BlockArgument a : b.getArguments())
              if (isT(a.getType()))
                return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// Largest power of two dividing the value of the scalar `v` (capped), from
/// how it is computed: constants, products, sums and loop counters.
int64_t divisibility(Value v, unsigned depth = 0) {
  static constexpr int64_t kMax = int64_t(1) << 20;
  if (depth > 12)
    return 1;
  auto pow2 = [](int64_t x) -> int64_t {
    if (x == 0)
      return kMax;
    x = x < 0 ? -x : x;
    return std::min<int64_t>(kMax, x & -x);
  };
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return pow2(i.getInt());
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
      if (arg == loop.getInductionVar())
        return std::min(divisibility(loop.getLowerBound(), depth + 1),
                        divisibility(loop.getStep(), depth + 1));
  Operation *def = v.getDefiningOp();
  if (!def)
    return 1;
  if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::ExtUIOp>(def))
    return divisibility(def->getOperand(0), depth + 1);
  if (isa<arith::MulIOp>(def))
    return std::min(kMax, divisibility(def->getOperand(0), depth + 1) *
                              divisibility(def->getOperand(1), depth + 1));
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return std::min(divisibility(def->getOperand(0), depth + 1),
                    divisibility(def->getOperand(1), depth + 1));
  return 1;
}

/// Identity of a reduction in the working type.
Value identity(OpBuilder &b, Location l, ReduceKind kind, Type t) {
  if (auto ft = dyn_cast<FloatType>(t)) {
    if (kind == ReduceKind::sum)
      return arith::ConstantOp::create(b, l, b.getFloatAttr(t, 0.0));
    return arith::ConstantOp::create(
        b, l,
        b.getFloatAttr(t, llvm::APFloat::getInf(ft.getFloatSemantics(),
                                                kind == ReduceKind::max)));
  }
  unsigned w = t.getIntOrFloatBitWidth();
  llvm::APInt v = kind == ReduceKind::sum   ? llvm::APInt(w, 0)
                  : kind == ReduceKind::max ? llvm::APInt::getSignedMinValue(w)
                                            : llvm::APInt::getSignedMaxValue(w);
  return arith::ConstantOp::create(b, l, b.getIntegerAttr(t, v));
}

Value combine(OpBuilder &b, Location l, ReduceKind kind, Value x, Value y) {
  bool fp = isa<FloatType>(getElementTypeOrSelf(x.getType()));
  switch (kind) {
  case ReduceKind::sum:
    return fp ? arith::AddFOp::create(b, l, x, y).getResult()
              : arith::AddIOp::create(b, l, x, y).getResult();
  case ReduceKind::max:
    return fp ? arith::MaximumFOp::create(b, l, x, y).getResult()
              : arith::MaxSIOp::create(b, l, x, y).getResult();
  case ReduceKind::min:
    return fp ? arith::MinimumFOp::create(b, l, x, y).getResult()
              : arith::MinSIOp::create(b, l, x, y).getResult();
  }
  return {};
}

/// The 32-bit type a reduction crosses lanes in.
Type workType(Type t) {
  Builder b(t.getContext());
  if (isa<FloatType>(t))
    return t.getIntOrFloatBitWidth() <= 32 ? b.getF32Type() : Type();
  return t.getIntOrFloatBitWidth() <= 32 ? b.getI32Type() : Type();
}

Value widen(OpBuilder &b, Location l, Value v, Type to) {
  Type t = v.getType();
  if (t == to)
    return v;
  if (isa<FloatType>(t))
    return arith::ExtFOp::create(b, l, to, v);
  if (t.isInteger(1))
    return arith::ExtUIOp::create(b, l, to, v);
  return arith::ExtSIOp::create(b, l, to, v);
}

Value narrow(OpBuilder &b, Location l, Value v, Type to) {
  if (v.getType() == to)
    return v;
  if (isa<FloatType>(to))
    return arith::TruncFOp::create(b, l, to, v);
  return arith::TruncIOp::create(b, l, to, v);
}

Value cIndex(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantIndexOp::create(b, l, v);
}

/// Per-thread coordinates of a layout: the base of each tile dimension and
/// whether this thread only repeats another thread's elements.
struct ThreadBase {
  SmallVector<Value> base; // index, per tile dimension
  Value duplicate;         // i1, or null when no dimension is replicated
};

class KernelLowering {
public:
  /// `aligned[i]`: what the launch guarantees about argument i's
  /// alignment (`tile.aligned`), if anything.
  KernelLowering(gpu::GPUFuncOp kernel, int64_t warps, int64_t vectorCap,
                 int64_t maxTileRegisters,
                 SmallVector<std::optional<bool>> aligned, bool index32)
      : kernel(kernel), warps(warps), vectorCap(vectorCap),
        maxTileRegisters(maxTileRegisters), aligned(std::move(aligned)),
        index32(index32) {}

  LogicalResult run();

private:
  gpu::GPUFuncOp kernel;
  int64_t warps, vectorCap, maxTileRegisters;
  SmallVector<std::optional<bool>> aligned;
  /// Indices and bounds in 32 bits (`tile.index32`).
  bool index32;
  std::optional<bool> alignmentOf(Value memref) const {
    if (auto a = dyn_cast<BlockArgument>(memref);
        a && a.getArgNumber() < aligned.size())
      return aligned[a.getArgNumber()];
    return std::nullopt;
  }
  Value tid, lane, warp, arena;
  OpBuilder *entry = nullptr; // builds at the kernel entry (after the ids)
  DenseMap<std::pair<Attribute, Attribute>, ThreadBase> bases;
  int64_t sharedBytes = 0;
  bool vectorOK = false;
  /// Per global tensor (kernel argument), the widest vector access.
  DenseMap<Value, int64_t> widest;
  /// Per kernel argument, its `tile.dim_symbols` (null for scalars).
  SmallVector<ArrayAttr> dimSymbols;

public:
  void setDimSymbols(SmallVector<ArrayAttr> symbols) {
    dimSymbols = std::move(symbols);
  }

private:
  bool paddingUnobservable(LoadOp op);

  Type convert(Type t) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt)
      return t;
    if (rt.getRank() == 0)
      return rt.getElementType();
    return VectorType::get({getNumRegisters(getLayout(rt), rt.getShape())},
                           rt.getElementType());
  }

  const ThreadBase &baseFor(Attribute layout, ArrayRef<int64_t> shape);
  /// This thread's lane and warp index along one dimension of a layout.
  Value laneIndex(OpBuilder &b, Location l, const DimSpread &s);
  Value warpIndex(OpBuilder &b, Location l, const DimSpread &s);
  /// The first element this thread holds along the dimension, before a
  /// tile smaller than the layout wraps it around.
  Value firstElement(OpBuilder &b, Location l, const DimSpread &s);
  int64_t accessWidth(RankedTensorType tile, Value memref, Value lastOffset);
  void planAccesses(Block &body);
  Value sharedView(OpBuilder &b, Location l, int64_t elements, Type t);

  LogicalResult lowerBlock(Block &src, OpBuilder &b, IRMapping &map);
  LogicalResult lowerOp(Operation *op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerLoad(LoadOp op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerStore(StoreOp op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerGather(GatherOp op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerScatter(ScatterOp op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerReduce(ReduceOp op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerConvert(ConvertLayoutOp op, OpBuilder &b, IRMapping &map);
  Value arange(ArangeOp op, OpBuilder &b);
  /// A block access's offsets and the tensor's extents, in 32 bits under
  /// `tile.index32` (with `fits`: the offsets did fit), index otherwise.
  struct BlockAccess {
    SmallVector<Value> offsets, extents;
    Value fits;
  };
  BlockAccess prepare(OpBuilder &b, Location l, Value memref,
                      ArrayRef<Value> offsets);
  /// Element indices (index) of a register at `regOffset` from the thread's
  /// base, and in `cond` whether it lies in the tensor.
  SmallVector<Value> indicesAt(OpBuilder &b, Location l, const BlockAccess &a,
                               const ThreadBase &base,
                               ArrayRef<int64_t> regOffset, Value &cond);
  /// The element indices of register `r` of a gather or scatter (from its
  /// index tiles), and in `cond` whether they lie in `memref` and `mask`
  /// (if any) keeps the element.
  SmallVector<Value> elementIndices(OpBuilder &b, Location l, Value memref,
                                    ValueRange indices, Value mask,
                                    IRMapping &map, int64_t r, Value &cond);
  bool needsLeadingBarrier(Operation *site);
};

const ThreadBase &KernelLowering::baseFor(Attribute layout,
                                          ArrayRef<int64_t> shape) {
  auto key = std::make_pair(
      layout, Attribute(DenseI64ArrayAttr::get(layout.getContext(), shape)));
  if (auto it = bases.find(key); it != bases.end())
    return it->second;
  OpBuilder &b = *entry;
  Location l = kernel.getLoc();
  BlockedLayoutAttr parent = getBlockedParent(layout);
  SmallVector<int64_t> pshape(shape);
  auto slice = dyn_cast<SliceLayoutAttr>(layout);
  if (slice)
    pshape.insert(pshape.begin() + slice.getDim(), 1);
  ThreadBase tb;
  for (auto [d, s] : llvm::enumerate(getDimSpreads(parent, pshape))) {
    if (slice && d == slice.getDim())
      continue;
    Value raw = firstElement(b, l, s);
    if (s.replicated()) {
      Value dup = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, raw,
                                        cIndex(b, l, s.size));
      tb.duplicate =
          tb.duplicate ? arith::OrIOp::create(b, l, tb.duplicate, dup) : dup;
      raw = arith::RemUIOp::create(b, l, raw, cIndex(b, l, s.size));
    }
    tb.base.push_back(raw);
  }
  return bases[key] = tb;
}

KernelLowering::BlockAccess KernelLowering::prepare(OpBuilder &b, Location l,
                                                    Value memref,
                                                    ArrayRef<Value> offsets) {
  BlockAccess a;
  Type i32 = b.getI32Type();
  for (auto [d, off] : llvm::enumerate(offsets)) {
    Value dim = memref::DimOp::create(b, l, memref, d);
    if (!index32) {
      a.offsets.push_back(
          arith::IndexCastOp::create(b, l, b.getIndexType(), off));
      a.extents.push_back(dim);
      continue;
    }
    // The launch guarantees 31-bit extents; an offset outside 32 bits
    // addresses nothing in the tensor.
    Value o = arith::TruncIOp::create(b, l, i32, off);
    Value back = arith::ExtSIOp::create(b, l, off.getType(), o);
    Value fits =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, back, off);
    a.fits =
        a.fits ? arith::AndIOp::create(b, l, a.fits, fits).getResult() : fits;
    a.offsets.push_back(o);
    a.extents.push_back(arith::IndexCastOp::create(b, l, i32, dim));
  }
  return a;
}

Value KernelLowering::laneIndex(OpBuilder &b, Location l, const DimSpread &s) {
  return arith::RemUIOp::create(
      b, l, arith::DivUIOp::create(b, l, lane, cIndex(b, l, s.laneStride)),
      cIndex(b, l, s.lanes));
}

Value KernelLowering::warpIndex(OpBuilder &b, Location l, const DimSpread &s) {
  return arith::RemUIOp::create(
      b, l, arith::DivUIOp::create(b, l, warp, cIndex(b, l, s.warpStride)),
      cIndex(b, l, s.warps));
}

Value KernelLowering::firstElement(OpBuilder &b, Location l,
                                   const DimSpread &s) {
  Value thread = arith::AddIOp::create(
      b, l,
      arith::MulIOp::create(b, l, warpIndex(b, l, s), cIndex(b, l, s.lanes)),
      laneIndex(b, l, s));
  return arith::MulIOp::create(b, l, thread, cIndex(b, l, s.perThread));
}

SmallVector<Value> KernelLowering::indicesAt(OpBuilder &b, Location l,
                                             const BlockAccess &a,
                                             const ThreadBase &base,
                                             ArrayRef<int64_t> regOffset,
                                             Value &cond) {
  SmallVector<Value> idx;
  cond = a.fits;
  for (size_t d = 0; d < a.offsets.size(); ++d) {
    Value t = base.base[d];
    Value c;
    if (index32) {
      t = arith::IndexCastOp::create(b, l, b.getI32Type(), t);
      c = arith::ConstantIntOp::create(b, l, b.getI32Type(), regOffset[d]);
    } else {
      c = cIndex(b, l, regOffset[d]);
    }
    Value i = arith::AddIOp::create(b, l, a.offsets[d], t);
    if (regOffset[d])
      i = arith::AddIOp::create(b, l, i, c);
    // Unsigned: a negative index is out of bounds too.
    Value in =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, i, a.extents[d]);
    cond = cond ? arith::AndIOp::create(b, l, cond, in).getResult() : in;
    idx.push_back(index32
                      ? arith::IndexCastUIOp::create(b, l, b.getIndexType(), i)
                            .getResult()
                      : i);
  }
  if (!cond)
    cond = arith::ConstantIntOp::create(b, l, b.getI1Type(), 1);
  return idx;
}

SmallVector<Value> KernelLowering::elementIndices(OpBuilder &b, Location l,
                                                  Value memref,
                                                  ValueRange indices,
                                                  Value mask, IRMapping &map,
                                                  int64_t r, Value &cond) {
  SmallVector<Value> idx;
  cond = {};
  for (auto [d, i] : llvm::enumerate(indices)) {
    Value x = arith::IndexCastOp::create(
        b, l, b.getIndexType(),
        vector::ExtractOp::create(b, l, map.lookup(i), r));
    // Unsigned: a negative index is out of bounds too.
    Value in = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, x,
                                     memref::DimOp::create(b, l, memref, d));
    cond = cond ? arith::AndIOp::create(b, l, cond, in).getResult() : in;
    idx.push_back(x);
  }
  if (!cond)
    cond = arith::ConstantIntOp::create(b, l, b.getI1Type(), 1);
  if (mask)
    cond = arith::AndIOp::create(
        b, l, cond, vector::ExtractOp::create(b, l, map.lookup(mask), r));
  return idx;
}

/// The number of consecutive elements one access of `tile` to `memref`
/// moves: a vector of up to 16 bytes along the unit-stride innermost
/// dimension when the layout gives a thread consecutive elements there, the
/// offset keeps them aligned; 1 otherwise. (A masked run is one vector
/// access when its mask is all true, element accesses otherwise.)
int64_t KernelLowering::accessWidth(RankedTensorType tile, Value memref,
                                    Value lastOffset) {
  Attribute layout = getLayout(tile);
  BlockedLayoutAttr parent = getBlockedParent(layout);
  unsigned last = tile.getRank() - 1;
  auto mt = cast<MemRefType>(memref.getType());
  if (!isa<BlockedLayoutAttr>(layout) ||
      parent.getOrder()[0] != int64_t(last) || tile.getShape()[last] == 1 ||
      !tessera::hasUnitInnerStride(mt) || alignmentOf(memref) == false)
    return 1;
  int64_t bits = tile.getElementTypeBitWidth();
  if (bits < 8 || bits % 8 != 0)
    return 1;
  int64_t w =
      std::min<int64_t>({getContiguousRegisters(layout, tile.getShape()),
                         16 / (bits / 8), vectorCap, divisibility(lastOffset)});
  int64_t p = 1;
  while (p * 2 <= w)
    p *= 2;
  return p;
}

void KernelLowering::planAccesses(Block &body) {
  body.walk([&](Operation *op) {
    if (auto ld = dyn_cast<LoadOp>(op)) {
      int64_t w =
          accessWidth(ld.getType(), ld.getSource(), ld.getOffsets().back());
      widest[ld.getSource()] = std::max(widest[ld.getSource()], w);
    } else if (auto st = dyn_cast<StoreOp>(op)) {
      int64_t w = accessWidth(cast<RankedTensorType>(st.getValue().getType()),
                              st.getDest(), st.getOffsets().back());
      widest[st.getDest()] = std::max(widest[st.getDest()], w);
    }
  });
}

Value KernelLowering::sharedView(OpBuilder &b, Location l, int64_t elements,
                                 Type t) {
  MLIRContext *ctx = b.getContext();
  int64_t bytes = std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
  int64_t offset = (sharedBytes + 15) / 16 * 16;
  sharedBytes = offset + elements * bytes;
  auto wg = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  if (!arena)
    arena = gpu::DynamicSharedMemoryOp::create(
        *entry, l,
        MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8),
                        MemRefLayoutAttrInterface(), wg));
  Value view = memref::ViewOp::create(
      *entry, l,
      MemRefType::get({elements}, t, MemRefLayoutAttrInterface(), wg), arena,
      cIndex(*entry, l, offset), ValueRange{});
  return memref::MemorySpaceCastOp::create(
      *entry, l, MemRefType::get({elements}, t), view);
}

/// A cross-warp exchange reuses its shared buffer on the next iteration of
/// an enclosing loop; unless another exchange in the same loop body (whose
/// barrier every thread passes after its read) separates the two, the
/// write waits for a barrier.
bool KernelLowering::needsLeadingBarrier(Operation *site) {
  Operation *parent = site->getParentOp();
  bool inLoop = false;
  for (Operation *p = parent; p && p != kernel; p = p->getParentOp())
    if (isa<scf::ForOp, scf::WhileOp>(p))
      inLoop = true;
  if (!inLoop)
    return false;
  if (!isa<scf::ForOp>(parent))
    return true;
  int64_t others = 0;
  for (Operation &op : site->getBlock()->getOperations()) {
    if (&op == site)
      continue;
    if (isa<ConvertLayoutOp>(op))
      ++others;
    if (auto r = dyn_cast<ReduceOp>(op)) {
      Attribute lay = getLayout(r.getSource().getType());
      BlockedLayoutAttr p = getBlockedParent(lay);
      if (p && p.getWarpsPerCTA()[r.getAxis()] > 1)
        ++others;
    }
  }
  return others == 0;
}

Value KernelLowering::arange(ArangeOp op, OpBuilder &b) {
  Location l = op.getLoc();
  auto t = op.getType();
  Attribute layout = getLayout(t);
  const ThreadBase &tb = baseFor(layout, t.getShape());
  auto offs = getRegisterOffsets(layout, t.getShape());
  Type et = t.getElementType();
  Value start =
      arith::AddIOp::create(b, l, tb.base[0], cIndex(b, l, op.getStartValue()));
  start = arith::IndexCastOp::create(b, l, et, start);
  auto vt = VectorType::get({int64_t(offs.size())}, et);
  SmallVector<Attribute> consts;
  for (auto &o : offs)
    consts.push_back(b.getIntegerAttr(et, o[0]));
  Value c =
      arith::ConstantOp::create(b, l, vt, DenseElementsAttr::get(vt, consts));
  Value splat = vector::BroadcastOp::create(b, l, vt, start);
  return arith::AddIOp::create(b, l, splat, c);
}

/// Whether the mask is true for all of registers r .. r + w - 1.
static Value wholeRun(OpBuilder &b, Location l, Value mask, int64_t r,
                      int64_t w) {
  Value all;
  for (int64_t e = r; e < r + w; ++e) {
    Value m = vector::ExtractOp::create(b, l, mask, e);
    all = all ? arith::AndIOp::create(b, l, all, m).getResult() : m;
  }
  return all;
}

/// `idx` moved `e` elements along the innermost dimension.
static SmallVector<Value> shifted(OpBuilder &b, Location l, ArrayRef<Value> idx,
                                  int64_t e) {
  SmallVector<Value> s(idx);
  if (e)
    s.back() = arith::AddIOp::create(b, l, s.back(), cIndex(b, l, e));
  return s;
}

LogicalResult KernelLowering::lowerLoad(LoadOp op, OpBuilder &b,
                                        IRMapping &map) {
  Location l = op.getLoc();
  RankedTensorType t = op.getType();
  Attribute layout = getLayout(t);
  const ThreadBase &tb = baseFor(layout, t.getShape());
  auto offs = getRegisterOffsets(layout, t.getShape());
  Value memref = map.lookup(op.getSource());
  SmallVector<Value> offsets;
  for (Value o : op.getOffsets())
    offsets.push_back(map.lookup(o));
  Type et = t.getElementType();
  int64_t w =
      vectorOK ? accessWidth(t, op.getSource(), op.getOffsets().back()) : 1;
  Value other = op.getOther() ? map.lookup(op.getOther()) : Value();
  if (LLVM::isCompatibleType(et) && paddingUnobservable(op))
    // Nothing reads the elements outside the tensor: no padding value, so
    // the code need not materialise one (predicated loads, no zeroing).
    other = LLVM::PoisonOp::create(b, l, et);
  else if (!other)
    other = isa<FloatType>(et)
                ? arith::ConstantOp::create(b, l, b.getFloatAttr(et, 0.0))
                      .getResult()
                : arith::ConstantOp::create(b, l, b.getIntegerAttr(et, 0))
                      .getResult();
  Value mask = op.getMask() ? map.lookup(op.getMask()) : Value();
  auto vt = cast<VectorType>(convert(t));
  Value result = vector::BroadcastOp::create(b, l, vt, other);
  int64_t bytes = std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
  BlockAccess access = prepare(b, l, memref, offsets);
  for (int64_t r = 0; r < int64_t(offs.size()); r += w) {
    Value cond;
    SmallVector<Value> idx = indicesAt(b, l, access, tb, offs[r], cond);
    Value inBoundsOnly = cond;
    if (mask && w == 1)
      cond = arith::AndIOp::create(b, l, cond,
                                   vector::ExtractOp::create(b, l, mask, r));
    if (w == 1) {
      auto ifOp = scf::IfOp::create(
          b, l, cond,
          [&](OpBuilder &tb2, Location) {
            scf::YieldOp::create(
                tb2, l,
                ValueRange{memref::LoadOp::create(tb2, l, memref, idx)});
          },
          [&](OpBuilder &eb, Location) {
            scf::YieldOp::create(eb, l, ValueRange{other});
          });
      result = vector::InsertOp::create(b, l, ifOp.getResult(0), result, r);
      continue;
    }
    auto pt = VectorType::get({w}, et);
    // A masked run: one vector when the mask keeps all of it (runs are
    // wholly in or out of bounds), element by element otherwise.
    Value whole = cond;
    if (mask)
      whole =
          arith::AndIOp::create(b, l, inBoundsOnly, wholeRun(b, l, mask, r, w));
    auto ifOp = scf::IfOp::create(
        b, l, whole,
        [&](OpBuilder &tb2, Location) {
          Value v = vector::LoadOp::create(tb2, l, pt, memref, idx,
                                           /*nontemporal=*/false,
                                           llvm::MaybeAlign(w * bytes));
          scf::YieldOp::create(tb2, l, ValueRange{v});
        },
        [&](OpBuilder &eb, Location) {
          if (!mask) {
            scf::YieldOp::create(
                eb, l,
                ValueRange{vector::BroadcastOp::create(eb, l, pt, other)});
            return;
          }
          SmallVector<Value> elems;
          for (int64_t e = 0; e < w; ++e) {
            Value ok = arith::AndIOp::create(
                eb, l, inBoundsOnly,
                vector::ExtractOp::create(eb, l, mask, r + e));
            SmallVector<Value> at = shifted(eb, l, idx, e);
            elems.push_back(
                scf::IfOp::create(
                    eb, l, ok,
                    [&](OpBuilder &ib, Location) {
                      scf::YieldOp::create(ib, l,
                                           ValueRange{memref::LoadOp::create(
                                               ib, l, memref, at)});
                    },
                    [&](OpBuilder &ib, Location) {
                      scf::YieldOp::create(ib, l, ValueRange{other});
                    })
                    .getResult(0));
          }
          scf::YieldOp::create(
              eb, l,
              ValueRange{vector::FromElementsOp::create(eb, l, pt, elems)});
        });
    // Shuffles (not strided-slice ops) so that every target lowers them.
    SmallVector<int64_t> lanes;
    int64_t n = vt.getNumElements();
    for (int64_t i = 0; i < n; ++i)
      lanes.push_back(i >= r && i < r + w ? n + i - r : i);
    result = vector::ShuffleOp::create(b, l, result, ifOp.getResult(0), lanes);
  }
  map.map(op.getResult(), result);
  return success();
}

/// Whether the padding of `op`'s out-of-bounds elements can never be seen:
/// the loaded tile only flows, through element-wise operations and
/// unit-dimension reshapes, into stores whose bounds imply the load's (the
/// same offsets into dimensions with the same shape symbols), so an
/// element outside the loaded tensor is never stored.
bool KernelLowering::paddingUnobservable(LoadOp op) {
  if (op.getMask())
    return false;
  // (offset, shape symbol) of each dimension of an access, split into the
  // tile's non-unit dimensions (in order) and its unit ones.
  using Dim = std::pair<Value, StringRef>;
  auto dimsOf = [&](Value memref, ValueRange offsets, RankedTensorType tile,
                    SmallVector<Dim> &wide, SmallVector<Dim> &unit) {
    auto arg = dyn_cast<BlockArgument>(memref);
    if (!arg || arg.getArgNumber() >= dimSymbols.size() ||
        !dimSymbols[arg.getArgNumber()])
      return false;
    ArrayAttr syms = dimSymbols[arg.getArgNumber()];
    for (auto [d, off] : llvm::enumerate(offsets)) {
      auto sym = d < syms.size() ? dyn_cast<StringAttr>(syms[d]) : nullptr;
      if (!sym || sym.getValue().empty())
        return false;
      (tile.getShape()[d] == 1 ? unit : wide).push_back({off, sym.getValue()});
    }
    return true;
  };
  SmallVector<Dim> loadWide, loadUnit;
  if (!dimsOf(op.getSource(), op.getOffsets(), op.getType(), loadWide,
              loadUnit))
    return false;
  SmallVector<Value> work{op.getResult()};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto st = dyn_cast<StoreOp>(user)) {
        if (use.getOperandNumber() != 0)
          return false;
        SmallVector<Dim> wide, unit;
        if (!dimsOf(st.getDest(), st.getOffsets(),
                    cast<RankedTensorType>(st.getValue().getType()), wide,
                    unit) ||
            wide != loadWide)
          return false;
        for (const Dim &d : loadUnit)
          if (!llvm::is_contained(unit, d))
            return false;
        continue;
      }
      Dialect *d = user->getDialect();
      bool elementwise = d && isa<arith::ArithDialect, math::MathDialect>(d) &&
                         user->getNumRegions() == 0 &&
                         llvm::all_of(user->getResultTypes(), [](Type t) {
                           auto rt = dyn_cast<RankedTensorType>(t);
                           return rt && rt.getRank() > 0;
                         });
      if (!elementwise && !isa<ReshapeOp>(user))
        return false;
      for (Value r : user->getResults())
        work.push_back(r);
    }
  }
  return true;
}

LogicalResult KernelLowering::lowerStore(StoreOp op, OpBuilder &b,
                                         IRMapping &map) {
  Location l = op.getLoc();
  auto t = cast<RankedTensorType>(op.getValue().getType());
  Attribute layout = getLayout(t);
  const ThreadBase &tb = baseFor(layout, t.getShape());
  auto offs = getRegisterOffsets(layout, t.getShape());
  Value memref = map.lookup(op.getDest());
  Value value = map.lookup(op.getValue());
  SmallVector<Value> offsets;
  for (Value o : op.getOffsets())
    offsets.push_back(map.lookup(o));
  int64_t w =
      vectorOK ? accessWidth(t, op.getDest(), op.getOffsets().back()) : 1;
  Value mask = op.getMask() ? map.lookup(op.getMask()) : Value();
  int64_t bytes = std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
  Value owner;
  if (tb.duplicate)
    owner = arith::XOrIOp::create(
        b, l, tb.duplicate,
        arith::ConstantIntOp::create(b, l, b.getI1Type(), 1));
  BlockAccess access = prepare(b, l, memref, offsets);
  for (int64_t r = 0; r < int64_t(offs.size()); r += w) {
    Value cond;
    SmallVector<Value> idx = indicesAt(b, l, access, tb, offs[r], cond);
    if (owner)
      cond = arith::AndIOp::create(b, l, cond, owner);
    if (mask && w > 1) {
      // One vector when the mask keeps the whole run, elements otherwise.
      Value whole =
          arith::AndIOp::create(b, l, cond, wholeRun(b, l, mask, r, w));
      auto ifOp = scf::IfOp::create(b, l, whole, /*withElse=*/true);
      OpBuilder vb = ifOp.getThenBodyBuilder();
      SmallVector<int64_t> lanes;
      for (int64_t i = r; i < r + w; ++i)
        lanes.push_back(i);
      vector::StoreOp::create(
          vb, l, vector::ShuffleOp::create(vb, l, value, value, lanes), memref,
          idx, /*nontemporal=*/false, llvm::MaybeAlign(w * bytes));
      OpBuilder eb = ifOp.getElseBodyBuilder();
      for (int64_t e = 0; e < w; ++e) {
        Value ok = arith::AndIOp::create(
            eb, l, cond, vector::ExtractOp::create(eb, l, mask, r + e));
        auto one = scf::IfOp::create(eb, l, ok, /*withElse=*/false);
        OpBuilder ob = one.getThenBodyBuilder();
        memref::StoreOp::create(ob, l,
                                vector::ExtractOp::create(ob, l, value, r + e),
                                memref, shifted(ob, l, idx, e));
      }
      continue;
    }
    if (mask)
      cond = arith::AndIOp::create(b, l, cond,
                                   vector::ExtractOp::create(b, l, mask, r));
    auto ifOp = scf::IfOp::create(b, l, cond, /*withElse=*/false);
    OpBuilder ib = ifOp.getThenBodyBuilder();
    if (w == 1) {
      memref::StoreOp::create(ib, l, vector::ExtractOp::create(ib, l, value, r),
                              memref, idx);
    } else {
      SmallVector<int64_t> lanes;
      for (int64_t i = r; i < r + w; ++i)
        lanes.push_back(i);
      Value part = vector::ShuffleOp::create(ib, l, value, value, lanes);
      vector::StoreOp::create(ib, l, part, memref, idx,
                              /*nontemporal=*/false,
                              llvm::MaybeAlign(w * bytes));
    }
  }
  return success();
}

LogicalResult KernelLowering::lowerGather(GatherOp op, OpBuilder &b,
                                          IRMapping &map) {
  Location l = op.getLoc();
  RankedTensorType t = op.getType();
  Type et = t.getElementType();
  Value memref = map.lookup(op.getSource());
  int64_t n = getNumRegisters(getLayout(t), t.getShape());
  Value other = op.getOther() ? map.lookup(op.getOther()) : Value();
  if (!other)
    other = isa<FloatType>(et)
                ? arith::ConstantOp::create(b, l, b.getFloatAttr(et, 0.0))
                      .getResult()
                : arith::ConstantOp::create(b, l, b.getIntegerAttr(et, 0))
                      .getResult();
  Value result =
      vector::BroadcastOp::create(b, l, VectorType::get({n}, et), other);
  for (int64_t r = 0; r < n; ++r) {
    Value cond;
    SmallVector<Value> idx = elementIndices(b, l, memref, op.getIndices(),
                                            op.getMask(), map, r, cond);
    auto ifOp = scf::IfOp::create(
        b, l, cond,
        [&](OpBuilder &tb2, Location) {
          scf::YieldOp::create(
              tb2, l, ValueRange{memref::LoadOp::create(tb2, l, memref, idx)});
        },
        [&](OpBuilder &eb, Location) {
          scf::YieldOp::create(eb, l, ValueRange{other});
        });
    result = vector::InsertOp::create(b, l, ifOp.getResult(0), result, r);
  }
  map.map(op.getResult(), result);
  return success();
}

LogicalResult KernelLowering::lowerScatter(ScatterOp op, OpBuilder &b,
                                           IRMapping &map) {
  Location l = op.getLoc();
  auto t = cast<RankedTensorType>(op.getValue().getType());
  Value memref = map.lookup(op.getDest());
  Value value = map.lookup(op.getValue());
  const ThreadBase &tb = baseFor(getLayout(t), t.getShape());
  int64_t n = getNumRegisters(getLayout(t), t.getShape());
  for (int64_t r = 0; r < n; ++r) {
    Value cond;
    SmallVector<Value> idx = elementIndices(b, l, memref, op.getIndices(),
                                            op.getMask(), map, r, cond);
    if (tb.duplicate)
      cond = arith::AndIOp::create(
          b, l, cond,
          arith::XOrIOp::create(
              b, l, tb.duplicate,
              arith::ConstantIntOp::create(b, l, b.getI1Type(), 1)));
    auto ifOp = scf::IfOp::create(b, l, cond, /*withElse=*/false);
    OpBuilder ib = ifOp.getThenBodyBuilder();
    memref::StoreOp::create(ib, l, vector::ExtractOp::create(ib, l, value, r),
                            memref, idx);
  }
  return success();
}

LogicalResult KernelLowering::lowerReduce(ReduceOp op, OpBuilder &b,
                                          IRMapping &map) {
  Location l = op.getLoc();
  auto st = op.getSource().getType();
  auto layout = dyn_cast<BlockedLayoutAttr>(getLayout(st));
  if (!layout)
    return op.emitOpError("of a sliced tile has no register lowering");
  unsigned axis = op.getAxis();
  Type et = st.getElementType();
  Type wt = workType(et);
  if (!wt)
    return op.emitOpError("of ") << et << " has no register lowering";
  ReduceKind kind = op.getKind();
  SmallVector<int64_t> outShape(st.getShape());
  outShape.erase(outShape.begin() + axis);
  auto slice = SliceLayoutAttr::get(op.getContext(), axis, layout);
  auto inOffs = getRegisterOffsets(layout, st.getShape());
  auto outOffs = getRegisterOffsets(slice, outShape);
  std::map<SmallVector<int64_t>, int64_t> outIndex;
  for (auto [i, o] : llvm::enumerate(outOffs))
    outIndex[o] = i;
  Value src = map.lookup(op.getSource());
  auto spreads = getDimSpreads(layout, st.getShape());
  const DimSpread &sa = spreads[axis];

  // 1. In the thread.
  SmallVector<Value> acc(outOffs.size());
  for (auto [r, o] : llvm::enumerate(inOffs)) {
    SmallVector<int64_t> key(o);
    key.erase(key.begin() + axis);
    int64_t out = outIndex.at(key);
    Value x = widen(b, l, vector::ExtractOp::create(b, l, src, r), wt);
    acc[out] = acc[out] ? combine(b, l, kind, acc[out], x) : x;
  }
  // Threads that repeat others along the axis contribute nothing.
  if (sa.replicated()) {
    // This dimension's duplicate flag alone.
    Value raw = firstElement(b, l, sa);
    Value dup = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, raw,
                                      cIndex(b, l, sa.size));
    Value id = identity(b, l, kind, wt);
    for (Value &a : acc)
      a = arith::SelectOp::create(b, l, dup, id, a);
  }
  // 2. Across the lanes along the axis: butterfly shuffles.
  if (sa.lanes > 1) {
    Value width = arith::ConstantIntOp::create(b, l, b.getI32Type(), 32);
    for (int64_t k = sa.laneStride; k < sa.laneStride * sa.lanes; k *= 2) {
      Value off = arith::ConstantIntOp::create(b, l, b.getI32Type(), k);
      for (Value &a : acc) {
        Value other =
            gpu::ShuffleOp::create(b, l, a, off, width, gpu::ShuffleMode::XOR)
                .getShuffleResult();
        a = combine(b, l, kind, a, other);
      }
    }
  }
  // 3. Across the warps along the axis: through a small shared buffer.
  if (sa.warps > 1) {
    int64_t lanesRest = 32 / sa.lanes, warpsRest = warps / sa.warps;
    int64_t slots = lanesRest * warpsRest, nOut = acc.size();
    Value buf = sharedView(b, l, sa.warps * slots * nOut, wt);
    auto compact = [&](Value id, int64_t stride, int64_t count) {
      // Drops the index bits of the axis from a lane or warp id.
      Value low = arith::RemUIOp::create(b, l, id, cIndex(b, l, stride));
      Value high =
          arith::DivUIOp::create(b, l, id, cIndex(b, l, stride * count));
      return arith::AddIOp::create(
          b, l, low, arith::MulIOp::create(b, l, high, cIndex(b, l, stride)));
    };
    Value laneRest = compact(lane, sa.laneStride, sa.lanes);
    Value warpRest = compact(warp, sa.warpStride, sa.warps);
    Value slot = arith::AddIOp::create(
        b, l, arith::MulIOp::create(b, l, warpRest, cIndex(b, l, lanesRest)),
        laneRest);
    Value laneIdx = laneIndex(b, l, sa);
    Value warpIdx = warpIndex(b, l, sa);
    if (needsLeadingBarrier(op))
      gpu::BarrierOp::create(b, l);
    Value writer = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                         laneIdx, cIndex(b, l, 0));
    auto at = [&](OpBuilder &ob, Value w, int64_t o) {
      Value row = arith::AddIOp::create(
          ob, l, arith::MulIOp::create(ob, l, w, cIndex(ob, l, slots)), slot);
      return arith::AddIOp::create(
          ob, l, arith::MulIOp::create(ob, l, row, cIndex(ob, l, nOut)),
          cIndex(ob, l, o));
    };
    auto ifOp = scf::IfOp::create(b, l, writer, /*withElse=*/false);
    {
      OpBuilder ib = ifOp.getThenBodyBuilder();
      for (auto [o, a] : llvm::enumerate(acc))
        memref::StoreOp::create(ib, l, a, buf, ValueRange{at(ib, warpIdx, o)});
    }
    gpu::BarrierOp::create(b, l);
    for (auto [o, a] : llvm::enumerate(acc)) {
      Value r;
      for (int64_t k = 0; k < sa.warps; ++k) {
        Value v = memref::LoadOp::create(b, l, buf,
                                         ValueRange{at(b, cIndex(b, l, k), o)});
        r = r ? combine(b, l, kind, r, v) : v;
      }
      a = r;
    }
  }
  for (Value &a : acc)
    a = narrow(b, l, a, et);
  if (outShape.empty()) {
    map.map(op.getResult(), acc[0]);
    return success();
  }
  auto vt = VectorType::get({int64_t(acc.size())}, et);
  Value v = vector::FromElementsOp::create(b, l, vt, acc);
  map.map(op.getResult(), v);
  return success();
}

LogicalResult KernelLowering::lowerConvert(ConvertLayoutOp op, OpBuilder &b,
                                           IRMapping &map) {
  Location l = op.getLoc();
  auto from = op.getSource().getType();
  auto to = op.getType();
  Type et = from.getElementType();
  Type st = et.isInteger(1) ? b.getI8Type() : et;
  ArrayRef<int64_t> shape = from.getShape();
  int64_t elements = from.getNumElements();
  Value buf = sharedView(b, l, elements, st);
  auto linear = [&](OpBuilder &ob, const ThreadBase &tb,
                    ArrayRef<int64_t> off) {
    Value lin = cIndex(ob, l, 0);
    for (size_t d = 0; d < shape.size(); ++d) {
      Value i = arith::AddIOp::create(ob, l, tb.base[d], cIndex(ob, l, off[d]));
      lin = arith::AddIOp::create(
          ob, l, arith::MulIOp::create(ob, l, lin, cIndex(ob, l, shape[d])), i);
    }
    return lin;
  };
  const ThreadBase &src = baseFor(getLayout(from), shape);
  auto srcOffs = getRegisterOffsets(getLayout(from), shape);
  Value v = map.lookup(op.getSource());
  gpu::BarrierOp::create(b, l);
  for (auto [r, off] : llvm::enumerate(srcOffs)) {
    Value x = vector::ExtractOp::create(b, l, v, r);
    if (st != et)
      x = arith::ExtUIOp::create(b, l, st, x);
    Value idx = linear(b, src, off);
    if (src.duplicate) {
      auto ifOp =
          scf::IfOp::create(b, l,
                            arith::XOrIOp::create(b, l, src.duplicate,
                                                  arith::ConstantIntOp::create(
                                                      b, l, b.getI1Type(), 1)),
                            /*withElse=*/false);
      OpBuilder ib = ifOp.getThenBodyBuilder();
      memref::StoreOp::create(ib, l, x, buf, ValueRange{idx});
    } else {
      memref::StoreOp::create(b, l, x, buf, ValueRange{idx});
    }
  }
  gpu::BarrierOp::create(b, l);
  const ThreadBase &dst = baseFor(getLayout(to), shape);
  auto dstOffs = getRegisterOffsets(getLayout(to), shape);
  SmallVector<Value> elems;
  for (auto &off : dstOffs) {
    Value x =
        memref::LoadOp::create(b, l, buf, ValueRange{linear(b, dst, off)});
    if (st != et)
      x = arith::TruncIOp::create(b, l, et, x);
    elems.push_back(x);
  }
  map.map(op.getResult(),
          vector::FromElementsOp::create(
              b, l, VectorType::get({int64_t(elems.size())}, et), elems));
  return success();
}

LogicalResult KernelLowering::lowerOp(Operation *op, OpBuilder &b,
                                      IRMapping &map) {
  Location l = op->getLoc();
  if (!touchesTensors(op)) {
    if (!tessera::writesMemory(op)) {
      b.clone(*op, map);
      return success();
    }
    // Scalar code that writes memory (atomics): thread 0 does it once.
    Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, tid,
                                        cIndex(b, l, 0));
    if (op->getNumResults() != 0)
      return op->emitOpError("writes memory and returns values; it has no "
                             "register lowering");
    auto ifOp = scf::IfOp::create(b, l, first, /*withElse=*/false);
    OpBuilder ib = ifOp.getThenBodyBuilder();
    ib.clone(*op, map);
    return success();
  }
  if (auto ld = dyn_cast<LoadOp>(op))
    return lowerLoad(ld, b, map);
  if (auto st = dyn_cast<StoreOp>(op))
    return lowerStore(st, b, map);
  if (auto g = dyn_cast<GatherOp>(op))
    return lowerGather(g, b, map);
  if (auto s = dyn_cast<ScatterOp>(op))
    return lowerScatter(s, b, map);
  if (auto r = dyn_cast<ReduceOp>(op))
    return lowerReduce(r, b, map);
  if (auto c = dyn_cast<ConvertLayoutOp>(op))
    return lowerConvert(c, b, map);
  if (auto a = dyn_cast<ArangeOp>(op)) {
    map.map(a.getResult(), arange(a, b));
    return success();
  }
  if (auto s = dyn_cast<SplatOp>(op)) {
    Value scalar = map.lookup(s.getScalar());
    Type t = convert(s.getType());
    map.map(s.getResult(),
            isa<VectorType>(t)
                ? vector::BroadcastOp::create(b, l, t, scalar).getResult()
                : scalar);
    return success();
  }
  if (auto r = dyn_cast<ReshapeOp>(op)) {
    // Unit dimensions only: the registers are the same.
    auto from = r.getSource().getType(), to = r.getType();
    auto a = getRegisterOffsets(getLayout(from), from.getShape());
    auto c = getRegisterOffsets(getLayout(to), to.getShape());
    if (a.size() != c.size())
      return op->emitOpError("changes the registers of its tile");
    map.map(r.getResult(), map.lookup(r.getSource()));
    return success();
  }
  if (auto e = dyn_cast<tensor::ExtractOp>(op)) {
    if (!e.getIndices().empty())
      return op->emitOpError("on a tile has no register lowering");
    map.map(e.getResult(), map.lookup(e.getTensor()));
    return success();
  }
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (!dense || !dense.isSplat())
      return op->emitOpError("a constant tile that is not a splat has no "
                             "register lowering");
    Type t = convert(c.getType());
    TypedAttr v = dense.getSplatValue<TypedAttr>();
    if (auto vt = dyn_cast<VectorType>(t))
      map.map(c.getResult(), arith::ConstantOp::create(
                                 b, l, vt, DenseElementsAttr::get(vt, v)));
    else
      map.map(c.getResult(), arith::ConstantOp::create(b, l, v));
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    SmallVector<Value> inits;
    for (Value v : loop.getInitArgs())
      inits.push_back(map.lookup(v));
    auto nl = scf::ForOp::create(b, l, map.lookup(loop.getLowerBound()),
                                 map.lookup(loop.getUpperBound()),
                                 map.lookup(loop.getStep()), inits);
    map.map(loop.getInductionVar(), nl.getInductionVar());
    for (auto [a, n] :
         llvm::zip(loop.getRegionIterArgs(), nl.getRegionIterArgs()))
      map.map(a, n);
    Block *nb = nl.getBody();
    if (!nb->empty() && nb->back().hasTrait<OpTrait::IsTerminator>())
      nb->back().erase();
    OpBuilder ib = OpBuilder::atBlockEnd(nl.getBody());
    if (failed(lowerBlock(*loop.getBody(), ib, map)))
      return failure();
    for (auto [a, n] : llvm::zip(loop.getResults(), nl.getResults()))
      map.map(a, n);
    return success();
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    SmallVector<Type> types;
    for (Type t : ifOp.getResultTypes())
      types.push_back(convert(t));
    auto ni = scf::IfOp::create(b, l, types, map.lookup(ifOp.getCondition()),
                                /*withElse=*/!ifOp.getElseRegion().empty());
    for (auto [src, dst] :
         {std::pair(&ifOp.getThenRegion(), &ni.getThenRegion()),
          std::pair(&ifOp.getElseRegion(), &ni.getElseRegion())}) {
      if (src->empty())
        continue;
      Block &blk = dst->front();
      if (!blk.empty() && blk.back().hasTrait<OpTrait::IsTerminator>())
        blk.back().erase();
      OpBuilder ib = OpBuilder::atBlockEnd(&blk);
      if (failed(lowerBlock(src->front(), ib, map)))
        return failure();
    }
    for (auto [a, n] : llvm::zip(ifOp.getResults(), ni.getResults()))
      map.map(a, n);
    return success();
  }
  Dialect *d = op->getDialect();
  if (d && isa<arith::ArithDialect, math::MathDialect>(d) &&
      op->getNumRegions() == 0) {
    Operation *n = b.clone(*op, map);
    for (Value r : n->getResults())
      r.setType(convert(r.getType()));
    return success();
  }
  return op->emitOpError("has no register lowering");
}

LogicalResult KernelLowering::lowerBlock(Block &src, OpBuilder &b,
                                         IRMapping &map) {
  for (Operation &op : src) {
    if (auto y = dyn_cast<scf::YieldOp>(op)) {
      SmallVector<Value> vs;
      for (Value v : y.getOperands())
        vs.push_back(map.lookup(v));
      scf::YieldOp::create(b, y.getLoc(), vs);
      continue;
    }
    if (isa<gpu::ReturnOp>(op))
      continue;
    if (failed(lowerOp(&op, b, map)))
      return failure();
  }
  return success();
}

LogicalResult KernelLowering::run() {
  Region &body = kernel.getBody();
  // The largest tile one thread holds, in 32-bit registers.
  int64_t words = 0;
  kernel.walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (auto t = dyn_cast<RankedTensorType>(v.getType());
          t && t.getRank() && getLayout(t))
        words = std::max(words, (getNumRegisters(getLayout(t), t.getShape()) *
                                     t.getElementTypeBitWidth() +
                                 31) /
                                    32);
  });
  kernel->setAttr(
      "tile.tile_registers",
      IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), words));
  // Too large to keep in registers: left as it is for the caller to refuse
  // (RESOURCE_EXHAUSTED), rather than unrolled into a huge body first.
  if (maxTileRegisters > 0 && words > maxTileRegisters) {
    kernel->setAttr(
        "tile.shared_bytes",
        IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), 0));
    return success();
  }
  if (!llvm::hasSingleElement(body))
    return kernel.emitOpError("needs structured control flow");
  Block *old = &body.front();
  Block *entryBlock = new Block();
  body.getBlocks().push_front(entryBlock);
  IRMapping map;
  for (BlockArgument a : old->getArguments())
    map.map(a, entryBlock->addArgument(a.getType(), a.getLoc()));
  Location l = kernel.getLoc();
  OpBuilder eb = OpBuilder::atBlockBegin(entryBlock);
  tid = gpu::ThreadIdOp::create(eb, l, gpu::Dimension::x);
  lane = arith::RemUIOp::create(eb, l, tid, cIndex(eb, l, 32));
  warp = arith::DivUIOp::create(eb, l, tid, cIndex(eb, l, 32));
  // Per-thread constants go before this point, the body after it.
  Operation *anchor = cIndex(eb, l, 0).getDefiningOp();
  eb.setInsertionPoint(anchor);
  entry = &eb;

  // Alignment is tested once: the body is lowered twice, with vector
  // accesses where the tested tensors allow them and without.
  planAccesses(*old);
  Value alignedTest;
  bool anyVector = false;
  for (auto [memref, w] : widest) {
    if (w <= 1)
      continue;
    anyVector = true;
    // Known at launch: no test.
    if (alignmentOf(memref) == true)
      continue;
    Value m = map.lookup(memref);
    auto mt = cast<MemRefType>(m.getType());
    int64_t bytes = std::max<int64_t>(1, mt.getElementTypeBitWidth() / 8);
    Value ok = tessera::alignedAt(eb, l, m, bytes, w * bytes);
    // Whole vectors are in or out of bounds: the row length is a multiple.
    Value dim = memref::DimOp::create(eb, l, m, mt.getRank() - 1);
    Value rem = arith::RemUIOp::create(eb, l, dim, cIndex(eb, l, w));
    ok = arith::AndIOp::create(eb, l, ok,
                               arith::CmpIOp::create(eb, l,
                                                     arith::CmpIPredicate::eq,
                                                     rem, cIndex(eb, l, 0)));
    alignedTest =
        alignedTest ? arith::AndIOp::create(eb, l, alignedTest, ok).getResult()
                    : ok;
  }
  OpBuilder bb = OpBuilder::atBlockEnd(entryBlock);
  if (alignedTest) {
    auto ifOp = scf::IfOp::create(bb, l, alignedTest, /*withElse=*/true);
    vectorOK = true;
    OpBuilder tb = OpBuilder::atBlockBegin(ifOp.thenBlock());
    tb.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    IRMapping m1 = map;
    if (failed(lowerBlock(*old, tb, m1)))
      return failure();
    // The two copies never run together: the second reuses the first's
    // shared memory.
    int64_t vectorBytes = sharedBytes;
    sharedBytes = 0;
    vectorOK = false;
    OpBuilder fb = OpBuilder::atBlockBegin(ifOp.elseBlock());
    fb.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    IRMapping m2 = map;
    if (failed(lowerBlock(*old, fb, m2)))
      return failure();
    sharedBytes = std::max(sharedBytes, vectorBytes);
  } else {
    // Every vector access is on a tensor the launch guarantees aligned.
    vectorOK = anyVector;
    if (failed(lowerBlock(*old, bb, map)))
      return failure();
  }
  gpu::ReturnOp::create(bb, l);
  old->dropAllDefinedValueUses();
  old->erase();
  kernel->setAttr(
      "tile.shared_bytes",
      IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), sharedBytes));
  return success();
}

struct DistributeTilesPass
    : mlir::tessera::impl::DistributeTilesPassBase<DistributeTilesPass> {
  using DistributeTilesPassBase::DistributeTilesPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp f : mlir::tessera::tileKernels(module)) {
      int64_t warps = 4, cap = 16;
      if (auto a = f->getAttrOfType<IntegerAttr>("tile.num_warps"))
        warps = a.getInt();
      if (auto a = f->getAttrOfType<IntegerAttr>("tile.vector_width"))
        cap = std::max<int64_t>(1, a.getInt());
      if (warps * 32 > 1024) {
        f.emitError() << "num_warps=" << warps << " gives " << warps * 32
                      << " threads per block; the limit is 1024";
        return signalPassFailure();
      }
      bool index32 = f->hasAttr("tile.index32");
      SmallVector<std::optional<bool>> alignedArgs;
      SmallVector<ArrayAttr> symbols;
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        symbols.push_back(f.getArgAttrOfType<ArrayAttr>(i, "tile.dim_symbols"));
      for (unsigned i = 0; i < f.getNumArguments(); ++i) {
        auto a = f.getArgAttrOfType<BoolAttr>(i, "tile.aligned");
        alignedArgs.push_back(a ? std::optional<bool>(a.getValue())
                                : std::nullopt);
      }
      gpu::GPUFuncOp kernel =
          mlir::tessera::outlineKernel(module, f, warps * 32);
      KernelLowering lowering(kernel, warps, cap, maxTileRegisters,
                              std::move(alignedArgs), index32);
      lowering.setDimSymbols(std::move(symbols));
      if (failed(lowering.run()))
        return signalPassFailure();
      int64_t shared =
          kernel->getAttrOfType<IntegerAttr>("tile.shared_bytes").getInt();
      if (maxSharedBytes > 0 && shared > maxSharedBytes) {
        kernel.emitError() << "this configuration needs " << shared
                           << " bytes of shared memory per block; the "
                              "target allows "
                           << static_cast<int64_t>(maxSharedBytes);
        return signalPassFailure();
      }
    }
  }
};

} // namespace
