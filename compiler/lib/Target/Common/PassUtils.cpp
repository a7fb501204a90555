//===- PassUtils.cpp - Running pass pipelines with Status results ---------===//

#include "tessera/Target/PassUtils.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

using namespace tessera;

Status tessera::addLLVMConversion(mlir::PassManager &pm) {
  // Dialects that appear only while the pipeline runs (ub.poison from
  // vector canonicalisations, cf from the scf lowering).
  pm.getContext()
      ->loadDialect<mlir::ub::UBDialect, mlir::vector::VectorDialect,
                    mlir::index::IndexDialect, mlir::cf::ControlFlowDialect,
                    mlir::LLVM::LLVMDialect>();
  // Reductions may reassociate (tessera-vectorize-reductions already splits
  // them into vector lanes; the GPU reduces in trees).
  // Failed kernel assertions report to the launch (tessera-lower-kernel-
  // asserts) rather than abort the process, as upstream's lowering does.
  // Kernel prints call the C library's printf (tessera-lower-kernel-prints).
  return addPipeline(pm, "tessera-lower-kernel-asserts,"
                         "tessera-lower-kernel-prints,"
                         "convert-vector-to-llvm{reassociate-fp-reductions},"
                         "convert-math-to-llvm,"
                         "convert-math-to-libm,convert-to-llvm,"
                         "reconcile-unrealized-casts,canonicalize");
}

Status tessera::addPipeline(mlir::PassManager &pm, const std::string &text) {
  std::string err;
  llvm::raw_string_ostream os(err);
  if (mlir::failed(mlir::parsePassPipeline(text, pm, os)))
    return internalError("bad pass pipeline '%s': %s", text.c_str(),
                         err.c_str());
  return okStatus();
}

namespace {
bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  return v && std::string(v) == "1";
}
} // namespace

Status tessera::runPasses(mlir::PassManager &pm, mlir::ModuleOp module,
                          const char *stage, StatusCode onFailure) {
  std::string messages;
  mlir::ScopedDiagnosticHandler handler(
      module.getContext(), [&](mlir::Diagnostic &d) {
        llvm::raw_string_ostream os(messages);
        os << d.getLocation() << ": " << d.str() << "\n";
        return mlir::success();
      });
  // TESSERA_PASS_TIMING=1 prints MLIR's per-pass timing report of every
  // pipeline to stderr (for finding where compile time goes).
  static const bool timing = envFlag("TESSERA_PASS_TIMING");
  // Verifying the IR after every pass took about a third of the CPU
  // lowering time of the GEMM kernel. By default the IR is verified once,
  // after the whole pipeline; TESSERA_VERIFY_EACH_PASS=1 (set for every
  // test) verifies after each pass, so a pass that breaks the IR is named.
  static const bool verifyEach = envFlag("TESSERA_VERIFY_EACH_PASS");
  if (timing)
    pm.enableTiming();
  pm.enableVerifier(verifyEach);
  if (mlir::failed(pm.run(module)))
    return Status(onFailure, std::string(stage) + " failed:\n" + messages);
  if (!verifyEach && mlir::failed(mlir::verify(module)))
    return Status(onFailure, std::string(stage) +
                                 " produced invalid IR (rerun with "
                                 "TESSERA_VERIFY_EACH_PASS=1 to find the "
                                 "pass):\n" +
                                 messages);
  return okStatus();
}
