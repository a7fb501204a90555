//===- Expressions.cpp - Expressions of kernel bodies
//-----------------------===//
//
// Names, operators, comparisons, attributes, subscripts and calls (built-ins
// dispatch through Builtins.cpp; helper functions are inlined).
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "tessera/Sema/Builtins.h"

#include <climits>
#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

namespace tessera::sema::detail {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

SVal Emitter::emitName(const NameExpr &e) {
  if (auto it = vars.find(e.name); it != vars.end())
    return it->second;
  if (auto it = partial.find(e.name); it != partial.end())
    return error(e.loc(), "'" + e.name +
                              "' is not defined on every path of the run-time "
                              "'if' that assigns it");
  if (auto it = env.find(e.name); it != env.end())
    return SVal::constant(it->second);
  if (auto dt = dtypeFromName(e.name))
    return SVal::constant(ConstValue::dtype(*dt));
  static const char *namespaces[] = {"tile", "tessera", "tl"};
  for (const char *ns : namespaces)
    if (e.name == ns)
      return SVal::named(SVal::Kind::Namespace, e.name);
  if (findBuiltin(e.name, Bare))
    return SVal::named(SVal::Kind::Builtin, e.name);
  if (const FunctionDef *fn = module.findFunction(e.name)) {
    if (!isKernelDefinition(*fn)) {
      SVal v = SVal::named(SVal::Kind::Helper, e.name);
      v.helper = fn;
      return v;
    }
    return error(e.loc(), "kernel '" + e.name +
                              "' cannot be called from a kernel; move the "
                              "shared code into a plain function");
  }
  return error(e.loc(), "undefined name '" + e.name + "'");
}

Value Emitter::condition(const SVal &v, SourceLoc sl) {
  Location l = loc(sl);
  if (v.kind == SVal::Kind::Tile) {
    error(sl, "a tile cannot be used as a condition; reduce it first (e.g. "
              "tile.max) or use tile.where");
    return {};
  }
  if (v.kind != SVal::Kind::Scalar && v.kind != SVal::Kind::Const) {
    if (v.ok())
      error(sl, "a " + describe(v) + " cannot be used as a condition");
    return {};
  }
  return castTo(v, DType::Bool, l).value;
}

SVal Emitter::emit(const Expr &e) {
  Location l = loc(e.loc());
  switch (e.getKind()) {
  case Expr::Kind::Int: {
    auto &i = cast<IntExpr>(e);
    if (i.overflow)
      return error(e.loc(), "integer literal does not fit in 64 bits");
    return SVal::constant(ConstValue::integer(i.value));
  }
  case Expr::Kind::Float:
    return SVal::constant(ConstValue::floating(cast<FloatExpr>(e).value));
  case Expr::Kind::Bool:
    return SVal::constant(ConstValue::boolean(cast<BoolExpr>(e).value));
  case Expr::Kind::Str:
    return SVal::constant(ConstValue::string(cast<StrExpr>(e).value));
  case Expr::Kind::None:
    return SVal::constant(ConstValue::none());
  case Expr::Kind::Name:
    return emitName(cast<NameExpr>(e));
  case Expr::Kind::Tuple:
  case Expr::Kind::List: {
    const auto &elts =
        isa<TupleExpr>(e) ? cast<TupleExpr>(e).elts : cast<ListExpr>(e).elts;
    std::vector<SVal> vals;
    bool allConst = true;
    for (auto &x : elts) {
      vals.push_back(emit(*x));
      if (!vals.back().ok())
        return SVal::invalid();
      allConst &= vals.back().isConst();
    }
    if (allConst) {
      std::vector<ConstValue> cs;
      for (auto &v : vals)
        cs.push_back(v.cval);
      return SVal::constant(ConstValue::tuple(std::move(cs)));
    }
    return SVal::tuple(std::move(vals));
  }
  case Expr::Kind::Dict:
    return error(e.loc(), "dict literals are only allowed in decorators");
  case Expr::Kind::Unary:
    return emitUnary(cast<UnaryExpr>(e));
  case Expr::Kind::Binary: {
    auto &be = cast<BinaryExpr>(e);
    SVal lhs = emit(*be.lhs);
    SVal rhs = emit(*be.rhs);
    if (!lhs.ok() || !rhs.ok())
      return SVal::invalid();
    return emitBinary(be.op, lhs, rhs, e.loc());
  }
  case Expr::Kind::BoolOp: {
    auto &bo = cast<BoolOpExpr>(e);
    SVal acc = emit(*bo.values[0]);
    for (size_t i = 1; i < bo.values.size() && acc.ok(); ++i) {
      if (acc.isConst()) { // Short-circuit on constants, as Python does.
        if (acc.cval.truthy() != bo.isAnd)
          return acc;
        acc = emit(*bo.values[i]);
        continue;
      }
      SVal next = emit(*bo.values[i]);
      if (!next.ok())
        return next;
      if (next.isConst() && next.cval.truthy() == bo.isAnd)
        continue; // x and True -> x
      Value c1 = condition(acc, bo.values[i - 1]->loc());
      Value c2 = condition(next, bo.values[i]->loc());
      if (!c1 || !c2)
        return SVal::invalid();
      Value r = bo.isAnd ? arith::AndIOp::create(b, l, c1, c2).getResult()
                         : arith::OrIOp::create(b, l, c1, c2).getResult();
      acc = SVal::typed(r, DType::Bool);
    }
    return acc;
  }
  case Expr::Kind::Compare: {
    auto &ce = cast<CompareExpr>(e);
    SVal left = emit(*ce.operands[0]);
    SVal result;
    for (size_t i = 0; i < ce.ops.size(); ++i) {
      SVal right = emit(*ce.operands[i + 1]);
      if (!left.ok() || !right.ok())
        return SVal::invalid();
      SVal r = emitCompare(ce.ops[i], left, right, e.loc());
      if (!r.ok())
        return r;
      result = i == 0 ? r : emitBinary(BinaryOp::BitAnd, result, r, e.loc());
      left = right;
    }
    return result;
  }
  case Expr::Kind::IfExp: {
    auto &ie = cast<IfExpExpr>(e);
    SVal c = emit(*ie.cond);
    if (!c.ok())
      return c;
    if (c.isConst())
      return emit(c.cval.truthy() ? *ie.body : *ie.orelse);
    Value cv = condition(c, ie.cond->loc());
    SVal x = emit(*ie.body), y = emit(*ie.orelse);
    if (!cv || !x.ok() || !y.ok())
      return SVal::invalid();
    SmallVector<SVal> ops{x, y};
    auto t = joinDTypes(ops);
    if (!t) { // two constants
      t = x.cval.isFloat() || y.cval.isFloat() ? DType::F32 : DType::I64;
    }
    if (!unify(ops, *t, l, e.loc()))
      return SVal::invalid();
    if (ops[0].isTile())
      return error(e.loc(), "conditional expression on tiles: use tile.where");
    return SVal::typed(
        arith::SelectOp::create(b, l, cv, ops[0].value, ops[1].value), *t);
  }
  case Expr::Kind::Call:
    return emitCall(cast<CallExpr>(e));
  case Expr::Kind::Attribute:
    return emitAttribute(cast<AttributeExpr>(e));
  case Expr::Kind::Subscript:
    return emitSubscript(cast<SubscriptExpr>(e));
  case Expr::Kind::Slice:
    return error(e.loc(), "slices are only allowed inside [] on a tile");
  }
  return error(e.loc(), "unsupported expression");
}

SVal Emitter::emitUnary(const UnaryExpr &e) {
  SVal v = emit(*e.operand);
  if (!v.ok())
    return v;
  Location l = loc(e.loc());
  if (v.isConst()) {
    std::string err;
    auto r = foldUnary(e.op, v.cval, &err);
    if (!r)
      return error(e.loc(), err);
    return SVal::constant(*r);
  }
  if (!v.isTyped())
    return error(e.loc(), std::string("bad operand for unary '") +
                              spelling(e.op) + "': " + describe(v));
  switch (e.op) {
  case UnaryOp::Pos:
    return v;
  case UnaryOp::Neg:
    if (isFloatT(v.dtype)) {
      SVal f = isFp8(v.dtype) ? castTo(v, DType::F32, l) : v;
      return SVal::typed(arith::NegFOp::create(b, l, f.value), f.dtype);
    }
    return emitBinary(BinaryOp::Sub, SVal::constant(ConstValue::integer(0)), v,
                      e.loc());
  case UnaryOp::Not:
    if (v.isTile())
      return error(e.loc(), "'not' on a tile: use '~' for element-wise "
                            "negation of a mask");
    [[fallthrough]];
  case UnaryOp::Invert: {
    if (isFloatT(v.dtype))
      return error(e.loc(), "'~' needs a boolean or integer operand, got " +
                                describe(v));
    if (e.op == UnaryOp::Not)
      v = castTo(v, DType::Bool, l);
    return emitBinary(BinaryOp::BitXor, v,
                      SVal::constant(v.dtype == DType::Bool
                                         ? ConstValue::boolean(true)
                                         : ConstValue::integer(-1)),
                      e.loc());
  }
  }
  return SVal::invalid();
}

SVal Emitter::emitBinary(BinaryOp op, SVal x, SVal y, SourceLoc sl) {
  Location l = loc(sl);
  if (x.isConst() && y.isConst()) {
    std::string err;
    auto r = foldBinary(op, x.cval, y.cval, &err);
    if (!r)
      return error(sl, err);
    return SVal::constant(*r);
  }
  auto badOperand = [&](const SVal &v) -> bool {
    if (v.isConst() && !v.cval.isNumber()) {
      error(sl, std::string("unsupported operand for '") + spelling(op) +
                    "': " + describe(v));
      return true;
    }
    if (!v.isConst() && !v.isTyped()) {
      error(sl, std::string("unsupported operand for '") + spelling(op) +
                    "': " + describe(v));
      return true;
    }
    return false;
  };
  if (badOperand(x) || badOperand(y))
    return SVal::invalid();

  if (op == BinaryOp::MatMul) {
    if (!x.isTile() || !y.isTile())
      return error(sl, "'@' needs two 2-D tiles");
    return emitDot(x, y, nullptr, std::nullopt, l, sl);
  }

  SmallVector<SVal> ops{x, y};
  DType t = *joinDTypes(ops);
  bool isBitwise = op == BinaryOp::BitAnd || op == BinaryOp::BitOr ||
                   op == BinaryOp::BitXor || op == BinaryOp::LShift ||
                   op == BinaryOp::RShift;
  if (isBitwise && isFloatT(t))
    return error(sl, std::string("'") + spelling(op) +
                         "' needs boolean or integer operands, got " +
                         describe(x) + " and " + describe(y));
  if (!isBitwise) {
    if (isFp8(t))
      t = DType::F32; // fp8 is a storage format: compute in f32.
    if (op == BinaryOp::Div && !isFloatT(t))
      t = DType::F32; // true division
    if (t == DType::Bool)
      t = DType::I64;
  }
  if (!unify(ops, t, l, sl))
    return SVal::invalid();
  Value a = ops[0].value, c = ops[1].value;
  bool isF = isFloatT(t);
  Value r;
  switch (op) {
  case BinaryOp::Add:
    r = isF ? arith::AddFOp::create(b, l, a, c).getResult()
            : arith::AddIOp::create(b, l, a, c).getResult();
    break;
  case BinaryOp::Sub:
    r = isF ? arith::SubFOp::create(b, l, a, c).getResult()
            : arith::SubIOp::create(b, l, a, c).getResult();
    break;
  case BinaryOp::Mul:
    r = isF ? arith::MulFOp::create(b, l, a, c).getResult()
            : arith::MulIOp::create(b, l, a, c).getResult();
    break;
  case BinaryOp::Div:
    // `/` need not be correctly rounded (`afn`): GPU code divides with
    // div.full.f32 (2 ulp). tile.div_rn is the IEEE division.
    r = arith::DivFOp::create(
        b, l, a, c,
        arith::FastMathFlagsAttr::get(&ctx, approximateDivision
                                                ? arith::FastMathFlags::afn
                                                : arith::FastMathFlags::none));
    break;
  case BinaryOp::FloorDiv:
    if (isF)
      r = math::FloorOp::create(b, l, arith::DivFOp::create(b, l, a, c));
    else
      r = arith::FloorDivSIOp::create(b, l, a, c);
    break;
  case BinaryOp::Mod:
    if (isF) {
      // Python: a - floor(a / b) * b (the sign of the divisor).
      Value q = math::FloorOp::create(b, l, arith::DivFOp::create(b, l, a, c));
      r = arith::SubFOp::create(b, l, a, arith::MulFOp::create(b, l, q, c));
    } else {
      Value q = arith::FloorDivSIOp::create(b, l, a, c);
      r = arith::SubIOp::create(b, l, a, arith::MulIOp::create(b, l, q, c));
    }
    break;
  case BinaryOp::Pow: {
    if (y.isConst() && y.cval.isInt() && y.cval.getInt() >= 0 &&
        y.cval.getInt() <= 8) {
      int64_t n = y.cval.getInt();
      if (n == 0)
        return toTile(SVal::constant(ConstValue::integer(1)),
                      ops[0].isTile() ? ops[0].shape() : ArrayRef<int64_t>{}, t,
                      l);
      r = a;
      for (int64_t i = 1; i < n; ++i)
        r = isF ? arith::MulFOp::create(b, l, r, a).getResult()
                : arith::MulIOp::create(b, l, r, a).getResult();
      break;
    }
    if (!isF)
      return error(sl, "integer '**' needs a constant exponent in [0, 8]");
    r = math::PowFOp::create(b, l, a, c);
    break;
  }
  case BinaryOp::BitAnd:
    r = arith::AndIOp::create(b, l, a, c);
    break;
  case BinaryOp::BitOr:
    r = arith::OrIOp::create(b, l, a, c);
    break;
  case BinaryOp::BitXor:
    r = arith::XOrIOp::create(b, l, a, c);
    break;
  case BinaryOp::LShift:
    r = arith::ShLIOp::create(b, l, a, c);
    break;
  case BinaryOp::RShift:
    r = arith::ShRSIOp::create(b, l, a, c);
    break;
  case BinaryOp::MatMul:
    break;
  }
  return SVal::typed(r, t);
}

SVal Emitter::emitCompare(CmpOp op, SVal x, SVal y, SourceLoc sl) {
  Location l = loc(sl);
  if (x.isConst() && y.isConst()) {
    std::string err;
    auto r = foldCompare(op, x.cval, y.cval, &err);
    if (!r)
      return error(sl, err);
    return SVal::constant(*r);
  }
  // `T is None` / `T is not None` on a value that is there (a tensor
  // passed at launch, a scalar, a tile): known at compile time. An absent
  // optional tensor is the constant None (folded above).
  auto isNone = [](const SVal &v) { return v.isConst() && v.cval.isNone(); };
  if ((op == CmpOp::Is || op == CmpOp::IsNot) && (isNone(x) || isNone(y)))
    return SVal::constant(ConstValue::boolean(op == CmpOp::IsNot));
  if (op == CmpOp::Is || op == CmpOp::IsNot || op == CmpOp::In ||
      op == CmpOp::NotIn)
    return error(sl, std::string("'") + spelling(op) +
                         "' is only supported on constants");
  for (const SVal *v : {&x, &y})
    if ((v->isConst() && !v->cval.isNumber()) ||
        (!v->isConst() && !v->isTyped()))
      return error(sl, std::string("cannot compare ") + describe(*v));
  SmallVector<SVal> ops{x, y};
  DType t = *joinDTypes(ops);
  if (isFp8(t))
    t = DType::F32;
  if (!unify(ops, t, l, sl))
    return SVal::invalid();
  Value a = ops[0].value, c = ops[1].value, r;
  if (isFloatT(t)) {
    arith::CmpFPredicate p;
    switch (op) {
    case CmpOp::Eq:
      p = arith::CmpFPredicate::OEQ;
      break;
    case CmpOp::Ne:
      p = arith::CmpFPredicate::UNE;
      break;
    case CmpOp::Lt:
      p = arith::CmpFPredicate::OLT;
      break;
    case CmpOp::Le:
      p = arith::CmpFPredicate::OLE;
      break;
    case CmpOp::Gt:
      p = arith::CmpFPredicate::OGT;
      break;
    default:
      p = arith::CmpFPredicate::OGE;
      break;
    }
    r = arith::CmpFOp::create(b, l, p, a, c);
  } else {
    arith::CmpIPredicate p;
    bool u = t == DType::Bool;
    switch (op) {
    case CmpOp::Eq:
      p = arith::CmpIPredicate::eq;
      break;
    case CmpOp::Ne:
      p = arith::CmpIPredicate::ne;
      break;
    case CmpOp::Lt:
      p = u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
      break;
    case CmpOp::Le:
      p = u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
      break;
    case CmpOp::Gt:
      p = u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
      break;
    default:
      p = u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
      break;
    }
    r = arith::CmpIOp::create(b, l, p, a, c);
  }
  return SVal::typed(r, DType::Bool);
}

SVal Emitter::emitAttribute(const AttributeExpr &e) {
  SVal base = emit(*e.value);
  if (!base.ok())
    return base;
  if (base.kind == SVal::Kind::Namespace) {
    if (base.name == "tessera" && e.name == "tile")
      return SVal::named(SVal::Kind::Namespace, "tile");
    if (auto dt = dtypeFromName(e.name))
      return SVal::constant(ConstValue::dtype(*dt));
    if (findBuiltin(e.name, Tile))
      return SVal::named(SVal::Kind::Builtin, e.name);
    return error(e.nameLoc,
                 "unknown builtin '" + base.name + "." + e.name + "'");
  }
  if (e.name == "shape") {
    if (base.kind == SVal::Kind::Tensor && base.param < 0) {
      std::vector<ConstValue> dims;
      for (int64_t d : cast<MemRefType>(base.value.getType()).getShape())
        dims.push_back(ConstValue::integer(d));
      return SVal::constant(ConstValue::tuple(std::move(dims)));
    }
    if (base.kind == SVal::Kind::Tensor) {
      return vars.count("\x01shape:" + std::to_string(base.param))
                 ? vars["\x01shape:" + std::to_string(base.param)]
                 : error(e.loc(), "internal error: tensor shape not bound");
    }
    if (base.isTile()) {
      std::vector<ConstValue> dims;
      for (int64_t d : base.shape())
        dims.push_back(ConstValue::integer(d));
      return SVal::constant(ConstValue::tuple(std::move(dims)));
    }
    if (base.kind == SVal::Kind::Scalar)
      return SVal::constant(ConstValue::tuple({}));
  }
  if (e.name == "dtype" && (base.isTyped() || base.kind == SVal::Kind::Tensor))
    return SVal::constant(ConstValue::dtype(base.dtype));
  if (e.name == "T" && base.isTile()) {
    if (base.shape().size() != 2)
      return error(e.loc(), ".T needs a 2-D tile");
    SmallVector<int64_t> s{base.shape()[1], base.shape()[0]};
    return SVal::typed(tl::TransOp::create(b, loc(e.loc()),
                                           tileType(s, base.dtype), base.value,
                                           b.getDenseI64ArrayAttr({1, 0})),
                       base.dtype);
  }
  if (base.isTyped() || base.isConst()) {
    if (findBuiltin(e.name, Method)) {
      SVal v = SVal::named(SVal::Kind::Method, e.name);
      v.elems.push_back(base);
      return v;
    }
  }
  return error(e.nameLoc,
               describe(base) + " has no attribute '" + e.name + "'");
}

SVal Emitter::positionsAlong(ArrayRef<int64_t> shape, int64_t dim, Location l) {
  int64_t n = shape[dim];
  SmallVector<int64_t> along(shape.size(), 1);
  along[dim] = n;
  SVal idx = SVal::typed(
      tl::ArangeOp::create(b, l, tileType({n}, DType::I32), 0, n), DType::I32);
  return toTile(reshapeTile(idx, along, l), shape, DType::I32, l);
}

SVal Emitter::selectTiles(const SVal &cond, const SVal &a, const SVal &c,
                          DType t, ArrayRef<int64_t> shape, Location l) {
  SVal cm = toTile(cond, shape, DType::Bool, l);
  SVal x = toTile(a, shape, t, l), y = toTile(c, shape, t, l);
  if (!cm.ok() || !x.ok() || !y.ok())
    return SVal::invalid();
  return SVal::typed(arith::SelectOp::create(b, l, cm.value, x.value, y.value),
                     t);
}

SVal Emitter::pickAlong(const SVal &x, int64_t dim, int64_t index, Location l,
                        SourceLoc sl) {
  // The element at `index` along `dim`: the others are replaced by the
  // lowest value of the type and the dimension reduced with max (exact,
  // NaN kept; any device runs it).
  SVal t = x.dtype == DType::Bool ? castTo(x, DType::I8, l) : x;
  SVal hit = emitCompare(CmpOp::Eq, positionsAlong(t.shape(), dim, l),
                         SVal::constant(ConstValue::integer(index)), sl);
  ConstValue lowest =
      isFloatT(t.dtype)
          ? ConstValue::floating(-std::numeric_limits<double>::infinity())
      : t.dtype == DType::I8  ? ConstValue::integer(-128)
      : t.dtype == DType::I32 ? ConstValue::integer(INT32_MIN)
                              : ConstValue::integer(INT64_MIN);
  SVal sel = selectTiles(hit, t, SVal::constant(lowest), t.dtype, t.shape(), l);
  if (!sel.ok())
    return sel;
  SVal r = emitReduce(tl::ReduceKind::max, sel, dim, l, sl);
  return castTo(r, x.dtype, l);
}

SVal Emitter::emitSubscript(const SubscriptExpr &e) {
  SVal base = emit(*e.value);
  if (!base.ok())
    return base;
  Location l = loc(e.loc());
  if (base.kind == SVal::Kind::Shape || base.kind == SVal::Kind::Tuple ||
      (base.isConst() && base.cval.isTuple())) {
    if (e.indices.size() != 1)
      return error(e.loc(), "a tuple takes one index");
    SVal idx = emit(*e.indices[0]);
    if (!idx.ok())
      return idx;
    if (!idx.isConst() || !idx.cval.isInt())
      return error(e.indices[0]->loc(),
                   "tuple index must be a constant integer");
    int64_t n =
        base.isConst() ? base.cval.getTuple().size() : base.elems.size();
    int64_t i = idx.cval.getInt();
    if (i < 0)
      i += n;
    if (i < 0 || i >= n)
      return error(e.indices[0]->loc(),
                   "index " + std::to_string(idx.cval.getInt()) +
                       " out of range for a tuple of " + std::to_string(n));
    if (base.isConst())
      return SVal::constant(base.cval.getTuple()[i]);
    return base.elems[i];
  }
  if (base.isTile()) {
    // x[:, None], x[None, :]: insert size-1 dimensions; x[i], x[i, j], x[i, :]
    // with compile-time integers: read elements (the indexed dimensions go).
    SmallVector<int64_t> shape;
    std::vector<std::pair<int64_t, int64_t>> picks; // (dimension, index)
    size_t src = 0;
    const size_t rank = base.shape().size();
    for (auto &ix : e.indices) {
      if (isa<NoneExpr>(ix.get())) {
        shape.push_back(1);
        continue;
      }
      if (src >= rank)
        return error(ix->loc(), "too many indices for a tile of rank " +
                                    std::to_string(rank));
      if (auto *s = dyn_cast<SliceExpr>(ix.get())) {
        if (s->lower || s->upper || s->step)
          return error(ix->loc(), "only ':' slices are supported on tiles");
        shape.push_back(base.shape()[src++]);
      } else {
        SVal iv = emit(*ix);
        if (!iv.ok())
          return iv;
        if (!iv.isConst() || !iv.cval.isInt())
          return error(ix->loc(),
                       "a tile's elements are indexed with compile-time "
                       "integers, got " +
                           describe(iv) +
                           " (for a run-time position, select with "
                           "tile.where and reduce)");
        int64_t n = base.shape()[src], i = iv.cval.getInt();
        if (i < -n || i >= n)
          return error(ix->loc(), "index " + std::to_string(i) +
                                      " is out of range for a dimension of " +
                                      std::to_string(n));
        picks.push_back({int64_t(src++), i < 0 ? i + n : i});
      }
    }
    while (src < rank)
      shape.push_back(base.shape()[src++]);
    SVal v = base;
    // Highest dimension first, so that the lower ones keep their numbers.
    for (auto it = picks.rbegin(); it != picks.rend(); ++it) {
      v = pickAlong(v, it->first, it->second, l, e.loc());
      if (!v.ok())
        return v;
    }
    if (!v.isTile())
      return v; // every dimension indexed: a scalar
    return reshapeTile(v, shape, l);
  }
  if (base.kind == SVal::Kind::Tensor) {
    if (info.simt)
      return emitElementRead(base, e);
    return error(e.loc(), "global tensors are read with tile.load in tile "
                          "programs, not [] (element access is for SIMT "
                          "programs: see docs/language.md)");
  }
  // tile.alloc_shared[dtype]: the element type, bound for the call.
  if (base.kind == SVal::Kind::Builtin && base.name == "alloc_shared") {
    if (e.indices.size() != 1)
      return error(e.loc(), "tile.alloc_shared[dtype] takes one dtype");
    SVal dt = emit(*e.indices[0]);
    if (!dt.ok())
      return dt;
    if (!dt.isConst() || !dt.cval.isDType())
      return error(e.indices[0]->loc(),
                   "tile.alloc_shared[dtype] needs a dtype, got " +
                       describe(dt));
    if (isPackedDType(dt.cval.getDType()))
      return error(e.indices[0]->loc(), packedTileError(dt.cval.getDType()));
    SVal m = SVal::named(SVal::Kind::Method, "alloc_shared");
    m.elems.push_back(dt);
    return m;
  }
  return error(e.loc(), describe(base) + " cannot be indexed");
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

SVal Emitter::emitCall(const CallExpr &e) {
  SVal callee = emit(*e.callee);
  if (!callee.ok())
    return callee;
  std::vector<SVal> args;
  for (auto &a : e.args) {
    args.push_back(emit(*a));
    if (!args.back().ok())
      return SVal::invalid();
  }
  KwArgs kwargs;
  for (auto &k : e.keywords) {
    SVal v = emit(*k.value);
    if (!v.ok())
      return v;
    kwargs[k.name] = {v, k.loc};
  }
  switch (callee.kind) {
  case SVal::Kind::Builtin:
    return emitBuiltin(callee.name, e, args, kwargs, nullptr);
  case SVal::Kind::Method:
    return emitBuiltin(callee.name, e, args, kwargs, &callee.elems[0]);
  case SVal::Kind::Helper:
    return emitHelperCall(*callee.helper, e, args, kwargs);
  default:
    return error(e.loc(), describe(callee) + " is not callable");
  }
}

SVal Emitter::emitHelperCall(const FunctionDef &fn, const CallExpr &e,
                             std::vector<SVal> &args, KwArgs &kwargs) {
  if (helpers.size() >= 16)
    return error(e.loc(), "helper calls nested too deeply (recursion?)");
  Vars callee;
  if (args.size() > fn.params.size())
    return error(e.loc(),
                 "'" + fn.name + "' takes " + std::to_string(fn.params.size()) +
                     " arguments (" + std::to_string(args.size()) + " given)");
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const Param &p = fn.params[i];
    if (i < args.size()) {
      callee[p.name] = args[i];
    } else if (auto it = kwargs.find(p.name); it != kwargs.end()) {
      callee[p.name] = it->second.first;
      kwargs.erase(it);
    } else if (p.defaultValue) {
      auto r = evalConst(*p.defaultValue, env);
      if (!r.ok())
        return error(r.loc, r.error);
      callee[p.name] = SVal::constant(*r.value);
    } else {
      return error(e.loc(), "missing argument '" + p.name + "' in call to '" +
                                fn.name + "'");
    }
  }
  if (!kwargs.empty())
    return error(kwargs.begin()->second.second,
                 "'" + fn.name + "' has no parameter '" +
                     kwargs.begin()->first + "'");
  // Keep the tensor-shape bindings visible inside the helper.
  for (auto &[k, v] : vars)
    if (!k.empty() && k[0] == '\x01')
      callee[k] = v;
  std::swap(vars, callee);
  auto savedPartial = std::move(partial);
  partial.clear();
  int savedLoop = loopDepth;
  loopDepth = 0;
  helpers.push_back({});
  emitWork({{&fn.body, 0}});
  SVal result = helpers.back().result.value_or(SVal::constant(ConstValue()));
  helpers.pop_back();
  loopDepth = savedLoop;
  partial = std::move(savedPartial);
  std::swap(vars, callee);
  return result;
}

} // namespace tessera::sema::detail
