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

//===----------------------------------------------------------------------===//
// Dot operands
//===----------------------------------------------------------------------===//

def WidenFloat8DotsPass
    : Pass<"tessera-widen-float8-dots", "::mlir::func::FuncOp"> {
  let summary = "Widens the fp8 operands of tile.dot to f16";
  let description = [{
    Every fp8 (E4M3FN or E5M2) operand of a `tile.dot` is extended to f16
    with `arith.extf` where it is defined: after the tile's definition,
    before the transpositions and reshapes (of no other use) that lead from
    it to the dot, which then move f16 tiles. Both formats are subsets of f16
    (every finite value, infinity and NaN has an exact f16 image), and the
    product of two f16 values is exact in f32, so a dot accumulating in f32
    gives the same sums from the widened operands as from the fp8 ones.
    The register lowering then stages the converted operands and runs the
    product on 16-bit tensor cores; the tiles keep their fp8 width in
    global memory and in the loads.

    Before:
    ```mlir
    %d = tile.dot %a, %b, %c : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xf32>
    ```
    After:
    ```mlir
    %a16 = arith.extf %a : tensor<64x32xf8E4M3FN> to tensor<64x32xf16>
    %b16 = arith.extf %b : tensor<32x64xf8E4M3FN> to tensor<32x64xf16>
    %d = tile.dot %a16, %b16, %c : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    ```

    With `warpgroup-mma` (sm_90a) a dot that `keepsFloat8Operands` accepts
    keeps its fp8 operands: both blocks are loaded with K innermost (A as
    [M, K], B as [N, K] and transposed), and `wgmma` k32 reads them as
    they are, at twice the f16 rate.
  }];
  let options = [
    Option<"warpgroupMma", "warpgroup-mma", "bool", "false",
           "Keep the fp8 operands of products wgmma takes as they are "
           "(sm_90a)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// Distributed layouts
//===----------------------------------------------------------------------===//

def AssignLayoutsPass : Pass<"tessera-assign-layouts", "::mlir::func::FuncOp"> {
  let summary = "Gives every tile of a GPU kernel a distributed layout";
  let description = [{
    Attaches a distributed layout (`#tile.blocked`, `#tile.slice`,
    `#tile.mma`, `#tile.dot_operand`) to the tensor type of every tile
    (rank >= 1) of a `tile.kernel` function, for a block of
    `tile.num_warps` warps.

    Tiles computed from scalars alone (aranges, splats, splat constants
    and element-wise math on them) are first copied per use, so that
    unrelated uses do not share a layout.

    Tiles that element-wise operations, masks, loop-carried values and
    unit-dimension reshapes tie together share one layout. Global accesses
    are the anchors: a `tile.load` or `tile.store` whose innermost tile
    dimension is the tensor's unit-stride innermost dimension asks for
    16-byte vectors per thread along it (`sizePerThread` of 16 bytes over
    the element size, at most `tile.vector_width`), and the group takes the
    widest request that does not leave threads without elements of their
    own. Lanes and then warps are laid along the fastest dimension first.
    A reduction's result gets the slice of its operand's layout; where the
    result meets tiles of another layout a `tile.convert_layout` is
    inserted. A `tile.dot`'s accumulator group takes the `#tile.mma`
    layout (when a dot's left operand comes from another dot, both use one
    warp grid with whole rows per warp) and its operands convert to the
    `#tile.dot_operand` layouts, at the dot or, for an operand defined
    outside the dot's loop, after its definition. A broadcast reads its
    source in the result's layout collapsed along the broadcast dimension
    (a 1-D group without accesses takes the matching slice); a 2-D
    transposition's result takes the permuted layout of its source.

    An unmasked store of a tile in a dot's accumulator group whose
    destination takes 16-byte vectors (and holds one for every thread)
    leaves that group: the tensor-core layout gives each thread pairs of
    consecutive elements, so the stored value is computed in the blocked
    layout of its store and a `tile.convert_layout` moves the accumulator
    there. When the value is computed element-wise from loads (`alpha *
    acc + beta * C`), those loads and operations move with it (C is read
    in 16-byte vectors) and the conversion sits on the operands that come
    from elsewhere; otherwise it sits right before the store. A persistent
    kernel (`tile.persistent`), which keeps the state of its loop over
    programs live across the epilogue, and a warp-specialised one
    (`tile.warp_specialize`), whose consumers give registers up, store an
    accumulator of 128 registers per thread or more from the tensor-core
    layout.

    ```mlir
    %x = tile.load %a[%i] : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32>
    ```
    becomes, with 4 warps,
    ```mlir
    %x = tile.load %a[%i] : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32, #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>>
    ```

    Kernels the register lowering does not cover yet (dots other than
    f16/bf16 into f32 or over tensors without unit innermost stride,
    transposes beyond 2-D, general reshapes) are rejected with an error
    naming the operation; `canAssignLayouts` tells the pipeline beforehand.

    With `warpgroup-mma` (sm_90a), a dot whose rows fill every warp lays
    all warps along M (warp grid [num_warps, 1]): each group of four warps
    then holds 64 whole rows, the accumulator of one `wgmma` per 64-row
    block. An f32 dot of a kernel of precision "tf32" (`tile.dot_precision`)
    whose A is a load with K innermost and B a load either way
    (`takesTf32Wgmma`) is then covered too: `wgmma` k8 reads both from
    shared memory, so no operand fragments live in registers.
  }];
  let options = [
    Option<"warpgroupMma", "warpgroup-mma", "bool", "false",
           "Prefer the warp grid of warpgroup matrix products (sm_90a)">
  ];
  let dependentDialects = ["::mlir::tessera::tile::TileDialect"];
}

def RemoveLayoutConversionsPass
    : Pass<"tessera-remove-layout-conversions", "::mlir::func::FuncOp"> {
  let summary = "Removes tile.convert_layout where the data need not move";
  let description = [{
    Folds conversions to the layout a tile already has and chains of
    conversions, and rematerialises tiles that are cheaper to recompute in
    the wanted layout than to move through shared memory: splats, splat
    constants and `tile.arange` (which every thread computes from its own
    thread id), and element-wise operations whose operands are all such
    tiles.
  }];
  let dependentDialects = ["::mlir::tessera::tile::TileDialect"];
}

#endif // TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_TD
