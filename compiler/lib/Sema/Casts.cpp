//===- Casts.cpp - Materialisation, casts and broadcasting ----------------===//
//
// How values of the emitter become MLIR values of a given type and shape:
// constants materialised, element types converted (section 5 rounding
// rules), shapes broadcast NumPy-style, operands unified before an
// operation (the promotion rules of TypeRules.h).
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/STLExtras.h"

namespace tessera::sema::detail {

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "(";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += std::to_string(d);
  }
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

std::string describe(const SVal &v) {
  switch (v.kind) {
  case SVal::Kind::Invalid:
    return "<error>";
  case SVal::Kind::Const:
    return "constant " + v.cval.toString();
  case SVal::Kind::Scalar:
    return std::string(dtypeName(v.dtype)) + " scalar";
  case SVal::Kind::Tile:
    return std::string(dtypeName(v.dtype)) + " tile of shape " +
           shapeText(v.shape());
  case SVal::Kind::Tensor:
    return v.param < 0 ? "shared array" : "global tensor";
  case SVal::Kind::Namespace:
    return "namespace '" + v.name + "'";
  case SVal::Kind::Builtin:
    return "builtin '" + v.name + "'";
  case SVal::Kind::Method:
    return "method '" + v.name + "'";
  case SVal::Kind::Shape:
    return "shape tuple";
  case SVal::Kind::Tuple:
    return "tuple";
  case SVal::Kind::Helper:
    return "function '" + v.name + "'";
  }
  return "value";
}

/// The elements of a tuple value (constant or not); any other value is a
/// one-element list.
std::vector<SVal> tupleItems(const SVal &v) {
  if (v.isConst() && v.cval.isTuple()) {
    std::vector<SVal> items;
    for (const ConstValue &c : v.cval.getTuple())
      items.push_back(SVal::constant(c));
    return items;
  }
  if (v.kind == SVal::Kind::Tuple)
    return v.elems;
  return {v};
}

/// Removes and returns keyword argument `name`, else positional `pos`.
std::optional<SVal> takeArg(const std::vector<SVal> &args, KwArgs &kw,
                            const char *name, size_t pos) {
  if (auto it = kw.find(name); it != kw.end()) {
    SVal v = it->second.first;
    kw.erase(it);
    return v;
  }
  if (pos < args.size())
    return args[pos];
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Materialisation and casts
//===----------------------------------------------------------------------===//

TypedAttr Emitter::scalarAttr(const ConstValue &c, DType t) {
  Type ty = scalarType(t);
  if (isFloatT(t))
    return b.getFloatAttr(ty, c.asDouble());
  if (t == DType::Bool)
    return b.getIntegerAttr(ty, c.truthy() ? 1 : 0);
  int64_t v = c.isBool() ? (c.getBool() ? 1 : 0) : c.getInt();
  if (c.isFloat()) {
    // Saturate like fptosi.sat: NaN -> 0, +-inf and large values clamp
    // (a plain cast of a value outside int64's range is undefined).
    double f = c.getFloat();
    v = std::isnan(f)                 ? 0
        : f >= 9223372036854775807.0  ? std::numeric_limits<int64_t>::max()
        : f <= -9223372036854775808.0 ? std::numeric_limits<int64_t>::min()
                                      : static_cast<int64_t>(f);
  }
  return b.getIntegerAttr(ty, v);
}

Value Emitter::materialize(const SVal &v, DType t, ArrayRef<int64_t> shape,
                           Location l) {
  TypedAttr attr = scalarAttr(v.cval, t);
  if (shape.empty())
    return arith::ConstantOp::create(b, l, attr);
  auto type = tileType(shape, t);
  return arith::ConstantOp::create(b, l, DenseElementsAttr::get(type, attr));
}

Value Emitter::castValue(Value v, DType from, DType to, Location l) {
  if (from == to)
    return v;
  Type toElem = scalarType(to);
  Type toType = toElem;
  if (auto tt = dyn_cast<RankedTensorType>(v.getType()))
    toType = tt.clone(toElem);
  bool ff = isFloatT(from), tf = isFloatT(to);
  if (to == DType::Bool) {
    Value zero;
    if (auto tt = dyn_cast<RankedTensorType>(v.getType()))
      zero = arith::ConstantOp::create(b, l, b.getZeroAttr(tt));
    else
      zero = arith::ConstantOp::create(b, l, b.getZeroAttr(v.getType()));
    if (ff)
      return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, v, zero);
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, v, zero);
  }
  if (ff && tf) {
    unsigned wf = cast<FloatType>(getElementTypeOrSelf(v.getType())).getWidth();
    unsigned wt = cast<FloatType>(toElem).getWidth();
    if (wf == wt) { // f16 <-> bf16
      Type f32 = b.getF32Type();
      Type mid = f32;
      if (auto tt = dyn_cast<RankedTensorType>(v.getType()))
        mid = tt.clone(f32);
      Value e = arith::ExtFOp::create(b, l, mid, v);
      return arith::TruncFOp::create(b, l, toType, e);
    }
    if (wf < wt)
      return arith::ExtFOp::create(b, l, toType, v);
    return arith::TruncFOp::create(b, l, toType, v);
  }
  if (ff && !tf)
    return arith::FPToSIOp::create(b, l, toType, v);
  if (!ff && tf) {
    if (from == DType::Bool)
      return arith::UIToFPOp::create(b, l, toType, v);
    return arith::SIToFPOp::create(b, l, toType, v);
  }
  // int -> int
  unsigned wf = getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth();
  unsigned wt = toElem.getIntOrFloatBitWidth();
  if (wf < wt) {
    if (from == DType::Bool)
      return arith::ExtUIOp::create(b, l, toType, v);
    return arith::ExtSIOp::create(b, l, toType, v);
  }
  return arith::TruncIOp::create(b, l, toType, v);
}

