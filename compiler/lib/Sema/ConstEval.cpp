//===- ConstEval.cpp - Compile-time evaluation of expressions -------------===//

#include "tessera/Sema/ConstEval.h"

#include <charconv>
#include <cmath>
#include <limits>

using namespace tessera;
using namespace tessera::sema;
using namespace tessera::ast;
using llvm::cast;
using llvm::dyn_cast;

namespace {

const char *kindName(const ConstValue &v) {
  switch (v.kind()) {
  case ConstValue::Kind::None: return "None";
  case ConstValue::Kind::Bool: return "bool";
  case ConstValue::Kind::Int: return "int";
  case ConstValue::Kind::Float: return "float";
  case ConstValue::Kind::Str: return "str";
  case ConstValue::Kind::DType: return "dtype";
  case ConstValue::Kind::Tuple: return "tuple";
  }
  return "?";
}

/// Bool and int both behave as Python ints in arithmetic.
bool isIntLike(const ConstValue &v) { return v.isInt() || v.isBool(); }
int64_t asInt(const ConstValue &v) {
  return v.isBool() ? (v.getBool() ? 1 : 0) : v.getInt();
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t floorMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

std::optional<ConstValue> fail(std::string *error, std::string msg) {
  if (error)
    *error = std::move(msg);
  return std::nullopt;
}

std::optional<ConstValue> typeError(std::string *error, const char *op,
                                    const ConstValue &a, const ConstValue &b) {
  return fail(error, std::string("unsupported operand types for ") + op +
                         ": '" + kindName(a) + "' and '" + kindName(b) + "'");
}

} // namespace

int64_t sema::constantSize(const ConstValue &v, int64_t limit) {
  if (v.isStr())
    return static_cast<int64_t>(v.getStr().size());
  if (!v.isTuple())
    return 1;
  int64_t n = 1;
  for (const ConstValue &e : v.getTuple()) {
    n += constantSize(e, limit - n);
    if (n > limit)
      break;
  }
  return n;
}

std::optional<DType> sema::dtypeFromName(std::string_view name) {
  if (name == "float" || name == "int" || name == "bool")
    return std::nullopt; // Python builtins, not dtypes, in expressions.
  return parseDType(name);
}

std::optional<ConstValue> sema::foldBinary(BinaryOp op, const ConstValue &a,
                                           const ConstValue &b,
                                           std::string *error) {
  const char *sp = spelling(op);
  // Sequences.
  if (a.isStr() || a.isTuple() || b.isStr() || b.isTuple()) {
    if (op == BinaryOp::Add && a.kind() == b.kind()) {
      if (constantSize(a) + constantSize(b) > kMaxConstantSize)
        return fail(error, "constant too large");
      if (a.isStr())
        return ConstValue::string(a.getStr() + b.getStr());
      std::vector<ConstValue> elems = a.getTuple();
      elems.insert(elems.end(), b.getTuple().begin(), b.getTuple().end());
      return ConstValue::tuple(std::move(elems));
    }
    if (op == BinaryOp::Mul && (isIntLike(a) || isIntLike(b))) {
      const ConstValue &seq = isIntLike(a) ? b : a;
      int64_t n = asInt(isIntLike(a) ? a : b);
      if (n > 4096 || (n > 0 && constantSize(seq) > kMaxConstantSize / n))
        return fail(error, "sequence repetition too large");
      if (seq.isStr()) {
        std::string s;
        for (int64_t i = 0; i < n; ++i)
          s += seq.getStr();
        return ConstValue::string(s);
      }
      if (seq.isTuple()) {
        std::vector<ConstValue> elems;
        for (int64_t i = 0; i < n; ++i)
          elems.insert(elems.end(), seq.getTuple().begin(), seq.getTuple().end());
        return ConstValue::tuple(std::move(elems));
      }
    }
    return typeError(error, sp, a, b);
  }
  if (!a.isNumber() || !b.isNumber())
    return typeError(error, sp, a, b);

  if (isIntLike(a) && isIntLike(b)) {
    int64_t x = asInt(a), y = asInt(b), r = 0;
    bool bothBool = a.isBool() && b.isBool();
    switch (op) {
    case BinaryOp::Add:
      if (__builtin_add_overflow(x, y, &r))
        return fail(error, "integer overflow in constant expression");
      return ConstValue::integer(r);
    case BinaryOp::Sub:
      if (__builtin_sub_overflow(x, y, &r))
        return fail(error, "integer overflow in constant expression");
      return ConstValue::integer(r);
    case BinaryOp::Mul:
      if (__builtin_mul_overflow(x, y, &r))
        return fail(error, "integer overflow in constant expression");
      return ConstValue::integer(r);
    case BinaryOp::Div:
      if (y == 0)
        return fail(error, "division by zero");
      return ConstValue::floating(static_cast<double>(x) / static_cast<double>(y));
    case BinaryOp::FloorDiv:
      if (y == 0)
        return fail(error, "integer division by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1)
        return fail(error, "integer overflow in constant expression");
      return ConstValue::integer(floorDiv(x, y));
    case BinaryOp::Mod:
      if (y == 0)
        return fail(error, "integer modulo by zero");
      if (y == -1)
        return ConstValue::integer(0);
      return ConstValue::integer(floorMod(x, y));
    case BinaryOp::Pow: {
      if (y < 0)
        return ConstValue::floating(std::pow(static_cast<double>(x),
                                             static_cast<double>(y)));
      int64_t acc = 1;
      for (int64_t i = 0; i < y; ++i) {
        if (__builtin_mul_overflow(acc, x, &acc))
          return fail(error, "integer overflow in constant expression");
        if (acc == 0 || acc == 1)
          break;
        if (acc == -1) {
          acc = ((y - i - 1) % 2 == 0) ? -1 : 1;
          break;
        }
      }
      return ConstValue::integer(acc);
    }
    case BinaryOp::BitAnd:
      return bothBool ? ConstValue::boolean(x & y) : ConstValue::integer(x & y);
    case BinaryOp::BitOr:
      return bothBool ? ConstValue::boolean(x | y) : ConstValue::integer(x | y);
    case BinaryOp::BitXor:
      return bothBool ? ConstValue::boolean(x ^ y) : ConstValue::integer(x ^ y);
    case BinaryOp::LShift:
      if (y < 0)
        return fail(error, "negative shift count");
      if (y >= 63 || (x != 0 && (x > (std::numeric_limits<int64_t>::max() >> y) ||
                                 x < (std::numeric_limits<int64_t>::min() >> y))))
        return fail(error, "integer overflow in constant expression");
      return ConstValue::integer(static_cast<int64_t>(static_cast<uint64_t>(x) << y));
    case BinaryOp::RShift:
      if (y < 0)
        return fail(error, "negative shift count");
      return ConstValue::integer(y >= 63 ? (x < 0 ? -1 : 0) : x >> y);
    case BinaryOp::MatMul:
      return typeError(error, sp, a, b);
    }
  }

  double x = a.asDouble(), y = b.asDouble();
  switch (op) {
  case BinaryOp::Add:
    return ConstValue::floating(x + y);
  case BinaryOp::Sub:
    return ConstValue::floating(x - y);
  case BinaryOp::Mul:
    return ConstValue::floating(x * y);
  case BinaryOp::Div:
    if (y == 0)
      return fail(error, "float division by zero");
    return ConstValue::floating(x / y);
  case BinaryOp::FloorDiv:
    if (y == 0)
      return fail(error, "float floor division by zero");
    return ConstValue::floating(std::floor(x / y));
  case BinaryOp::Mod: {
    if (y == 0)
      return fail(error, "float modulo by zero");
    double r = std::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0)))
      r += y;
    return ConstValue::floating(r);
  }
  case BinaryOp::Pow:
    return ConstValue::floating(std::pow(x, y));
  default:
    return typeError(error, sp, a, b);
  }
}

