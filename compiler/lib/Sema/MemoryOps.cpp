//===- MemoryOps.cpp - Loads, stores and atomics --------------------------===//
//
// tile.load / tile.store in their block (`offsets=`, `shape=`) and
// gather/scatter (`index=`) forms, with masks and `other`, and the atomics on
// one tensor element.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/STLExtras.h"

namespace tessera::sema::detail {

SVal Emitter::emitLoad(const CallExpr &e, std::vector<SVal> &args, KwArgs &kw) {
  Location l = loc(e.loc());
  auto take = [&](const char *name, size_t pos) {
    return takeArg(args, kw, name, pos);
  };
  if (args.empty() || args[0].kind != SVal::Kind::Tensor)
    return error(e.loc(), "tile.load needs a global tensor as its first "
                          "argument" +
                              (args.empty() ? std::string()
                                            : ", got " + describe(args[0])));
  SVal T = args[0];
  auto memrefType = cast<MemRefType>(T.value.getType());
  int64_t rank = memrefType.getRank();
  auto offsets = take("offsets", 1);
  auto shapeV = take("shape", 2);
  auto index = take("index", 99);
  auto mask = take("mask", 99);
  auto other = take("other", 99);
  if (!kw.empty())
    return error(kw.begin()->second.second,
                 "tile.load has no argument '" + kw.begin()->first + "'");
  DType dt = T.dtype;
  DType st = dt == DType::Bool ? DType::I8 : dt;
  SmallVector<int64_t> shape;
  SmallVector<Value> idx;
  bool gather = index.has_value();
  if (gather) {
    if (offsets || shapeV)
      return error(e.loc(), "tile.load takes either index= or offsets=/shape=");
    std::vector<SVal> tiles = tupleItems(*index);
    if ((int64_t)tiles.size() != rank)
      return error(e.loc(), "tile.load: index= needs " + std::to_string(rank) +
                                " index tile(s), one per dimension");
    for (auto &t : tiles)
      if (!t.isTile() || isFloatT(t.dtype))
        return error(e.loc(), "tile.load: indices must be integer tiles, got " +
                                  describe(t));
    SmallVector<SVal> ops(tiles.begin(), tiles.end());
    DType it = DType::I32;
    for (auto &t : tiles)
      if (t.dtype == DType::I64)
        it = DType::I64;
    if (!unify(ops, it, l, e.loc()))
      return SVal::invalid();
    shape.assign(ops[0].shape().begin(), ops[0].shape().end());
    for (auto &o : ops)
      idx.push_back(o.value);
  } else {
    if (!offsets || !shapeV)
      return error(e.loc(), "tile.load needs offsets=(...) and shape=(...) "
                            "(or index=(...) for a gather)");
    auto s = constShape(*shapeV, e.loc(), "tile.load shape");
    if (!s)
      return SVal::invalid();
    shape.assign(s->begin(), s->end());
    std::vector<SVal> offs = tupleItems(*offsets);
    if ((int64_t)offs.size() != rank || (int64_t)shape.size() != rank)
      return error(e.loc(), "tile.load: tensor has rank " +
                                std::to_string(rank) + " but offsets has " +
                                std::to_string(offs.size()) +
                                " and shape has " +
                                std::to_string(shape.size()) + " entries");
    if (!indexValues(offs, e.loc(), idx))
      return SVal::invalid();
  }
  Value maskV, otherV;
  bool packed = isPackedDType(dt);
  if (mask && !(mask->isConst() && mask->cval.isNone())) {
    SVal m = *mask;
    if (m.isConst() || m.kind == SVal::Kind::Scalar)
      m = toTile(m, shape, DType::Bool, l);
    else if (m.isTile()) {
      if (m.dtype != DType::Bool)
        return error(e.loc(), "tile.load: mask must be a boolean tile, got " +
                                  describe(m));
      SmallVector<int64_t> out;
      if (!broadcastShapes(m.shape(), shape, out) ||
          ArrayRef<int64_t>(out) != ArrayRef<int64_t>(shape))
        return error(e.loc(), "tile.load: mask shape " + shapeText(m.shape()) +
                                  " does not match the block shape " +
                                  shapeText(shape));
      m = broadcastTo(m, shape, l);
    } else
      return error(e.loc(), "tile.load: bad mask " + describe(m));
    maskV = m.value;
  }
  if (packed) {
    if (other && other->isConst() && other->cval.isNone())
      other.reset();
    if (other && !other->isConst() && other->kind != SVal::Kind::Scalar)
      return error(e.loc(), "tile.load: other= must be a scalar, got " +
                                describe(*other));
    return emitPackedLoad(T, shape, idx, gather, maskV, other, l);
  }
  if (other && !(other->isConst() && other->cval.isNone())) {
    if (!other->isConst() && other->kind != SVal::Kind::Scalar)
      return error(e.loc(), "tile.load: other= must be a scalar, got " +
                                describe(*other));
    // A constant the element type cannot hold (e.g. -inf in fp8_e4m3,
    // which has no infinity) loads as NaN: say so, the kernel is almost
    // certainly wrong for that type.
    if (other->isConst() && other->cval.isNumber() && isFloatDType(dt)) {
      double v = other->cval.asDouble();
      uint8_t stored[8] = {0};
      storeFromDouble(stored, dt, 0, v);
      if (!std::isnan(v) && std::isnan(loadAsDouble(stored, dt, 0))) {
        std::string text =
            std::isinf(v) ? (v < 0 ? "-inf" : "inf") : std::to_string(v);
        diags.warning(e.loc(), "tile.load: other=" + text +
                                   " is not representable in " + dtypeName(dt) +
                                   " and loads as NaN; mask after converting "
                                   "to f32 instead (tile.where)");
      }
    }
    otherV = castTo(*other, dt, l).value;
    if (dt == DType::Bool)
      otherV = castValue(otherV, DType::Bool, DType::I8, l);
  }
  auto type = RankedTensorType::get(shape, storageType(st));
  Value r;
  if (gather)
    r = tl::GatherOp::create(b, l, type, T.value, idx, maskV, otherV);
  else
    r = tl::LoadOp::create(b, l, type, T.value, idx, maskV, otherV);
  if (dt == DType::Bool)
    return SVal::typed(castValue(r, DType::I8, DType::Bool, l), DType::Bool);
  return SVal::typed(r, dt);
}

SVal Emitter::emitPackedLoad(const SVal &T, ArrayRef<int64_t> shape,
                             ArrayRef<Value> idx, bool gather, Value mask,
                             std::optional<SVal> other, Location l) {
  // Element positions -> bit positions in the tensor's bytes -> one byte
  // (fp4) or two (fp6, when the code crosses a byte) gathered per element
  // -> the code -> its value, computed exactly in f32 and narrowed to f16
  // (every fp6/fp4 value is an f16). The storage layout is the one
  // tessera::storageBytes documents: element p at bits [p*w, p*w + w).
  const DType dt = T.dtype;
  const int64_t w = dtypeBits(dt);
  const int manBits = dt == DType::F6E2M3 ? 3 : dt == DType::F6E3M2 ? 2 : 1;
  const int expBits = int(w) - 1 - manBits;
  const int bias = (1 << (expBits - 1)) - 1;
  auto memrefType = cast<MemRefType>(T.value.getType());
  const int64_t rank = memrefType.getRank();
  auto i64 = [&](int64_t v) { // an i64 tile
    return materialize(SVal::constant(ConstValue::integer(v)), DType::I64,
                       shape, l);
  };
  auto i32 = [&](int64_t v) {
    return materialize(SVal::constant(ConstValue::integer(v)), DType::I32,
                       shape, l);
  };
  auto scalarTile = [&](Value index) { // an index scalar as an i64 tile
    Value v = arith::IndexCastOp::create(b, l, b.getI64Type(), index);
    return toTile(SVal::typed(v, DType::I64), shape, DType::I64, l).value;
  };
  auto meta = memref::ExtractStridedMetadataOp::create(b, l, T.value);
  Value inBounds = mask, position;
  for (int64_t d = 0; d < rank; ++d) {
    Value pos;
    if (gather) {
      Value g = idx[d];
      pos = cast<RankedTensorType>(g.getType()).getElementType().isInteger(64)
                ? g
                : castValue(g, DType::I32, DType::I64, l);
    } else {
      Value along = castValue(positionsAlong(shape, d, l).value, DType::I32,
                              DType::I64, l);
      Value off =
          toTile(SVal::typed(idx[d], DType::I64), shape, DType::I64, l).value;
      pos = arith::AddIOp::create(b, l, off, along);
    }
    Value size = scalarTile(meta.getSizes()[d]);
    Value stride = scalarTile(meta.getStrides()[d]);
    Value ok = arith::AndIOp::create(
        b, l,
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, pos, i64(0)),
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, pos, size));
    inBounds = inBounds ? arith::AndIOp::create(b, l, inBounds, ok) : ok;
    Value term = arith::MulIOp::create(b, l, pos, stride);
    position = position ? arith::AddIOp::create(b, l, position, term) : term;
  }
  if (!inBounds)
    inBounds = materialize(SVal::constant(ConstValue::boolean(true)),
                           DType::Bool, shape, l);
  position = arith::SelectOp::create(b, l, inBounds, position, i64(0));
  // The tensor's bytes as a 1-D view: enough for its last element (the
  // extent of an empty tensor is not used: no element is in bounds).
  Value one = arith::ConstantIndexOp::create(b, l, 1);
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value span = one;
  for (int64_t d = 0; d < rank; ++d)
    span = arith::AddIOp::create(
        b, l, span,
        arith::MulIOp::create(
            b, l,
            arith::MaxSIOp::create(
                b, l, arith::SubIOp::create(b, l, meta.getSizes()[d], one),
                zero),
            meta.getStrides()[d]));
  Value nbytes = arith::DivUIOp::create(
      b, l,
      arith::AddIOp::create(
          b, l,
          arith::MulIOp::create(b, l, span,
                                arith::ConstantIndexOp::create(b, l, w)),
          arith::ConstantIndexOp::create(b, l, 7)),
      arith::ConstantIndexOp::create(b, l, 8));
  auto byteType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
  Value bytes = memref::ReinterpretCastOp::create(
      b, l, byteType, T.value, b.getIndexAttr(0),
      ArrayRef<OpFoldResult>{nbytes},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  Value bit = arith::MulIOp::create(b, l, position, i64(w));
  Value byteAt = arith::ShRUIOp::create(b, l, bit, i64(3));
  Value shift = castValue(arith::AndIOp::create(b, l, bit, i64(7)), DType::I64,
                          DType::I32, l);
  auto byteTile = RankedTensorType::get(shape, b.getI8Type());
  auto i32Tile = RankedTensorType::get(shape, b.getI32Type());
  Value zero8 = arith::ConstantIntOp::create(b, l, b.getI8Type(), 0);
  auto gatherByte = [&](Value at, Value m) {
    Value g =
        tl::GatherOp::create(b, l, byteTile, bytes, ValueRange{at}, m, zero8);
    return arith::ExtUIOp::create(b, l, i32Tile, g).getResult();
  };
  Value word = gatherByte(byteAt, inBounds);
  if (w == 6) { // a code crosses into the next byte when it starts past bit 2
    Value crosses = arith::AndIOp::create(
        b, l, inBounds,
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt, shift, i32(2)));
    Value next =
        gatherByte(arith::AddIOp::create(b, l, byteAt, i64(1)), crosses);
    word = arith::OrIOp::create(b, l, word,
                                arith::ShLIOp::create(b, l, next, i32(8)));
  }
  Value code = arith::AndIOp::create(
      b, l, arith::ShRUIOp::create(b, l, word, shift), i32((1 << w) - 1));
  Value man = arith::AndIOp::create(b, l, code, i32((1 << manBits) - 1));
  Value expField = arith::AndIOp::create(
      b, l, arith::ShRUIOp::create(b, l, code, i32(manBits)),
      i32((1 << expBits) - 1));
  Value negative = arith::CmpIOp::create(
      b, l, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, l, code, i32(1 << (w - 1))), i32(0));
  Value isSub =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, expField, i32(0));
  Value sig = arith::SelectOp::create(
      b, l, isSub, man, arith::OrIOp::create(b, l, man, i32(1 << manBits)));
  // The significand's weight, 2^(max(e, 1) - bias - manBits), picked by
  // the exponent field (at most 8 values).
  auto f32 = [&](double v) {
    return materialize(SVal::constant(ConstValue::floating(v)), DType::F32,
                       shape, l);
  };
  Value scale = f32(std::ldexp(1.0, 1 - bias - manBits));
  for (int e = 2; e < (1 << expBits); ++e)
    scale = arith::SelectOp::create(
        b, l,
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, expField, i32(e)),
        f32(std::ldexp(1.0, e - bias - manBits)), scale);
  auto f32Tile = RankedTensorType::get(shape, b.getF32Type());
  Value mag = arith::MulFOp::create(
      b, l, arith::UIToFPOp::create(b, l, f32Tile, sig), scale);
  Value value = arith::SelectOp::create(b, l, negative,
                                        arith::NegFOp::create(b, l, mag), mag);
  SVal fill = other ? toTile(*other, shape, DType::F32, l)
                    : SVal::typed(f32(0.0), DType::F32);
  if (!fill.ok())
    return fill;
  value = arith::SelectOp::create(b, l, inBounds, value, fill.value);
  return SVal::typed(castValue(value, DType::F32, DType::F16, l), DType::F16);
}

