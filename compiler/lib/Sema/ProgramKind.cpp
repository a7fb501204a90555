//===- ProgramKind.cpp - Tile programs and SIMT programs ------------------===//
//
// A kernel whose body (or a module-level helper it calls) calls a
// thread-level built-in (BuiltinScope::Thread in Builtins.def) is a SIMT
// program: one program instance per GPU thread. Every other kernel is a tile
// program: one program instance per block, operating on whole tiles.
//
//===----------------------------------------------------------------------===//

#include "tessera/Sema/Builtins.h"
#include "tessera/Sema/Signature.h"

#include "llvm/Support/Casting.h"

#include <set>

using namespace tessera;
using namespace tessera::ast;
using llvm::cast;
using llvm::dyn_cast;

namespace {

/// `tile.NAME`, `tl.NAME` or `tessera.tile.NAME`: NAME, else empty.
std::string_view tileMember(const Expr *e) {
  auto *a = dyn_cast<AttributeExpr>(e);
  if (!a)
    return {};
  if (auto *n = dyn_cast<NameExpr>(a->value.get()))
    return n->name == "tile" || n->name == "tl" ? std::string_view(a->name)
                                                : std::string_view();
  if (auto *inner = dyn_cast<AttributeExpr>(a->value.get()))
    if (auto *n = dyn_cast<NameExpr>(inner->value.get()))
      if (n->name == "tessera" && inner->name == "tile")
        return a->name;
  return {};
}

class Finder {
public:
  explicit Finder(const Module &module) : module_(module) {}

  SourceLoc found;

  void block(const ast::Block &stmts) {
    for (const StmtPtr &s : stmts) {
      if (found.isValid())
        return;
      stmt(*s);
    }
  }

private:
  void stmt(const Stmt &s) {
    switch (s.getKind()) {
    case Stmt::Kind::Expr:
      return expr(cast<ExprStmt>(s).value.get());
    case Stmt::Kind::Assign: {
      auto &a = cast<AssignStmt>(s);
      for (const ExprPtr &t : a.targets)
        expr(t.get());
      return expr(a.value.get());
    }
    case Stmt::Kind::AugAssign: {
      auto &a = cast<AugAssignStmt>(s);
      expr(a.target.get());
      return expr(a.value.get());
    }
    case Stmt::Kind::AnnAssign: {
      auto &a = cast<AnnAssignStmt>(s);
      expr(a.target.get());
      return expr(a.value.get());
    }
    case Stmt::Kind::If: {
      auto &i = cast<IfStmt>(s);
      expr(i.cond.get());
      block(i.body);
      return block(i.orelse);
    }
    case Stmt::Kind::For: {
      auto &f = cast<ForStmt>(s);
      expr(f.iter.get());
      block(f.body);
      return block(f.orelse);
    }
    case Stmt::Kind::While: {
      auto &w = cast<WhileStmt>(s);
      expr(w.cond.get());
      return block(w.body);
    }
    case Stmt::Kind::Return:
      return expr(cast<ReturnStmt>(s).value.get());
    default:
      return;
    }
  }

  void exprs(const std::vector<ExprPtr> &es) {
    for (const ExprPtr &e : es)
      expr(e.get());
  }

  void expr(const Expr *e) {
    if (!e || found.isValid())
      return;
    switch (e->getKind()) {
    case Expr::Kind::Tuple:
      return exprs(cast<TupleExpr>(e)->elts);
    case Expr::Kind::List:
      return exprs(cast<ListExpr>(e)->elts);
    case Expr::Kind::Dict:
      exprs(cast<DictExpr>(e)->keys);
      return exprs(cast<DictExpr>(e)->values);
    case Expr::Kind::Unary:
      return expr(cast<UnaryExpr>(e)->operand.get());
    case Expr::Kind::Binary:
      expr(cast<BinaryExpr>(e)->lhs.get());
      return expr(cast<BinaryExpr>(e)->rhs.get());
    case Expr::Kind::BoolOp:
      return exprs(cast<BoolOpExpr>(e)->values);
    case Expr::Kind::Compare:
      return exprs(cast<CompareExpr>(e)->operands);
    case Expr::Kind::IfExp: {
      auto *i = cast<IfExpExpr>(e);
      expr(i->cond.get());
      expr(i->body.get());
      return expr(i->orelse.get());
    }
    case Expr::Kind::Attribute:
      return expr(cast<AttributeExpr>(e)->value.get());
    case Expr::Kind::Subscript:
      expr(cast<SubscriptExpr>(e)->value.get());
      return exprs(cast<SubscriptExpr>(e)->indices);
    case Expr::Kind::Slice: {
      auto *s = cast<SliceExpr>(e);
      expr(s->lower.get());
      expr(s->upper.get());
      return expr(s->step.get());
    }
    case Expr::Kind::Call:
      return call(*cast<CallExpr>(e));
    default:
      return;
    }
  }

  void call(const CallExpr &c) {
    // `tile.alloc_shared[dtype](n)` calls a subscripted built-in.
    const Expr *callee = c.callee.get();
    if (auto *s = dyn_cast<SubscriptExpr>(callee))
      callee = s->value.get();
    std::string_view member = tileMember(callee);
    if (const sema::BuiltinInfo *b =
            member.empty()
                ? nullptr
                : sema::findBuiltin(member, sema::BuiltinScope::Tile);
        b && (b->scopes & sema::BuiltinScope::Thread)) {
      found = c.loc();
      return;
    }
    if (auto *n = dyn_cast<NameExpr>(callee))
      if (const FunctionDef *helper = module_.findFunction(n->name);
          helper && !sema::isKernelDefinition(*helper) &&
          visited_.insert(helper).second)
        block(helper->body);
    expr(c.callee.get());
    exprs(c.args);
    for (const Keyword &k : c.keywords)
      expr(k.value.get());
  }

  const Module &module_;
  std::set<const FunctionDef *> visited_;
};

} // namespace

SourceLoc sema::findThreadLevelCall(const Module &module,
                                    const FunctionDef &fn) {
  Finder finder(module);
  finder.block(fn.body);
  return finder.found;
}