std::optional<ConstValue> sema::foldUnary(UnaryOp op, const ConstValue &a,
                                          std::string *error) {
  switch (op) {
  case UnaryOp::Not:
    return ConstValue::boolean(!a.truthy());
  case UnaryOp::Neg:
    if (isIntLike(a)) {
      int64_t x = asInt(a);
      if (x == std::numeric_limits<int64_t>::min())
        return fail(error, "integer overflow in constant expression");
      return ConstValue::integer(-x);
    }
    if (a.isFloat())
      return ConstValue::floating(-a.getFloat());
    break;
  case UnaryOp::Pos:
    if (isIntLike(a))
      return ConstValue::integer(asInt(a));
    if (a.isFloat())
      return a;
    break;
  case UnaryOp::Invert:
    if (isIntLike(a))
      return ConstValue::integer(~asInt(a));
    break;
  }
  return fail(error, std::string("bad operand type for unary ") + spelling(op) +
                         ": '" + kindName(a) + "'");
}

std::optional<ConstValue> sema::foldCompare(CmpOp op, const ConstValue &a,
                                            const ConstValue &b,
                                            std::string *error) {
  switch (op) {
  case CmpOp::Eq:
    return ConstValue::boolean(a == b);
  case CmpOp::Ne:
    return ConstValue::boolean(a != b);
  case CmpOp::Is:
  case CmpOp::IsNot: {
    bool same = a.kind() == b.kind() && a == b &&
                (a.isNone() || a.isBool() || a.isDType());
    return ConstValue::boolean(op == CmpOp::Is ? same : !same);
  }
  case CmpOp::In:
  case CmpOp::NotIn: {
    bool found = false;
    if (b.isTuple()) {
      for (const ConstValue &e : b.getTuple())
        found |= e == a;
    } else if (b.isStr() && a.isStr()) {
      found = b.getStr().find(a.getStr()) != std::string::npos;
    } else {
      return fail(error, std::string("argument of type '") + kindName(b) +
                             "' is not a container");
    }
    return ConstValue::boolean(op == CmpOp::In ? found : !found);
  }
  default:
    break;
  }
  int cmp = 0;
  if (a.isNumber() && b.isNumber()) {
    if (isIntLike(a) && isIntLike(b)) {
      int64_t x = asInt(a), y = asInt(b);
      cmp = x < y ? -1 : x > y ? 1 : 0;
    } else {
      double x = a.asDouble(), y = b.asDouble();
      if (std::isnan(x) || std::isnan(y))
        return ConstValue::boolean(false);
      cmp = x < y ? -1 : x > y ? 1 : 0;
    }
  } else if (a.isStr() && b.isStr()) {
    cmp = a.getStr().compare(b.getStr());
    cmp = cmp < 0 ? -1 : cmp > 0 ? 1 : 0;
  } else if (a.isTuple() && b.isTuple()) {
    cmp = a < b ? -1 : (b < a ? 1 : 0);
  } else {
    return fail(error, std::string("'") + spelling(op) +
                           "' not supported between '" + kindName(a) +
                           "' and '" + kindName(b) + "'");
  }
  switch (op) {
  case CmpOp::Lt: return ConstValue::boolean(cmp < 0);
  case CmpOp::Le: return ConstValue::boolean(cmp <= 0);
  case CmpOp::Gt: return ConstValue::boolean(cmp > 0);
  case CmpOp::Ge: return ConstValue::boolean(cmp >= 0);
  default: return ConstValue::boolean(false);
  }
}

