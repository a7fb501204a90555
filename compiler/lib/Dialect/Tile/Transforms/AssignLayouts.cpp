//===- AssignLayouts.cpp - Distributed layouts for a kernel's tiles -------===//
//
// Tiles tied together by element-wise use share a layout; global accesses
// choose it (16-byte vectors along a unit-stride innermost dimension); a
// reduction's result is the slice of its operand's layout. See the pass
// description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/IR/Layouts.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_ASSIGNLAYOUTSPASS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

/// A tile: a statically shaped tensor of rank >= 1.
bool isTile(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.getRank() >= 1 && rt.hasStaticShape();
}

/// The dimensions of a shape that are not 1.
SmallVector<int64_t> squeezed(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s;
  for (int64_t d : shape)
    if (d != 1)
      s.push_back(d);
  return s;
}

/// Operations the register lowering covers whose tiles all share a layout.
bool isElementwise(Operation *op) {
  Dialect *d = op->getDialect();
  if (isa<arith::ConstantOp>(op))
    return true;
  return d && isa<arith::ArithDialect, math::MathDialect>(d) &&
         op->getNumRegions() == 0;
}

bool isTensor(Type t) { return isa<RankedTensorType>(t); }

/// Why `op` has no register lowering, or the empty string.
std::string unsupportedReason(Operation *op, bool warpgroupMma) {
  bool tensors = llvm::any_of(op->getOperandTypes(), isTensor) ||
                 llvm::any_of(op->getResultTypes(), isTensor);
  if (!tensors)
    return "";
  for (Type t :
       llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
    if (auto rt = dyn_cast<RankedTensorType>(t))
      for (int64_t d : rt.getShape())
        if (d <= 0 || !llvm::isPowerOf2_64(d))
          return "a tile dimension that is not a power of two";
  if (auto r = dyn_cast<ReduceOp>(op))
    if (r.getSource().getType().getElementTypeBitWidth() > 32)
      return "a reduction of elements wider than 32 bits";
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    if (auto d = dyn_cast<DenseElementsAttr>(c.getValue()); d && !d.isSplat())
      return "a constant tile whose elements differ";
  // Rank-0 tensors (reduction results) are scalars in every thread.
  if (auto e = dyn_cast<tensor::ExtractOp>(op);
      e && e.getTensor().getType().getRank() == 0)
    return "";
  if (isElementwise(op) ||
      isa<SplatOp, ArangeOp, LoadOp, StoreOp, GatherOp, ScatterOp, ReduceOp,
          ConvertLayoutOp, BroadcastOp, scf::ForOp, scf::IfOp, scf::YieldOp>(
          op))
    return "";
  if (auto d = dyn_cast<DotOp>(op)) {
    // Tensor cores: m16n8k16 with 16-bit inputs into f32 (fp8 inputs
    // once tessera-widen-float8-dots has made them f16), and on sm_90a
    // wgmma k8 on tf32 from K-major blocks.
    Type in = d.getLhs().getType().getElementType();
    if (warpgroupMma &&
        takesTf32Wgmma(d, numWarps(op->getParentOfType<func::FuncOp>())))
      return "";
    if (!(in.isF16() || in.isBF16() || isFloat8(in)) ||
        !d.getType().getElementType().isF32()) {
      std::string why;
      llvm::raw_string_ostream os(why);
      os << "a dot of " << in << " into " << d.getType().getElementType();
      return why;
    }
    int64_t warps = numWarps(op->getParentOfType<func::FuncOp>());
    ArrayRef<int64_t> shape = d.getType().getShape();
    MmaLayoutAttr mma = chooseMmaLayout(op->getContext(), shape, warps);
    if (!mma || d.getLhs().getType().getShape()[1] % 16 != 0)
      return "a dot whose tile does not fit tensor-core instructions on " +
             std::to_string(warps) + " warps";
    return "";
  }
  if (auto t = dyn_cast<TransOp>(op)) {
    if (t.getType().getRank() == 2)
      return "";
    return "a transposition of more than two dimensions";
  }
  if (auto r = dyn_cast<ReshapeOp>(op)) {
    if (squeezed(r.getSource().getType().getShape()) ==
        squeezed(r.getType().getShape()))
      return "";
    return "a reshape that moves elements between dimensions";
  }
  return "'" + op->getName().getStringRef().str() + "'";
}

/// Union-find over the tile values of a kernel.
class Groups {
public:
  Value find(Value v) {
    auto it = parent.find(v);
    if (it == parent.end()) {
      parent[v] = v;
      return v;
    }
    if (it->second == v)
      return v;
    Value root = find(it->second);
    parent[v] = root;
    return root;
  }
  void unite(Value a, Value b) {
    Value ra = find(a), rb = find(b);
    if (ra != rb)
      parent[ra] = rb;
  }
  void unite(ValueRange vs) {
    Value first;
    for (Value v : vs) {
      if (!isTile(v.getType()))
        continue;
      if (!first)
        first = v;
      else
        unite(first, v);
    }
  }

private:
  DenseMap<Value, Value> parent;
};

/// What one group of tiles asks of its layout.
struct Request {
  SmallVector<int64_t> shape; // squeezed shape shared by the group
  int64_t vector = 0;         // widest access request (0: no access)
  bool fromAccess = false;
  bool dot = false;     // holds a dot's result
  bool rank2 = true;    // every tile of the group is 2-D
  bool reduced = false; // a reduction's source
};

/// A blocked layout for a squeezed shape (rank >= 1), `vector` elements per
/// thread along the last dimension, lanes and warps fastest dimension first.
BlockedLayoutAttr makeLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                             int64_t vector, int64_t warps) {
  unsigned rank = shape.size();
  SmallVector<int64_t> size(rank, 1), lanes(rank, 1), wps(rank, 1), order;
  for (int d = rank - 1; d >= 0; --d)
    order.push_back(d);
  size[rank - 1] = vector;
  int64_t laneLeft = 32, warpLeft = warps;
  for (int64_t d : order) {
    int64_t room = shape[d] / size[d];
    while (laneLeft > 1 && room % 2 == 0 && lanes[d] * 2 <= room) {
      lanes[d] *= 2;
      laneLeft /= 2;
    }
  }
  lanes[order[0]] *= laneLeft; // a tile too small for a warp: replicated
  for (int64_t d : order) {
    int64_t room = shape[d] / (size[d] * lanes[d]);
    while (warpLeft > 1 && room % 2 == 0 && wps[d] * 2 <= room) {
      wps[d] *= 2;
      warpLeft /= 2;
    }
  }
  wps[order[0]] *= warpLeft;
  return BlockedLayoutAttr::get(ctx, size, lanes, wps, order);
}

