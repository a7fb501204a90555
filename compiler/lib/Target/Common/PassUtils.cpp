//===- PassUtils.cpp - Running pass pipelines with Status results ---------===//

#include "tessera/Target/PassUtils.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

using namespace tessera;

Status tessera::addLLVMConversion(mlir::PassManager &pm) {
  // Dialects that appear only while the pipeline runs (ub.poison from
  // vector canonicalisations, cf from the scf lowering).
  pm.getContext()
      ->loadDialect<mlir::ub::UBDialect, mlir::vector::VectorDialect,
                    mlir::index::IndexDialect, mlir::cf::ControlFlowDialect,
                    mlir::LLVM::LLVMDialect>();
  return addPipeline(pm, "convert-vector-to-llvm,convert-math-to-llvm,"
                         "convert-math-to-libm,convert-to-llvm,"
                         "reconcile-unrealized-casts,canonicalize");
}

Status tessera::addPipeline(mlir::PassManager &pm, const std::string &text) {
  std::string err;
  llvm::raw_string_ostream os(err);
  if (mlir::failed(mlir::parsePassPipeline(text, pm, os)))
    return internalError("bad pass pipeline '%s': %s", text.c_str(),
                         err.c_str());
  return Status::ok();
}

Status tessera::runPasses(mlir::PassManager &pm, mlir::ModuleOp module,
                          const char *stage, StatusCode onFailure) {
  std::string messages;
  mlir::ScopedDiagnosticHandler handler(
      module.getContext(), [&](mlir::Diagnostic &d) {
        llvm::raw_string_ostream os(messages);
        os << d.getLocation() << ": " << d.str() << "\n";
        return mlir::success();
      });
  if (mlir::failed(pm.run(module)))
    return Status(onFailure, std::string(stage) + " failed:\n" + messages);
  return Status::ok();
}
