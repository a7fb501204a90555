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

#endif // TESSERA_DIALECT_TILE_IR_TILEOPS_H