/// `layout` (for the squeezed shape) on a tile of `shape`: unit dimensions
/// get one element, lane and warp each and come last in the order.
BlockedLayoutAttr expandLayout(BlockedLayoutAttr layout,
                               ArrayRef<int64_t> shape) {
  MLIRContext *ctx = layout.getContext();
  unsigned rank = shape.size();
  SmallVector<int64_t> pos; // tile dimension of each squeezed dimension
  for (unsigned d = 0; d < rank; ++d)
    if (shape[d] != 1)
      pos.push_back(d);
  if (pos.empty()) // an all-unit tile uses its last dimension
    pos.push_back(rank - 1);
  SmallVector<int64_t> size(rank, 1), lanes(rank, 1), wps(rank, 1), order;
  for (auto [i, d] : llvm::enumerate(pos)) {
    size[d] = layout.getSizePerThread()[i];
    lanes[d] = layout.getThreadsPerWarp()[i];
    wps[d] = layout.getWarpsPerCTA()[i];
  }
  for (int64_t i : layout.getOrder())
    order.push_back(pos[i]);
  for (int d = rank - 1; d >= 0; --d)
    if (!llvm::is_contained(pos, d))
      order.push_back(d);
  return BlockedLayoutAttr::get(ctx, size, lanes, wps, order);
}

