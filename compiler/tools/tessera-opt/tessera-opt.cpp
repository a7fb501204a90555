//===- tessera-opt.cpp - mlir-opt with Tessera registered -----------------===//
//
// Runs MLIR passes on textual IR: every upstream dialect and pass plus the
// tile dialect and Tessera's own passes. Used by the lit tests.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"
#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::tessera::tile::registerTileTransformsPasses();
  mlir::tessera::registerTesseraConversionPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::tessera::tile::TileDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Tessera optimizer driver\n", registry));
}