SVal Emitter::emitStore(const CallExpr &e, std::vector<SVal> &args,
                        KwArgs &kw) {
  Location l = loc(e.loc());
  auto take = [&](const char *name, size_t pos) {
    return takeArg(args, kw, name, pos);
  };
  if (args.empty() || args[0].kind != SVal::Kind::Tensor)
    return error(e.loc(), "tile.store needs a global tensor as its first "
                          "argument" +
                              (args.empty() ? std::string()
                                            : ", got " + describe(args[0])));
  SVal T = args[0];
  int64_t rank = cast<MemRefType>(T.value.getType()).getRank();
  auto value = take("value", 1);
  auto offsets = take("offsets", 2);
  auto index = take("index", 99);
  auto mask = take("mask", 99);
  if (!kw.empty())
    return error(kw.begin()->second.second,
                 "tile.store has no argument '" + kw.begin()->first + "'");
  if (!value)
    return error(e.loc(), "tile.store needs a value");
  if (isPackedDType(T.dtype))
    return error(e.loc(), std::string("tile.store: kernels read ") +
                              dtypeName(T.dtype) +
                              " tensors but do not write them (store the "
                              "result in f16, bf16 or f32)");
  if (!value->isTile())
    return error(e.loc(), "tile.store needs a tile value, got " +
                              describe(*value) +
                              " (use tile.full to store a constant block)");
  SVal v = castTo(*value, T.dtype, l);
  SmallVector<int64_t> shape(v.shape().begin(), v.shape().end());
  SmallVector<Value> idx;
  bool scatter = index.has_value();
  if (scatter) {
    if (offsets)
      return error(e.loc(), "tile.store takes either index= or offsets=");
    std::vector<SVal> tiles = tupleItems(*index);
    if ((int64_t)tiles.size() != rank)
      return error(e.loc(), "tile.store: index= needs " + std::to_string(rank) +
                                " index tile(s)");
    for (auto &t : tiles) {
      if (!t.isTile() || isFloatT(t.dtype))
        return error(e.loc(), "tile.store: indices must be integer tiles");
      SVal bt = broadcastTo(t, shape, l);
      if (bt.shape() != ArrayRef<int64_t>(shape))
        return error(e.loc(), "tile.store: index shape does not match value");
      idx.push_back(bt.value);
    }
  } else {
    if (!offsets)
      return error(e.loc(), "tile.store needs offsets=(...) or index=(...)");
    std::vector<SVal> offs = tupleItems(*offsets);
    if ((int64_t)offs.size() != rank || (int64_t)shape.size() != rank)
      return error(e.loc(), "tile.store: tensor has rank " +
                                std::to_string(rank) + " but offsets has " +
                                std::to_string(offs.size()) +
                                " entries and the value has rank " +
                                std::to_string(shape.size()));
    if (!indexValues(offs, e.loc(), idx))
      return SVal::invalid();
  }
  Value maskV;
  if (mask && !(mask->isConst() && mask->cval.isNone())) {
    SVal m = *mask;
    if (m.isTile() && m.dtype != DType::Bool)
      return error(e.loc(), "tile.store: mask must be a boolean tile");
    if (m.isTile()) {
      SmallVector<int64_t> out;
      if (!broadcastShapes(m.shape(), shape, out) ||
          ArrayRef<int64_t>(out) != ArrayRef<int64_t>(shape))
        return error(e.loc(), "tile.store: mask shape " + shapeText(m.shape()) +
                                  " does not match the value shape " +
                                  shapeText(shape));
    }
    m = toTile(m, shape, DType::Bool, l);
    if (!m.ok())
      return m;
    maskV = m.value;
  }
  Value sv = v.value;
  if (T.dtype == DType::Bool)
    sv = castValue(sv, DType::Bool, DType::I8, l);
  if (scatter)
    tl::ScatterOp::create(b, l, sv, T.value, idx, maskV);
  else
    tl::StoreOp::create(b, l, sv, T.value, idx, maskV);
  return SVal::constant(ConstValue::none());
}

