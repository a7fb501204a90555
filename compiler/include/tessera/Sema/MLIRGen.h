//===- MLIRGen.h - Tile language to tile dialect ----------------*- C++ -*-===//
//
// Type-checks a kernel body for one specialisation and emits it as a
// `func.func` of the tile dialect. Constexpr values are folded while
// emitting (dead branches of constexpr `if`s are not even checked, which is
// what lets `if operation == "axpy":` select among bodies that would not
// type-check together); run-time control flow becomes scf.if / scf.for.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SEMA_MLIRGEN_H
#define TESSERA_SEMA_MLIRGEN_H

#include "tessera/Sema/Signature.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace tessera::sema {

struct EmittedKernel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Arguments of the emitted function, in order.
  std::vector<AbiArg> abi;
  int numWarps = 4;
  int numStages = 2;
};

/// Emits kernel `decl` of `module` for `spec` (whose compile-time bindings
/// `env` come from bindSpecialization). Errors are reported to `diags` with
/// source locations; on error the returned module is null.
EmittedKernel emitKernel(mlir::MLIRContext &context, const ast::Module &module,
                         const KernelDecl &decl, const ConstEnv &env,
                         const Specialization &spec, const SourceManager &sm,
                         DiagnosticEngine &diags);

/// Registers every dialect the emitted IR and the pipelines use.
void registerTesseraDialects(mlir::DialectRegistry &registry);

} // namespace tessera::sema

#endif // TESSERA_SEMA_MLIRGEN_H
