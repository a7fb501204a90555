//===- AST.h - Syntax tree of the tile language -----------------*- C++ -*-===//
//
// A faithful tree of what was written: no types, no name resolution. Nodes
// own their children through unique_ptr. Use llvm::isa/dyn_cast on nodes.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_FRONTEND_AST_H
#define TESSERA_FRONTEND_AST_H

#include "tessera/Frontend/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessera::ast {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind {
    Name,
    Int,
    Float,
    Str,
    Bool,
    None,
    Tuple,
    List,
    Dict,
    Unary,
    Binary,
    BoolOp,
    Compare,
    IfExp,
    Call,
    Attribute,
    Subscript,
    Slice,
  };
  Expr(Kind kind, SourceLoc loc) : kind_(kind), loc_(loc) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind_; }
  SourceLoc loc() const { return loc_; }

private:
  Kind kind_;
  SourceLoc loc_;
};
using ExprPtr = std::unique_ptr<Expr>;

#define TESSERA_AST_CLASSOF(Base, K)                                           \
  static bool classof(const Base *n) { return n->getKind() == Base::Kind::K; }

class NameExpr : public Expr {
public:
  NameExpr(SourceLoc loc, std::string name)
      : Expr(Kind::Name, loc), name(std::move(name)) {}
  TESSERA_AST_CLASSOF(Expr, Name)
  std::string name;
};

class IntExpr : public Expr {
public:
  /// `overflow` is set when the literal does not fit in int64.
  IntExpr(SourceLoc loc, int64_t value, bool overflow = false)
      : Expr(Kind::Int, loc), value(value), overflow(overflow) {}
  TESSERA_AST_CLASSOF(Expr, Int)
  int64_t value;
  bool overflow;
};

class FloatExpr : public Expr {
public:
  FloatExpr(SourceLoc loc, double value) : Expr(Kind::Float, loc), value(value) {}
  TESSERA_AST_CLASSOF(Expr, Float)
  double value;
};

class StrExpr : public Expr {
public:
  StrExpr(SourceLoc loc, std::string value)
      : Expr(Kind::Str, loc), value(std::move(value)) {}
  TESSERA_AST_CLASSOF(Expr, Str)
  std::string value;
};

class BoolExpr : public Expr {
public:
  BoolExpr(SourceLoc loc, bool value) : Expr(Kind::Bool, loc), value(value) {}
  TESSERA_AST_CLASSOF(Expr, Bool)
  bool value;
};

class NoneExpr : public Expr {
public:
  explicit NoneExpr(SourceLoc loc) : Expr(Kind::None, loc) {}
  TESSERA_AST_CLASSOF(Expr, None)
};

/// `(a, b)` or `a, b`.
class TupleExpr : public Expr {
public:
  TupleExpr(SourceLoc loc, std::vector<ExprPtr> elts)
      : Expr(Kind::Tuple, loc), elts(std::move(elts)) {}
  TESSERA_AST_CLASSOF(Expr, Tuple)
  std::vector<ExprPtr> elts;
};

/// `[a, b]`.
class ListExpr : public Expr {
public:
  ListExpr(SourceLoc loc, std::vector<ExprPtr> elts)
      : Expr(Kind::List, loc), elts(std::move(elts)) {}
  TESSERA_AST_CLASSOF(Expr, List)
  std::vector<ExprPtr> elts;
};

/// `{k: v, ...}`.
class DictExpr : public Expr {
public:
  DictExpr(SourceLoc loc, std::vector<ExprPtr> keys, std::vector<ExprPtr> values)
      : Expr(Kind::Dict, loc), keys(std::move(keys)), values(std::move(values)) {}
  TESSERA_AST_CLASSOF(Expr, Dict)
  std::vector<ExprPtr> keys;
  std::vector<ExprPtr> values;
};

enum class UnaryOp { Neg, Pos, Not, Invert };
enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  MatMul,
  BitAnd,
  BitOr,
  BitXor,
  LShift,
  RShift,
};
enum class CmpOp { Eq, Ne, Lt, Le, Gt, Ge, Is, IsNot, In, NotIn };

/// Python spelling of an operator, e.g. "+" or "//".
const char *spelling(UnaryOp op);
const char *spelling(BinaryOp op);
const char *spelling(CmpOp op);

class UnaryExpr : public Expr {
public:
  UnaryExpr(SourceLoc loc, UnaryOp op, ExprPtr operand)
      : Expr(Kind::Unary, loc), op(op), operand(std::move(operand)) {}
  TESSERA_AST_CLASSOF(Expr, Unary)
  UnaryOp op;
  ExprPtr operand;
};

class BinaryExpr : public Expr {
public:
  BinaryExpr(SourceLoc loc, BinaryOp op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, loc), op(op), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {}
  TESSERA_AST_CLASSOF(Expr, Binary)
  BinaryOp op;
  ExprPtr lhs, rhs;
};

