//===- Layouts.cpp - Distributed tile layouts -----------------------------===//

#include "tessera/Dialect/Tile/IR/Layouts.h"

#include "mlir/IR/Diagnostics.h"

#include <optional>
#include <set>

using namespace mlir;
using namespace mlir::tessera::tile;

//===----------------------------------------------------------------------===//
// Attribute verification
//===----------------------------------------------------------------------===//

int64_t BlockedLayoutAttr::getNumWarps() const {
  int64_t n = 1;
  for (int64_t w : getWarpsPerCTA())
    n *= w;
  return n;
}

LogicalResult BlockedLayoutAttr::verify(
    function_ref<InFlightDiagnostic()> emitError,
    ArrayRef<int64_t> sizePerThread, ArrayRef<int64_t> threadsPerWarp,
    ArrayRef<int64_t> warpsPerCTA, ArrayRef<int64_t> order) {
  size_t rank = sizePerThread.size();
  if (threadsPerWarp.size() != rank || warpsPerCTA.size() != rank ||
      order.size() != rank)
    return emitError() << "blocked layout parameters differ in rank";
  int64_t lanes = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (sizePerThread[d] < 1 || threadsPerWarp[d] < 1 || warpsPerCTA[d] < 1)
      return emitError() << "blocked layout sizes must be positive";
    lanes *= threadsPerWarp[d];
  }
  if (lanes != 32)
    return emitError() << "threadsPerWarp multiplies to " << lanes
                       << ", not 32";
  SmallVector<bool> seen(rank, false);
  for (int64_t d : order) {
    if (d < 0 || d >= int64_t(rank) || seen[d])
      return emitError() << "order must be a permutation of 0.." << rank - 1;
    seen[d] = true;
  }
  return success();
}

LogicalResult
SliceLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        unsigned dim, Attribute parent) {
  unsigned rank;
  if (auto b = dyn_cast_or_null<BlockedLayoutAttr>(parent))
    rank = b.getRank();
  else if (isa_and_nonnull<MmaLayoutAttr>(parent))
    rank = 2;
  else
    return emitError() << "slice layout needs a blocked or mma parent";
  if (dim >= rank)
    return emitError() << "slice dimension " << dim
                       << " is out of range for a rank-" << rank << " parent";
  return success();
}

LogicalResult
MmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<int64_t> warpsPerCTA) {
  if (warpsPerCTA.size() != 2)
    return emitError() << "mma layout needs a warp grid of rank 2";
  if (warpsPerCTA[0] < 1 || warpsPerCTA[1] < 1)
    return emitError() << "mma layout warp counts must be positive";
  return success();
}

LogicalResult
DotOperandLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                             unsigned opIdx, MmaLayoutAttr parent) {
  if (opIdx > 1)
    return emitError() << "dot operand index must be 0 or 1";
  if (!parent)
    return emitError() << "dot operand layout needs an mma parent";
  return success();
}

//===----------------------------------------------------------------------===//
// Layout arithmetic
//===----------------------------------------------------------------------===//

Attribute mlir::tessera::tile::getLayout(Type type) {
  if (auto t = dyn_cast<RankedTensorType>(type))
    if (Attribute e = t.getEncoding();
        isa_and_nonnull<BlockedLayoutAttr, SliceLayoutAttr, MmaLayoutAttr,
                        DotOperandLayoutAttr>(e))
      return e;
  return {};
}

RankedTensorType mlir::tessera::tile::withLayout(RankedTensorType type,
                                                 Attribute layout) {
  return RankedTensorType::get(type.getShape(), type.getElementType(), layout);
}

BlockedLayoutAttr mlir::tessera::tile::getBlockedParent(Attribute layout) {
  if (auto b = dyn_cast_or_null<BlockedLayoutAttr>(layout))
    return b;
  if (auto s = dyn_cast_or_null<SliceLayoutAttr>(layout))
    return dyn_cast<BlockedLayoutAttr>(s.getParent());
  return {};
}

MmaLayoutAttr mlir::tessera::tile::getMmaParent(Attribute layout) {
  if (auto m = dyn_cast_or_null<MmaLayoutAttr>(layout))
    return m;
  if (auto s = dyn_cast_or_null<SliceLayoutAttr>(layout))
    return dyn_cast<MmaLayoutAttr>(s.getParent());
  return {};
}

/// The smallest extent a valid tile of `mma` has along `dim`.
static int64_t mmaExtent(MmaLayoutAttr mma, unsigned dim) {
  return (dim == 0 ? 16 : 8) * mma.getWarpsPerCTA()[dim];
}

