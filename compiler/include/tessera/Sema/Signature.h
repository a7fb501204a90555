//===- Signature.h - Kernel declarations ------------------------*- C++ -*-===//
//
// Reads a kernel's decorators (`@kernel`, `@autotune`) and parameter
// annotations into a KernelInfo, reporting malformed declarations.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SEMA_SIGNATURE_H
#define TESSERA_SEMA_SIGNATURE_H

#include "tessera/Frontend/AST.h"
#include "tessera/Sema/ConstEval.h"
#include "tessera/Support/KernelInfo.h"

#include <optional>

namespace tessera::sema {

/// The pieces of a kernel declaration kept as syntax (evaluated later).
struct KernelDecl {
  const ast::FunctionDef *fn = nullptr;
  KernelInfo info;
  /// Launch grid expressions (1 to 3), or empty.
  std::vector<const ast::Expr *> grid;
  /// Meta-parameters from `@kernel(num_warps=..., num_stages=...)`.
  ConstEnv decoratorDefaults;
  /// `@heuristics(NAME=expr, ...)`: constexprs computed at each launch from
  /// the shape symbols and the other constexprs, in declaration order.
  std::vector<std::pair<std::string, const ast::Expr *>> heuristics;
  /// For a SIMT program (KernelInfo::simt): the first call of a
  /// thread-level built-in, which made it one.
  SourceLoc threadLevelCall;
};

/// True if `fn` carries a kernel decorator (`@kernel`, `@tessera.kernel`,
/// `@tessera.jit`, `@tessera.kernel.autotune(...)`, ...).
bool isKernelDefinition(const ast::FunctionDef &fn);

/// Module-level `NAME = <constant expression>` assignments.
ConstEnv collectModuleConstants(const ast::Module &module,
                                DiagnosticEngine &diags);

/// Analyses the declaration of kernel `fn`. Returns nullopt after reporting
/// errors to `diags`.
std::optional<KernelDecl> analyzeKernel(const ast::FunctionDef &fn,
                                        const ConstEnv &moduleConstants,
                                        DiagnosticEngine &diags);

/// Where the body of kernel `fn`, or a module-level helper it calls, first
/// calls a thread-level built-in (BuiltinScope::Thread): such a kernel is a
/// SIMT program. An invalid location for a tile program.
SourceLoc findThreadLevelCall(const ast::Module &module,
                              const ast::FunctionDef &fn);

/// Binds every compile-time name a kernel body or grid may use: module
/// constants, constexpr defaults overridden by `spec`, autotune/meta
/// parameters (`num_warps`, `num_stages`, `persistent`, `program_group`),
/// and the generic dtypes set by
/// the precision policy. Errors (unknown constexpr in `spec`, bad policy,
/// unbound generic dtype) go to `error`.
std::optional<ConstEnv> bindSpecialization(const KernelDecl &decl,
                                           const ConstEnv &moduleConstants,
                                           const Specialization &spec,
                                           std::string *error);

/// Names that are always meta-parameters of the backend.
bool isMetaParameter(std::string_view name);

} // namespace tessera::sema

#endif // TESSERA_SEMA_SIGNATURE_H
