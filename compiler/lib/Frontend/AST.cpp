//===- AST.cpp - Syntax tree of the tile language -------------------------===//

#include "tessera/Frontend/AST.h"

#include <cmath>
#include <cstdio>

using namespace tessera;
using namespace tessera::ast;
using llvm::cast;
using llvm::dyn_cast;

const char *ast::spelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "-";
  case UnaryOp::Pos: return "+";
  case UnaryOp::Not: return "not";
  case UnaryOp::Invert: return "~";
  }
  return "?";
}

const char *ast::spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::FloorDiv: return "//";
  case BinaryOp::Mod: return "%";
  case BinaryOp::Pow: return "**";
  case BinaryOp::MatMul: return "@";
  case BinaryOp::BitAnd: return "&";
  case BinaryOp::BitOr: return "|";
  case BinaryOp::BitXor: return "^";
  case BinaryOp::LShift: return "<<";
  case BinaryOp::RShift: return ">>";
  }
  return "?";
}

const char *ast::spelling(CmpOp op) {
  switch (op) {
  case CmpOp::Eq: return "==";
  case CmpOp::Ne: return "!=";
  case CmpOp::Lt: return "<";
  case CmpOp::Le: return "<=";
  case CmpOp::Gt: return ">";
  case CmpOp::Ge: return ">=";
  case CmpOp::Is: return "is";
  case CmpOp::IsNot: return "is not";
  case CmpOp::In: return "in";
  case CmpOp::NotIn: return "not in";
  }
  return "?";
}

const FunctionDef *Module::findFunction(std::string_view name) const {
  for (const StmtPtr &s : body)
    if (auto *fn = dyn_cast<FunctionDef>(s.get()))
      if (fn->name == name)
        return fn;
  return nullptr;
}

namespace {

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 32) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(c));
        out += buf;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