std::optional<ConstValue>
sema::foldBuiltinCall(const std::string &name, const std::vector<ConstValue> &args,
                      std::string *error) {
  auto arity = [&](size_t n) {
    if (args.size() == n)
      return true;
    if (error)
      *error = name + "() takes " + std::to_string(n) + " argument" +
               (n == 1 ? "" : "s") + " (" + std::to_string(args.size()) +
               " given)";
    return false;
  };
  if (name == "cdiv") {
    if (!arity(2))
      return std::nullopt;
    if (!isIntLike(args[0]) || !isIntLike(args[1]))
      return fail(error, "cdiv() takes integers");
    int64_t a = asInt(args[0]), b = asInt(args[1]);
    if (b == 0)
      return fail(error, "cdiv() division by zero");
    // ceil(a / b) = -floor(-a / b).
    if (a == std::numeric_limits<int64_t>::min())
      return fail(error, "integer overflow in constant expression");
    return ConstValue::integer(-floorDiv(-a, b));
  }
  if (name == "min" || name == "max") {
    std::vector<ConstValue> items = args;
    if (items.size() == 1 && items[0].isTuple())
      items = items[0].getTuple();
    if (items.empty())
      return fail(error, name + "() needs at least one argument");
    ConstValue best = items[0];
    for (size_t i = 1; i < items.size(); ++i) {
      std::string err;
      auto lt = foldCompare(CmpOp::Lt, items[i], best, &err);
      if (!lt)
        return fail(error, err);
      bool better = name == "min" ? lt->getBool() : false;
      if (name == "max") {
        auto gt = foldCompare(CmpOp::Gt, items[i], best, &err);
        if (!gt)
          return fail(error, err);
        better = gt->getBool();
      }
      if (better)
        best = items[i];
    }
    return best;
  }
  if (name == "abs") {
    if (!arity(1))
      return std::nullopt;
    if (isIntLike(args[0])) {
      int64_t x = asInt(args[0]);
      if (x == std::numeric_limits<int64_t>::min())
        return fail(error, "integer overflow in constant expression");
      return ConstValue::integer(x < 0 ? -x : x);
    }
    if (args[0].isFloat())
      return ConstValue::floating(std::fabs(args[0].getFloat()));
    return fail(error, "bad operand type for abs()");
  }
  if (name == "int") {
    if (!arity(1))
      return std::nullopt;
    if (isIntLike(args[0]))
      return ConstValue::integer(asInt(args[0]));
    if (args[0].isFloat()) {
      double v = args[0].getFloat();
      if (!std::isfinite(v) || std::fabs(v) >= 9.2e18)
        return fail(error, "cannot convert float " + args[0].toString() +
                               " to integer");
      return ConstValue::integer(static_cast<int64_t>(std::trunc(v)));
    }
    if (args[0].isStr()) {
      // Python's int(str): optional sign and blanks around base-10 digits.
      const std::string &t = args[0].getStr();
      size_t b = t.find_first_not_of(" \t\n"), e = t.find_last_not_of(" \t\n");
      const char *first = t.data() + (b == std::string::npos ? t.size() : b);
      const char *last = t.data() + (b == std::string::npos ? t.size() : e + 1);
      if (first != last && *first == '+' && last - first > 1 && first[1] != '-')
        ++first;
      int64_t v = 0;
      auto [end, ec] = std::from_chars(first, last, v);
      if (first == last || ec != std::errc() || end != last)
        return fail(error,
                    "invalid literal for int() with base 10: '" + t + "'");
      return ConstValue::integer(v);
    }
    return fail(error, std::string("int() argument must be a number, not '") +
                           kindName(args[0]) + "'");
  }
  if (name == "float") {
    if (!arity(1))
      return std::nullopt;
    if (args[0].isNumber())
      return ConstValue::floating(args[0].asDouble());
    if (args[0].isStr()) {
      std::string s;
      for (char c : args[0].getStr())
        s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (s == "inf" || s == "+inf" || s == "infinity")
        return ConstValue::floating(std::numeric_limits<double>::infinity());
      if (s == "-inf" || s == "-infinity")
        return ConstValue::floating(-std::numeric_limits<double>::infinity());
      if (s == "nan" || s == "+nan" || s == "-nan")
        return ConstValue::floating(std::numeric_limits<double>::quiet_NaN());
      char *end = nullptr;
      double v = std::strtod(args[0].getStr().c_str(), &end);
      if (end && *end == '\0' && !args[0].getStr().empty())
        return ConstValue::floating(v);
      return fail(error, "could not convert string to float: '" +
                             args[0].getStr() + "'");
    }
    return fail(error, std::string("float() argument must be a number or a "
                                   "string, not '") +
                           kindName(args[0]) + "'");
  }
  if (name == "bool") {
    if (!arity(1))
      return std::nullopt;
    return ConstValue::boolean(args[0].truthy());
  }
  if (name == "len") {
    if (!arity(1))
      return std::nullopt;
    if (args[0].isTuple())
      return ConstValue::integer(static_cast<int64_t>(args[0].getTuple().size()));
    if (args[0].isStr())
      return ConstValue::integer(static_cast<int64_t>(args[0].getStr().size()));
    return fail(error, std::string("object of type '") + kindName(args[0]) +
                           "' has no len()");
  }
  if (error)
    error->clear();
  return std::nullopt;
}

