//===- TileDialect.td - The Tessera tile dialect -----------*- tablegen -*-===//
//
// The tile dialect models one *program instance* of a Tessera kernel: scalar
// values and whole tiles (statically shaped tensors) computed from blocks of
// global tensors (strided memrefs). It is target independent; the CPU and GPU
// backends decide how a tile is distributed over SIMD lanes or threads.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_TILE_IR_TILEDIALECT_TD
#define TESSERA_DIALECT_TILE_IR_TILEDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::mlir::tessera::tile";
  let summary = "Block-level tile programs for Tessera kernels";
  let description = [{
    A Tessera kernel body is a *program*: the launch grid runs one instance
    of it per grid point, and each instance works on whole tiles. In this
    dialect:

    * global tensors are kernel arguments of strided `memref` type (shape
      and strides are bound at launch);
    * tiles are statically shaped builtin `tensor` values with value
      semantics; element-wise arithmetic on tiles uses the upstream `arith`
      and `math` ops directly, since they accept tensor operands;
    * the ops defined here cover what upstream has no direct equivalent
      for: program ids, bounded block loads and stores (lanes outside the
      global tensor read a padding value and are never written), gathers,
      scatters, atomics, `dot`, reductions and shape manipulation.

    Kernels are `func.func` operations carrying the `tile.kernel` unit
    attribute.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::func::FuncDialect"
  ];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    /// Name of the unit attribute marking a `func.func` as a tile kernel.
    static constexpr ::llvm::StringLiteral getKernelAttrName() {
      return ::llvm::StringLiteral("tile.kernel");
    }
  }];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "tile reduction kind", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>
  ]> {
  let cppNamespace = "::mlir::tessera::tile";
  let genSpecializedAttr = 0;
}
def Tile_ReduceKindAttr : EnumAttr<Tile_Dialect, Tile_ReduceKind, "reduce_kind">;

def Tile_AtomicKind : I32EnumAttr<"AtomicKind", "tile atomic kind", [
    I32EnumAttrCase<"add", 0>,
    I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>
  ]> {
  let cppNamespace = "::mlir::tessera::tile";
  let genSpecializedAttr = 0;
}
def Tile_AtomicKindAttr : EnumAttr<Tile_Dialect, Tile_AtomicKind, "atomic_kind">;

#endif // TESSERA_DIALECT_TILE_IR_TILEDIALECT_TD
