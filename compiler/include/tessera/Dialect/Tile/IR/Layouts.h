//===- Layouts.h - Arithmetic of distributed tile layouts -------*- C++ -*-===//
//
// Which elements of a tile each thread holds under a distributed layout
// (`#tile.blocked`, `#tile.slice`, `#tile.mma`, `#tile.dot_operand`), in the
// register order the GPU lowering uses. The layout passes and the lowering
// share these so that they agree.
//
// Under every layout a thread's elements are its base coordinates (which
// depend on its lane and warp) plus per-register offsets that are the same
// for every thread.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_TILE_IR_LAYOUTS_H
#define TESSERA_DIALECT_TILE_IR_LAYOUTS_H

#include "tessera/Dialect/Tile/IR/TileDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::tessera::tile {

/// The distributed layout of a tile type (its tensor encoding), or null.
Attribute getLayout(Type type);

/// `type` with `layout` as its encoding.
RankedTensorType withLayout(RankedTensorType type, Attribute layout);

/// The blocked layout a layout is derived from (itself, or a slice's
/// parent), or null.
BlockedLayoutAttr getBlockedParent(Attribute layout);

/// The mma layout a layout is derived from (itself, or a slice's parent),
/// or null.
MmaLayoutAttr getMmaParent(Attribute layout);

/// Whether `layout` can describe a tile of `shape`: along every dimension
/// the shape is a multiple of the layout's extent, or smaller than the
/// extent and a multiple of the elements per thread (replication), or 1
/// (collapsed: every thread that covers the dimension holds the element).
bool isValidLayout(Attribute layout, ArrayRef<int64_t> shape);

/// How one dimension of a blocked layout is spread.
struct DimSpread {
  int64_t size = 1;       // elements of the tile along the dimension
  int64_t perThread = 1;  // sizePerThread
  int64_t lanes = 1;      // threadsPerWarp
  int64_t warps = 1;      // warpsPerCTA
  int64_t laneStride = 1; // lane id = sum of lane index * laneStride
  int64_t warpStride = 1; // warp id = sum of warp index * warpStride
  int64_t extent() const { return perThread * lanes * warps; }
  /// Threads along the dimension that hold distinct elements.
  bool replicated() const { return size < extent(); }
};

/// The spread of each dimension of `parent` over a tile of `shape`.
SmallVector<DimSpread> getDimSpreads(BlockedLayoutAttr layout,
                                     ArrayRef<int64_t> shape);

/// Registers per thread of a tile of `shape` under `layout`.
int64_t getNumRegisters(Attribute layout, ArrayRef<int64_t> shape);

/// For each register of a thread, the offset of its element from the
/// thread's base coordinates (see `DistributedTile`), per dimension of
/// `shape`.
SmallVector<SmallVector<int64_t>> getRegisterOffsets(Attribute layout,
                                                     ArrayRef<int64_t> shape);

/// The dimensions of the blocked parent that a layout keeps, in the order of
/// the tile's dimensions (all of them for a blocked layout).
SmallVector<unsigned> getKeptParentDims(Attribute layout);

/// The dimension along which a thread's consecutive registers hold
/// consecutive elements, or -1 (a sliced-away fastest dimension).
int64_t getContiguousDim(Attribute layout);

/// The number of consecutive registers that hold consecutive elements along
/// `getContiguousDim` (1 when there is none).
int64_t getContiguousRegisters(Attribute layout, ArrayRef<int64_t> shape);

/// The m16n8 instruction tiles of a `#tile.mma` layout along M and N that
/// one warp holds for a tile of `shape` (its repetitions).
std::pair<int64_t, int64_t> getMmaRepetitions(MmaLayoutAttr layout,
                                              ArrayRef<int64_t> shape);

/// For an operand of a `#tile.dot_operand` layout with shape `shape`: the
/// repetitions along M (or N for the right operand) and the 16-element
/// steps along K.
std::pair<int64_t, int64_t> getOperandRepetitions(DotOperandLayoutAttr layout,
                                                  ArrayRef<int64_t> shape);

/// A `#tile.mma` layout for a `shape` result on `warps` warps: warps go
/// where each keeps the most instruction tiles per warp, as square as the
/// tile allows. Null when no grid of the warps fits the tile.
MmaLayoutAttr chooseMmaLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                              int64_t warps);

/// Whether a `shape` product on `warps` warps fits the warp grid of sm_90a's
/// warpgroup products: every warp along M (grid [warps, 1]), so that each
/// group of four warps holds 64 whole rows per repetition, and N a multiple
/// of 8 up to 256.
bool fitsWarpgroupGrid(ArrayRef<int64_t> shape, int64_t warps);

} // namespace mlir::tessera::tile

#endif // TESSERA_DIALECT_TILE_IR_LAYOUTS_H