/// `a and b and c` / `a or b`.
class BoolOpExpr : public Expr {
public:
  BoolOpExpr(SourceLoc loc, bool isAnd, std::vector<ExprPtr> values)
      : Expr(Kind::BoolOp, loc), isAnd(isAnd), values(std::move(values)) {}
  TESSERA_AST_CLASSOF(Expr, BoolOp)
  bool isAnd;
  std::vector<ExprPtr> values;
};

/// Chained comparison `a < b <= c`: ops.size() + 1 == operands.size().
class CompareExpr : public Expr {
public:
  CompareExpr(SourceLoc loc, std::vector<CmpOp> ops,
              std::vector<ExprPtr> operands)
      : Expr(Kind::Compare, loc), ops(std::move(ops)),
        operands(std::move(operands)) {}
  TESSERA_AST_CLASSOF(Expr, Compare)
  std::vector<CmpOp> ops;
  std::vector<ExprPtr> operands;
};

/// `body if cond else orelse`.
class IfExpExpr : public Expr {
public:
  IfExpExpr(SourceLoc loc, ExprPtr cond, ExprPtr body, ExprPtr orelse)
      : Expr(Kind::IfExp, loc), cond(std::move(cond)), body(std::move(body)),
        orelse(std::move(orelse)) {}
  TESSERA_AST_CLASSOF(Expr, IfExp)
  ExprPtr cond, body, orelse;
};

struct Keyword {
  SourceLoc loc;
  std::string name;
  ExprPtr value;
};

class CallExpr : public Expr {
public:
  CallExpr(SourceLoc loc, ExprPtr callee, std::vector<ExprPtr> args,
           std::vector<Keyword> keywords)
      : Expr(Kind::Call, loc), callee(std::move(callee)), args(std::move(args)),
        keywords(std::move(keywords)) {}
  TESSERA_AST_CLASSOF(Expr, Call)
  ExprPtr callee;
  std::vector<ExprPtr> args;
  std::vector<Keyword> keywords;
};

/// `value.name`.
class AttributeExpr : public Expr {
public:
  AttributeExpr(SourceLoc loc, ExprPtr value, std::string name,
                SourceLoc nameLoc)
      : Expr(Kind::Attribute, loc), value(std::move(value)),
        name(std::move(name)), nameLoc(nameLoc) {}
  TESSERA_AST_CLASSOF(Expr, Attribute)
  ExprPtr value;
  std::string name;
  SourceLoc nameLoc;
};

/// `value[i, j:k, None]`: one entry per comma-separated index; slices are
/// SliceExpr, `None` is NoneExpr.
class SubscriptExpr : public Expr {
public:
  SubscriptExpr(SourceLoc loc, ExprPtr value, std::vector<ExprPtr> indices)
      : Expr(Kind::Subscript, loc), value(std::move(value)),
        indices(std::move(indices)) {}
  TESSERA_AST_CLASSOF(Expr, Subscript)
  ExprPtr value;
  std::vector<ExprPtr> indices;
};