/// Registers per thread of an accumulator from which a persistent or
/// warp-specialised kernel stores without converting it (see the routing
/// of stores below).
constexpr int64_t kTightEpilogueWords = 128;

/// The vector width a global access asks for (1 when its innermost tile
/// dimension is not the tensor's unit-stride innermost dimension).
int64_t accessVector(Value tile, Value memref, int64_t cap) {
  auto tt = cast<RankedTensorType>(tile.getType());
  auto mt = cast<MemRefType>(memref.getType());
  int64_t bits = tt.getElementTypeBitWidth();
  int64_t bytes = std::max<int64_t>(1, bits / 8);
  if (tt.getShape().back() == 1)
    return 1;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(mt.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return 1;
  return std::max<int64_t>(1, std::min<int64_t>(cap, 16 / bytes));
}

struct AssignLayoutsPass
    : mlir::tessera::tile::impl::AssignLayoutsPassBase<AssignLayoutsPass> {
  using AssignLayoutsPassBase::AssignLayoutsPassBase;

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (!f->hasAttr(TileDialect::getKernelAttrName()))
      return;
    std::string why;
    if (!canAssignLayouts(f, &why, warpgroupMma)) {
      f.emitError() << "has no register lowering: " << why;
      return signalPassFailure();
    }
    int64_t warps = numWarps(f), cap = 16;
    WalkResult narrow = f.walk([&](DotOp d) {
      if (!isFloat8(d.getLhs().getType().getElementType()) ||
          (warpgroupMma && keepsFloat8Operands(d, warps)))
        return WalkResult::advance();
      d.emitOpError("has fp8 operands that no tensor-core product takes: "
                    "tessera-widen-float8-dots makes them f16 before layouts "
                    "are assigned");
      return WalkResult::interrupt();
    });
    if (narrow.wasInterrupted())
      return signalPassFailure();
    if (auto a = f->getAttrOfType<IntegerAttr>("tile.vector_width"))
      cap = std::max<int64_t>(1, a.getInt());

    // 0. Tiles every thread computes from scalars alone (aranges, splats,
    // splat constants and element-wise math on them) get one copy per use,
    // so that unrelated uses do not tie their groups together. Users come
    // first, so that a copied operation's operands are copied in turn.
    SmallVector<Operation *> ops;
    f.walk([&](Operation *op) { ops.push_back(op); });
    DenseSet<Operation *> fromScalars;
    for (Operation *op : ops) {
      if (op->getNumResults() != 1 || !isTile(op->getResult(0).getType()))
        continue;
      auto c = dyn_cast<arith::ConstantOp>(op);
      bool leaf = isa<ArangeOp, SplatOp>(op) ||
                  (c && isa<DenseElementsAttr>(c.getValue()) &&
                   cast<DenseElementsAttr>(c.getValue()).isSplat());
      bool derived = !c && isElementwise(op) &&
                     llvm::all_of(op->getOperands(), [&](Value o) {
                       return !isTile(o.getType()) ||
                              (o.getDefiningOp() &&
                               fromScalars.contains(o.getDefiningOp()));
                     });
      if (leaf || derived)
        fromScalars.insert(op);
    }
    for (Operation *op : llvm::reverse(ops)) {
      if (!fromScalars.contains(op) || op->getResult(0).hasOneUse())
        continue;
      SmallVector<OpOperand *> uses;
      for (OpOperand &u : op->getResult(0).getUses())
        uses.push_back(&u);
      for (OpOperand *u : llvm::drop_begin(uses)) {
        OpBuilder b(op);
        b.setInsertionPointAfter(op);
        u->set(b.clone(*op)->getResult(0));
      }
    }

    // 1. Group the tiles that must share a layout.
    Groups groups;
    SmallVector<Value> tiles;
    llvm::MapVector<Value, Request> requests;
    auto analyse = [&]() -> LogicalResult {
      groups = Groups();
      tiles.clear();
      requests.clear();
      auto note = [&](Value v) {
        if (isTile(v.getType())) {
          tiles.push_back(v);
          groups.find(v);
        }
      };
      f.walk([&](Operation *op) {
        for (Region &r : op->getRegions())
          for (Block &b : r)
            for (BlockArgument a : b.getArguments())
              note(a);
        for (Value v : op->getResults())
          note(v);
        if (isElementwise(op) || isa<ReshapeOp, LoadOp, StoreOp, GatherOp,
                                     ScatterOp, SplatOp, ArangeOp>(op)) {
          SmallVector<Value> vs(op->getOperands());
          if (auto st = dyn_cast<StoreOp>(op))
            vs.erase(vs.begin() + 1); // the memref
          llvm::append_range(vs, op->getResults());
          groups.unite(vs);
        } else if (auto dot = dyn_cast<DotOp>(op)) {
          groups.unite(ValueRange{dot.getAcc(), dot.getResult()});
        } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
          for (auto [init, arg, res] :
               llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                         loop.getResults()))
            groups.unite(ValueRange{init, arg, res});
        } else if (auto y = dyn_cast<scf::YieldOp>(op)) {
          Operation *parent = y->getParentOp();
          if (isa<scf::ForOp>(parent)) {
            auto loop = cast<scf::ForOp>(parent);
            for (auto [v, arg] :
                 llvm::zip(y.getOperands(), loop.getRegionIterArgs()))
              groups.unite(ValueRange{v, arg});
          } else if (isa<scf::IfOp>(parent)) {
            for (auto [v, res] :
                 llvm::zip(y.getOperands(), parent->getResults()))
              groups.unite(ValueRange{v, res});
          }
        }
      });

      // 2. What each group asks for.
      for (Value v : tiles) {
        Request &r = requests[groups.find(v)];
        SmallVector<int64_t> s =
            squeezed(cast<RankedTensorType>(v.getType()).getShape());
        if (s.empty())
          s.push_back(1);
        {
          // 2-D after leading unit dimensions.
          ArrayRef<int64_t> shape =
              cast<RankedTensorType>(v.getType()).getShape();
          if (shape.size() < 2 ||
              !llvm::all_of(shape.drop_back(2),
                            [](int64_t d) { return d == 1; }))
            r.rank2 = false;
        }
        if (r.shape.empty())
          r.shape = s;
        else if (r.shape != s) {
          f.emitError() << "tiles of shapes [" << r.shape << "] and [" << s
                        << "] meet element-wise";
          return failure();
        }
      }
      auto ask = [&](Value tile, Value memref, bool contiguous) {
        Request &r = requests[groups.find(tile)];
        int64_t v = contiguous ? accessVector(tile, memref, cap) : 1;
        r.vector = std::max(r.vector, v);
        r.fromAccess = true;
      };
      f.walk([&](Operation *op) {
        if (auto ld = dyn_cast<LoadOp>(op))
          ask(ld.getResult(), ld.getSource(), true);
        else if (auto st = dyn_cast<StoreOp>(op))
          ask(st.getValue(), st.getDest(), true);
        else if (auto g = dyn_cast<GatherOp>(op))
          ask(g.getResult(), g.getSource(), false);
        else if (auto s = dyn_cast<ScatterOp>(op))
          ask(s.getValue(), s.getDest(), false);
        else if (auto d = dyn_cast<DotOp>(op))
          requests[groups.find(d.getResult())].dot = true;
        else if (auto r = dyn_cast<ReduceOp>(op))
          requests[groups.find(r.getSource())].reduced = true;
      });
      return success();
    };
    if (failed(analyse()))
      return signalPassFailure();

    // A store of a tensor-core accumulator writes pairs of consecutive
    // elements per thread; through shared memory, a blocked layout writes
    // 16-byte vectors. Such a store (unmasked, of a tile with a 16-byte
    // vector for every thread) stores a converted copy, in a group of its
    // own.
    // A persistent kernel's loop over programs keeps its state live across
    // the epilogue, and a warp-specialised kernel's consumers have fewer
    // registers (setmaxnreg): there an accumulator of 128 registers per
    // thread or more leaves the conversion no room (ptxas spills), and is
    // stored from its own layout.
    SmallVector<StoreOp> routed;
    bool tight =
        f->hasAttr("tile.persistent") || f->hasAttr("tile.warp_specialize");
    f.walk([&](StoreOp st) {
      const Request &r = requests[groups.find(st.getValue())];
      auto t = cast<RankedTensorType>(st.getValue().getType());
      int64_t v = accessVector(st.getValue(), st.getDest(), cap);
      // The accumulator's f32 registers per thread.
      int64_t words = t.getNumElements() / (32 * warps);
      if (r.dot && r.rank2 && !st.getMask() && v > 2 &&
          t.getNumElements() >= 32 * warps * v &&
          !(tight && words >= kTightEpilogueWords))
        routed.push_back(st);
    });
    for (StoreOp st : routed) {
      // A value computed element-wise from loads (C in alpha * acc + beta *
      // C) is computed in the blocked layout as well, its loads 16 bytes
      // wide: the conversion moves the operands that come from elsewhere.
      SmallVector<OpOperand *> cut;
      SmallVector<Operation *> work{st};
      bool loads = false;
      DenseSet<Operation *> seen;
      while (!work.empty()) {
        Operation *op = work.pop_back_val();
        if (!seen.insert(op).second)
          continue;
        for (OpOperand &use : op->getOpOperands()) {
          Value v = use.get();
          if (!isTile(v.getType()) || (op == st && use.getOperandNumber() != 0))
            continue;
          Operation *def = v.getDefiningOp();
          if (def && isa<LoadOp>(def) && v.hasOneUse()) {
            loads = true;
            continue;
          }
          if (def && (isElementwise(def) || isa<SplatOp, ArangeOp>(def)) &&
              v.hasOneUse() && def->getBlock() == st->getBlock()) {
            work.push_back(def);
            continue;
          }
          cut.push_back(&use);
        }
      }
      if (!loads) {
        cut.clear();
        cut.push_back(&st.getValueMutable());
      }
      for (OpOperand *use : cut) {
        OpBuilder b(use->getOwner());
        use->set(ConvertLayoutOp::create(b, use->getOwner()->getLoc(),
                                         use->get().getType(), use->get()));
      }
    }
    if (!routed.empty() && failed(analyse()))
      return signalPassFailure();

    // 3. One layout per group: the widest vector that divides the fastest
    // dimension and leaves every thread elements of its own.
    MLIRContext *ctx = &getContext();
    // A dot whose left operand is computed from another dot's result (P V
    // after Q K^T): every warp takes whole rows of both, so that the first
    // result converts to the second's operand in registers.
    bool chained = false;
    f.walk([&](DotOp d) {
      SmallVector<Value> work{d.getLhs()};
      DenseSet<Value> seen;
      while (!work.empty() && !chained) {
        Value v = work.pop_back_val();
        Operation *def = v.getDefiningOp();
        if (!def || !seen.insert(v).second)
          continue;
        if (isa<DotOp>(def)) {
          chained = true;
          break;
        }
        if (isElementwise(def) || isa<ConvertLayoutOp, ReshapeOp>(def))
          llvm::append_range(work, def->getOperands());
      }
    });
    auto mmaFor = [&](ArrayRef<int64_t> shape) {
      if (warpgroupMma && fitsWarpgroupGrid(shape, warps))
        return MmaLayoutAttr::get(ctx, {warps, 1});
      if (chained) {
        // As many warps along M as the rows allow, the rest along N.
        int64_t wm = std::max<int64_t>(1, std::min(warps, shape[0] / 16));
        int64_t wn = warps / wm;
        if (shape[0] % (16 * wm) == 0 && shape[1] % (8 * wn) == 0)
          return MmaLayoutAttr::get(ctx, {wm, wn});
      }
      return chooseMmaLayout(ctx, shape, warps);
    };
    DenseMap<Value, Attribute> layoutOf;
    for (auto &[root, r] : requests) {
      // A dot's accumulator group lives in the tensor-core layout; its
      // loads and stores use the pairs of consecutive elements it gives.
      if (r.dot && r.rank2) {
        layoutOf[root] = mmaFor(r.shape);
        continue;
      }
      int64_t elems = 1;
      for (int64_t d : r.shape)
        elems *= d;
      int64_t v = r.fromAccess ? r.vector : 4;
      v = std::min(v, std::max<int64_t>(1, elems / (32 * warps)));
      while (v > 1 && r.shape.back() % v != 0)
        v /= 2;
      layoutOf[root] = makeLayout(ctx, r.shape, std::max<int64_t>(v, 1), warps);
    }

    // 4. Reductions: the result is the slice of the operand's layout. A
    // group without accesses of its own takes it; one with accesses keeps
    // its layout and the result is converted.
    DenseMap<Value, Attribute> fixed; // per value, overriding the group's
    auto layoutOfValue = [&](Value v) -> Attribute {
      if (auto it = fixed.find(v); it != fixed.end())
        return it->second;
      Attribute l = layoutOf[groups.find(v)];
      auto shape = cast<RankedTensorType>(v.getType()).getShape();
      if (auto b = dyn_cast<BlockedLayoutAttr>(l))
        return expandLayout(b, shape);
      // A tile of a sliced group that keeps the sliced dimension (unit):
      // the parent, collapsed along it.
      if (auto s = dyn_cast<SliceLayoutAttr>(l);
          s &&
          shape.size() ==
              (isa<MmaLayoutAttr>(s.getParent())
                   ? 2
                   : cast<BlockedLayoutAttr>(s.getParent()).getRank()) &&
          shape[s.getDim()] == 1)
        return s.getParent();
      return l;
    };
    // Results whose layout differs from their group's: the group's users
    // see a converted copy.
    SmallVector<std::pair<Value, Attribute>> conversions;
    f.walk([&](ReduceOp red) {
      if (!isTile(red.getType()))
        return;
      // Blocked: canAssignLayouts refuses reductions of reduction results,
      // and a dot's group holding a reduction keeps a blocked layout (see
      // below).
      Attribute src = layoutOfValue(red.getSource());
      auto slice = SliceLayoutAttr::get(ctx, red.getAxis(), src);
      Value root = groups.find(red.getResult());
      if (!requests[root].fromAccess && !isa<SliceLayoutAttr>(layoutOf[root]) &&
          squeezed(red.getType().getShape()) ==
              SmallVector<int64_t>(red.getType().getShape())) {
        // The whole group follows the reduction (unit dimensions would
        // need a parent of their own, so only groups without them).
        layoutOf[root] = slice;
        return;
      }
      fixed[red.getResult()] = slice;
      conversions.push_back({red.getResult(), slice});
    });
    // A broadcast reads its source in its result's layout, collapsed along
    // the broadcast dimension: a 1-D group without accesses of its own
    // (row statistics, index vectors) takes the slice of that layout.
    SmallVector<BroadcastOp> broadcasts;
    f.walk([&](BroadcastOp bc) {
      broadcasts.push_back(bc);
      auto st = bc.getSource().getType();
      ArrayRef<int64_t> to = bc.getType().getShape();
      if (st.getRank() != 2)
        return;
      SmallVector<unsigned> dims;
      for (unsigned d = 0; d < 2; ++d)
        if (st.getShape()[d] == 1 && to[d] != 1)
          dims.push_back(d);
      Attribute lr = layoutOfValue(bc.getResult());
      Value root = groups.find(bc.getSource());
      const Request &r = requests[root];
      if (dims.size() != 1 || r.fromAccess || r.shape.size() != 1 ||
          !isa<BlockedLayoutAttr, MmaLayoutAttr>(lr) ||
          isa<SliceLayoutAttr>(layoutOf[root]))
        return;
      layoutOf[root] = SliceLayoutAttr::get(ctx, dims[0], lr);
    });
    // A 2-D transposition of a blocked tile relabels its dimensions: the
    // result takes the permuted layout and every thread keeps its registers.
    f.walk([&](TransOp tr) {
      auto src = dyn_cast<BlockedLayoutAttr>(layoutOfValue(tr.getSource()));
      if (!src)
        return;
      auto perm = tr.getPermutation();
      SmallVector<int64_t> size, lanes, wps, order;
      for (int64_t p : perm) {
        size.push_back(src.getSizePerThread()[p]);
        lanes.push_back(src.getThreadsPerWarp()[p]);
        wps.push_back(src.getWarpsPerCTA()[p]);
      }
      for (int64_t d : src.getOrder())
        order.push_back(llvm::find(perm, d) - perm.begin());
      auto l = BlockedLayoutAttr::get(ctx, size, lanes, wps, order);
      Value root = groups.find(tr.getResult());
      ArrayRef<int64_t> shape = tr.getType().getShape();
      if (squeezed(shape) == SmallVector<int64_t>(shape) &&
          llvm::count_if(
              tiles, [&](Value v) { return groups.find(v) == root; }) == 1) {
        // The result is a group of its own: it takes the layout.
        layoutOf[root] = l;
        return;
      }
      fixed[tr.getResult()] = l;
      conversions.push_back({tr.getResult(), l});
    });
    // A dot whose accumulator group keeps a blocked layout (it also holds
    // tiles of other ranks or reduces) computes in the tensor-core layout
    // between two conversions.
    SmallVector<std::pair<DotOp, MmaLayoutAttr>> dots;
    f.walk([&](DotOp d) {
      Attribute l = layoutOfValue(d.getResult());
      auto mma = dyn_cast<MmaLayoutAttr>(l);
      if (!mma) {
        mma = mmaFor(d.getType().getShape());
        fixed[d.getResult()] = mma;
        conversions.push_back({d.getResult(), mma});
      }
      dots.push_back({d, mma});
    });

    // 5. Retype: every tile value, then the constants' attributes.
    for (Value v : tiles) {
      auto t = cast<RankedTensorType>(v.getType());
      Attribute l = layoutOfValue(v);
      if (!isValidLayout(l, t.getShape())) {
        emitError(v.getLoc()) << "no valid layout for a tile of " << t;
        return signalPassFailure();
      }
      v.setType(withLayout(t, l));
    }
    for (auto [res, own] : conversions) {
      auto t = cast<RankedTensorType>(res.getType());
      Attribute groupLayout = layoutOf[groups.find(res)];
      if (auto b = dyn_cast<BlockedLayoutAttr>(groupLayout))
        groupLayout = expandLayout(b, t.getShape());
      if (groupLayout == own)
        continue;
      OpBuilder b(res.getContext());
      b.setInsertionPointAfterValue(res);
      auto conv = ConvertLayoutOp::create(b, res.getLoc(),
                                          withLayout(t, groupLayout), res);
      res.replaceAllUsesExcept(conv.getResult(), conv);
    }
    for (BroadcastOp bc : broadcasts) {
      auto st = bc.getSource().getType();
      Attribute want = getLayout(bc.getType());
      if (getLayout(st) == want)
        continue;
      OpBuilder b(bc);
      bc.getSourceMutable().assign(ConvertLayoutOp::create(
          b, bc.getLoc(), withLayout(st, want), bc.getSource()));
    }
    // Dot operands take the tensor-core operand layouts (and the
    // accumulator the result's, where its group kept another).
    for (auto [d, mma] : dots) {
      auto to = [&](Value v, Attribute l) -> Value {
        auto t = cast<RankedTensorType>(v.getType());
        if (getLayout(t) == l)
          return v;
        // An operand defined outside the dot's loop converts there, once
        // (its fragments then stay in registers across the loop).
        OpBuilder b(d);
        if (v.getParentBlock() != d->getBlock())
          b.setInsertionPointAfterValue(v);
        return ConvertLayoutOp::create(b, d.getLoc(), withLayout(t, l), v);
      };
      d.getLhsMutable().assign(
          to(d.getLhs(), DotOperandLayoutAttr::get(ctx, 0, mma)));
      d.getRhsMutable().assign(
          to(d.getRhs(), DotOperandLayoutAttr::get(ctx, 1, mma)));
      d.getAccMutable().assign(to(d.getAcc(), mma));
    }
    f.walk([&](arith::ConstantOp c) {
      auto t = dyn_cast<RankedTensorType>(c.getType());
      auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
      if (t && dense && dense.getType() != t)
        c.setValueAttr(dense.reshape(t));
    });
  }
};

} // namespace