std::string formatDouble(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

class Printer {
public:
  std::string out;

  void expr(const Expr *e) {
    if (!e) {
      out += "null";
      return;
    }
    switch (e->getKind()) {
    case Expr::Kind::Name:
      out += cast<NameExpr>(e)->name;
      return;
    case Expr::Kind::Int: {
      auto *i = cast<IntExpr>(e);
      out += i->overflow ? std::string("<overflow>") : std::to_string(i->value);
      return;
    }
    case Expr::Kind::Float:
      out += formatDouble(cast<FloatExpr>(e)->value);
      return;
    case Expr::Kind::Str:
      out += quote(cast<StrExpr>(e)->value);
      return;
    case Expr::Kind::Bool:
      out += cast<BoolExpr>(e)->value ? "True" : "False";
      return;
    case Expr::Kind::None:
      out += "None";
      return;
    case Expr::Kind::Tuple:
      list("tuple", cast<TupleExpr>(e)->elts);
      return;
    case Expr::Kind::List:
      list("list", cast<ListExpr>(e)->elts);
      return;
    case Expr::Kind::Dict: {
      auto *d = cast<DictExpr>(e);
      out += "(dict";
      for (size_t i = 0; i < d->keys.size(); ++i) {
        out += " (";
        expr(d->keys[i].get());
        out += " ";
        expr(d->values[i].get());
        out += ")";
      }
      out += ")";
      return;
    }
    case Expr::Kind::Unary: {
      auto *u = cast<UnaryExpr>(e);
      out += "(";
      out += spelling(u->op);
      out += " ";
      expr(u->operand.get());
      out += ")";
      return;
    }
    case Expr::Kind::Binary: {
      auto *b = cast<BinaryExpr>(e);
      out += "(";
      out += spelling(b->op);
      out += " ";
      expr(b->lhs.get());
      out += " ";
      expr(b->rhs.get());
      out += ")";
      return;
    }
    case Expr::Kind::BoolOp:
      list(cast<BoolOpExpr>(e)->isAnd ? "and" : "or",
           cast<BoolOpExpr>(e)->values);
      return;
    case Expr::Kind::Compare: {
      auto *c = cast<CompareExpr>(e);
      out += "(compare ";
      expr(c->operands[0].get());
      for (size_t i = 0; i < c->ops.size(); ++i) {
        out += " ";
        out += spelling(c->ops[i]);
        out += " ";
        expr(c->operands[i + 1].get());
      }
      out += ")";
      return;
    }
    case Expr::Kind::IfExp: {
      auto *c = cast<IfExpExpr>(e);
      out += "(ifexp ";
      expr(c->cond.get());
      out += " ";
      expr(c->body.get());
      out += " ";
      expr(c->orelse.get());
      out += ")";
      return;
    }
    case Expr::Kind::Call: {
      auto *c = cast<CallExpr>(e);
      out += "(call ";
      expr(c->callee.get());
      for (const ExprPtr &a : c->args) {
        out += " ";
        expr(a.get());
      }
      for (const Keyword &k : c->keywords) {
        out += " " + k.name + "=";
        expr(k.value.get());
      }
      out += ")";
      return;
    }
    case Expr::Kind::Attribute: {
      auto *a = cast<AttributeExpr>(e);
      out += "(. ";
      expr(a->value.get());
      out += " " + a->name + ")";
      return;
    }
    case Expr::Kind::Subscript: {
      auto *s = cast<SubscriptExpr>(e);
      out += "(subscript ";
      expr(s->value.get());
      for (const ExprPtr &i : s->indices) {
        out += " ";
        expr(i.get());
      }
      out += ")";
      return;
    }
    case Expr::Kind::Slice: {
      auto *s = cast<SliceExpr>(e);
      out += "(slice ";
      expr(s->lower.get());
      out += " ";
      expr(s->upper.get());
      out += " ";
      expr(s->step.get());
      out += ")";
      return;
    }
    }
  }

  void list(const char *head, const std::vector<ExprPtr> &elts) {
    out += "(";
    out += head;
    for (const ExprPtr &e : elts) {
      out += " ";
      expr(e.get());
    }
    out += ")";
  }

  void indent(int level) { out.append(static_cast<size_t>(level) * 2, ' '); }

  void block(const char *head, const Block &b, int level) {
    indent(level);
    out += "(";
    out += head;
    out += "\n";
    for (const StmtPtr &s : b)
      stmt(s.get(), level + 1);
    indent(level);
    out += ")\n";
  }

  void stmt(const Stmt *s, int level) {
    switch (s->getKind()) {
    case Stmt::Kind::Expr:
      indent(level);
      out += "(expr ";
      expr(cast<ExprStmt>(s)->value.get());
      out += ")\n";
      return;
    case Stmt::Kind::Assign: {
      auto *a = cast<AssignStmt>(s);
      indent(level);
      out += "(assign";
      for (const ExprPtr &t : a->targets) {
        out += " ";
        expr(t.get());
      }
      out += " ";
      expr(a->value.get());
      out += ")\n";
      return;
    }
    case Stmt::Kind::AugAssign: {
      auto *a = cast<AugAssignStmt>(s);
      indent(level);
      out += "(augassign ";
      out += spelling(a->op);
      out += " ";
      expr(a->target.get());
      out += " ";
      expr(a->value.get());
      out += ")\n";
      return;
    }
    case Stmt::Kind::AnnAssign: {
      auto *a = cast<AnnAssignStmt>(s);
      indent(level);
      out += "(annassign ";
      expr(a->target.get());
      out += " ";
      expr(a->annotation.get());
      out += " ";
      expr(a->value.get());
      out += ")\n";
      return;
    }
    case Stmt::Kind::If: {
      auto *i = cast<IfStmt>(s);
      indent(level);
      out += i->isElif ? "(elif " : "(if ";
      expr(i->cond.get());
      out += "\n";
      block("then", i->body, level + 1);
      if (!i->orelse.empty())
        block("else", i->orelse, level + 1);
      indent(level);
      out += ")\n";
      return;
    }
    case Stmt::Kind::For: {
      auto *f = cast<ForStmt>(s);
      indent(level);
      out += "(for ";
      expr(f->target.get());
      out += " ";
      expr(f->iter.get());
      out += "\n";
      block("body", f->body, level + 1);
      if (!f->orelse.empty())
        block("else", f->orelse, level + 1);
      indent(level);
      out += ")\n";
      return;
    }
    case Stmt::Kind::While: {
      auto *w = cast<WhileStmt>(s);
      indent(level);
      out += "(while ";
      expr(w->cond.get());
      out += "\n";
      block("body", w->body, level + 1);
      indent(level);
      out += ")\n";
      return;
    }
    case Stmt::Kind::Return:
      indent(level);
      out += "(return";
      if (cast<ReturnStmt>(s)->value) {
        out += " ";
        expr(cast<ReturnStmt>(s)->value.get());
      }
      out += ")\n";
      return;
    case Stmt::Kind::Pass:
      indent(level);
      out += "(pass)\n";
      return;
    case Stmt::Kind::Break:
      indent(level);
      out += "(break)\n";
      return;
    case Stmt::Kind::Continue:
      indent(level);
      out += "(continue)\n";
      return;
    case Stmt::Kind::Import: {
      auto *i = cast<ImportStmt>(s);
      indent(level);
      out += "(import " + i->module;
      for (const std::string &n : i->names)
        out += " " + n;
      out += ")\n";
      return;
    }
    case Stmt::Kind::Unsupported:
      indent(level);
      out += "(unsupported " + quote(cast<UnsupportedStmt>(s)->what) + ")\n";
      return;
    case Stmt::Kind::FunctionDef: {
      auto *f = cast<FunctionDef>(s);
      indent(level);
      out += "(def " + f->name + "\n";
      for (const ExprPtr &d : f->decorators) {
        indent(level + 1);
        out += "(decorator ";
        expr(d.get());
        out += ")\n";
      }
      for (const Param &p : f->params) {
        indent(level + 1);
        out += "(param " + p.name + " ";
        expr(p.annotation.get());
        out += " ";
        expr(p.defaultValue.get());
        out += ")\n";
      }
      if (f->returns) {
        indent(level + 1);
        out += "(returns ";
        expr(f->returns.get());
        out += ")\n";
      }
      if (!f->docstring.empty()) {
        indent(level + 1);
        out += "(doc " + quote(f->docstring) + ")\n";
      }
      block("body", f->body, level + 1);
      indent(level);
      out += ")\n";
      return;
    }
    }
  }
};

} // namespace

std::string ast::printModule(const Module &module) {
  Printer p;
  p.out = "(module\n";
  for (const StmtPtr &s : module.body)
    p.stmt(s.get(), 1);
  p.out += ")\n";
  return p.out;
}

std::string ast::printExpr(const Expr &expr) {
  Printer p;
  p.expr(&expr);
  return p.out;
}
