//===- Passes.td - Tile dialect transformations ------------*- tablegen -*-===//

#ifndef TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_TD
#define TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Masks and bounds
//===----------------------------------------------------------------------===//

def FoldMasksPass : Pass<"tessera-fold-masks"> {
  let summary = "Drops load/store masks that are constant or repeat the bounds check";
  let description = [{
    A mask that is a constant all-true tile is removed from `tile.load`,
    `tile.store`, `tile.gather` and `tile.scatter`; an all-false mask turns a
    load or gather into a splat of its padding value and erases a store or
    scatter. A mask of a `tile.load` or `tile.store` that only repeats the
    bounds check they do anyway is removed too: conjunctions of
    `offset + arange(0, n) < dim` tests, each reshaped and/or broadcast onto
    one axis, where `offset` is the access offset of that axis and `dim` is
    that dimension of the accessed tensor (or of another kernel argument
    with the same shape symbol). The load keeps its `other` value for the
    elements outside the tensor.

    Before:
    ```mlir
    %t = arith.constant dense<true> : tensor<64xi1>
    %v = tile.load %x[%i] mask(%t : tensor<64xi1>) : memref<?xf32> -> tensor<64xf32>
    ```
    After:
    ```mlir
    %v = tile.load %x[%i] : memref<?xf32> -> tensor<64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::tessera::tile::TileDialect"];
}

#endif // TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_TD