SVal lowerLoad(Emitter &em, BuiltinCall &call) {
  return em.emitLoad(call.expr, call.args, call.kwargs);
}

SVal lowerStore(Emitter &em, BuiltinCall &call) {
  return em.emitStore(call.expr, call.args, call.kwargs);
}

namespace {
/// The tile-wide form of the atomics: `values` (a tile, or a scalar for
/// every index) go to `tensor` at `indices` (per dimension a tile of the
/// values' shape or a scalar), where `mask` (a bool tile, optional) holds.
/// A loop over the elements: on a GPU one thread of the block runs it.
SVal emitTileAtomic(Emitter &em, BuiltinCall &call, const SVal &tensor,
                    const std::vector<SVal> &indices, const SVal &values,
                    const std::optional<SVal> &mask, tl::AtomicKind kind) {
  OpBuilder &b = em.b;
  Location l = call.l;
  SmallVector<int64_t> shape;
  auto take = [&](const SVal &v) {
    if (v.isTile() && shape.empty())
      shape.assign(v.shape().begin(), v.shape().end());
  };
  take(values);
  for (const SVal &o : indices)
    take(o);
  if (mask)
    take(*mask);
  if (values.isTile() && values.shape() != ArrayRef<int64_t>(shape))
    return call.error(call.name + "(): the values have shape " +
                      shapeText(values.shape()) + ", the indices " +
                      shapeText(shape));
  for (const SVal &o : indices) {
    if (o.isTile() && o.shape() != ArrayRef<int64_t>(shape))
      return call.error(call.name + "(): index tiles of shapes " +
                        shapeText(o.shape()) + " and " + shapeText(shape) +
                        " differ");
    if ((o.isTile() || o.kind == SVal::Kind::Scalar) && isFloatT(o.dtype))
      return call.error(call.name + "(): indices must be integers, got " +
                        describe(o));
  }
  if (mask && (!mask->isTile() || mask->dtype != DType::Bool ||
               mask->shape() != ArrayRef<int64_t>(shape)))
    return call.error(call.name + "(): the mask must be a bool tile of shape " +
                      shapeText(shape) + ", got " + describe(*mask));
  DType dt = tensor.dtype;
  SVal vals = em.toTile(values, shape, dt, l);
  if (!vals.ok())
    return vals;
  std::vector<Value> idxTiles;
  for (const SVal &o : indices) {
    SVal t = em.toTile(o, shape, DType::I64, l);
    if (!t.ok())
      return t;
    idxTiles.push_back(t.value);
  }
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  auto c = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, l, v).getResult();
  };
  auto loop = scf::ForOp::create(b, l, c(0), c(total), c(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value rest = loop.getInductionVar();
  SmallVector<Value> at(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    at[d] = arith::RemUIOp::create(b, l, rest, c(shape[d]));
    rest = arith::DivUIOp::create(b, l, rest, c(shape[d]));
  }
  if (mask) {
    Value m = tensor::ExtractOp::create(b, l, mask->value, at);
    auto ifOp = scf::IfOp::create(b, l, TypeRange{}, m, false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  }
  Value v = tensor::ExtractOp::create(b, l, vals.value, at);
  SmallVector<Value> idx;
  for (Value t : idxTiles)
    idx.push_back(tensor::ExtractOp::create(b, l, t, at));
  tl::AtomicRMWOp::create(b, l, tl::AtomicKindAttr::get(b.getContext(), kind),
                          v, tensor.value, idx);
  return SVal::constant(ConstValue::none());
}
} // namespace

SVal lowerAtomic(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  SourceLoc sl = call.sl;
  std::vector<SVal> &all = call.args;
  const std::string &name = call.name;
  auto valK = call.kwarg("value");
  auto idxK = call.kwarg("index");
  auto maskK = call.kwarg("mask");
  if (!call.noKwargs())
    return SVal::invalid();
  std::vector<SVal> a = all;
  if (idxK)
    a.insert(a.begin() + std::min<size_t>(1, a.size()), *idxK);
  if (valK)
    a.push_back(*valK);
  // `tile.atomic_add(T, value)`: element 0 (CUDA's atomicAdd(ptr, v) on the
  // array's first element).
  if (a.size() == 2 && a[0].kind == SVal::Kind::Tensor) {
    int64_t rank = cast<MemRefType>(a[0].value.getType()).getRank();
    std::vector<ConstValue> zeros(size_t(rank), ConstValue::integer(0));
    a.insert(a.begin() + 1, SVal::constant(ConstValue::tuple(zeros)));
  }
  if (a.size() != 3)
    return call.error(name + "(tensor, index, value) takes 3 arguments");
  if (a[0].kind != SVal::Kind::Tensor)
    return call.error(name +
                      "() needs a global tensor or a shared array, "
                      "got " +
                      describe(a[0]));
  DType dt = a[0].dtype;
  if (dt != DType::F32 && dt != DType::I32 && dt != DType::I64)
    return call.error(name + "() supports f32, i32 and i64 tensors, not " +
                      std::string(dtypeName(dt)));
  std::vector<SVal> offs = tupleItems(a[1]);
  int64_t rank = cast<MemRefType>(a[0].value.getType()).getRank();
  if ((int64_t)offs.size() != rank)
    return call.error(name + "(): the index needs " + std::to_string(rank) +
                      " entries");
  tl::AtomicKind kind = name == "atomic_add"   ? tl::AtomicKind::add
                        : name == "atomic_max" ? tl::AtomicKind::max
                                               : tl::AtomicKind::min;
  // Tile-wide: one update per element of the value tile, at the element's
  // index (a tile of the same shape per tensor dimension, or a scalar).
  if (a[2].isTile() ||
      llvm::any_of(offs, [](const SVal &o) { return o.isTile(); }) || maskK)
    return emitTileAtomic(em, call, a[0], offs, a[2], maskK, kind);
  SmallVector<Value> idx;
  if (!em.indexValues(offs, sl, idx))
    return SVal::invalid();
  if (!a[2].isConst() && !a[2].isTyped())
    return call.error(name + "(): bad value " + describe(a[2]));
  SVal v = em.castTo(a[2], dt, l);
  tl::AtomicRMWOp::create(b, l,
                          tl::AtomicKindAttr::get(em.b.getContext(), kind),
                          v.value, a[0].value, idx);
  return SVal::constant(ConstValue::none());
}

//===----------------------------------------------------------------------===//
// Element access (SIMT programs)
//===----------------------------------------------------------------------===//

bool Emitter::elementIndices(const SVal &t, const SubscriptExpr &e,
                             SmallVectorImpl<Value> &out) {
  auto type = cast<MemRefType>(t.value.getType());
  Location l = loc(e.loc());
  if (isPackedDType(t.dtype)) {
    error(e.loc(), std::string("elements of a ") + dtypeName(t.dtype) +
                       " tensor are not accessed one at a time: read it "
                       "with tile.load in a tile program");
    return false;
  }
  if (int64_t(e.indices.size()) != type.getRank()) {
    error(e.loc(), "an element of a " + describe(t) + " of rank " +
                       std::to_string(type.getRank()) + " takes " +
                       std::to_string(type.getRank()) + " indices, got " +
                       std::to_string(e.indices.size()));
    return false;
  }
  for (const ExprPtr &ix : e.indices) {
    if (isa<SliceExpr>(ix.get()) || isa<NoneExpr>(ix.get())) {
      error(ix->loc(), "SIMT programs access one element at a time: "
                       "slices and None are not supported");
      return false;
    }
    SVal iv = emit(*ix);
    if (!iv.ok())
      return false;
    if (!(iv.isConst() && (iv.cval.isInt() || iv.cval.isBool())) &&
        !(iv.kind == SVal::Kind::Scalar && !isFloatT(iv.dtype))) {
      error(ix->loc(),
            "an element index must be an integer, got " + describe(iv));
      return false;
    }
    if (iv.isConst() && iv.cval.isInt() && iv.cval.getInt() < 0) {
      error(ix->loc(), "element index " + std::to_string(iv.cval.getInt()) +
                           " is negative (SIMT element access does not "
                           "wrap around)");
      return false;
    }
    Value x = indexValue(iv, ix->loc());
    if (!x)
      return false;
    out.push_back(arith::IndexCastOp::create(b, l, b.getIndexType(), x));
  }
  return true;
}

SVal Emitter::emitElementRead(const SVal &t, const SubscriptExpr &e) {
  SmallVector<Value> idx;
  if (!elementIndices(t, e, idx))
    return SVal::invalid();
  Location l = loc(e.loc());
  Value v = memref::LoadOp::create(b, l, t.value, idx);
  if (t.dtype == DType::Bool)
    v = arith::CmpIOp::create(
        b, l, arith::CmpIPredicate::ne, v,
        arith::ConstantIntOp::create(b, l, b.getI8Type(), 0));
  return SVal::typed(v, t.dtype);
}

void Emitter::emitElementStore(const SVal &t, const SubscriptExpr &e, SVal v,
                               SourceLoc sl) {
  if (v.isTile() || (!v.isConst() && !v.isTyped())) {
    error(sl, "an element store takes a scalar, got " + describe(v));
    return;
  }
  SmallVector<Value> idx;
  if (!elementIndices(t, e, idx))
    return;
  Location l = loc(sl);
  SVal c = castTo(v, t.dtype, l);
  if (!c.ok())
    return;
  Value x = c.value;
  if (t.dtype == DType::Bool)
    x = arith::ExtUIOp::create(b, l, b.getI8Type(), x);
  memref::StoreOp::create(b, l, x, t.value, idx);
}

} // namespace tessera::sema::detail
