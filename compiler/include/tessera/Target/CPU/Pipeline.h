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

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
namespace orc {
class JITDylib;
class LLJIT;
} // namespace orc
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

/// Host native code, ready to load: an object file whose function `entry`
/// takes the packed arguments (`void(void **args)`, one pointer per LLVM
/// argument of a function with `numArgs` of them).
struct ObjectCode {
  std::string object;
  std::string entry;
  size_t numArgs = 0;
};

/// Compiles `function` of `module` (LLVM dialect) for the JIT's target
/// (cpu::jitTarget()), adding its packed entry.
StatusOr<ObjectCode> compileToObject(mlir::ModuleOp module,
                                     const std::string &function);

/// A string that names the machine code compileToObject produces: the
/// triple, the CPU and a hash of its features. Object code is reused only
/// where this string is the same.
StatusOr<std::string> objectCodeTarget();

/// Object code linked into the process by the ORC JIT (one per process,
/// each function's code in a library of its own, freed with it) and
/// entered through its packed entry. External functions the code calls are
/// resolved from `symbols`, the float-conversion routines and the process.
class JitFunction {
public:
  static StatusOr<std::unique_ptr<JitFunction>>
  create(mlir::ModuleOp module, const std::string &function,
         const std::vector<std::pair<std::string, void *>> &symbols);
  /// Links object code compileToObject produced (in this or another
  /// process with the same objectCodeTarget()).
  static StatusOr<std::unique_ptr<JitFunction>>
  load(ObjectCode code,
       const std::vector<std::pair<std::string, void *>> &symbols);
  ~JitFunction();
  void (*entry() const)(void **) { return fn; }
  size_t numArgs() const { return code_.numArgs; }
  const ObjectCode &code() const { return code_; }

private:
  JitFunction() = default;
  ObjectCode code_;
  /// The process's JIT, and the library of it that holds this code.
  llvm::orc::LLJIT *jit = nullptr;
  llvm::orc::JITDylib *lib = nullptr;
  void (*fn)(void **) = nullptr;
};

/// A JIT-compiled kernel.
class JitKernel {
public:
  static StatusOr<std::unique_ptr<JitKernel>> create(mlir::ModuleOp module,
                                                     const std::string &kernel);
  /// The kernel from its code (JitKernel::code() of an earlier compile).
  static StatusOr<std::unique_ptr<JitKernel>> load(ObjectCode code);
  const ObjectCode &code() const { return fn->code(); }
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
