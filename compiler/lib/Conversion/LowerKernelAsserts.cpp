//===- LowerKernelAsserts.cpp - Failed cf.assert reported to the host -----===//
//
// Host code (cpu and sim devices) reports a failed run-time assertion of a
// kernel to the launch instead of aborting the process: see Passes.td and
// tessera/Target/CPU/KernelAsserts.h.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_LOWERKERNELASSERTSPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

constexpr const char *kRoutine = "tessera_kernel_assert_failed";

struct LowerKernelAssertsPass
    : mlir::tessera::impl::LowerKernelAssertsPassBase<LowerKernelAssertsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<cf::AssertOp> asserts;
    module.walk([&](cf::AssertOp op) { asserts.push_back(op); });
    if (asserts.empty())
      return;

    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto routine = module.lookupSymbol<LLVM::LLVMFuncOp>(kRoutine);
    if (!routine) {
      rewriter.setInsertionPointToStart(module.getBody());
      routine = LLVM::LLVMFuncOp::create(
          rewriter, module.getLoc(), kRoutine,
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr}));
    }
    int counter = 0;
    for (cf::AssertOp op : asserts) {
      Location l = op.getLoc();
      // before: ...; cf.cond_br %cond, ^after, ^fail
      // ^fail:  call @tessera_kernel_assert_failed(@message); cf.br ^after
      // ^after: what followed the assertion
      Block *before = op->getBlock();
      Block *after = rewriter.splitBlock(before, std::next(op->getIterator()));
      Block *fail = rewriter.createBlock(after);
      rewriter.setInsertionPointToEnd(fail);
      std::string name;
      do
        name = "__tessera_assert_message_" + std::to_string(counter++);
      while (module.lookupSymbol(name));
      std::string text = op.getMsg().str();
      text.push_back('\0');
      Value message = LLVM::createGlobalString(l, rewriter, name, text,
                                               LLVM::Linkage::Internal);
      LLVM::CallOp::create(rewriter, l, routine, ValueRange{message});
      cf::BranchOp::create(rewriter, l, after);
      rewriter.setInsertionPoint(op);
      cf::CondBranchOp::create(rewriter, l, op.getArg(), after, ValueRange{},
                               fail, ValueRange{});
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
