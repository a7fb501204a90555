//===- TileLayouts.td - Distributed layouts of tiles -------*- tablegen -*-===//
//
// A distributed layout says which thread of which warp holds which elements
// of a tile in registers. The GPU lowering attaches one to every tile as the
// encoding of its tensor type (`tensor<256xf32, #tile.blocked<...>>`) and
// then gives every thread the elements its layout assigns to it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_TILE_IR_TILELAYOUTS_TD
#define TESSERA_DIALECT_TILE_IR_TILELAYOUTS_TD

include "tessera/Dialect/Tile/IR/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"

class Tile_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tile_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tile_BlockedLayoutAttr : Tile_Attr<"BlockedLayout", "blocked"> {
  let summary = "Tile elements in contiguous per-thread blocks";
  let description = [{
    Along each dimension `d` a thread holds `sizePerThread[d]` consecutive
    elements, a warp's lanes hold `threadsPerWarp[d]` such blocks side by
    side and the block's warps `warpsPerCTA[d]` such warp tiles; together
    they cover `sizePerThread[d] * threadsPerWarp[d] * warpsPerCTA[d]`
    elements (the layout's extent), which is repeated to cover a larger
    tile. `order` lists the dimensions fastest first: lanes (and warps) are
    numbered along `order[0]` first, and a thread's registers hold its
    elements along `order[0]` first, then its repetitions.

    A tile smaller than the extent along a dimension is replicated: threads
    whose block would start past the tile's end hold the same elements as
    the threads one tile-length before them.

    The products of `threadsPerWarp` and of `warpsPerCTA` are 32 and the
    kernel's number of warps.

    ```mlir
    tensor<1024xf32, #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$sizePerThread,
                        ArrayRefParameter<"int64_t">:$threadsPerWarp,
                        ArrayRefParameter<"int64_t">:$warpsPerCTA,
                        ArrayRefParameter<"int64_t">:$order);
  let assemblyFormat = [{
    `<` `sizePerThread` `=` `[` $sizePerThread `]` `,`
        `threadsPerWarp` `=` `[` $threadsPerWarp `]` `,`
        `warpsPerCTA` `=` `[` $warpsPerCTA `]` `,`
        `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getRank() const { return getSizePerThread().size(); }
    int64_t getNumWarps() const;
  }];
}

def Tile_SliceLayoutAttr : Tile_Attr<"SliceLayout", "slice"> {
  let summary = "A blocked or tensor-core layout with one dimension removed";
  let description = [{
    The layout of a tile that has lost dimension `dim` of a tile laid out as
    `parent` (a `#tile.blocked` or `#tile.mma` layout), typically the result
    of a reduction along `dim`: each thread holds the elements its parent
    registers have along the other dimensions, once, and the threads that
    differ only along `dim` hold the same elements. Expanding the tile back
    along `dim` gives the parent layout without data movement.

    ```mlir
    tensor<64xf32, #tile.slice<dim = 1, parent = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>>>
    ```
  }];
  let parameters = (ins "unsigned":$dim, "Attribute":$parent);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Tile_MmaLayoutAttr : Tile_Attr<"MmaLayout", "mma"> {
  let summary = "The accumulator layout of warp-level tensor-core products";
  let description = [{
    The layout of the accumulator and result of an `mma.sync` m16n8k*
    product (PTX ISA, "Matrix Fragments for mma.m16n8k16"): within one
    16x8 instruction tile, lane `l` holds the two consecutive elements of
    row `l / 4` starting at column `2 * (l % 4)`, and the same two of row
    `l / 4 + 8`. The block's warps form a `warpsPerCTA[0]` x
    `warpsPerCTA[1]` grid of 16x8 instruction tiles (warp `w` at row
    `w / warpsPerCTA[1]`, column `w % warpsPerCTA[1]`), which repeats to
    cover the tile. A thread's registers run over the repetitions, columns
    fastest, four registers (c0..c3 of the instruction) each.

    ```mlir
    tensor<128x128xf32, #tile.mma<warpsPerCTA = [2, 2]>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$warpsPerCTA);
  let assemblyFormat = "`<` `warpsPerCTA` `=` `[` $warpsPerCTA `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumWarps() const {
      return getWarpsPerCTA()[0] * getWarpsPerCTA()[1];
    }
  }];
}

def Tile_DotOperandLayoutAttr : Tile_Attr<"DotOperandLayout", "dot_operand"> {
  let summary = "The operand layouts of warp-level tensor-core products";
  let description = [{
    The fragments of operand `opIdx` (0: the M x K left operand, 1: the
    K x N right one) of the `mma.sync` m16n8k16 products whose result has
    layout `parent`, for 16-bit elements. Left: in each 16x16 block lane `l`
    holds a0..a7 = the pairs at rows `l / 4` and `l / 4 + 8`, columns
    `2 * (l % 4)` and `2 * (l % 4) + 8`; the warps of one parent row hold the
    same elements. Right: in each 16x8 block lane `l` holds b0..b3 = rows
    `2 * (l % 4)`, `+1`, `+8`, `+9` of column `l / 4`; the warps of one parent
    column hold the same elements. A thread's registers run over the
    repetitions along M (or N), then along K, then within the fragment.

    ```mlir
    tensor<128x32xf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [2, 2]>>>
    ```
  }];
  let parameters = (ins "unsigned":$opIdx, "MmaLayoutAttr":$parent);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // TESSERA_DIALECT_TILE_IR_TILELAYOUTS_TD
