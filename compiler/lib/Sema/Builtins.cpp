//===- Builtins.cpp - Built-in calls of kernel bodies ---------------------===//
//
// The dispatch of built-in calls through the table of Builtins.def, the
// helpers that read their arguments, and the lowerings of the compute
// built-ins (creation, reductions, math, the matrix product, shapes, casts,
// Python's built-ins). Loads, stores and atomics are in MemoryOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "tessera/Sema/Builtins.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SaveAndRestore.h"

#include <cmath>

namespace tessera::sema::detail {

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

std::optional<SVal> BuiltinCall::kwarg(const char *n) {
  if (auto it = kwargs.find(n); it != kwargs.end()) {
    SVal v = it->second.first;
    kwargs.erase(it);
    return v;
  }
  return std::nullopt;
}

bool BuiltinCall::arity(size_t lo, size_t hi) {
  if (args.size() >= lo && args.size() <= hi)
    return true;
  error(name + "() takes " +
        (lo == hi ? std::to_string(lo)
                  : std::to_string(lo) + " to " + std::to_string(hi)) +
        " positional argument" + (hi == 1 ? "" : "s") + " (" +
        std::to_string(args.size()) + " given)");
  return false;
}

bool BuiltinCall::accept(size_t lo, size_t hi, const char *lastKeyword) {
  if (lastKeyword)
    if (auto v = kwarg(lastKeyword))
      args.push_back(*v);
  return noKwargs() && arity(lo, hi);
}

bool BuiltinCall::noKwargs() {
  if (kwargs.empty())
    return true;
  em.error(kwargs.begin()->second.second,
           name + "() has no argument '" + kwargs.begin()->first + "'");
  return false;
}

namespace {
using Lowering = SVal (*)(Emitter &, BuiltinCall &);

/// Name -> lowering, from Builtins.def.
const llvm::StringMap<Lowering> &lowerings() {
  static const llvm::StringMap<Lowering> map = [] {
    llvm::StringMap<Lowering> m;
#define TESSERA_BUILTIN(NAME, LOWERING, SCOPES, SECTION, CALL, SUMMARY)        \
  m.try_emplace(#NAME, &lower##LOWERING);
#include "tessera/Sema/Builtins.def"
    return m;
  }();
  return map;
}
} // namespace

SVal Emitter::emitBuiltin(const std::string &name, const CallExpr &e,
                          std::vector<SVal> &args, KwArgs &kw,
                          const SVal *self) {
  BuiltinCall call{*this,           name,         e,      {}, kw,
                   self != nullptr, loc(e.loc()), e.loc()};
  if (self)
    call.args.push_back(*self);
  call.args.insert(call.args.end(), args.begin(), args.end());
  auto it = lowerings().find(name);
  if (it == lowerings().end())
    return call.error("unknown builtin '" + name + "'");
  // Tile programs and SIMT programs have their own built-ins.
  unsigned scopes = 0;
  for (const BuiltinInfo &bi : builtinTable())
    if (bi.name == name) {
      scopes = bi.scopes;
      break;
    }
  if (info.simt && (scopes & TileOnly)) {
    std::string use = name == "program_id" ? "use tile.block_id(axis)"
                      : name == "num_programs"
                          ? "use tile.num_blocks(axis)"
                          : "SIMT programs read and write one element "
                            "at a time, x[i] and x[i] = v";
    call.error("tile." + name + " is a whole-tile operation, but '" +
               info.name + "' is a SIMT program; " + use);
    if (!simtNoted)
      diags.note(decl.threadLevelCall, "this thread-level call makes '" +
                                           info.name + "' a SIMT program");
    simtNoted = true;
    return SVal::invalid();
  }
  if (!info.simt && (scopes & Thread))
    return call.error("tile." + name +
                      " is a thread-level built-in of SIMT "
                      "programs; '" +
                      info.name + "' is a tile program");
  return it->second(*this, call);
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

void Emitter::noteRuntimeParameters(const SVal &v) {
  if (v.kind == SVal::Kind::Tuple) {
    for (const SVal &e : v.elems)
      noteRuntimeParameters(e);
    return;
  }
  if (v.kind != SVal::Kind::Scalar || v.param < 0)
    return;
  const std::string &name = info.params[v.param].name;
  for (const Param &p : decl.fn->params)
    if (p.name == name)
      diags.note(p.loc,
                 "'" + name + "' is a run-time scalar parameter; declare it `" +
                     name + ": constexpr` to make it a compile-time value");
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

std::optional<int64_t> Emitter::constInt(const SVal &v, SourceLoc sl,
                                         const char *what) {
  if (!v.ok())
    return std::nullopt;
  if (!v.isConst() || !(v.cval.isInt() || v.cval.isBool())) {
    error(sl, std::string(what) +
                  " must be a compile-time integer (a "
                  "constexpr), got " +
                  describe(v));
    noteRuntimeParameters(v);
    return std::nullopt;
  }
  return v.cval.isBool() ? int64_t(v.cval.getBool()) : v.cval.getInt();
}

std::optional<std::vector<int64_t>>
Emitter::constShape(const SVal &v, SourceLoc sl, const char *what) {
  if (!v.ok())
    return std::nullopt;
  std::vector<int64_t> shape;
  if (v.isConst() && v.cval.isInt()) {
    shape.push_back(v.cval.getInt());
  } else if (v.isConst() && v.cval.isTuple()) {
    for (auto &d : v.cval.getTuple()) {
      if (!d.isInt()) {
        error(sl, std::string(what) + " must be a tuple of integers");
        return std::nullopt;
      }
      shape.push_back(d.getInt());
    }
  } else {
    error(sl, std::string(what) +
                  " must be a tuple of compile-time integers (constexprs), "
                  "got " +
                  describe(v));
    noteRuntimeParameters(v);
    return std::nullopt;
  }
  if (shape.empty() || shape.size() > 4) {
    error(sl, std::string(what) + " must have 1 to 4 dimensions");
    return std::nullopt;
  }
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0) {
      error(sl, std::string(what) + " " + v.cval.toString() +
                    " has a non-positive dimension");
      return std::nullopt;
    }
    n *= d;
    if (n > kMaxTileElements) {
      error(sl, std::string(what) + " " + v.cval.toString() +
                    " is too large (more than " +
                    std::to_string(kMaxTileElements) + " elements)");
      return std::nullopt;
    }
  }
  return shape;
}

std::optional<DType> Emitter::constDTypeArg(const SVal &v, SourceLoc sl) {
  if (!v.ok())
    return std::nullopt;
  std::optional<DType> dt;
  if (v.isConst() && v.cval.isDType())
    dt = v.cval.getDType();
  else if (v.isConst() && v.cval.isStr())
    dt = dtypeFromName(v.cval.getStr());
  if (!dt) {
    error(sl, "expected a dtype, got " + describe(v));
    return std::nullopt;
  }
  if (isPackedDType(*dt)) {
    error(sl, packedTileError(*dt));
    return std::nullopt;
  }
  return dt;
}

Value Emitter::indexValue(const SVal &v, SourceLoc sl) {
  if (!v.ok())
    return {};
  if (v.isConst() && (v.cval.isInt() || v.cval.isBool()))
    return materialize(v, DType::I64, {}, loc(sl));
  if (v.kind == SVal::Kind::Scalar && !isFloatT(v.dtype))
    return castTo(v, DType::I64, loc(sl)).value;
  error(sl, "offset must be an integer scalar, got " + describe(v));
  return {};
}

bool Emitter::indexValues(const std::vector<SVal> &vs, SourceLoc sl,
                          SmallVectorImpl<Value> &out) {
  for (const SVal &v : vs) {
    Value x = indexValue(v, sl);
    if (!x)
      return false;
    out.push_back(x);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Reductions, math and the matrix product
//===----------------------------------------------------------------------===//

SVal Emitter::emitReduce(tl::ReduceKind kind, const SVal &xIn,
                         std::optional<int64_t> axis, Location l,
                         SourceLoc sl) {
  if (xIn.kind == SVal::Kind::Scalar || xIn.isConst())
    return xIn; // A scalar reduces to itself.
  if (!xIn.isTile())
    return error(sl, "reduction needs a tile, got " + describe(xIn));
  SVal x = xIn;
  int64_t rank = x.shape().size();
  if (!axis) { // Reduce everything.
    int64_t n = 1;
    for (int64_t d : x.shape())
      n *= d;
    x = reshapeTile(x, {n}, l);
    axis = 0;
    rank = 1;
  }
  int64_t ax = *axis < 0 ? *axis + rank : *axis;
  if (ax < 0 || ax >= rank)
    return error(sl, "axis " + std::to_string(*axis) +
                         " out of range for a tile of rank " +
                         std::to_string(rank));
  DType t = x.dtype;
  if (isLowPrecisionFloat(t))
    t = DType::F32; // Accumulate low-precision floats in f32.
  // Booleans: sum counts (i32); max/min are any/all, computed on 0/1 bytes.
  bool boolMinMax = t == DType::Bool && kind != tl::ReduceKind::sum;
  if (t == DType::Bool || t == DType::I8)
    t = kind == tl::ReduceKind::sum ? DType::I32 : DType::I8;
  x = castTo(x, t, l);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    if (i != ax)
      shape.push_back(x.shape()[i]);
  auto type = RankedTensorType::get(shape, scalarType(t));
  Value r =
      tl::ReduceOp::create(b, l, type, tl::ReduceKindAttr::get(&ctx, kind),
                           x.value, b.getI32IntegerAttr(ax));
  SVal out =
      shape.empty()
          ? SVal::typed(tensor::ExtractOp::create(b, l, r, ValueRange{}), t)
          : SVal::typed(r, t);
  return boolMinMax ? castTo(out, DType::Bool, l) : out;
}

SVal Emitter::emitMath(const std::string &fn, const SVal &xIn, Location l,
                       SourceLoc sl) {
  SVal x = xIn;
  if (x.isConst()) {
    if (!x.cval.isNumber())
      return error(sl, fn + "() needs a number, got " + describe(x));
    x = castTo(x, DType::F32, l);
  }
  if (!x.isTyped())
    return error(sl, fn + "() needs a tile or scalar, got " + describe(x));
  if (fn == "abs" && !isFloatT(x.dtype)) {
    if (x.dtype == DType::Bool)
      return x;
    return SVal::typed(math::AbsIOp::create(b, l, x.value), x.dtype);
  }
  DType orig = x.dtype;
  // Transcendentals run in f32; integer inputs produce f32.
  DType work = DType::F32;
  DType out = isFloatT(orig) ? orig : DType::F32;
  x = castTo(x, work, l);
  Value v = x.value, r;
  if (fn == "exp")
    r = math::ExpOp::create(b, l, v);
  else if (fn == "exp2")
    r = math::Exp2Op::create(b, l, v);
  else if (fn == "log")
    r = math::LogOp::create(b, l, v);
  else if (fn == "log2")
    r = math::Log2Op::create(b, l, v);
  else if (fn == "sqrt")
    r = math::SqrtOp::create(b, l, v);
  else if (fn == "rsqrt")
    r = math::RsqrtOp::create(b, l, v);
  else if (fn == "abs")
    r = math::AbsFOp::create(b, l, v);
  else if (fn == "cos")
    r = math::CosOp::create(b, l, v);
  else if (fn == "sin")
    r = math::SinOp::create(b, l, v);
  else if (fn == "tanh")
    r = math::TanhOp::create(b, l, v);
  else if (fn == "erf")
    r = math::ErfOp::create(b, l, v);
  else if (fn == "floor")
    r = math::FloorOp::create(b, l, v);
  else if (fn == "ceil")
    r = math::CeilOp::create(b, l, v);
  else if (fn == "sigmoid") {
    Value one =
        materialize(SVal::constant(ConstValue::floating(1.0)), DType::F32,
                    x.isTile() ? x.shape() : ArrayRef<int64_t>{}, l);
    Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, v));
    r = arith::DivFOp::create(
        b, l, one, arith::AddFOp::create(b, l, one, e),
        arith::FastMathFlagsAttr::get(&ctx, arith::FastMathFlags::afn));
  }
  return castTo(SVal::typed(r, work), out, l);
}

SVal Emitter::emitBatchedDot(const SVal &a, const SVal &bb, const SVal *acc,
                             std::optional<DType> accT, Location l,
                             SourceLoc sl) {
  const int64_t batch = a.shape().size() == 3 ? a.shape()[0] : bb.shape()[0];
  if ((a.shape().size() == 3 && a.shape()[0] != batch) ||
      (bb.shape().size() == 3 && bb.shape()[0] != batch))
    return error(sl, "tile.dot: batch dimensions differ: " +
                         shapeText(a.shape()) + " @ " + shapeText(bb.shape()));
  if (batch > kMaxDotBatch)
    return error(sl, "tile.dot: a batched product is unrolled over its batch "
                     "dimension, at most " +
                         std::to_string(kMaxDotBatch) + " (got " +
                         std::to_string(batch) +
                         "); reshape the batch into the rows, or loop");
  bool accTile = acc && acc->isTile();
  if (accTile && (acc->shape().size() != 3 || acc->shape()[0] != batch))
    return error(sl, "tile.dot: a batched product's accumulator must be a "
                     "[B, M, N] tile, got " +
                         describe(*acc));
  SVal result;
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < batch; ++i) {
    SVal ai = a.shape().size() == 3 ? pickAlong(a, 0, i, l, sl) : a;
    SVal bi = bb.shape().size() == 3 ? pickAlong(bb, 0, i, l, sl) : bb;
    if (!ai.ok() || !bi.ok())
      return SVal::invalid();
    SVal acci;
    if (accTile)
      acci = pickAlong(*acc, 0, i, l, sl);
    SVal d = emitDot(ai, bi, accTile ? &acci : acc, accT, l, sl);
    if (!d.ok())
      return d;
    if (i == 0) {
      shape = {batch, d.shape()[0], d.shape()[1]};
      result =
          toTile(SVal::constant(ConstValue::integer(0)), shape, d.dtype, l);
    }
    // Product i goes to position i of the batch dimension.
    SVal at = emitCompare(CmpOp::Eq, positionsAlong(shape, 0, l),
                          SVal::constant(ConstValue::integer(i)), sl);
    result = selectTiles(at, d, result, d.dtype, shape, l);
    if (!result.ok())
      return result;
  }
  return result;
}

SVal Emitter::emitDot(const SVal &aIn, const SVal &bIn, const SVal *acc,
                      std::optional<DType> accT, Location l, SourceLoc sl) {
  // Batched: [B, M, K] @ [B, K, N] (or one 2-D operand shared by every
  // batch) is B products, unrolled, gathered into [B, M, N].
  if (aIn.isTile() && bIn.isTile() &&
      (aIn.shape().size() == 3 || bIn.shape().size() == 3) &&
      aIn.shape().size() >= 2 && bIn.shape().size() >= 2)
    return emitBatchedDot(aIn, bIn, acc, accT, l, sl);
  if (!aIn.isTile() || !bIn.isTile() || aIn.shape().size() != 2 ||
      bIn.shape().size() != 2)
    return error(sl, "tile.dot needs two 2-D tiles (or 3-D ones for a "
                     "batched product), got " +
                         describe(aIn) + " and " + describe(bIn));
  SVal a = aIn, bb = bIn;
  if (a.shape()[1] != bb.shape()[0])
    return error(sl, "tile.dot: inner dimensions differ: " +
                         shapeText(a.shape()) + " @ " + shapeText(bb.shape()));
  if (a.dtype != bb.dtype) {
    DType t = promoteTyped(a.dtype, bb.dtype);
    a = castTo(a, t, l);
    bb = castTo(bb, t, l);
  }
  if (a.dtype == DType::Bool)
    return error(sl, "tile.dot does not take boolean tiles");
  SmallVector<int64_t> shape{a.shape()[0], bb.shape()[1]};
  DType t = accT ? *accT : (isFloatT(a.dtype) ? DType::F32 : DType::I32);
  SVal c;
  if (acc && !(acc->isConst() && acc->cval.isNone())) {
    if (!acc->isConst() && !acc->isTyped())
      return error(sl, "tile.dot: the accumulator must be a tile or a "
                       "number, got " +
                           describe(*acc));
    if (!accT && acc->isTyped())
      t = acc->dtype;
    if (acc->isTile() && acc->shape() != ArrayRef<int64_t>(shape))
      return error(sl, "tile.dot: accumulator shape " +
                           shapeText(acc->shape()) + " does not match " +
                           shapeText(shape));
    c = toTile(*acc, shape, t, l);
  } else {
    c = toTile(SVal::constant(ConstValue::integer(0)), shape, t, l);
  }
  if (isFloatT(t) != isFloatT(a.dtype) ||
      (isFloatT(t) && scalarType(t).getIntOrFloatBitWidth() <
                          scalarType(a.dtype).getIntOrFloatBitWidth()) ||
      (!isFloatT(t) && t != DType::I32))
    return error(sl, std::string("tile.dot: ") + dtypeName(a.dtype) +
                         " inputs cannot accumulate in " + dtypeName(t));
  Value r =
      tl::DotOp::create(b, l, c.value.getType(), a.value, bb.value, c.value);
  return SVal::typed(r, t);
}

//===----------------------------------------------------------------------===//
// Lowerings of the table's entries
//===----------------------------------------------------------------------===//

SVal lowerProgramCoordinate(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  const std::string &name = call.name;
  if (!call.accept(1, 1, "axis"))
    return SVal::invalid();
  auto axis = em.constInt(all[0], sl, "axis");
  if (!axis)
    return SVal::invalid();
  if (*axis < 0 || *axis > 2)
    return call.error(name + "() axis must be 0, 1 or 2, got " +
                      std::to_string(*axis));
  Value r =
      name == "program_id"
          ? tl::ProgramIdOp::create(b, l, b.getI64Type(), *axis).getResult()
          : tl::NumProgramsOp::create(b, l, b.getI64Type(), *axis).getResult();
  return SVal::typed(r, DType::I64);
}

SVal lowerArange(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  if (!call.accept(1, 2))
    return SVal::invalid();
  auto lo = em.constInt(
      all.size() == 2 ? all[0] : SVal::constant(ConstValue::integer(0)), sl,
      "arange start");
  auto hi = em.constInt(all.back(), sl, "arange end");
  if (!lo || !hi)
    return SVal::invalid();
  if (*hi <= *lo)
    return call.error("tile.arange(" + std::to_string(*lo) + ", " +
                      std::to_string(*hi) + ") is empty");
  int64_t length = 0;
  if (__builtin_sub_overflow(*hi, *lo, &length) || length > kMaxTileElements)
    return call.error("tile.arange is too long");
  auto type = em.tileType({*hi - *lo}, DType::I32);
  return SVal::typed(tl::ArangeOp::create(b, l, type, *lo, *hi), DType::I32);
}

SVal lowerFill(Emitter &em, BuiltinCall &call) {
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  const std::string &name = call.name;
  auto dtK = call.kwarg("dtype");
  auto shapeK = call.kwarg("shape");
  auto valueK = call.kwarg("value");
  if (!call.noKwargs())
    return SVal::invalid();
  size_t need = name == "full" ? 2 : 1;
  std::vector<SVal> a = all;
  if (shapeK)
    a.insert(a.begin(), *shapeK);
  if (valueK && name == "full")
    a.insert(a.begin() + std::min<size_t>(1, a.size()), *valueK);
  if (dtK)
    a.push_back(*dtK);
  if (a.size() < need || a.size() > need + 1)
    return call.error("tile." + name + "() takes a shape" +
                      (name == "full" ? ", a value" : "") +
                      " and an optional dtype");
  auto shape = em.constShape(a[0], sl, "shape");
  if (!shape)
    return SVal::invalid();
  SVal value =
      name == "full"
          ? a[1]
          : SVal::constant(ConstValue::integer(name == "ones" ? 1 : 0));
  DType dt = DType::F32;
  if (a.size() == need + 1) {
    auto d = em.constDTypeArg(a[need], sl);
    if (!d)
      return SVal::invalid();
    dt = *d;
  } else if (value.isTyped()) {
    dt = value.dtype;
  } else if (value.isConst() && value.cval.isBool()) {
    dt = DType::Bool;
  }
  if (!value.isConst() && value.kind != SVal::Kind::Scalar)
    return call.error("tile.full value must be a scalar, got " +
                      describe(value));
  if (value.isConst() && !value.cval.isNumber())
    return call.error("tile.full value must be a number, got " +
                      describe(value));
  return em.toTile(value, *shape, dt, l);
}

SVal lowerFillLike(Emitter &em, BuiltinCall &call) {
  Location l = call.l;
  std::vector<SVal> &all = call.args;
  const std::string &name = call.name;
  if (!call.accept(name == "full_like" ? 2 : 1, name == "full_like" ? 2 : 1))
    return SVal::invalid();
  if (!all[0].isTile())
    return call.error(name + "() needs a tile");
  SVal value =
      name == "full_like" ? all[1] : SVal::constant(ConstValue::integer(0));
  return em.toTile(value, all[0].shape(), all[0].dtype, l);
}

SVal lowerDot(Emitter &em, BuiltinCall &call) {
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  auto accK = call.kwarg("acc");
  auto accT = call.kwarg("acc_dtype");
  if (!accT)
    accT = call.kwarg("out_dtype");
  if (!call.accept(2, 3))
    return SVal::invalid();
  std::optional<SVal> acc =
      all.size() == 3 ? std::optional<SVal>(all[2]) : accK;
  std::optional<DType> at;
  if (accT) {
    at = em.constDTypeArg(*accT, sl);
    if (!at)
      return SVal::invalid();
  }
  return em.emitDot(all[0], all[1], acc ? &*acc : nullptr, at, l, sl);
}

/// The `axis` (positional or keyword; None or absent: every element) and
/// `keep_dims` of a reduction; false after reporting an error.
static bool reductionArguments(Emitter &em, BuiltinCall &call,
                               std::optional<int64_t> &axis, bool &keepDims) {
  auto axisK = call.kwarg("axis");
  auto keepK = call.kwarg("keep_dims");
  if (!call.accept(1, 2))
    return false;
  std::optional<SVal> axisV =
      call.args.size() == 2 ? std::optional<SVal>(call.args[1]) : axisK;
  if (axisV && !(axisV->isConst() && axisV->cval.isNone())) {
    axis = em.constInt(*axisV, call.sl, "axis");
    if (!axis)
      return false;
  }
  if (keepK) {
    if (!keepK->isConst() || !keepK->cval.isBool()) {
      call.error("keep_dims must be a compile-time bool, got " +
                 describe(*keepK));
      return false;
    }
    keepDims = keepK->cval.getBool();
  }
  return true;
}

/// `r`, the reduction of tile `x` along `axis` (every axis when absent),
/// reshaped to keep the reduced dimensions with size 1.
static SVal keepReducedDims(Emitter &em, const SVal &r, const SVal &x,
                            std::optional<int64_t> axis, Location l) {
  if (!r.ok() || !x.isTile())
    return r;
  SmallVector<int64_t> shape(x.shape().begin(), x.shape().end());
  if (axis) {
    int64_t rank = shape.size(), ax = *axis < 0 ? *axis + rank : *axis;
    shape[ax] = 1;
  } else {
    shape.assign(shape.size(), 1);
  }
  return r.isTile() ? em.reshapeTile(r, shape, l)
                    : em.toTile(r, shape, r.dtype, l);
}

SVal lowerReduce(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  const std::string &name = call.name;
  // Python's min/max on scalars.
  if (!call.isMethod && call.kwargs.empty() && all.size() >= 2 &&
      llvm::none_of(all, [](const SVal &v) { return v.isTile(); }) &&
      (name == "max" || name == "min")) {
    SVal acc = all[0];
    for (size_t i = 1; i < all.size(); ++i) {
      if (acc.isConst() && all[i].isConst()) {
        std::string err;
        auto r = foldBuiltinCall(name, {acc.cval, all[i].cval}, &err);
        if (!r)
          return call.error(err);
        acc = SVal::constant(*r);
        continue;
      }
      SmallVector<SVal> ops{acc, all[i]};
      auto t = em.joinDTypes(ops);
      if (!t || !em.unify(ops, *t, l, sl))
        return SVal::invalid();
      Value r;
      if (isFloatT(*t))
        r = name == "max"
                ? arith::MaximumFOp::create(b, l, ops[0].value, ops[1].value)
                      .getResult()
                : arith::MinimumFOp::create(b, l, ops[0].value, ops[1].value)
                      .getResult();
      else
        r = name == "max"
                ? arith::MaxSIOp::create(b, l, ops[0].value, ops[1].value)
                      .getResult()
                : arith::MinSIOp::create(b, l, ops[0].value, ops[1].value)
                      .getResult();
      acc = SVal::typed(r, *t);
    }
    return acc;
  }
  if (!call.isMethod && all.size() == 1 && all[0].isConst() &&
      all[0].cval.isTuple() && name != "sum") {
    std::string err;
    auto r = foldBuiltinCall(name, {all[0].cval}, &err);
    if (!r)
      return call.error(err);
    return SVal::constant(*r);
  }
  std::optional<int64_t> axis;
  bool keepDims = false;
  if (!reductionArguments(em, call, axis, keepDims))
    return SVal::invalid();
  tl::ReduceKind kind = name == "sum"   ? tl::ReduceKind::sum
                        : name == "max" ? tl::ReduceKind::max
                                        : tl::ReduceKind::min;
  SVal r = em.emitReduce(kind, all[0], axis, l, sl);
  return keepDims ? keepReducedDims(em, r, all[0], axis, l) : r;
}

SVal lowerMath(Emitter &em, BuiltinCall &call) {
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  const std::string &name = call.name;
  if (!call.accept(1, 1))
    return SVal::invalid();
  if (name == "abs" && all[0].isConst()) {
    std::string err;
    auto r = foldBuiltinCall("abs", {all[0].cval}, &err);
    if (r)
      return SVal::constant(*r);
  }
  if (all[0].isConst() && all[0].cval.isNumber() && name != "abs") {
    double x = all[0].cval.asDouble(), r = 0;
    if (name == "exp")
      r = std::exp(x);
    else if (name == "exp2")
      r = std::exp2(x);
    else if (name == "log")
      r = std::log(x);
    else if (name == "log2")
      r = std::log2(x);
    else if (name == "sqrt")
      r = std::sqrt(x);
    else if (name == "rsqrt")
      r = 1.0 / std::sqrt(x);
    else if (name == "cos")
      r = std::cos(x);
    else if (name == "sin")
      r = std::sin(x);
    else if (name == "tanh")
      r = std::tanh(x);
    else if (name == "erf")
      r = std::erf(x);
    else if (name == "floor")
      r = std::floor(x);
    else if (name == "ceil")
      r = std::ceil(x);
    else
      r = 1.0 / (1.0 + std::exp(-x));
    return SVal::constant(ConstValue::floating(r));
  }
  return em.emitMath(name, all[0], l, sl);
}

SVal lowerMinMax(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  const std::string &name = call.name;
  if (!call.accept(2, 2))
    return SVal::invalid();
  for (auto &v : all)
    if (!v.isConst() && !v.isTyped())
      return call.error(name + "() needs tiles or scalars, got " + describe(v));
  if (all[0].isConst() && all[1].isConst()) {
    std::string err;
    auto r = foldBuiltinCall(name == "maximum" ? "max" : "min",
                             {all[0].cval, all[1].cval}, &err);
    if (!r)
      return call.error(err);
    return SVal::constant(*r);
  }
  SmallVector<SVal> ops{all[0], all[1]};
  DType t = *em.joinDTypes(ops);
  if (isFp8(t))
    t = DType::F32;
  if (!em.unify(ops, t, l, sl))
    return SVal::invalid();
  Value r;
  if (isFloatT(t))
    r = name == "maximum"
            ? arith::MaximumFOp::create(b, l, ops[0].value, ops[1].value)
                  .getResult()
            : arith::MinimumFOp::create(b, l, ops[0].value, ops[1].value)
                  .getResult();
  else if (t == DType::Bool)
    r = name == "maximum"
            ? arith::OrIOp::create(b, l, ops[0].value, ops[1].value).getResult()
            : arith::AndIOp::create(b, l, ops[0].value, ops[1].value)
                  .getResult();
  else
    r = name == "maximum"
            ? arith::MaxSIOp::create(b, l, ops[0].value, ops[1].value)
                  .getResult()
            : arith::MinSIOp::create(b, l, ops[0].value, ops[1].value)
                  .getResult();
  return SVal::typed(r, t);
}

SVal lowerWhere(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  std::vector<SVal> &all = call.args;
  if (!call.accept(3, 3))
    return SVal::invalid();
  for (auto &v : all)
    if (!v.isConst() && !v.isTyped())
      return call.error("where() needs tiles or scalars, got " + describe(v));
  SVal c = all[0];
  if (c.isTyped() && c.dtype != DType::Bool)
    c = em.castTo(c, DType::Bool, l);
  SmallVector<SVal> vals{all[1], all[2]};
  auto t = em.joinDTypes(vals);
  if (!t)
    t = (all[1].cval.isFloat() || all[2].cval.isFloat()) ? DType::F32
                                                         : DType::I64;
  SmallVector<SVal> ops{c, all[1], all[2]};
  // Common shape first, then per-operand dtype.
  SmallVector<int64_t> shape;
  bool anyTile = false;
  for (auto &v : ops)
    if (v.isTile()) {
      SmallVector<int64_t> out;
      if (anyTile && !em.broadcastShapes(shape, v.shape(), out))
        return call.error("where(): cannot broadcast shapes");
      if (!anyTile)
        shape.assign(v.shape().begin(), v.shape().end());
      else
        shape = out;
      anyTile = true;
    }
  if (!anyTile) {
    if (c.isConst())
      return c.cval.truthy() ? all[1] : all[2];
    SVal x = em.castTo(all[1], *t, l), y = em.castTo(all[2], *t, l);
    return SVal::typed(arith::SelectOp::create(b, l, c.value, x.value, y.value),
                       *t);
  }
  return em.selectTiles(c, all[1], all[2], *t, shape, l);
}

SVal lowerReshape(Emitter &em, BuiltinCall &call) {
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  if (!call.accept(2, 2, "shape"))
    return SVal::invalid();
  if (!all[0].isTile())
    return call.error("reshape() needs a tile, got " + describe(all[0]));
  auto shape = em.constShape(all[1], sl, "shape");
  if (!shape)
    return SVal::invalid();
  int64_t n1 = 1, n2 = 1;
  for (int64_t d : all[0].shape())
    n1 *= d;
  for (int64_t d : *shape)
    n2 *= d;
  if (n1 != n2)
    return call.error("cannot reshape a tile of shape " +
                      shapeText(all[0].shape()) + " to " + shapeText(*shape));
  return em.reshapeTile(all[0], *shape, l);
}

SVal lowerBroadcastTo(Emitter &em, BuiltinCall &call) {
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  if (!call.accept(2, 2))
    return SVal::invalid();
  auto shape = em.constShape(all[1], sl, "shape");
  if (!shape)
    return SVal::invalid();
  if (all[0].isTile()) {
    SmallVector<int64_t> out;
    if (!em.broadcastShapes(all[0].shape(), *shape, out) ||
        ArrayRef<int64_t>(out) != ArrayRef<int64_t>(*shape))
      return call.error("cannot broadcast " + shapeText(all[0].shape()) +
                        " to " + shapeText(*shape));
    return em.broadcastTo(all[0], *shape, l);
  }
  auto t = all[0].isTyped() ? all[0].dtype : constDType(all[0].cval);
  return em.toTile(all[0], *shape, t, l);
}

SVal lowerExpandDims(Emitter &em, BuiltinCall &call) {
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  if (!call.accept(2, 2, "axis") || !all[0].isTile())
    return call.error("expand_dims(tile, axis)");
  auto ax = em.constInt(all[1], sl, "axis");
  if (!ax)
    return SVal::invalid();
  SmallVector<int64_t> shape(all[0].shape().begin(), all[0].shape().end());
  int64_t a = *ax < 0 ? *ax + (int64_t)shape.size() + 1 : *ax;
  if (a < 0 || a > (int64_t)shape.size())
    return call.error("expand_dims: axis out of range");
  shape.insert(shape.begin() + a, 1);
  return em.reshapeTile(all[0], shape, l);
}

SVal lowerTrans(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  std::vector<SVal> &all = call.args;
  if (!call.accept(1, 2, "perm"))
    return SVal::invalid();
  if (!all[0].isTile())
    return call.error("trans() needs a tile, got " + describe(all[0]));
  int64_t rank = all[0].shape().size();
  SmallVector<int64_t> perm;
  if (all.size() == 2) {
    if (!all[1].isConst() || !all[1].cval.isTuple())
      return call.error("trans(): the permutation must be a tuple of "
                        "compile-time integers, got " +
                        describe(all[1]));
    for (auto &c : all[1].cval.getTuple()) {
      if (!c.isInt())
        return call.error("trans(): the permutation must be a tuple of "
                          "integers");
      perm.push_back(c.getInt());
    }
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  if ((int64_t)perm.size() != rank)
    return call.error("trans(): permutation must have one entry per dimension");
  SmallVector<int64_t> shape;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return call.error("trans(): invalid permutation");
    seen[p] = true;
    shape.push_back(all[0].shape()[p]);
  }
  return SVal::typed(tl::TransOp::create(b, l, em.tileType(shape, all[0].dtype),
                                         all[0].value,
                                         b.getDenseI64ArrayAttr(perm)),
                     all[0].dtype);
}

SVal lowerCast(Emitter &em, BuiltinCall &call) {
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  if (!call.accept(2, 2, "dtype"))
    return SVal::invalid();
  auto dt = em.constDTypeArg(all[1], sl);
  if (!dt)
    return SVal::invalid();
  if (all[0].isConst()) {
    if (!all[0].cval.isNumber())
      return call.error("cannot cast " + describe(all[0]));
    return em.castTo(all[0], *dt, l);
  }
  if (!all[0].isTyped())
    return call.error("cannot cast " + describe(all[0]));
  return em.castTo(all[0], *dt, l);
}

SVal lowerCdiv(Emitter &em, BuiltinCall &call) {
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  if (!call.accept(2, 2))
    return SVal::invalid();
  if (all[0].isConst() && all[1].isConst()) {
    std::string err;
    auto r = foldBuiltinCall("cdiv", {all[0].cval, all[1].cval}, &err);
    if (!r)
      return call.error(err);
    return SVal::constant(*r);
  }
  SVal num = em.emitBinary(BinaryOp::Add, all[0], all[1], sl);
  num = em.emitBinary(BinaryOp::Sub, num,
                      SVal::constant(ConstValue::integer(1)), sl);
  if (!num.ok())
    return num;
  if (num.isTyped() && isFloatT(num.dtype))
    return call.error("cdiv() needs integers");
  return em.emitBinary(BinaryOp::FloorDiv, num, all[1], sl);
}

SVal lowerDivRn(Emitter &em, BuiltinCall &call) {
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  if (!call.accept(2, 2))
    return SVal::invalid();
  llvm::SaveAndRestore exact(em.approximateDivision, false);
  return em.emitBinary(BinaryOp::Div, all[0], all[1], sl);
}

SVal lowerFma(Emitter &em, BuiltinCall &call) {
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  if (!call.accept(3, 3))
    return SVal::invalid();
  SVal p = em.emitBinary(BinaryOp::Mul, all[0], all[1], sl);
  return p.ok() ? em.emitBinary(BinaryOp::Add, p, all[2], sl) : p;
}

SVal lowerConvert(Emitter &em, BuiltinCall &call) {
  Location l = call.l;
  std::vector<SVal> &all = call.args;
  const std::string &name = call.name;
  if (!call.accept(1, 1))
    return SVal::invalid();
  if (all[0].isConst()) {
    std::string err;
    auto r = foldBuiltinCall(name, {all[0].cval}, &err);
    if (!r)
      return call.error(err);
    return SVal::constant(*r);
  }
  if (all[0].kind != SVal::Kind::Scalar)
    return call.error(name + "() needs a scalar, got " + describe(all[0]));
  DType t = name == "float" ? DType::F32
            : name == "int" ? DType::I64
                            : DType::Bool;
  return em.castTo(all[0], t, l);
}

SVal lowerLen(Emitter &em, BuiltinCall &call) {
  std::vector<SVal> &all = call.args;
  if (!call.accept(1, 1))
    return SVal::invalid();
  if (all[0].isConst() && all[0].cval.isTuple())
    return SVal::constant(ConstValue::integer(all[0].cval.getTuple().size()));
  if (all[0].isTile())
    return SVal::constant(ConstValue::integer(all[0].shape()[0]));
  return call.error("len() of " + describe(all[0]));
}

SVal lowerPow(Emitter &em, BuiltinCall &call) {
  if (!call.accept(2, 2))
    return SVal::invalid();
  SVal x = call.args[0];
  for (const SVal &v : call.args)
    if (!v.isTyped() && !(v.isConst() && v.cval.isNumber()))
      return call.error("pow() needs tiles or scalars, got " + describe(v));
  // In floating point whatever the operands (integer ** stays exact only
  // with the `**` operator's small constant exponents).
  if (x.isConst())
    x = SVal::constant(ConstValue::floating(x.cval.asDouble()));
  else if (!isFloatT(x.dtype))
    x = em.castTo(x, DType::F32, call.l);
  return em.emitBinary(BinaryOp::Pow, x, call.args[1], call.sl);
}

SVal lowerArgReduce(Emitter &em, BuiltinCall &call) {
  std::optional<int64_t> axis;
  bool keepDims = false;
  if (!reductionArguments(em, call, axis, keepDims))
    return SVal::invalid();
  SVal x = call.args[0];
  if (!x.isTile())
    return call.error(call.name + "() needs a tile, got " + describe(x));
  const SVal orig = x;
  const std::optional<int64_t> origAxis = axis;
  Location l = call.l;
  SourceLoc sl = call.sl;
  if (!axis) { // Over every element: the index into the flattened tile.
    int64_t n = 1;
    for (int64_t d : x.shape())
      n *= d;
    x = em.reshapeTile(x, {n}, l);
    axis = 0;
  }
  int64_t rank = x.shape().size();
  int64_t ax = *axis < 0 ? *axis + rank : *axis;
  if (ax < 0 || ax >= rank)
    return call.error("axis " + std::to_string(*axis) +
                      " out of range for a tile of rank " +
                      std::to_string(rank));
  if (x.dtype == DType::Bool)
    x = em.castTo(x, DType::I8, l);
  bool isMax = call.name == "argmax";
  // The extreme along the axis, kept as a size-1 dimension, then the first
  // position that holds it (a NaN counts as the extreme: max and min
  // propagate it).
  SVal m = em.emitReduce(isMax ? tl::ReduceKind::max : tl::ReduceKind::min, x,
                         ax, l, sl);
  m = keepReducedDims(em, m, x, ax, l);
  if (!m.ok())
    return m;
  SVal hit = em.emitCompare(CmpOp::Eq, x, m, sl);
  if (isFloatT(x.dtype)) {
    SVal xNaN = em.emitCompare(CmpOp::Ne, x, x, sl);
    SVal mNaN = em.emitCompare(CmpOp::Ne, m, m, sl);
    hit = em.emitBinary(BinaryOp::BitOr, hit,
                        em.emitBinary(BinaryOp::BitAnd, xNaN, mNaN, sl), sl);
  }
  int64_t n = x.shape()[ax];
  SVal cand = em.selectTiles(hit, em.positionsAlong(x.shape(), ax, l),
                             SVal::constant(ConstValue::integer(n)), DType::I32,
                             x.shape(), l);
  if (!cand.ok())
    return cand;
  SVal r = em.emitReduce(tl::ReduceKind::min, cand, ax, l, sl);
  return keepDims ? keepReducedDims(em, r, orig, origAxis, l) : r;
}

SVal lowerNextPowerOf2(Emitter &em, BuiltinCall &call) {
  if (!call.accept(1, 1))
    return SVal::invalid();
  auto n = em.constInt(call.args[0], call.sl, "next_power_of_2 argument");
  if (!n)
    return SVal::invalid();
  if (*n > (int64_t(1) << 62))
    return call.error("next_power_of_2(" + std::to_string(*n) +
                      ") does not fit in 64 bits");
  int64_t p = 1;
  while (p < *n)
    p <<= 1;
  return SVal::constant(ConstValue::integer(p));
}

SVal lowerStrMethod(Emitter &, BuiltinCall &call) {
  const std::string &name = call.name;
  if (!call.accept(1, 2))
    return SVal::invalid();
  if (!call.isMethod || !call.args[0].isConst() || !call.args[0].cval.isStr())
    return call.error(name + "() is a method of constexpr strings, called on " +
                      describe(call.args[0]));
  const std::string &s = call.args[0].cval.getStr();
  if (name == "split") {
    std::vector<ConstValue> parts;
    if (call.args.size() == 1) { // runs of blanks separate, as in Python
      size_t at = 0;
      while ((at = s.find_first_not_of(" \t\n", at)) != std::string::npos) {
        size_t end = s.find_first_of(" \t\n", at);
        parts.push_back(ConstValue::string(s.substr(at, end - at)));
        at = end;
      }
    } else {
      const SVal &sep = call.args[1];
      if (!sep.isConst() || !sep.cval.isStr() || sep.cval.getStr().empty())
        return call.error("split() separator must be a non-empty constexpr "
                          "string, got " +
                          describe(sep));
      const std::string &d = sep.cval.getStr();
      size_t at = 0;
      for (size_t next; (next = s.find(d, at)) != std::string::npos;
           at = next + d.size())
        parts.push_back(ConstValue::string(s.substr(at, next - at)));
      parts.push_back(ConstValue::string(s.substr(at)));
    }
    return SVal::constant(ConstValue::tuple(std::move(parts)));
  }
  if (call.args.size() != 2 || !call.args[1].isConst() ||
      !call.args[1].cval.isStr())
    return call.error(name + "() takes one constexpr string");
  const std::string &a = call.args[1].cval.getStr();
  bool r =
      a.size() <= s.size() &&
      (name == "startswith" ? s.compare(0, a.size(), a) == 0
                            : s.compare(s.size() - a.size(), a.size(), a) == 0);
  return SVal::constant(ConstValue::boolean(r));
}

SVal lowerStaticAssert(Emitter &em, BuiltinCall &call) {
  auto msgK = call.kwarg("msg");
  if (!msgK)
    msgK = call.kwarg("message");
  if (msgK)
    call.args.push_back(*msgK);
  if (!call.accept(1, 2))
    return SVal::invalid();
  const SVal &c = call.args[0];
  if (!c.isConst())
    return call.error("static_assert() needs a compile-time condition, got " +
                      describe(c));
  std::string message;
  if (call.args.size() == 2) {
    if (!call.args[1].isConst() || !call.args[1].cval.isStr())
      return call.error("static_assert() message must be a string");
    message = call.args[1].cval.getStr();
  }
  if (!c.cval.truthy())
    return call.error("static_assert failed" +
                      (message.empty() ? std::string() : ": " + message));
  return SVal::constant(ConstValue::none());
}

SVal lowerLoopIterable(Emitter &, BuiltinCall &call) {
  return call.error(call.name +
                    "() can only be used as the iterable of a for loop");
}

SVal lowerScan(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  SourceLoc sl = call.sl;
  auto reverseK = call.kwarg("reverse");
  if (!call.accept(1, 2, "axis"))
    return SVal::invalid();
  SVal x = call.args[0];
  if (!x.isTile())
    return call.error(call.name + "() needs a tile, got " + describe(x));
  int64_t axis = 0;
  if (call.args.size() == 2) {
    auto a = em.constInt(call.args[1], sl, "axis");
    if (!a)
      return SVal::invalid();
    axis = *a;
  }
  bool reverse = false;
  if (reverseK) {
    if (!reverseK->isConst() || !reverseK->cval.isBool())
      return call.error("reverse must be a compile-time bool, got " +
                        describe(*reverseK));
    reverse = reverseK->cval.getBool();
  }
  const int64_t rank = x.shape().size();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return call.error("axis " + std::to_string(axis) +
                      " out of range for a tile of rank " +
                      std::to_string(rank));
  // Narrow floats accumulate in f32, bool and i8 in i32 (as tile.sum).
  DType t = x.dtype;
  if (isFloatT(t) && t != DType::F32)
    t = DType::F32;
  if (t == DType::Bool || t == DType::I8)
    t = DType::I32;
  x = em.castTo(x, t, l);
  if (!x.ok())
    return x;
  const bool sum = call.name == "cumsum";
  SmallVector<int64_t> shape(x.shape());
  // One loop over the elements in scan order (the axis fastest): the
  // running value restarts at the first element of each line.
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  const int64_t n = shape[axis];
  auto c = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, l, v).getResult();
  };
  Value init =
      em.toTile(SVal::constant(ConstValue::integer(0)), shape, t, l).value;
  // The running value is read back from the previous element of the result
  // (the loop carries the tile alone: on a GPU one thread runs it).
  auto loop = scf::ForOp::create(b, l, c(0), c(total), c(1), ValueRange{init});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k = loop.getInductionVar();
    Value out = loop.getRegionIterArgs()[0];
    Value pos = arith::RemUIOp::create(b, l, k, c(n));
    Value rest = arith::DivUIOp::create(b, l, k, c(n));
    SmallVector<Value> at(rank), before(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (d == axis)
        continue;
      at[d] = before[d] = arith::RemUIOp::create(b, l, rest, c(shape[d]));
      rest = arith::DivUIOp::create(b, l, rest, c(shape[d]));
    }
    Value first =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, pos, c(0));
    // The previous position along the axis (itself for the first: unused).
    Value prevPos = arith::SelectOp::create(
        b, l, first, pos, arith::SubIOp::create(b, l, pos, c(1)));
    auto along = [&](Value p) -> Value {
      return reverse ? arith::SubIOp::create(b, l, c(n - 1), p).getResult() : p;
    };
    at[axis] = along(pos);
    before[axis] = along(prevPos);
    Value v = tensor::ExtractOp::create(b, l, x.value, at);
    Value run = tensor::ExtractOp::create(b, l, out, before);
    Value combined =
        isFloatT(t) ? (sum ? arith::AddFOp::create(b, l, run, v).getResult()
                           : arith::MulFOp::create(b, l, run, v).getResult())
                    : (sum ? arith::AddIOp::create(b, l, run, v).getResult()
                           : arith::MulIOp::create(b, l, run, v).getResult());
    Value next = arith::SelectOp::create(b, l, first, v, combined);
    Value updated = tensor::InsertOp::create(b, l, next, out, at);
    scf::YieldOp::create(b, l, ValueRange{updated});
  }
  return SVal::typed(loop.getResult(0), t);
}

} // namespace tessera::sema::detail
