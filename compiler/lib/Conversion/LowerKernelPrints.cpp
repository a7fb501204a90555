//===- LowerKernelPrints.cpp - gpu.printf on the host as C printf ---------===//
//
// Host code (cpu and sim devices) prints with the C library: see Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_LOWERKERNELPRINTSPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

struct LowerKernelPrintsPass
    : mlir::tessera::impl::LowerKernelPrintsPassBase<LowerKernelPrintsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::PrintfOp> prints;
    module.walk([&](gpu::PrintfOp op) { prints.push_back(op); });
    if (prints.empty())
      return;

    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto printf = module.lookupSymbol<LLVM::LLVMFuncOp>("printf");
    if (!printf) {
      rewriter.setInsertionPointToStart(module.getBody());
      printf = LLVM::LLVMFuncOp::create(
          rewriter, module.getLoc(), "printf",
          LLVM::LLVMFunctionType::get(IntegerType::get(ctx, 32), {ptr},
                                      /*isVarArg=*/true));
    }
    // One constant string per distinct format.
    llvm::StringMap<std::string> globals;
    int counter = 0;
    for (gpu::PrintfOp op : prints) {
      Location l = op.getLoc();
      std::string text = op.getFormat().str();
      std::string &name = globals[text];
      rewriter.setInsertionPoint(op);
      if (name.empty()) {
        do
          name = "__tessera_print_format_" + std::to_string(counter++);
        while (module.lookupSymbol(name));
      }
      Value format;
      if (auto g = module.lookupSymbol<LLVM::GlobalOp>(name)) {
        format = LLVM::AddressOfOp::create(rewriter, l, g);
      } else {
        std::string z = text;
        z.push_back('\0');
        format = LLVM::createGlobalString(l, rewriter, name, z,
                                          LLVM::Linkage::Internal);
      }
      SmallVector<Value> args{format};
      args.append(op.getArgs().begin(), op.getArgs().end());
      LLVM::CallOp::create(rewriter, l, printf, args);
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
