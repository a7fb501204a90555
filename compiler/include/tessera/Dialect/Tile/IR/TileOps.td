//===- TileOps.td - Tessera tile dialect operations --------*- tablegen -*-===//

#ifndef TESSERA_DIALECT_TILE_IR_TILEOPS_TD
#define TESSERA_DIALECT_TILE_IR_TILEOPS_TD

include "tessera/Dialect/Tile/IR/TileDialect.td"
include "tessera/Dialect/Tile/IR/TileLayouts.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/CommonAttrConstraints.td"

def Tile_Tile : StaticShapeTensorOf<[AnyType]>;
def Tile_IndexTile : StaticShapeTensorOf<[AnySignlessInteger]>;
def Tile_MaskTile : StaticShapeTensorOf<[I1]>;
def Tile_Global : MemRefOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Program ids
//===----------------------------------------------------------------------===//

def Tile_ProgramIdOp : Tile_Op<"program_id", [Pure]> {
  let summary = "Index of this program instance along a grid axis";
  let description = [{
    Returns the coordinate (0-based) of the running program instance along
    grid axis `axis` (0, 1 or 2).

    ```mlir
    %pid = tile.program_id 0 : i64
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I64:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Tile_NumProgramsOp : Tile_Op<"num_programs", [Pure]> {
  let summary = "Number of program instances along a grid axis";
  let description = [{
    ```mlir
    %n = tile.num_programs 1 : i64
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I64:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Tile construction and shape manipulation
//===----------------------------------------------------------------------===//

def Tile_ArangeOp : Tile_Op<"arange", [Pure]> {
  let summary = "1-D tile of consecutive integers";
  let description = [{
    Produces `[start, start + 1, ..., end - 1]` as a 1-D tile whose length
    is `end - start`.

    ```mlir
    %r = tile.arange 0 to 128 : tensor<128xi32>
    ```
  }];
  let arguments = (ins I64Attr:$start, I64Attr:$end);
  let results = (outs StaticShapeTensorOf<[AnySignlessInteger]>:$result);
  let assemblyFormat = "$start `to` $end attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The bounds as signed values (the generated I64Attr getters return
    /// uint64_t, which breaks comparisons with negative starts).
    int64_t getStartValue() { return getStartAttr().getValue().getSExtValue(); }
    int64_t getEndValue() { return getEndAttr().getValue().getSExtValue(); }
  }];
}

def Tile_SplatOp : Tile_Op<"splat", [Pure,
    TypesMatchWith<"scalar type matches the tile element type", "result",
                   "scalar", "::llvm::cast<::mlir::ShapedType>($_self).getElementType()">]> {
  let summary = "Tile with every element equal to a scalar";
  let description = [{
    ```mlir
    %t = tile.splat %x : tensor<64x64xf32>
    ```
    A splat of a constant folds to an `arith.constant` with a splat
    attribute.
  }];
  let arguments = (ins AnyType:$scalar);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$scalar attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure]> {
  let summary = "Expands size-1 dimensions of a tile";
  let description = [{
    Source and result have the same rank and element type; every source
    dimension is either equal to the result dimension or 1.

    ```mlir
    %b = tile.broadcast %row : tensor<1x64xf32> -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$source);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tile_ReshapeOp : Tile_Op<"reshape", [Pure]> {
  let summary = "Reinterprets a tile with another shape (row-major order)";
  let description = [{
    ```mlir
    %r = tile.reshape %t : tensor<64xf32> -> tensor<8x8xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$source);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_TransOp : Tile_Op<"trans", [Pure]> {
  let summary = "Permutes the dimensions of a tile";
  let description = [{
    `result.shape[i] = source.shape[permutation[i]]`.

    ```mlir
    %t = tile.trans %a [1, 0] : tensor<64x32xf16> -> tensor<32x64xf16>
    ```
  }];
  let arguments = (ins Tile_Tile:$source, DenseI64ArrayAttr:$permutation);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat =
      "$source $permutation attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Global memory
//===----------------------------------------------------------------------===//

def Tile_LoadOp : Tile_Op<"load", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Loads a block of a global tensor as a tile";
  let description = [{
    Reads the block of `source` whose first element is at `offsets` and
    whose shape is the result shape. Elements outside the tensor (before 0
    or past its size along any dimension) are never read; they take the
    value `other` (zero when absent). If `mask` is given, elements where it
    is false also take `other`.

    ```mlir
    %a = tile.load %A[%m0, %k0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
    %b = tile.load %x[%i0] mask(%m) other(%pad) : memref<?xf32, strided<[?], offset: ?>> -> tensor<256xf32>
    ```
  }];
  let arguments = (ins Tile_Global:$source, Variadic<I64>:$offsets,
                   Optional<Tile_MaskTile>:$mask, Optional<AnyType>:$other);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $source `[` $offsets `]` (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`other` `(` $other^ `:` type($other) `)`)? attr-dict
    `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [AttrSizedOperandSegments,
    
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Stores a tile into a block of a global tensor";
  let description = [{
    Writes `value` to the block of `dest` that starts at `offsets`.
    Elements that fall outside the tensor, or where `mask` is false, are not
    written.

    ```mlir
    tile.store %acc, %C[%m0, %n0] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins Tile_Tile:$value, Tile_Global:$dest,
                   Variadic<I64>:$offsets, Optional<Tile_MaskTile>:$mask);
  let assemblyFormat = [{
    $value `,` $dest `[` $offsets `]` (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` type($value) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def Tile_GatherOp : Tile_Op<"gather", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Loads the elements addressed by index tiles";
  let description = [{
    `result[p] = source[indices[0][p], ..., indices[r-1][p]]` for every
    position `p` of the result, with one index tile per dimension of
    `source`, all shaped like the result. Positions whose indices are out of
    bounds, or where `mask` is false, are not read and take `other` (zero
    when absent).

    ```mlir
    %g = tile.gather %x[%idx] : memref<?xf32, strided<[?], offset: ?>>, tensor<256xi32> -> tensor<256xf32>
    ```
  }];
  let arguments = (ins Tile_Global:$source, Variadic<Tile_IndexTile>:$indices,
                   Optional<Tile_MaskTile>:$mask, Optional<AnyType>:$other);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`other` `(` $other^ `:` type($other) `)`)? attr-dict
    `:` type($source) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ScatterOp : Tile_Op<"scatter", [AttrSizedOperandSegments,
    
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Stores a tile to the elements addressed by index tiles";
  let description = [{
    `dest[indices[0][p], ..., indices[r-1][p]] = value[p]` for every
    position `p` whose indices are in bounds and where `mask` is true. When
    two positions address the same element, which one is written is
    unspecified.
  }];
  let arguments = (ins Tile_Tile:$value, Tile_Global:$dest,
                   Variadic<Tile_IndexTile>:$indices,
                   Optional<Tile_MaskTile>:$mask);
  let assemblyFormat = [{
    $value `,` $dest `[` $indices `]` (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` type($value) `,` type($dest) `,` type($indices)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicRMWOp : Tile_Op<"atomic_rmw", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Atomic read-modify-write of one element of a global tensor";
  let description = [{
    Atomically combines `value` into `dest[indices]` with `kind` (add, max or
    min). An out-of-bounds index makes the operation a no-op. Floating-point
    max/min propagate NaN.

    ```mlir
    tile.atomic_rmw add %s, %out[%c0] : f32, memref<?xf32, strided<[?], offset: ?>>
    ```
  }];
  let arguments = (ins Tile_AtomicKindAttr:$kind, AnyType:$value,
                   Tile_Global:$dest, Variadic<I64>:$indices);
  let assemblyFormat = [{
    $kind $value `,` $dest `[` $indices `]` attr-dict `:` type($value) `,` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Computation
//===----------------------------------------------------------------------===//

def Tile_DotOp : Tile_Op<"dot", [Pure,
    AllTypesMatch<["acc", "result"]>]> {
  let summary = "Matrix product with accumulation";
  let description = [{
    `result = acc + lhs × rhs` for `lhs: M×K`, `rhs: K×N`, `acc: M×N`.
    `lhs` and `rhs` share an element type; products are formed and summed in
    the accumulator's element type (f32 for floating-point inputs, i32 for
    i8 inputs).

    ```mlir
    %c = tile.dot %a, %b, %acc : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$lhs, Tile_Tile:$rhs, Tile_Tile:$acc);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce", [Pure]> {
  let summary = "Reduces a tile along one axis";
  let description = [{
    Combines the elements along `axis` with `kind`; the result drops that
    dimension (a 1-D tile reduces to a rank-0 tensor). Floating-point `max`
    and `min` propagate NaN; `sum` follows IEEE arithmetic (the order of
    additions is unspecified).

    ```mlir
    %s = tile.reduce sum %t {axis = 1 : i32} : tensor<64x128xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Tile_ReduceKindAttr:$kind, Tile_Tile:$source,
                   I32Attr:$axis);
  let results = (outs StaticShapeTensorOf<[AnyType]>:$result);
  let assemblyFormat = [{
    $kind $source attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Distributed layouts
//===----------------------------------------------------------------------===//

def Tile_ConvertLayoutOp : Tile_Op<"convert_layout", [Pure,
    SameOperandsAndResultShape, SameOperandsAndResultElementType]> {
  let summary = "Moves a tile's elements to the threads of another layout";
  let description = [{
    The same tile with another distributed layout (the encoding of its
    tensor type). Lowered through shared memory: every thread writes its
    elements, the block synchronises, every thread reads the elements its
    new layout assigns to it. The layout passes insert these only where two
    uses disagree and remove the ones they can.

    ```mlir
    %b = tile.convert_layout %a : tensor<64xf32, #tile.slice<...>> -> tensor<64xf32, #tile.blocked<...>>
    ```
  }];
  let arguments = (ins Tile_Tile:$source);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasFolder = 1;
}

#endif // TESSERA_DIALECT_TILE_IR_TILEOPS_TD
