//===- Layouts.h - Arithmetic of distributed tile layouts -------*- C++ -*-===//
//
// Which elements of a tile each thread holds under a `#tile.blocked` or
// `#tile.slice` layout, in the register order the GPU lowering uses. The
// layout passes and the lowering share these so that they agree.
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

/// The blocked layout a layout is derived from (itself, or a slice's parent).
BlockedLayoutAttr getBlockedParent(Attribute layout);

/// Whether `layout` can describe a tile of `shape`: along every dimension
/// the shape is a multiple of the layout's extent, or smaller than the
/// extent and a multiple of the elements per thread (replication).
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

/// The number of consecutive registers that hold consecutive elements along
/// the fastest dimension (`order[0]`) of the layout; 1 when that dimension
/// is sliced away.
int64_t getContiguousRegisters(Attribute layout, ArrayRef<int64_t> shape);

} // namespace mlir::tessera::tile

#endif // TESSERA_DIALECT_TILE_IR_LAYOUTS_H
