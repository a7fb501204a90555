//===- TileOps.h - Tessera tile dialect operations --------------*- C++ -*-===//

#ifndef TESSERA_DIALECT_TILE_IR_TILEOPS_H
#define TESSERA_DIALECT_TILE_IR_TILEOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tessera/Dialect/Tile/IR/TileDialect.h"

#define GET_OP_CLASSES
#include "tessera/Dialect/Tile/IR/TileOps.h.inc"

namespace mlir::tessera::tile {

/// The warps of the tile kernel `kernel`: its `tile.num_warps`, 4 when it
/// has none.
inline int64_t numWarps(Operation *kernel) {
  if (auto a = kernel->getAttrOfType<IntegerAttr>("tile.num_warps"))
    return a.getInt();
  return 4;
}

/// Whether `t` is one of the fp8 element types tiles hold (E4M3FN, E5M2).
inline bool isFloat8(Type t) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(t);
}

} // namespace mlir::tessera::tile

#endif // TESSERA_DIALECT_TILE_IR_TILEOPS_H