namespace {

class Evaluator {
public:
  explicit Evaluator(const ConstEnv &env) : env_(env) {}

  ConstResult eval(const Expr &e, int depth = 0) {
    if (depth > 200)
      return err(e.loc(), "expression nested too deeply");
    switch (e.getKind()) {
    case Expr::Kind::Name: {
      const std::string &name = cast<NameExpr>(e).name;
      auto it = env_.find(name);
      if (it != env_.end())
        return ok(it->second);
      if (auto d = dtypeFromName(name))
        return ok(ConstValue::dtype(*d));
      return err(e.loc(), "name '" + name + "' is not defined here");
    }
    case Expr::Kind::Int: {
      auto &i = cast<IntExpr>(e);
      if (i.overflow)
        return err(e.loc(), "integer literal too large for int64");
      return ok(ConstValue::integer(i.value));
    }
    case Expr::Kind::Float:
      return ok(ConstValue::floating(cast<FloatExpr>(e).value));
    case Expr::Kind::Str:
      return ok(ConstValue::string(cast<StrExpr>(e).value));
    case Expr::Kind::Bool:
      return ok(ConstValue::boolean(cast<BoolExpr>(e).value));
    case Expr::Kind::None:
      return ok(ConstValue::none());
    case Expr::Kind::Tuple:
    case Expr::Kind::List: {
      const auto &elts = llvm::isa<TupleExpr>(e) ? cast<TupleExpr>(e).elts
                                                 : cast<ListExpr>(e).elts;
      std::vector<ConstValue> values;
      int64_t size = 1;
      for (const ExprPtr &x : elts) {
        ConstResult r = eval(*x, depth + 1);
        if (!r.ok())
          return r;
        size += constantSize(*r.value);
        if (size > kMaxConstantSize)
          return err(e.loc(), "constant too large");
        values.push_back(std::move(*r.value));
      }
      return ok(ConstValue::tuple(std::move(values)));
    }
    case Expr::Kind::Unary: {
      auto &u = cast<UnaryExpr>(e);
      ConstResult x = eval(*u.operand, depth + 1);
      if (!x.ok())
        return x;
      std::string msg;
      auto r = foldUnary(u.op, *x.value, &msg);
      return r ? ok(*r) : err(e.loc(), msg);
    }
    case Expr::Kind::Binary: {
      auto &b = cast<BinaryExpr>(e);
      ConstResult x = eval(*b.lhs, depth + 1);
      if (!x.ok())
        return x;
      ConstResult y = eval(*b.rhs, depth + 1);
      if (!y.ok())
        return y;
      std::string msg;
      auto r = foldBinary(b.op, *x.value, *y.value, &msg);
      return r ? ok(*r) : err(e.loc(), msg);
    }
    case Expr::Kind::BoolOp: {
      auto &b = cast<BoolOpExpr>(e);
      ConstValue last;
      for (const ExprPtr &v : b.values) {
        ConstResult r = eval(*v, depth + 1);
        if (!r.ok())
          return r;
        last = *r.value;
        if (b.isAnd ? !last.truthy() : last.truthy())
          return ok(last);
      }
      return ok(last);
    }
    case Expr::Kind::Compare: {
      auto &c = cast<CompareExpr>(e);
      ConstResult lhs = eval(*c.operands[0], depth + 1);
      if (!lhs.ok())
        return lhs;
      for (size_t i = 0; i < c.ops.size(); ++i) {
        ConstResult rhs = eval(*c.operands[i + 1], depth + 1);
        if (!rhs.ok())
          return rhs;
        std::string msg;
        auto r = foldCompare(c.ops[i], *lhs.value, *rhs.value, &msg);
        if (!r)
          return err(e.loc(), msg);
        if (!r->getBool())
          return ok(ConstValue::boolean(false));
        lhs = rhs;
      }
      return ok(ConstValue::boolean(true));
    }
    case Expr::Kind::IfExp: {
      auto &i = cast<IfExpExpr>(e);
      ConstResult c = eval(*i.cond, depth + 1);
      if (!c.ok())
        return c;
      return eval(c.value->truthy() ? *i.body : *i.orelse, depth + 1);
    }
    case Expr::Kind::Call: {
      auto &c = cast<CallExpr>(e);
      std::string name;
      if (auto *n = dyn_cast<NameExpr>(c.callee.get()))
        name = n->name;
      else if (auto *a = dyn_cast<AttributeExpr>(c.callee.get()))
        if (auto *base = dyn_cast<NameExpr>(a->value.get()))
          if (base->name == "tile" || base->name == "tessera")
            name = a->name;
      if (name.empty())
        return err(c.callee->loc(), "only builtin functions can be called in "
                                    "a constant expression");
      if (!c.keywords.empty())
        return err(c.keywords[0].loc,
                   name + "() takes no keyword arguments here");
      std::vector<ConstValue> args;
      for (const ExprPtr &a : c.args) {
        ConstResult r = eval(*a, depth + 1);
        if (!r.ok())
          return r;
        args.push_back(*r.value);
      }
      std::string msg;
      auto r = foldBuiltinCall(name, args, &msg);
      if (r)
        return ok(*r);
      if (msg.empty())
        msg = "'" + name + "' cannot be called in a constant expression";
      return err(e.loc(), msg);
    }
    case Expr::Kind::Attribute: {
      auto &a = cast<AttributeExpr>(e);
      if (auto *base = dyn_cast<NameExpr>(a.value.get()))
        if (base->name == "tile" || base->name == "tessera")
          if (auto d = dtypeFromName(a.name))
            return ok(ConstValue::dtype(*d));
      return err(e.loc(), "attribute access is not allowed in a constant "
                          "expression");
    }
    case Expr::Kind::Subscript: {
      auto &s = cast<SubscriptExpr>(e);
      ConstResult base = eval(*s.value, depth + 1);
      if (!base.ok())
        return base;
      if (!base.value->isTuple() || s.indices.size() != 1)
        return err(e.loc(), "only tuples can be indexed in a constant "
                            "expression");
      ConstResult idx = eval(*s.indices[0], depth + 1);
      if (!idx.ok())
        return idx;
      if (!idx.value->isInt())
        return err(s.indices[0]->loc(), "tuple index must be an integer");
      int64_t i = idx.value->getInt();
      int64_t n = static_cast<int64_t>(base.value->getTuple().size());
      if (i < 0)
        i += n;
      if (i < 0 || i >= n)
        return err(s.indices[0]->loc(), "tuple index out of range");
      return ok(base.value->getTuple()[static_cast<size_t>(i)]);
    }
    case Expr::Kind::Dict:
    case Expr::Kind::Slice:
      break;
    }
    return err(e.loc(), "not a constant expression");
  }

private:
  static ConstResult ok(ConstValue v) {
    ConstResult r;
    r.value = std::move(v);
    return r;
  }
  static ConstResult err(SourceLoc loc, std::string msg) {
    ConstResult r;
    r.error = std::move(msg);
    r.loc = loc;
    return r;
  }
  const ConstEnv &env_;
};

} // namespace

ConstResult sema::evalConst(const Expr &expr, const ConstEnv &env) {
  return Evaluator(env).eval(expr);
}
