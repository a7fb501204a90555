//===- ConversionUtils.cpp - Helpers shared by the conversion passes ------===//

#include "ConversionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

bool tessera::isWorkgroupMemRef(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(m);
}

bool tessera::reachesSharedMemory(Value v) {
  while (true) {
    if (isWorkgroupMemRef(v.getType()))
      return true;
    if (auto cast = v.getDefiningOp<memref::MemorySpaceCastOp>())
      v = cast.getSource();
    else if (auto sv = v.getDefiningOp<memref::SubViewOp>())
      v = sv.getSource();
    else if (auto sel = v.getDefiningOp<arith::SelectOp>())
      return reachesSharedMemory(sel.getTrueValue()) ||
             reachesSharedMemory(sel.getFalseValue());
    else
      return false;
  }
}

bool tessera::hasUnitInnerStride(MemRefType t) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return t.getRank() > 0 && succeeded(t.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

int64_t tessera::fittingTile(int64_t extent, int64_t want, int64_t least) {
  for (int64_t t = want; t >= least; t /= 2)
    if (t > 0 && extent % t == 0)
      return t;
  return 0;
}
