//===- SharedWavefronts.cpp - Bank conflicts for the GPU lowering ---------===//
//
// The register lowering's view of tessera/Support/SharedBanks.h, in a file
// of its own: that header's namespace `tessera` would make `tessera::`
// ambiguous beside `using namespace mlir`.
//
//===----------------------------------------------------------------------===//

#include "ConversionUtils.h"

#include "tessera/Support/SharedBanks.h"

#include "llvm/ADT/SmallVector.h"

int64_t mlir::tessera::sharedWavefronts(llvm::ArrayRef<int64_t> laneAddresses,
                                        int64_t width) {
  llvm::SmallVector<::tessera::LaneAccess, 32> lanes;
  for (auto [lane, address] : llvm::enumerate(laneAddresses))
    lanes.push_back({int32_t(lane), address});
  return ::tessera::sharedCost(lanes.data(), lanes.size(), width).wavefronts;
}