SVal Emitter::castTo(const SVal &v, DType t, Location l) {
  if (v.kind == SVal::Kind::Const)
    return SVal::typed(materialize(v, t, {}, l), t);
  if (!v.isTyped())
    return SVal::invalid();
  return SVal::typed(castValue(v.value, v.dtype, t, l), t);
}

SVal Emitter::toTile(const SVal &v, ArrayRef<int64_t> shape, DType t,
                     Location l) {
  if (v.isConst())
    return SVal::typed(materialize(v, t, shape, l), t);
  SVal c = castTo(v, t, l);
  if (!c.ok())
    return c;
  if (c.kind == SVal::Kind::Scalar)
    return SVal::typed(tl::SplatOp::create(b, l, tileType(shape, t), c.value),
                       t);
  return broadcastTo(c, shape, l);
}

SVal Emitter::reshapeTile(const SVal &v, ArrayRef<int64_t> shape, Location l) {
  if (v.shape() == shape)
    return v;
  return SVal::typed(
      tl::ReshapeOp::create(b, l, tileType(shape, v.dtype), v.value), v.dtype);
}

bool Emitter::broadcastShapes(ArrayRef<int64_t> x, ArrayRef<int64_t> y,
                              SmallVectorImpl<int64_t> &out) {
  size_t r = std::max(x.size(), y.size());
  out.assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t dx = i < r - x.size() ? 1 : x[i - (r - x.size())];
    int64_t dy = i < r - y.size() ? 1 : y[i - (r - y.size())];
    if (dx != dy && dx != 1 && dy != 1)
      return false;
    out[i] = dx == 1 ? dy : dx;
  }
  return true;
}

SVal Emitter::broadcastTo(const SVal &v, ArrayRef<int64_t> shape, Location l) {
  if (v.shape() == shape)
    return v;
  SVal s = v;
  if (v.shape().size() < shape.size()) {
    SmallVector<int64_t> padded(shape.size() - v.shape().size(), 1);
    padded.append(v.shape().begin(), v.shape().end());
    s = reshapeTile(v, padded, l);
  }
  if (s.shape() == shape)
    return s;
  return SVal::typed(
      tl::BroadcastOp::create(b, l, tileType(shape, s.dtype), s.value),
      s.dtype);
}

std::optional<DType> Emitter::joinDTypes(ArrayRef<SVal> ops) {
  std::optional<DType> typed;
  for (const SVal &v : ops)
    if (v.isTyped())
      typed = typed ? promoteTyped(*typed, v.dtype) : v.dtype;
  if (typed) {
    DType t = *typed;
    for (const SVal &v : ops)
      if (v.isConst())
        t = promoteTyped(t, weakJoin(v.cval, t));
    return t;
  }
  return std::nullopt;
}

bool Emitter::unify(SmallVectorImpl<SVal> &ops, DType t, Location l,
                    SourceLoc sl) {
  SmallVector<int64_t> shape;
  bool anyTile = false;
  for (const SVal &v : ops) {
    if (!v.isTile())
      continue;
    if (!anyTile) {
      shape.assign(v.shape().begin(), v.shape().end());
      anyTile = true;
      continue;
    }
    SmallVector<int64_t> out;
    if (!broadcastShapes(shape, v.shape(), out)) {
      error(sl, "cannot broadcast tile shapes " + shapeText(shape) + " and " +
                    shapeText(v.shape()));
      return false;
    }
    shape = out;
  }
  for (SVal &v : ops) {
    if (anyTile)
      v = toTile(v, shape, t, l);
    else
      v = castTo(v, t, l);
    if (!v.ok())
      return false;
  }
  return true;
}

} // namespace tessera::sema::detail