/// `lower:upper:step` inside a subscript; each part may be null.
class SliceExpr : public Expr {
public:
  SliceExpr(SourceLoc loc, ExprPtr lower, ExprPtr upper, ExprPtr step)
      : Expr(Kind::Slice, loc), lower(std::move(lower)), upper(std::move(upper)),
        step(std::move(step)) {}
  TESSERA_AST_CLASSOF(Expr, Slice)
  ExprPtr lower, upper, step;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind {
    Expr,
    Assign,
    AugAssign,
    AnnAssign,
    If,
    For,
    While,
    Return,
    Pass,
    Break,
    Continue,
    Import,
    FunctionDef,
    Unsupported,
  };
  Stmt(Kind kind, SourceLoc loc) : kind_(kind), loc_(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind_; }
  SourceLoc loc() const { return loc_; }

private:
  Kind kind_;
  SourceLoc loc_;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

class ExprStmt : public Stmt {
public:
  ExprStmt(SourceLoc loc, ExprPtr value)
      : Stmt(Kind::Expr, loc), value(std::move(value)) {}
  TESSERA_AST_CLASSOF(Stmt, Expr)
  ExprPtr value;
};

/// `t1 = t2 = value`.
class AssignStmt : public Stmt {
public:
  AssignStmt(SourceLoc loc, std::vector<ExprPtr> targets, ExprPtr value)
      : Stmt(Kind::Assign, loc), targets(std::move(targets)),
        value(std::move(value)) {}
  TESSERA_AST_CLASSOF(Stmt, Assign)
  std::vector<ExprPtr> targets;
  ExprPtr value;
};

/// `target op= value`.
class AugAssignStmt : public Stmt {
public:
  AugAssignStmt(SourceLoc loc, ExprPtr target, BinaryOp op, ExprPtr value)
      : Stmt(Kind::AugAssign, loc), target(std::move(target)), op(op),
        value(std::move(value)) {}
  TESSERA_AST_CLASSOF(Stmt, AugAssign)
  ExprPtr target;
  BinaryOp op;
  ExprPtr value;
};

/// `target: annotation [= value]`.
class AnnAssignStmt : public Stmt {
public:
  AnnAssignStmt(SourceLoc loc, ExprPtr target, ExprPtr annotation,
                ExprPtr value)
      : Stmt(Kind::AnnAssign, loc), target(std::move(target)),
        annotation(std::move(annotation)), value(std::move(value)) {}
  TESSERA_AST_CLASSOF(Stmt, AnnAssign)
  ExprPtr target, annotation, value;
};

/// `if cond: body else: orelse`; `elif` is an IfStmt alone in `orelse`
/// with `isElif` set.
class IfStmt : public Stmt {
public:
  IfStmt(SourceLoc loc, ExprPtr cond, Block body, Block orelse, bool isElif)
      : Stmt(Kind::If, loc), cond(std::move(cond)), body(std::move(body)),
        orelse(std::move(orelse)), isElif(isElif) {}
  TESSERA_AST_CLASSOF(Stmt, If)
  ExprPtr cond;
  Block body, orelse;
  bool isElif;
};

/// `for target in iter: body [else: orelse]`.
class ForStmt : public Stmt {
public:
  ForStmt(SourceLoc loc, ExprPtr target, ExprPtr iter, Block body, Block orelse)
      : Stmt(Kind::For, loc), target(std::move(target)), iter(std::move(iter)),
        body(std::move(body)), orelse(std::move(orelse)) {}
  TESSERA_AST_CLASSOF(Stmt, For)
  ExprPtr target, iter;
  Block body, orelse;
};

class WhileStmt : public Stmt {
public:
  WhileStmt(SourceLoc loc, ExprPtr cond, Block body)
      : Stmt(Kind::While, loc), cond(std::move(cond)), body(std::move(body)) {}
  TESSERA_AST_CLASSOF(Stmt, While)
  ExprPtr cond;
  Block body;
};

class ReturnStmt : public Stmt {
public:
  ReturnStmt(SourceLoc loc, ExprPtr value)
      : Stmt(Kind::Return, loc), value(std::move(value)) {}
  TESSERA_AST_CLASSOF(Stmt, Return)
  ExprPtr value; ///< May be null.
};

class PassStmt : public Stmt {
public:
  explicit PassStmt(SourceLoc loc) : Stmt(Kind::Pass, loc) {}
  TESSERA_AST_CLASSOF(Stmt, Pass)
};

class BreakStmt : public Stmt {
public:
  explicit BreakStmt(SourceLoc loc) : Stmt(Kind::Break, loc) {}
  TESSERA_AST_CLASSOF(Stmt, Break)
};

class ContinueStmt : public Stmt {
public:
  explicit ContinueStmt(SourceLoc loc) : Stmt(Kind::Continue, loc) {}
  TESSERA_AST_CLASSOF(Stmt, Continue)
};

/// `import a.b [as c]` or `from a import b, c`: accepted so that tile files
/// read as Python; they bind nothing in Tessera.
class ImportStmt : public Stmt {
public:
  ImportStmt(SourceLoc loc, std::string module, std::vector<std::string> names)
      : Stmt(Kind::Import, loc), module(std::move(module)),
        names(std::move(names)) {}
  TESSERA_AST_CLASSOF(Stmt, Import)
  std::string module;
  std::vector<std::string> names;
};

/// A Python statement the tile language does not have (`class`, `with`,
/// `lambda`...). The parser reports it and keeps this placeholder.
class UnsupportedStmt : public Stmt {
public:
  UnsupportedStmt(SourceLoc loc, std::string what)
      : Stmt(Kind::Unsupported, loc), what(std::move(what)) {}
  TESSERA_AST_CLASSOF(Stmt, Unsupported)
  std::string what;
};

struct Param {
  SourceLoc loc;
  std::string name;
  ExprPtr annotation; ///< May be null.
  ExprPtr defaultValue; ///< May be null.
};

/// `@decorators def name(params) -> returns: body`.
class FunctionDef : public Stmt {
public:
  FunctionDef(SourceLoc loc) : Stmt(Kind::FunctionDef, loc) {}
  TESSERA_AST_CLASSOF(Stmt, FunctionDef)
  std::string name;
  SourceLoc nameLoc;
  std::vector<ExprPtr> decorators;
  std::vector<Param> params;
  ExprPtr returns; ///< May be null.
  std::string docstring;
  Block body;
};

#undef TESSERA_AST_CLASSOF

/// A parsed `.tile` file: top-level statements (function definitions,
/// imports and module-level constant assignments).
struct Module {
  uint32_t fileId = 0;
  Block body;

  /// The function named `name` at top level, or null.
  const FunctionDef *findFunction(std::string_view name) const;
};

/// Prints the tree in an indented S-expression form (for --emit=ast and
/// tests). Stable: tests check it with FileCheck.
std::string printModule(const Module &module);
std::string printExpr(const Expr &expr);

} // namespace tessera::ast

#endif // TESSERA_FRONTEND_AST_H