/// The registers of an mma layout (or its slice) over `shape`, where unit
/// dimensions (and a sliced one) are collapsed: the offsets the layout
/// gives a tile of the smallest valid extent there, with that dimension's
/// offset zeroed (or dropped, for the slice), each once, in register
/// order.
static SmallVector<SmallVector<int64_t>>
collapsedMmaOffsets(MmaLayoutAttr mma, std::optional<unsigned> slicedDim,
                    ArrayRef<int64_t> shape) {
  SmallVector<int64_t> full(shape);
  if (slicedDim)
    full.insert(full.begin() + *slicedDim, 1);
  SmallVector<bool> collapsed(2, false);
  for (unsigned d = 0; d < 2; ++d)
    if (full[d] == 1) {
      collapsed[d] = true;
      full[d] = mmaExtent(mma, d);
    }
  SmallVector<SmallVector<int64_t>> result;
  std::set<SmallVector<int64_t>> seen;
  for (SmallVector<int64_t> o : getRegisterOffsets(mma, full)) {
    for (unsigned d = 0; d < 2; ++d)
      if (collapsed[d])
        o[d] = 0;
    if (slicedDim)
      o.erase(o.begin() + *slicedDim);
    if (seen.insert(o).second)
      result.push_back(o);
  }
  return result;
}

SmallVector<unsigned> mlir::tessera::tile::getKeptParentDims(Attribute layout) {
  BlockedLayoutAttr parent = getBlockedParent(layout);
  unsigned rank = parent ? parent.getRank() : 2;
  SmallVector<unsigned> dims;
  auto slice = dyn_cast<SliceLayoutAttr>(layout);
  for (unsigned d = 0; d < rank; ++d)
    if (!slice || d != slice.getDim())
      dims.push_back(d);
  return dims;
}

/// The tile shape along the parent's dimensions: the sliced dimension gets
/// one element per thread and no repetition.
static SmallVector<int64_t> parentShape(Attribute layout,
                                        ArrayRef<int64_t> shape) {
  auto slice = dyn_cast<SliceLayoutAttr>(layout);
  if (!slice)
    return SmallVector<int64_t>(shape);
  SmallVector<int64_t> p(shape);
  p.insert(p.begin() + slice.getDim(), 1);
  return p;
}

SmallVector<DimSpread>
mlir::tessera::tile::getDimSpreads(BlockedLayoutAttr layout,
                                   ArrayRef<int64_t> shape) {
  unsigned rank = layout.getRank();
  SmallVector<DimSpread> spreads(rank);
  int64_t laneStride = 1, warpStride = 1;
  for (int64_t d : layout.getOrder()) {
    DimSpread &s = spreads[d];
    s.size = shape[d];
    s.perThread = layout.getSizePerThread()[d];
    s.lanes = layout.getThreadsPerWarp()[d];
    s.warps = layout.getWarpsPerCTA()[d];
    s.laneStride = laneStride;
    s.warpStride = warpStride;
    laneStride *= s.lanes;
    warpStride *= s.warps;
  }
  return spreads;
}

std::pair<int64_t, int64_t>
mlir::tessera::tile::getMmaRepetitions(MmaLayoutAttr layout,
                                       ArrayRef<int64_t> shape) {
  return {shape[0] / (16 * layout.getWarpsPerCTA()[0]),
          shape[1] / (8 * layout.getWarpsPerCTA()[1])};
}

std::pair<int64_t, int64_t>
mlir::tessera::tile::getOperandRepetitions(DotOperandLayoutAttr layout,
                                           ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> w = layout.getParent().getWarpsPerCTA();
  if (layout.getOpIdx() == 0)
    return {shape[0] / (16 * w[0]), shape[1] / 16};
  return {shape[1] / (8 * w[1]), shape[0] / 16};
}

MmaLayoutAttr mlir::tessera::tile::chooseMmaLayout(MLIRContext *ctx,
                                                   ArrayRef<int64_t> shape,
                                                   int64_t warps) {
  if (shape.size() != 2 || shape[0] % 16 != 0 || shape[1] % 8 != 0)
    return {};
  int64_t wm = 1, wn = 1;
  while (wm * wn < warps) {
    // Instruction tiles (16x16 blocks) per warp left along each dimension.
    int64_t rows = shape[0] / (16 * wm), cols = shape[1] / (16 * wn);
    bool canM = shape[0] % (32 * wm) == 0, canN = shape[1] % (16 * wn) == 0;
    if (canM && (rows >= cols || !canN))
      wm *= 2;
    else if (canN)
      wn *= 2;
    else
      return {};
  }
  return MmaLayoutAttr::get(ctx, {wm, wn});
}

bool mlir::tessera::tile::fitsWarpgroupGrid(ArrayRef<int64_t> shape,
                                            int64_t warps) {
  return shape.size() == 2 && warps % 4 == 0 && shape[0] % (16 * warps) == 0 &&
         shape[1] % 8 == 0 && shape[1] <= 256;
}

