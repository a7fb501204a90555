//===- ExpandArithForGPU.cpp - arith expansions the NVPTX back end needs --===//
//
// Upstream's `arith-expand` also rewrites the NaN-propagating maximumf /
// minimumf into compares and selects, which costs three instructions per
// element on a GPU that has them as one (`max.NaN.f32`, sm_80+). This pass
// applies the other expansions only. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_EXPANDARITHFORGPUPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {
struct ExpandArithForGPUPass
    : mlir::tessera::impl::ExpandArithForGPUPassBase<ExpandArithForGPUPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateExpandBFloat16Patterns(patterns);
    arith::populateExpandScalingExtTruncPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
