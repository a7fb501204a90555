//===- ConstEval.h - Compile-time evaluation of expressions -----*- C++ -*-===//
//
// Python semantics on ConstValue: used to fold constexpr arithmetic during
// code generation, and to evaluate launch grids and autotune restrictions
// at run time (where every name is bound to a constant).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SEMA_CONSTEVAL_H
#define TESSERA_SEMA_CONSTEVAL_H

#include "tessera/Support/KernelInfo.h"
#include "tessera/Frontend/AST.h"

#include <map>
#include <optional>
#include <string>

namespace tessera::sema {

/// A folded value, or an error message with the location it refers to.
struct ConstResult {
  std::optional<ConstValue> value;
  std::string error;
  SourceLoc loc;

  bool ok() const { return value.has_value(); }
};

using ConstEnv = std::map<std::string, ConstValue, std::less<>>;

/// Largest constant the evaluator builds: string bytes plus tuple elements,
/// counted through nested tuples. Keeps `s = s * 4096` chains and nested
/// tuples from exhausting memory (constants are copied by value).
constexpr int64_t kMaxConstantSize = 1 << 14;

/// The size of `v` as bounded by kMaxConstantSize (1 for a scalar, the
/// length of a string, 1 + the sizes of a tuple's elements). Stops counting
/// once the result exceeds `limit`.
int64_t constantSize(const ConstValue &v, int64_t limit = kMaxConstantSize);

/// `a op b` with Python semantics (int division by zero, overflow and type
/// errors are reported through `error`).
std::optional<ConstValue> foldBinary(ast::BinaryOp op, const ConstValue &a,
                                     const ConstValue &b, std::string *error);
std::optional<ConstValue> foldUnary(ast::UnaryOp op, const ConstValue &a,
                                    std::string *error);
std::optional<ConstValue> foldCompare(ast::CmpOp op, const ConstValue &a,
                                      const ConstValue &b, std::string *error);

/// Folds a call of a pure builtin (`cdiv`, `min`, `max`, `abs`, `int`,
/// `float`, `bool`, `len`) on constants. Returns nullopt with an empty error
/// when `name` is not such a builtin.
std::optional<ConstValue> foldBuiltinCall(const std::string &name,
                                          const std::vector<ConstValue> &args,
                                          std::string *error);

/// The dtype a bare name denotes ("f16", "float32", "bf16", "fp8_e4m3",
/// "i32", ...), or nullopt.
std::optional<DType> dtypeFromName(std::string_view name);

/// Evaluates `expr` with names bound by `env` (plus dtype names and the
/// builtins above). Any other construct is an error.
ConstResult evalConst(const ast::Expr &expr, const ConstEnv &env);

} // namespace tessera::sema

#endif // TESSERA_SEMA_CONSTEVAL_H