bool mlir::tessera::tile::isValidLayout(Attribute layout,
                                        ArrayRef<int64_t> shape) {
  if (auto mma = dyn_cast_or_null<MmaLayoutAttr>(layout)) {
    // Leading unit dimensions carry nothing; unit dimensions among the
    // last two are collapsed (the tile is broadcast along them).
    if (shape.size() > 2)
      return llvm::all_of(shape.drop_back(2),
                          [](int64_t d) { return d == 1; }) &&
             isValidLayout(layout, shape.take_back(2));
    return shape.size() == 2 &&
           (shape[0] == 1 || shape[0] % mmaExtent(mma, 0) == 0) &&
           (shape[1] == 1 || shape[1] % mmaExtent(mma, 1) == 0);
  }
  if (auto s = dyn_cast_or_null<SliceLayoutAttr>(layout);
      s && isa<MmaLayoutAttr>(s.getParent())) {
    if (shape.size() != 1)
      return false;
    SmallVector<int64_t> full(shape);
    full.insert(full.begin() + s.getDim(), 1);
    return isValidLayout(s.getParent(), full);
  }
  if (auto op = dyn_cast_or_null<DotOperandLayoutAttr>(layout)) {
    ArrayRef<int64_t> w = op.getParent().getWarpsPerCTA();
    if (shape.size() != 2)
      return false;
    if (op.getOpIdx() == 0)
      return shape[0] % (16 * w[0]) == 0 && shape[1] % 16 == 0;
    return shape[0] % 16 == 0 && shape[1] % (8 * w[1]) == 0;
  }
  BlockedLayoutAttr parent = getBlockedParent(layout);
  if (!parent)
    return false;
  SmallVector<int64_t> p = parentShape(layout, shape);
  if (p.size() != parent.getRank())
    return false;
  auto slice = dyn_cast<SliceLayoutAttr>(layout);
  for (auto [d, s] : llvm::enumerate(getDimSpreads(parent, p))) {
    if (slice && d == slice.getDim())
      continue;
    if (s.size == 1)
      continue; // collapsed: every thread holds the one element
    if (s.size % s.perThread != 0)
      return false;
    if (s.size >= s.extent() && s.size % s.extent() != 0)
      return false;
  }
  return true;
}

/// Per-dimension (elements per thread, repetitions) of the parent, with the
/// sliced dimension collapsed to one register.
static void registerGrid(Attribute layout, ArrayRef<int64_t> shape,
                         SmallVector<int64_t> &within,
                         SmallVector<int64_t> &reps,
                         SmallVector<DimSpread> &spreads) {
  BlockedLayoutAttr parent = getBlockedParent(layout);
  SmallVector<int64_t> p = parentShape(layout, shape);
  spreads = getDimSpreads(parent, p);
  auto slice = dyn_cast<SliceLayoutAttr>(layout);
  within.assign(p.size(), 1);
  reps.assign(p.size(), 1);
  for (auto [d, s] : llvm::enumerate(spreads)) {
    if (slice && d == slice.getDim())
      continue;
    within[d] = std::min(s.perThread, s.size);
    reps[d] = s.replicated() ? 1 : s.size / s.extent();
  }
}

int64_t mlir::tessera::tile::getNumRegisters(Attribute layout,
                                             ArrayRef<int64_t> shape) {
  if (auto mma = dyn_cast<MmaLayoutAttr>(layout)) {
    if (shape.size() > 2)
      return getNumRegisters(layout, shape.take_back(2));
    if (shape[0] == 1 || shape[1] == 1)
      return collapsedMmaOffsets(mma, std::nullopt, shape).size();
    auto [m, n] = getMmaRepetitions(mma, shape);
    return m * n * 4;
  }
  if (auto s = dyn_cast<SliceLayoutAttr>(layout);
      s && isa<MmaLayoutAttr>(s.getParent()))
    return collapsedMmaOffsets(cast<MmaLayoutAttr>(s.getParent()), s.getDim(),
                               shape)
        .size();
  if (auto op = dyn_cast<DotOperandLayoutAttr>(layout)) {
    auto [r, k] = getOperandRepetitions(op, shape);
    return r * k * (op.getOpIdx() == 0 ? 8 : 4);
  }
  SmallVector<int64_t> within, reps;
  SmallVector<DimSpread> spreads;
  registerGrid(layout, shape, within, reps, spreads);
  int64_t n = 1;
  for (size_t d = 0; d < within.size(); ++d)
    n *= within[d] * reps[d];
  return n;
}

