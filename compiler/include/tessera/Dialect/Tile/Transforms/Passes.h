//===- Passes.h - Tile dialect transformations ------------------*- C++ -*-===//

#ifndef TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_H
#define TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "tessera/Dialect/Tile/IR/TileOps.h"

namespace mlir::tessera::tile {

#define GEN_PASS_DECL
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"

/// Whether every tile operation of `kernel` has a register lowering
/// (`tessera-assign-layouts` accepts it); otherwise `why` names the first
/// operation that does not.
/// With `warpgroupMma` (sm_90a), f32 dots that `takesTf32Wgmma` accepts have
/// one too.
bool canAssignLayouts(func::FuncOp kernel, std::string *why = nullptr,
                      bool warpgroupMma = false);

/// Whether sm_90a's wgmma takes the fp8 operands of `d` as they are: both
/// operands of one fp8 format, each a load with K innermost (A a [M, K]
/// block, B a [N, K] block transposed, through unit reshapes) of no other
/// use and without mask, K a multiple of 32, and a product that lays its
/// `warps` warps along M (wgmma's warp grid, see tessera-assign-layouts).
bool keepsFloat8Operands(DotOp d, int64_t warps);

/// Whether `d` runs as sm_90a's wgmma k8 on tf32: f32 operands and result in
/// a kernel of precision "tf32" (`tile.dot_precision`), both operands loads
/// with K innermost as `keepsFloat8Operands` asks (wgmma reads tf32
/// operands K-major only) or B a [K, N] block as stored (the register
/// lowering stores it transposed), K a multiple of 8.
bool takesTf32Wgmma(DotOp d, int64_t warps);

#define GEN_PASS_REGISTRATION
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"

} // namespace mlir::tessera::tile

#endif // TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_H
