//===- FuseTileCopies.cpp - Element-wise tiles straight to/from memory ----===//
//
// tessera-unify-shape-dims: dimensions that share a shape symbol are equal
//   at launch, so every memref.dim of such a dimension is replaced by the
//   first one; the clipped load/store regions of tiles at the same offsets
//   then become the same SSA values.
// tessera-fuse-tile-copies: an element-wise linalg.generic whose result tile
//   is only stored makes the store's region its iteration domain and writes
//   the destination directly; inputs loaded from memory over that same
//   region are read from memory directly. The tile buffers (and their
//   padding) disappear. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ConversionUtils.h"
#include "tessera/Conversion/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_UNIFYSHAPEDIMSPASS
#define GEN_PASS_DEF_FUSETILECOPIESPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

struct UnifyShapeDimsPass
    : mlir::tessera::impl::UnifyShapeDimsPassBase<UnifyShapeDimsPass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (f.isExternal())
      return;
    SmallVector<ArrayAttr> symbols;
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      symbols.push_back(f.getArgAttrOfType<ArrayAttr>(i, "tile.dim_symbols"));
    SmallVector<memref::DimOp> dims;
    f.walk([&](memref::DimOp d) { dims.push_back(d); });
    Block &entry = f.getBody().front();
    DenseMap<std::pair<unsigned, int64_t>, Value> made;
    for (memref::DimOp d : dims) {
      auto arg = dyn_cast<BlockArgument>(d.getSource());
      std::optional<int64_t> index = d.getConstantIndex();
      if (!arg || arg.getOwner() != &entry || !index)
        continue;
      auto first =
          tessera::firstWithSymbol(symbols, arg.getArgNumber(), *index);
      if (first == std::pair<unsigned, int64_t>(arg.getArgNumber(), *index))
        continue;
      Value &rep = made[first];
      if (!rep) {
        OpBuilder b = OpBuilder::atBlockBegin(&entry);
        rep = memref::DimOp::create(
            b, d.getLoc(), entry.getArgument(first.first), first.second);
      }
      d.replaceAllUsesWith(rep);
      d.erase();
    }
  }
};

/// A copy (memref.copy or linalg.copy) and its operands.
struct Copy {
  Operation *op = nullptr;
  Value source, target;
};

std::optional<Copy> asCopy(Operation *op) {
  if (auto c = dyn_cast<memref::CopyOp>(op))
    return Copy{op, c.getSource(), c.getTarget()};
  if (auto c = dyn_cast<linalg::CopyOp>(op))
    if (c.hasPureBufferSemantics())
      return Copy{op, c.getInputs()[0], c.getOutputs()[0]};
  return std::nullopt;
}

/// A unit-stride subview of `buffer` (its offsets and sizes).
memref::SubViewOp unitSubView(Value v, Value buffer) {
  auto sv = v.getDefiningOp<memref::SubViewOp>();
  if (!sv || sv.getSource() != buffer ||
      !llvm::all_of(sv.getMixedStrides(),
                    [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
    return nullptr;
  return sv;
}

bool sameRegion(memref::SubViewOp a, memref::SubViewOp b) {
  return a.getMixedOffsets() == b.getMixedOffsets() &&
         a.getMixedSizes() == b.getMixedSizes();
}

/// Whether any op strictly between `from` and `to` (same block) may write
/// memory.
bool writesBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (isMemoryEffectFree(op))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || effects.hasEffect<MemoryEffects::Write>())
      return true;
  }
  return false;
}

bool isElementwise(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() != 0)
    return false;
  return llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

