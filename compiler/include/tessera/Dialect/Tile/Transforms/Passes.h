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
bool canAssignLayouts(func::FuncOp kernel, std::string *why = nullptr);

#define GEN_PASS_REGISTRATION
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"

} // namespace mlir::tessera::tile

#endif // TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_H
