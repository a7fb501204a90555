//===- TileDialect.h - Tessera tile dialect ---------------------*- C++ -*-===//

#ifndef TESSERA_DIALECT_TILE_IR_TILEDIALECT_H
#define TESSERA_DIALECT_TILE_IR_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "tessera/Dialect/Tile/IR/TileDialect.h.inc"
#include "tessera/Dialect/Tile/IR/TileEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tessera/Dialect/Tile/IR/TileAttrs.h.inc"

#endif // TESSERA_DIALECT_TILE_IR_TILEDIALECT_H
