//===- TileDialect.cpp - Tessera tile dialect -----------------------------===//

#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/IR/Layouts.h"
#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tessera::tile;

#include "tessera/Dialect/Tile/IR/TileDialect.cpp.inc"
#include "tessera/Dialect/Tile/IR/TileEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tessera/Dialect/Tile/IR/TileAttrs.cpp.inc"

namespace {
/// Short aliases for layouts in printed IR (`#blocked`, `#slice1`, ...).
struct TileOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<BlockedLayoutAttr>(attr)) {
      os << "blocked";
      return AliasResult::FinalAlias;
    }
    if (isa<SliceLayoutAttr>(attr)) {
      os << "slice";
      return AliasResult::FinalAlias;
    }
    if (isa<MmaLayoutAttr>(attr)) {
      os << "mma";
      return AliasResult::FinalAlias;
    }
    if (isa<DotOperandLayoutAttr>(attr)) {
      os << "dot_op";
      return AliasResult::FinalAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void TileDialect::initialize() {
  addInterfaces<TileOpAsmInterface>();
  addOperations<
#define GET_OP_LIST
#include "tessera/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tessera/Dialect/Tile/IR/TileAttrs.cpp.inc"
      >();
}

Operation *TileDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  if (auto typed = dyn_cast<TypedAttr>(value))
    if (arith::ConstantOp::isBuildableWith(typed, type))
      return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}