struct FuseTileCopiesPass
    : mlir::tessera::impl::FuseTileCopiesPassBase<FuseTileCopiesPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp g) {
      if (isElementwise(g))
        generics.push_back(g);
    });
    for (linalg::GenericOp g : generics)
      fuse(g);
  }

  /// The single store of tile `out` after `g`: copy(subview(out), dst).
  std::optional<std::pair<Copy, memref::SubViewOp>> storeOf(linalg::GenericOp g,
                                                            Value out) {
    std::optional<std::pair<Copy, memref::SubViewOp>> store;
    for (Operation *user : out.getUsers()) {
      if (user == g.getOperation() || isa<memref::DeallocOp>(user))
        continue;
      auto sv = dyn_cast<memref::SubViewOp>(user);
      if (store || !sv || !unitSubView(sv, out) || !sv->hasOneUse())
        return std::nullopt;
      std::optional<Copy> c = asCopy(*sv->user_begin());
      if (!c || c->source != sv.getResult() ||
          c->op->getBlock() != g->getBlock() || !g->isBeforeInBlock(c->op) ||
          writesBetween(g, c->op))
        return std::nullopt;
      store = std::make_pair(*c, sv);
    }
    return store;
  }

  /// The copy that filled `tile` over exactly `region` from memory before
  /// `g` (with no write to `tile` in between), if any.
  std::optional<Copy> loadOf(Value tile, memref::SubViewOp region,
                             linalg::GenericOp g) {
    std::optional<Copy> load;
    for (Operation *user : tile.getUsers()) {
      auto sv = dyn_cast<memref::SubViewOp>(user);
      if (!sv)
        continue;
      for (Operation *svUser : sv->getUsers()) {
        std::optional<Copy> c = asCopy(svUser);
        if (!c || c->target != sv.getResult() || c->source == sv.getResult())
          continue;
        if (unitSubView(sv, tile) && sameRegion(sv, region) &&
            c->op->getBlock() == g->getBlock() && c->op->isBeforeInBlock(g))
          load = c;
      }
    }
    if (!load)
      return std::nullopt;
    // Nothing may write the tile between the load and the generic.
    for (Operation *op = load->op->getNextNode(); op && op != g.getOperation();
         op = op->getNextNode()) {
      bool touches = false;
      op->walk([&](Operation *n) {
        for (Value v : n->getOperands())
          if (v == tile ||
              (v.getDefiningOp<memref::SubViewOp>() &&
               v.getDefiningOp<memref::SubViewOp>().getSource() == tile))
            touches = true;
      });
      if (touches && !isMemoryEffectFree(op))
        return std::nullopt;
    }
    return load;
  }

  void fuse(linalg::GenericOp g) {
    Value out = g.getDpsInits()[0];
    auto outAlloc = out.getDefiningOp<memref::AllocOp>();
    if (!outAlloc || !outAlloc.getType().hasStaticShape())
      return;
    // The generic must not read its own output (a pure element-wise map
    // of its inputs).
    if (g.payloadUsesValueFromOperand(g.getDpsInitOperand(0)))
      return;
    auto store = storeOf(g, out);
    if (!store)
      return;
    auto [storeCopy, region] = *store;
    OpBuilder b(storeCopy.op);
    Location l = g.getLoc();
    SmallVector<Value> inputs;
    for (Value in : g.getDpsInputs()) {
      auto t = dyn_cast<MemRefType>(in.getType());
      if (!t || t.getShape() != outAlloc.getType().getShape())
        return;
      if (in.getDefiningOp<memref::AllocOp>())
        if (std::optional<Copy> load = loadOf(in, region, g)) {
          inputs.push_back(load->source);
          continue;
        }
      inputs.push_back(memref::SubViewOp::create(
          b, l, in, region.getMixedOffsets(), region.getMixedSizes(),
          region.getMixedStrides()));
    }
    int64_t rank = outAlloc.getType().getRank();
    SmallVector<AffineMap> maps(inputs.size() + 1,
                                b.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto fused = linalg::GenericOp::create(
        b, l, TypeRange{}, inputs, ValueRange{storeCopy.target}, maps, iters);
    IRMapping map;
    g.getRegion().cloneInto(&fused.getRegion(), map);
    SmallVector<Value> tiles = {out};
    for (Value in : g.getDpsInputs())
      tiles.push_back(in);
    storeCopy.op->erase();
    region.erase();
    g.erase();
    for (Value t : tiles)
      eraseIfWriteOnly(t);
  }

  /// Erases a tile buffer that is now only written (fills and copies into
  /// it or its subviews) or deallocated.
  void eraseIfWriteOnly(Value tile) {
    auto alloc = tile.getDefiningOp<memref::AllocOp>();
    if (!alloc)
      return;
    // A set: a copy between two views of the buffer (or onto itself) is
    // reached through both operands.
    llvm::SetVector<Operation *> dead;
    auto writeOnly = [&](Operation *user, Value v) {
      if (isa<memref::DeallocOp>(user))
        return true;
      // (A copy of the buffer onto itself, left by bufferization, writes
      // nothing new.)
      if (std::optional<Copy> c = asCopy(user))
        return c->target == v;
      if (auto fill = dyn_cast<linalg::FillOp>(user))
        return fill.getOutputs()[0] == v;
      return false;
    };
    for (Operation *user : tile.getUsers()) {
      if (auto sv = dyn_cast<memref::SubViewOp>(user)) {
        for (Operation *svUser : sv->getUsers()) {
          if (!writeOnly(svUser, sv.getResult()))
            return;
          dead.insert(svUser);
        }
        dead.insert(sv);
        continue;
      }
      if (!writeOnly(user, tile))
        return;
      dead.insert(user);
    }
    // Users of subviews first, then the subviews, then the buffer (sorted
    // before erasing anything: an erased op must not be looked at again).
    SmallVector<Operation *> views, writes;
    for (Operation *op : dead)
      (isa<memref::SubViewOp>(op) ? views : writes).push_back(op);
    for (Operation *op : writes)
      op->erase();
    for (Operation *op : views)
      op->erase();
    alloc.erase();
  }
};

} // namespace
