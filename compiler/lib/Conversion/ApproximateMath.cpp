//===- ApproximateMath.cpp - Polynomial approximations of math ops --------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {
/// The functions MLIR approximates with polynomials (in f32; f16/bf16
/// operands are computed in f32).
constexpr llvm::StringLiteral kApproximated[] = {
    "acos", "asin", "atan",  "atan2", "cbrt",  "cos",  "erf", "erfc",
    "exp",  "exp2", "expm1", "log",   "log1p", "log2", "sin", "tanh"};

struct ApproximateMathPass
    : mlir::tessera::impl::ApproximateMathPassBase<ApproximateMathPass> {
  using ApproximateMathPassBase::ApproximateMathPassBase;

  void runOnOperation() override {
    llvm::SmallVector<llvm::StringRef> kept;
    llvm::StringRef(keep).split(kept, ',', -1, /*KeepEmpty=*/false);
    // The predicates see operation names ("math.exp").
    auto approximated = [](llvm::StringRef name) {
      return name.consume_front("math.") &&
             llvm::is_contained(kApproximated, name);
    };
    RewritePatternSet patterns(&getContext());
    populateMathF32ExpansionPatterns(patterns, approximated);
    populateMathPolynomialApproximationPatterns(
        patterns, [&](llvm::StringRef name) {
          return approximated(name) &&
                 !llvm::is_contained(kept, name.drop_front(5));
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