bool mlir::tessera::tile::canAssignLayouts(func::FuncOp kernel,
                                           std::string *why,
                                           bool warpgroupMma) {
  std::string reason;
  kernel.walk([&](Operation *op) {
    reason = unsupportedReason(op, warpgroupMma);
    return reason.empty() ? WalkResult::advance() : WalkResult::interrupt();
  });
  // Tensor-core tiles come from and go to rows of unit stride (cp.async
  // chunks, paired stores); kernels with dots over strided views keep the
  // shared-memory lowering.
  bool dots = false;
  kernel.walk([&](DotOp) { dots = true; });
  if (reason.empty() && dots)
    kernel.walk([&](Operation *op) {
      Value m;
      if (auto ld = dyn_cast<LoadOp>(op))
        m = ld.getSource();
      else if (auto st = dyn_cast<StoreOp>(op))
        m = st.getDest();
      else
        return WalkResult::advance();
      SmallVector<int64_t> strides;
      int64_t offset;
      auto mt = cast<MemRefType>(m.getType());
      if (failed(mt.getStridesAndOffset(strides, offset)) ||
          strides.back() != 1) {
        reason = "a dot in a kernel that accesses a tensor without unit "
                 "innermost stride";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
  // A reduction of a tile derived from another reduction's (sliced) result
  // has no register lowering yet.
  if (reason.empty()) {
    SmallVector<Value> work;
    kernel.walk([&](ReduceOp r) {
      if (isTile(r.getType()))
        work.push_back(r.getResult());
    });
    DenseSet<Value> seen;
    while (!work.empty() && reason.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (isa<ReduceOp>(user)) {
          reason = "a reduction of another reduction's result";
          break;
        }
        // A broadcast gives the full layout back.
        if (isa<BroadcastOp>(user))
          continue;
        llvm::append_range(work, user->getResults());
        if (isa<scf::YieldOp>(user)) {
          Operation *parent = user->getParentOp();
          llvm::append_range(work, parent->getResults());
          if (auto loop = dyn_cast<scf::ForOp>(parent))
            work.push_back(loop.getRegionIterArgs()[use.getOperandNumber()]);
        }
        if (auto loop = dyn_cast<scf::ForOp>(user);
            loop && use.getOperandNumber() >= loop.getNumControlOperands())
          work.push_back(
              loop.getRegionIterArgs()[use.getOperandNumber() -
                                       loop.getNumControlOperands()]);
      }
    }
  }
  if (why)
    *why = reason;
  return reason.empty();
}
