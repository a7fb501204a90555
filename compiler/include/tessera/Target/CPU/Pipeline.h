//===- Pipeline.h - Tile IR to host code ------------------------*- C++ -*-===//
//
// Internal to the compiler: the tile-level pass pipeline, the lowering of
// tile IR to the LLVM dialect for the host CPU, and the ORC JIT wrapper.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_CPU_PIPELINE_H
#define TESSERA_TARGET_CPU_PIPELINE_H

#include "tessera/Support/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class ExecutionEngine;
}
namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace tessera::cpu {

/// Loads every dialect and translation the pipelines need.
void prepareContext(mlir::MLIRContext &ctx);

/// Tile-level clean-up: canonicalisation, CSE, constant-mask folding.
Status runTilePasses(mlir::ModuleOp module);

/// Lowers a tile module to the LLVM dialect; adds `@<kernel>_chunk`.
Status lowerToLLVMDialect(mlir::ModuleOp module, const std::string &kernel);

enum class TextKind { LLVMIR, Assembly, Object };
/// LLVM IR (optimised at -O3 for the host), host assembly, or object-file
/// bytes.
StatusOr<std::string> translateToText(mlir::ModuleOp module, TextKind kind);

/// A JIT-compiled module entered through one function's packed wrapper
/// (`void(void **args)`, one pointer per flattened LLVM argument). External
/// functions the module calls are resolved from `symbols`.
class JitFunction {
public:
  static StatusOr<std::unique_ptr<JitFunction>>
  create(mlir::ModuleOp module, const std::string &function,
         const std::vector<std::pair<std::string, void *>> &symbols);
  ~JitFunction();
  void (*entry() const)(void **) { return fn; }
  size_t numArgs() const { return nargs; }

private:
  JitFunction() = default;
  // The engine keeps using the IR transformer (and through it the target
  // machine) after creation -- its destructor compiles the module that
  // runs the deinitialisers -- so both outlive it (members are destroyed in
  // reverse order).
  std::unique_ptr<llvm::TargetMachine> tm;
  std::function<llvm::Error(llvm::Module *)> transformer;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  void (*fn)(void **) = nullptr;
  size_t nargs = 0;
};

/// A JIT-compiled kernel.
class JitKernel {
public:
  static StatusOr<std::unique_ptr<JitKernel>> create(mlir::ModuleOp module,
                                                     const std::string &kernel);
  ~JitKernel();
  /// `args` holds one pointer per flattened kernel argument.
  void run(void **args, int64_t begin, int64_t end,
           const int64_t grid[3]) const;
  /// Number of flattened argument slots the kernel takes (without the five
  /// program-loop scalars).
  size_t numArgSlots() const { return numSlots; }

private:
  JitKernel() = default;
  std::unique_ptr<JitFunction> fn;
  void (*entry)(void **) = nullptr;
  size_t numSlots = 0;
};

} // namespace tessera::cpu

#endif // TESSERA_TARGET_CPU_PIPELINE_H