SmallVector<SmallVector<int64_t>>
mlir::tessera::tile::getRegisterOffsets(Attribute layout,
                                        ArrayRef<int64_t> shape) {
  SmallVector<SmallVector<int64_t>> result;
  if (isa<MmaLayoutAttr>(layout) && shape.size() > 2) {
    // Leading unit dimensions: offset 0.
    for (SmallVector<int64_t> o :
         getRegisterOffsets(layout, shape.take_back(2))) {
      o.insert(o.begin(), shape.size() - 2, 0);
      result.push_back(std::move(o));
    }
    return result;
  }
  if (auto s = dyn_cast<SliceLayoutAttr>(layout);
      s && isa<MmaLayoutAttr>(s.getParent()))
    return collapsedMmaOffsets(cast<MmaLayoutAttr>(s.getParent()), s.getDim(),
                               shape);
  if (auto mma = dyn_cast<MmaLayoutAttr>(layout);
      mma && (shape[0] == 1 || shape[1] == 1))
    return collapsedMmaOffsets(mma, std::nullopt, shape);
  if (auto mma = dyn_cast<MmaLayoutAttr>(layout)) {
    // c0..c3 of each instruction tile, the tiles columns fastest.
    auto [reps, cols] = getMmaRepetitions(mma, shape);
    ArrayRef<int64_t> w = mma.getWarpsPerCTA();
    for (int64_t i = 0; i < reps; ++i)
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t e = 0; e < 4; ++e)
          result.push_back({i * 16 * w[0] + (e / 2) * 8, j * 8 * w[1] + e % 2});
    return result;
  }
  if (auto op = dyn_cast<DotOperandLayoutAttr>(layout)) {
    auto [reps, ks] = getOperandRepetitions(op, shape);
    ArrayRef<int64_t> w = op.getParent().getWarpsPerCTA();
    for (int64_t i = 0; i < reps; ++i)
      for (int64_t s = 0; s < ks; ++s) {
        if (op.getOpIdx() == 0) {
          // a0..a7: (row, column) pairs at +0/+8 rows, +0/+8 columns.
          for (int64_t e = 0; e < 8; ++e)
            result.push_back({i * 16 * w[0] + ((e / 2) % 2) * 8,
                              s * 16 + (e / 4) * 8 + e % 2});
        } else {
          // b0..b3: rows +0, +1, +8, +9 of one column.
          for (int64_t e = 0; e < 4; ++e)
            result.push_back({s * 16 + (e / 2) * 8 + e % 2, i * 8 * w[1]});
        }
      }
    return result;
  }
  SmallVector<int64_t> within, reps;
  SmallVector<DimSpread> spreads;
  registerGrid(layout, shape, within, reps, spreads);
  BlockedLayoutAttr parent = getBlockedParent(layout);
  ArrayRef<int64_t> order = parent.getOrder();
  unsigned rank = within.size();
  int64_t n = getNumRegisters(layout, shape);
  SmallVector<unsigned> kept = getKeptParentDims(layout);
  result.reserve(n);
  for (int64_t r = 0; r < n; ++r) {
    SmallVector<int64_t> off(rank, 0);
    int64_t rest = r;
    // Elements within a thread's block, fastest dimension first ...
    for (int64_t d : order) {
      off[d] += rest % within[d];
      rest /= within[d];
    }
    // ... then the repetitions of the layout's extent.
    for (int64_t d : order) {
      off[d] += (rest % reps[d]) * spreads[d].extent();
      rest /= reps[d];
    }
    SmallVector<int64_t> k;
    for (unsigned d : kept)
      k.push_back(off[d]);
    result.push_back(std::move(k));
  }
  return result;
}

int64_t mlir::tessera::tile::getContiguousDim(Attribute layout) {
  if (isa<MmaLayoutAttr>(layout))
    return 1;
  if (auto s = dyn_cast<SliceLayoutAttr>(layout);
      s && isa<MmaLayoutAttr>(s.getParent()))
    return s.getDim() == 1 ? -1 : 0;
  if (auto op = dyn_cast<DotOperandLayoutAttr>(layout))
    return op.getOpIdx() == 0 ? 1 : 0;
  BlockedLayoutAttr parent = getBlockedParent(layout);
  int64_t fastest = parent.getOrder()[0];
  auto slice = dyn_cast<SliceLayoutAttr>(layout);
  if (!slice)
    return fastest;
  if (slice.getDim() == fastest)
    return -1;
  return fastest > int64_t(slice.getDim()) ? fastest - 1 : fastest;
}

int64_t mlir::tessera::tile::getContiguousRegisters(Attribute layout,
                                                    ArrayRef<int64_t> shape) {
  if (isa<MmaLayoutAttr, DotOperandLayoutAttr>(layout))
    return 2;
  if (auto s = dyn_cast<SliceLayoutAttr>(layout);
      s && isa<MmaLayoutAttr>(s.getParent()))
    return s.getDim() == 1 ? 1 : 2;
  BlockedLayoutAttr parent = getBlockedParent(layout);
  int64_t fastest = parent.getOrder()[0];
  if (auto slice = dyn_cast<SliceLayoutAttr>(layout);
      slice && slice.getDim() == fastest)
    return 1;
  return parent.getSizePerThread()[fastest];
}
