//===- MLIRGen.cpp - Tile language to tile dialect ------------------------===//
//
// Walks a kernel body once per specialisation. Every expression evaluates to
// an SVal: a compile-time constant (folded on the spot, Python semantics), a
// typed run-time scalar, a tile (static-shape tensor value), a global tensor
// (kernel argument), or one of the callable/namespace values. Constants are
// "weak": they take the dtype of the typed operand they meet.
//
//===----------------------------------------------------------------------===//

#include "tessera/Sema/MLIRGen.h"

#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SaveAndRestore.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>

using namespace mlir;
using namespace ::tessera;
using namespace ::tessera::sema;
using namespace ::tessera::ast;
namespace tl = mlir::tessera::tile;

namespace {

constexpr int64_t kMaxTileElements = int64_t(1) << 22;
/// Statements a kernel may emit, counting each unrolled iteration and each
/// inlined helper call separately.
constexpr int64_t kMaxEmittedStatements = int64_t(1) << 16;

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

struct SVal {
  enum class Kind {
    Invalid,   ///< An error was reported; propagate silently.
    Const,     ///< Compile-time constant (weakly typed).
    Scalar,    ///< Run-time scalar of `dtype`.
    Tile,      ///< Static-shape tensor value of `dtype`.
    Tensor,    ///< Global tensor (kernel argument).
    Namespace, ///< `tile`, `tessera`.
    Builtin,   ///< A callable builtin: `name`.
    Method,    ///< A bound method `name` of `self[0]`.
    Shape,     ///< `T.shape` of a tensor or tile: `elems`.
    Tuple,     ///< A tuple of values: `elems`.
    Helper,    ///< A module-level helper function.
  };
  Kind kind = Kind::Invalid;
  ConstValue cval;
  Value value;
  DType dtype = DType::F32;
  std::string name;
  std::vector<SVal> elems;
  const FunctionDef *helper = nullptr;
  int param = -1; ///< Tensor: index into KernelInfo::params.

  static SVal invalid() { return SVal(); }
  static SVal constant(ConstValue c) {
    SVal v;
    v.kind = Kind::Const;
    v.cval = std::move(c);
    return v;
  }
  static SVal typed(Value value, DType dt) {
    SVal v;
    v.kind = isa<RankedTensorType>(value.getType()) ? Kind::Tile : Kind::Scalar;
    v.value = value;
    v.dtype = dt;
    return v;
  }
  static SVal named(Kind k, std::string name) {
    SVal v;
    v.kind = k;
    v.name = std::move(name);
    return v;
  }
  static SVal tuple(std::vector<SVal> elems, Kind k = Kind::Tuple) {
    SVal v;
    v.kind = k;
    v.elems = std::move(elems);
    return v;
  }

  bool ok() const { return kind != Kind::Invalid; }
  bool isConst() const { return kind == Kind::Const; }
  bool isTyped() const { return kind == Kind::Scalar || kind == Kind::Tile; }
  bool isTile() const { return kind == Kind::Tile; }
  ArrayRef<int64_t> shape() const {
    return cast<RankedTensorType>(value.getType()).getShape();
  }
};

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
    return "global tensor";
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

using KwArgs = std::map<std::string, std::pair<SVal, SourceLoc>>;

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

bool isFloatT(DType t) { return isFloatDType(t); }
bool isFp8(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; }
int intRank(DType t) {
  switch (t) {
  case DType::Bool:
    return 0;
  case DType::I8:
    return 1;
  case DType::I32:
    return 2;
  case DType::I64:
    return 3;
  default:
    return -1;
  }
}

/// Promotion of two typed operands.
DType promoteTyped(DType a, DType b) {
  if (a == b)
    return a;
  if (a == DType::Bool)
    return b;
  if (b == DType::Bool)
    return a;
  bool fa = isFloatT(a), fb = isFloatT(b);
  if (fa && !fb)
    return a;
  if (fb && !fa)
    return b;
  if (!fa && !fb)
    return intRank(a) >= intRank(b) ? a : b;
  if (a == DType::F32 || b == DType::F32)
    return DType::F32;
  bool a16 = a == DType::F16 || a == DType::BF16;
  bool b16 = b == DType::F16 || b == DType::BF16;
  if (a16 && b16)
    return DType::F32; // f16 + bf16
  if (a16)
    return a;
  if (b16)
    return b;
  return DType::F32; // e4m3 + e5m2
}

/// The dtype a weak constant takes next to a typed operand of dtype `t`.
DType weakJoin(const ConstValue &c, DType t) {
  if (c.isFloat())
    return isFloatT(t) ? t : DType::F32;
  if (c.isInt())
    return t == DType::Bool ? DType::I64 : t;
  return t; // bool constant
}

/// Default dtype of a constant materialised on its own.
DType constDType(const ConstValue &c) {
  if (c.isBool())
    return DType::Bool;
  if (c.isInt())
    return DType::I64;
  return DType::F32;
}

//===----------------------------------------------------------------------===//
// The emitter
//===----------------------------------------------------------------------===//

class Emitter {
public:
  Emitter(MLIRContext &ctx, const ast::Module &module, const KernelDecl &decl,
          const ConstEnv &env, const Specialization &spec,
          const SourceManager &sm, ::tessera::DiagnosticEngine &diags)
      : ctx(ctx), module(module), decl(decl), info(decl.info), env(env),
        spec(spec), sm(sm), diags(diags), b(&ctx) {}

  EmittedKernel run();

private:
  // A stack of statement lists still to run (continuations for `return`).
  using Work = std::vector<std::pair<const ast::Block *, size_t>>;
  using Vars = std::map<std::string, SVal, std::less<>>;

  // --- diagnostics and locations
  Location loc(SourceLoc l) {
    if (!l.isValid())
      return UnknownLoc::get(&ctx);
    return FileLineColLoc::get(&ctx, sm.getName(l.file), l.line, l.col);
  }
  SVal error(SourceLoc l, std::string msg) {
    diags.error(l, std::move(msg));
    return SVal::invalid();
  }

  // --- types
  Type scalarType(DType t) {
    switch (t) {
    case DType::F32:
      return b.getF32Type();
    case DType::F16:
      return b.getF16Type();
    case DType::BF16:
      return b.getBF16Type();
    case DType::F8E4M3:
      return b.getType<Float8E4M3FNType>();
    case DType::F8E5M2:
      return b.getType<Float8E5M2Type>();
    case DType::I8:
      return b.getI8Type();
    case DType::I32:
      return b.getI32Type();
    case DType::I64:
      return b.getI64Type();
    case DType::Bool:
      return b.getI1Type();
    }
    return b.getF32Type();
  }
  Type storageType(DType t) {
    return t == DType::Bool ? b.getI8Type() : scalarType(t);
  }
  RankedTensorType tileType(ArrayRef<int64_t> shape, DType t) {
    return RankedTensorType::get(shape, scalarType(t));
  }

  // --- materialisation and casts
  TypedAttr scalarAttr(const ConstValue &c, DType t);
  Value materialize(const SVal &v, DType t, ArrayRef<int64_t> shape,
                    Location l);
  SVal castTo(const SVal &v, DType t, Location l);
  Value castValue(Value v, DType from, DType to, Location l);
  SVal toTile(const SVal &v, ArrayRef<int64_t> shape, DType t, Location l);
  SVal reshapeTile(const SVal &v, ArrayRef<int64_t> shape, Location l);
  bool broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                       SmallVectorImpl<int64_t> &out);
  SVal broadcastTo(const SVal &v, ArrayRef<int64_t> shape, Location l);
  /// Brings typed/const operands to a common dtype and shape.
  bool unify(SmallVectorImpl<SVal> &ops, DType t, Location l, SourceLoc sl);
  std::optional<DType> joinDTypes(ArrayRef<SVal> ops);

  // --- expressions
  SVal emit(const Expr &e);
  SVal emitName(const NameExpr &e);
  SVal emitBinary(BinaryOp op, SVal a, SVal c, SourceLoc sl);
  SVal emitUnary(const UnaryExpr &e);
  SVal emitCompare(CmpOp op, SVal a, SVal c, SourceLoc sl);
  SVal emitCall(const CallExpr &e);
  SVal emitAttribute(const AttributeExpr &e);
  SVal emitSubscript(const SubscriptExpr &e);
  SVal emitBuiltin(const std::string &name, const CallExpr &e,
                   std::vector<SVal> &args, KwArgs &kwargs, const SVal *self);
  SVal emitHelperCall(const FunctionDef &fn, const CallExpr &e,
                      std::vector<SVal> &args, KwArgs &kwargs);
  Value condition(const SVal &v, SourceLoc sl);

  // Builtin helpers.
  std::optional<std::vector<int64_t>> constShape(const SVal &v, SourceLoc sl,
                                                 const char *what);
  std::optional<DType> constDTypeArg(const SVal &v, SourceLoc sl);
  std::optional<int64_t> constInt(const SVal &v, SourceLoc sl,
                                  const char *what);
  Value indexValue(const SVal &v, SourceLoc sl);
  /// indexValue of each element; false after reporting an error.
  bool indexValues(const std::vector<SVal> &vs, SourceLoc sl,
                   SmallVectorImpl<Value> &out);
  SVal emitLoad(const CallExpr &e, std::vector<SVal> &args, KwArgs &kw);
  SVal emitStore(const CallExpr &e, std::vector<SVal> &args, KwArgs &kw);
  SVal emitReduce(tl::ReduceKind kind, const SVal &x,
                  std::optional<int64_t> axis, Location l, SourceLoc sl);
  SVal emitMath(const std::string &fn, const SVal &x, Location l, SourceLoc sl);
  SVal emitDot(const SVal &a, const SVal &bb, const SVal *acc,
               std::optional<DType> accT, Location l, SourceLoc sl);

  // --- statements
  /// Runs `work` to completion. Returns false if the code path ended in a
  /// `return` (nothing after it may run).
  bool emitWork(Work work);
  bool emitStmt(const Stmt &s, Work &rest);
  void assign(const Expr &target, SVal v, SourceLoc sl);
  bool emitIf(const IfStmt &s, Work &rest);
  void emitFor(const ForStmt &s);
  void collectAssigned(const ast::Block &block, std::set<std::string> &out);
  bool containsReturn(const ast::Block &block);

  MLIRContext &ctx;
  /// Whether `/` may be approximate (`afn`); tile.div_rn clears it.
  bool approximateDivision = true;
  const ast::Module &module;
  const KernelDecl &decl;
  const KernelInfo &info;
  ConstEnv env;
  const Specialization &spec;
  const SourceManager &sm;
  ::tessera::DiagnosticEngine &diags;
  OpBuilder b;

  Vars vars;
  /// Names defined on only one path of a run-time if: where.
  std::map<std::string, SourceLoc> partial;
  int loopDepth = 0;
  /// Inlined helper calls in progress (innermost last).
  struct HelperFrame {
    std::optional<SVal> result;
  };
  std::vector<HelperFrame> helpers;
  /// Statements emitted so far (see emitWork).
  int64_t statementsEmitted = 0;
  bool bodyTooLarge = false;
};

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
  static const char *builtins[] = {"range", "min",   "max",         "abs",
                                   "float", "int",   "bool",        "len",
                                   "cdiv",  "print", "static_range"};
  for (const char *bi : builtins)
    if (e.name == bi)
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
  if (e.name == "fp6" || e.name == "fp4" || e.name.rfind("fp6_", 0) == 0 ||
      e.name.rfind("fp4_", 0) == 0)
    return error(e.loc(), "dtype '" + e.name + "' is not supported yet");
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
    if (e.name == "fp6" || e.name == "fp4")
      return error(e.nameLoc, "dtype '" + e.name + "' is not supported yet");
    static const char *known[] = {
        "program_id",  "num_programs", "arange",       "zeros",
        "full",        "ones",         "load",         "store",
        "dot",         "mma",          "sum",          "max",
        "min",         "exp",          "exp2",         "log",
        "log2",        "sqrt",         "rsqrt",        "abs",
        "maximum",     "minimum",      "where",        "reshape",
        "trans",       "cast",         "cdiv",         "atomic_add",
        "atomic_max",  "atomic_min",   "static_range", "zeros_like",
        "full_like",   "sigmoid",      "fma",          "broadcast_to",
        "expand_dims", "cos",          "sin",          "tanh",
        "floor",       "ceil",         "div_rn"};
    for (const char *k : known)
      if (e.name == k)
        return SVal::named(SVal::Kind::Builtin, e.name);
    return error(e.nameLoc,
                 "unknown builtin '" + base.name + "." + e.name + "'");
  }
  if (e.name == "shape") {
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
    static const char *methods[] = {"to",  "sum",     "max",
                                    "min", "reshape", "trans"};
    for (const char *m : methods)
      if (e.name == m) {
        SVal v = SVal::named(SVal::Kind::Method, e.name);
        v.elems.push_back(base);
        return v;
      }
  }
  return error(e.nameLoc,
               describe(base) + " has no attribute '" + e.name + "'");
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
    // x[:, None], x[None, :]: insert size-1 dimensions.
    SmallVector<int64_t> shape;
    size_t src = 0;
    for (auto &ix : e.indices) {
      if (auto *s = dyn_cast<SliceExpr>(ix.get())) {
        if (s->lower || s->upper || s->step)
          return error(ix->loc(), "only ':' slices are supported on tiles");
        if (src >= base.shape().size())
          return error(ix->loc(), "too many indices for a tile of rank " +
                                      std::to_string(base.shape().size()));
        shape.push_back(base.shape()[src++]);
      } else if (isa<NoneExpr>(ix.get())) {
        shape.push_back(1);
      } else {
        return error(ix->loc(), "tiles can only be indexed with ':' and None "
                                "(element access is not supported)");
      }
    }
    while (src < base.shape().size())
      shape.push_back(base.shape()[src++]);
    return reshapeTile(base, shape, l);
  }
  if (base.kind == SVal::Kind::Tensor)
    return error(e.loc(), "global tensors are read with tile.load, not []");
  return error(e.loc(), describe(base) + " cannot be indexed");
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
  if (v.isConst() && v.cval.isDType())
    return v.cval.getDType();
  if (v.isConst() && v.cval.isStr())
    if (auto dt = dtypeFromName(v.cval.getStr()))
      return dt;
  error(sl, "expected a dtype, got " + describe(v));
  return std::nullopt;
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

SVal Emitter::emitDot(const SVal &aIn, const SVal &bIn, const SVal *acc,
                      std::optional<DType> accT, Location l, SourceLoc sl) {
  if (!aIn.isTile() || !bIn.isTile() || aIn.shape().size() != 2 ||
      bIn.shape().size() != 2)
    return error(sl, "tile.dot needs two 2-D tiles, got " + describe(aIn) +
                         " and " + describe(bIn));
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

SVal Emitter::emitBuiltin(const std::string &name, const CallExpr &e,
                          std::vector<SVal> &args, KwArgs &kw,
                          const SVal *self) {
  Location l = loc(e.loc());
  SourceLoc sl = e.loc();
  std::vector<SVal> all;
  if (self)
    all.push_back(*self);
  all.insert(all.end(), args.begin(), args.end());
  auto kwarg = [&](const char *n) -> std::optional<SVal> {
    if (auto it = kw.find(n); it != kw.end()) {
      SVal v = it->second.first;
      kw.erase(it);
      return v;
    }
    return std::nullopt;
  };
  auto arity = [&](size_t lo, size_t hi) {
    if (all.size() < lo || all.size() > hi) {
      error(sl,
            name + "() takes " +
                (lo == hi ? std::to_string(lo)
                          : std::to_string(lo) + " to " + std::to_string(hi)) +
                " positional argument" + (hi == 1 ? "" : "s") + " (" +
                std::to_string(all.size()) + " given)");
      return false;
    }
    return true;
  };
  auto noKwargs = [&]() {
    if (!kw.empty()) {
      error(kw.begin()->second.second,
            name + "() has no argument '" + kw.begin()->first + "'");
      return false;
    }
    return true;
  };

  if (name == "load")
    return emitLoad(e, all, kw);
  if (name == "store")
    return emitStore(e, all, kw);

  if (name == "program_id" || name == "num_programs") {
    auto axisV = kwarg("axis");
    if (axisV)
      all.push_back(*axisV);
    if (!noKwargs() || !arity(1, 1))
      return SVal::invalid();
    auto axis = constInt(all[0], sl, "axis");
    if (!axis)
      return SVal::invalid();
    if (*axis < 0 || *axis > 2)
      return error(sl, name + "() axis must be 0, 1 or 2, got " +
                           std::to_string(*axis));
    Value r =
        name == "program_id"
            ? tl::ProgramIdOp::create(b, l, b.getI64Type(), *axis).getResult()
            : tl::NumProgramsOp::create(b, l, b.getI64Type(), *axis)
                  .getResult();
    return SVal::typed(r, DType::I64);
  }
  if (name == "arange") {
    if (!noKwargs() || !arity(1, 2))
      return SVal::invalid();
    auto lo = constInt(all.size() == 2 ? all[0]
                                       : SVal::constant(ConstValue::integer(0)),
                       sl, "arange start");
    auto hi = constInt(all.back(), sl, "arange end");
    if (!lo || !hi)
      return SVal::invalid();
    if (*hi <= *lo)
      return error(sl, "tile.arange(" + std::to_string(*lo) + ", " +
                           std::to_string(*hi) + ") is empty");
    int64_t length = 0;
    if (__builtin_sub_overflow(*hi, *lo, &length) || length > kMaxTileElements)
      return error(sl, "tile.arange is too long");
    auto type = tileType({*hi - *lo}, DType::I32);
    return SVal::typed(tl::ArangeOp::create(b, l, type, *lo, *hi), DType::I32);
  }
  if (name == "zeros" || name == "ones" || name == "full") {
    auto dtK = kwarg("dtype");
    auto shapeK = kwarg("shape");
    auto valueK = kwarg("value");
    if (!noKwargs())
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
      return error(sl, "tile." + name + "() takes a shape" +
                           (name == "full" ? ", a value" : "") +
                           " and an optional dtype");
    auto shape = constShape(a[0], sl, "shape");
    if (!shape)
      return SVal::invalid();
    SVal value =
        name == "full"
            ? a[1]
            : SVal::constant(ConstValue::integer(name == "ones" ? 1 : 0));
    DType dt = DType::F32;
    if (a.size() == need + 1) {
      auto d = constDTypeArg(a[need], sl);
      if (!d)
        return SVal::invalid();
      dt = *d;
    } else if (value.isTyped()) {
      dt = value.dtype;
    } else if (value.isConst() && value.cval.isBool()) {
      dt = DType::Bool;
    }
    if (!value.isConst() && value.kind != SVal::Kind::Scalar)
      return error(sl,
                   "tile.full value must be a scalar, got " + describe(value));
    if (value.isConst() && !value.cval.isNumber())
      return error(sl,
                   "tile.full value must be a number, got " + describe(value));
    return toTile(value, *shape, dt, l);
  }
  if (name == "zeros_like" || name == "full_like") {
    if (!noKwargs() ||
        !arity(name == "full_like" ? 2 : 1, name == "full_like" ? 2 : 1))
      return SVal::invalid();
    if (!all[0].isTile())
      return error(sl, name + "() needs a tile");
    SVal value =
        name == "full_like" ? all[1] : SVal::constant(ConstValue::integer(0));
    return toTile(value, all[0].shape(), all[0].dtype, l);
  }
  if (name == "dot" || name == "mma") {
    auto accK = kwarg("acc");
    auto accT = kwarg("acc_dtype");
    if (!accT)
      accT = kwarg("out_dtype");
    if (!noKwargs() || !arity(2, 3))
      return SVal::invalid();
    std::optional<SVal> acc =
        all.size() == 3 ? std::optional<SVal>(all[2]) : accK;
    std::optional<DType> at;
    if (accT) {
      at = constDTypeArg(*accT, sl);
      if (!at)
        return SVal::invalid();
    }
    return emitDot(all[0], all[1], acc ? &*acc : nullptr, at, l, sl);
  }
  if (name == "sum" || name == "max" || name == "min") {
    // Python's min/max on scalars.
    if (!self && kw.empty() && all.size() >= 2 &&
        llvm::none_of(all, [](const SVal &v) { return v.isTile(); }) &&
        (name == "max" || name == "min")) {
      SVal acc = all[0];
      for (size_t i = 1; i < all.size(); ++i) {
        if (acc.isConst() && all[i].isConst()) {
          std::string err;
          auto r = foldBuiltinCall(name, {acc.cval, all[i].cval}, &err);
          if (!r)
            return error(sl, err);
          acc = SVal::constant(*r);
          continue;
        }
        SmallVector<SVal> ops{acc, all[i]};
        auto t = joinDTypes(ops);
        if (!t || !unify(ops, *t, l, sl))
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
    if (!self && all.size() == 1 && all[0].isConst() && all[0].cval.isTuple() &&
        name != "sum") {
      std::string err;
      auto r = foldBuiltinCall(name, {all[0].cval}, &err);
      if (!r)
        return error(sl, err);
      return SVal::constant(*r);
    }
    auto axisK = kwarg("axis");
    if (!noKwargs() || !arity(1, 2))
      return SVal::invalid();
    std::optional<SVal> axisV =
        all.size() == 2 ? std::optional<SVal>(all[1]) : axisK;
    std::optional<int64_t> axis;
    if (axisV && !(axisV->isConst() && axisV->cval.isNone())) {
      axis = constInt(*axisV, sl, "axis");
      if (!axis)
        return SVal::invalid();
    }
    tl::ReduceKind kind = name == "sum"   ? tl::ReduceKind::sum
                          : name == "max" ? tl::ReduceKind::max
                                          : tl::ReduceKind::min;
    return emitReduce(kind, all[0], axis, l, sl);
  }
  static const char *mathFns[] = {"exp",   "exp2", "log",    "log2", "sqrt",
                                  "rsqrt", "abs",  "cos",    "sin",  "tanh",
                                  "floor", "ceil", "sigmoid"};
  for (const char *m : mathFns)
    if (name == m) {
      if (!noKwargs() || !arity(1, 1))
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
        else if (name == "floor")
          r = std::floor(x);
        else if (name == "ceil")
          r = std::ceil(x);
        else
          r = 1.0 / (1.0 + std::exp(-x));
        return SVal::constant(ConstValue::floating(r));
      }
      return emitMath(name, all[0], l, sl);
    }
  if (name == "maximum" || name == "minimum") {
    if (!noKwargs() || !arity(2, 2))
      return SVal::invalid();
    for (auto &v : all)
      if (!v.isConst() && !v.isTyped())
        return error(sl,
                     name + "() needs tiles or scalars, got " + describe(v));
    if (all[0].isConst() && all[1].isConst()) {
      std::string err;
      auto r = foldBuiltinCall(name == "maximum" ? "max" : "min",
                               {all[0].cval, all[1].cval}, &err);
      if (!r)
        return error(sl, err);
      return SVal::constant(*r);
    }
    SmallVector<SVal> ops{all[0], all[1]};
    DType t = *joinDTypes(ops);
    if (isFp8(t))
      t = DType::F32;
    if (!unify(ops, t, l, sl))
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
              ? arith::OrIOp::create(b, l, ops[0].value, ops[1].value)
                    .getResult()
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
  if (name == "where") {
    if (!noKwargs() || !arity(3, 3))
      return SVal::invalid();
    for (auto &v : all)
      if (!v.isConst() && !v.isTyped())
        return error(sl, "where() needs tiles or scalars, got " + describe(v));
    SVal c = all[0];
    if (c.isTyped() && c.dtype != DType::Bool)
      c = castTo(c, DType::Bool, l);
    SmallVector<SVal> vals{all[1], all[2]};
    auto t = joinDTypes(vals);
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
        if (anyTile && !broadcastShapes(shape, v.shape(), out))
          return error(sl, "where(): cannot broadcast shapes");
        if (!anyTile)
          shape.assign(v.shape().begin(), v.shape().end());
        else
          shape = out;
        anyTile = true;
      }
    if (!anyTile) {
      if (c.isConst())
        return c.cval.truthy() ? all[1] : all[2];
      SVal x = castTo(all[1], *t, l), y = castTo(all[2], *t, l);
      return SVal::typed(
          arith::SelectOp::create(b, l, c.value, x.value, y.value), *t);
    }
    SVal cm = toTile(c, shape, DType::Bool, l);
    SVal x = toTile(all[1], shape, *t, l), y = toTile(all[2], shape, *t, l);
    if (!cm.ok() || !x.ok() || !y.ok())
      return SVal::invalid();
    return SVal::typed(
        arith::SelectOp::create(b, l, cm.value, x.value, y.value), *t);
  }
  if (name == "reshape") {
    auto shapeK = kwarg("shape");
    if (shapeK)
      all.push_back(*shapeK);
    if (!noKwargs() || !arity(2, 2))
      return SVal::invalid();
    if (!all[0].isTile())
      return error(sl, "reshape() needs a tile, got " + describe(all[0]));
    auto shape = constShape(all[1], sl, "shape");
    if (!shape)
      return SVal::invalid();
    int64_t n1 = 1, n2 = 1;
    for (int64_t d : all[0].shape())
      n1 *= d;
    for (int64_t d : *shape)
      n2 *= d;
    if (n1 != n2)
      return error(sl, "cannot reshape a tile of shape " +
                           shapeText(all[0].shape()) + " to " +
                           shapeText(*shape));
    return reshapeTile(all[0], *shape, l);
  }
  if (name == "broadcast_to") {
    if (!noKwargs() || !arity(2, 2))
      return SVal::invalid();
    auto shape = constShape(all[1], sl, "shape");
    if (!shape)
      return SVal::invalid();
    if (all[0].isTile()) {
      SmallVector<int64_t> out;
      if (!broadcastShapes(all[0].shape(), *shape, out) ||
          ArrayRef<int64_t>(out) != ArrayRef<int64_t>(*shape))
        return error(sl, "cannot broadcast " + shapeText(all[0].shape()) +
                             " to " + shapeText(*shape));
      return broadcastTo(all[0], *shape, l);
    }
    auto t = all[0].isTyped() ? all[0].dtype : constDType(all[0].cval);
    return toTile(all[0], *shape, t, l);
  }
  if (name == "expand_dims") {
    auto axisK = kwarg("axis");
    if (axisK)
      all.push_back(*axisK);
    if (!noKwargs() || !arity(2, 2) || !all[0].isTile())
      return error(sl, "expand_dims(tile, axis)");
    auto ax = constInt(all[1], sl, "axis");
    if (!ax)
      return SVal::invalid();
    SmallVector<int64_t> shape(all[0].shape().begin(), all[0].shape().end());
    int64_t a = *ax < 0 ? *ax + (int64_t)shape.size() + 1 : *ax;
    if (a < 0 || a > (int64_t)shape.size())
      return error(sl, "expand_dims: axis out of range");
    shape.insert(shape.begin() + a, 1);
    return reshapeTile(all[0], shape, l);
  }
  if (name == "trans") {
    auto permK = kwarg("perm");
    if (permK)
      all.push_back(*permK);
    if (!noKwargs() || !arity(1, 2))
      return SVal::invalid();
    if (!all[0].isTile())
      return error(sl, "trans() needs a tile, got " + describe(all[0]));
    int64_t rank = all[0].shape().size();
    SmallVector<int64_t> perm;
    if (all.size() == 2) {
      if (!all[1].isConst() || !all[1].cval.isTuple())
        return error(sl, "trans(): the permutation must be a tuple of "
                         "compile-time integers, got " +
                             describe(all[1]));
      for (auto &c : all[1].cval.getTuple()) {
        if (!c.isInt())
          return error(sl, "trans(): the permutation must be a tuple of "
                           "integers");
        perm.push_back(c.getInt());
      }
    } else {
      for (int64_t i = rank - 1; i >= 0; --i)
        perm.push_back(i);
    }
    if ((int64_t)perm.size() != rank)
      return error(sl,
                   "trans(): permutation must have one entry per dimension");
    SmallVector<int64_t> shape;
    std::vector<bool> seen(rank, false);
    for (int64_t p : perm) {
      if (p < 0 || p >= rank || seen[p])
        return error(sl, "trans(): invalid permutation");
      seen[p] = true;
      shape.push_back(all[0].shape()[p]);
    }
    return SVal::typed(tl::TransOp::create(b, l, tileType(shape, all[0].dtype),
                                           all[0].value,
                                           b.getDenseI64ArrayAttr(perm)),
                       all[0].dtype);
  }
  if (name == "cast" || name == "to") {
    auto dtK = kwarg("dtype");
    if (dtK)
      all.push_back(*dtK);
    if (!noKwargs() || !arity(2, 2))
      return SVal::invalid();
    auto dt = constDTypeArg(all[1], sl);
    if (!dt)
      return SVal::invalid();
    if (all[0].isConst()) {
      if (!all[0].cval.isNumber())
        return error(sl, "cannot cast " + describe(all[0]));
      return castTo(all[0], *dt, l);
    }
    if (!all[0].isTyped())
      return error(sl, "cannot cast " + describe(all[0]));
    return castTo(all[0], *dt, l);
  }
  if (name == "cdiv") {
    if (!noKwargs() || !arity(2, 2))
      return SVal::invalid();
    if (all[0].isConst() && all[1].isConst()) {
      std::string err;
      auto r = foldBuiltinCall("cdiv", {all[0].cval, all[1].cval}, &err);
      if (!r)
        return error(sl, err);
      return SVal::constant(*r);
    }
    SVal num = emitBinary(BinaryOp::Add, all[0], all[1], sl);
    num = emitBinary(BinaryOp::Sub, num, SVal::constant(ConstValue::integer(1)),
                     sl);
    if (!num.ok())
      return num;
    if (num.isTyped() && isFloatT(num.dtype))
      return error(sl, "cdiv() needs integers");
    return emitBinary(BinaryOp::FloorDiv, num, all[1], sl);
  }
  if (name == "atomic_add" || name == "atomic_max" || name == "atomic_min") {
    auto valK = kwarg("value");
    auto idxK = kwarg("index");
    if (!noKwargs())
      return SVal::invalid();
    std::vector<SVal> a = all;
    if (idxK)
      a.insert(a.begin() + std::min<size_t>(1, a.size()), *idxK);
    if (valK)
      a.push_back(*valK);
    if (a.size() != 3)
      return error(sl, name + "(tensor, index, value) takes 3 arguments");
    if (a[0].kind != SVal::Kind::Tensor)
      return error(sl,
                   name + "() needs a global tensor, got " + describe(a[0]));
    DType dt = a[0].dtype;
    if (dt != DType::F32 && dt != DType::I32 && dt != DType::I64)
      return error(sl, name + "() supports f32, i32 and i64 tensors, not " +
                           std::string(dtypeName(dt)));
    std::vector<SVal> offs = tupleItems(a[1]);
    int64_t rank = cast<MemRefType>(a[0].value.getType()).getRank();
    if ((int64_t)offs.size() != rank)
      return error(sl, name + "(): the index needs " + std::to_string(rank) +
                           " entries");
    SmallVector<Value> idx;
    if (!indexValues(offs, sl, idx))
      return SVal::invalid();
    if (a[2].isTile())
      return error(sl, name + "() adds one scalar; reduce the tile first "
                              "(e.g. tile.sum(x))");
    if (!a[2].isConst() && !a[2].isTyped())
      return error(sl, name + "(): bad value " + describe(a[2]));
    SVal v = castTo(a[2], dt, l);
    tl::AtomicKind kind = name == "atomic_add"   ? tl::AtomicKind::add
                          : name == "atomic_max" ? tl::AtomicKind::max
                                                 : tl::AtomicKind::min;
    tl::AtomicRMWOp::create(b, l, tl::AtomicKindAttr::get(&ctx, kind), v.value,
                            a[0].value, idx);
    return SVal::constant(ConstValue::none());
  }
  if (name == "div_rn") {
    if (!noKwargs() || !arity(2, 2))
      return SVal::invalid();
    llvm::SaveAndRestore exact(approximateDivision, false);
    return emitBinary(BinaryOp::Div, all[0], all[1], sl);
  }
  if (name == "fma") {
    if (!noKwargs() || !arity(3, 3))
      return SVal::invalid();
    SVal p = emitBinary(BinaryOp::Mul, all[0], all[1], sl);
    return p.ok() ? emitBinary(BinaryOp::Add, p, all[2], sl) : p;
  }
  // Python builtins.
  if (name == "float" || name == "int" || name == "bool") {
    if (!noKwargs() || !arity(1, 1))
      return SVal::invalid();
    if (all[0].isConst()) {
      std::string err;
      auto r = foldBuiltinCall(name, {all[0].cval}, &err);
      if (!r)
        return error(sl, err);
      return SVal::constant(*r);
    }
    if (all[0].kind != SVal::Kind::Scalar)
      return error(sl, name + "() needs a scalar, got " + describe(all[0]));
    DType t = name == "float" ? DType::F32
              : name == "int" ? DType::I64
                              : DType::Bool;
    return castTo(all[0], t, l);
  }
  if (name == "len") {
    if (!arity(1, 1))
      return SVal::invalid();
    if (all[0].isConst() && all[0].cval.isTuple())
      return SVal::constant(ConstValue::integer(all[0].cval.getTuple().size()));
    if (all[0].isTile())
      return SVal::constant(ConstValue::integer(all[0].shape()[0]));
    return error(sl, "len() of " + describe(all[0]));
  }
  if (name == "print")
    return error(sl, "print() is not supported in kernels");
  if (name == "range" || name == "static_range")
    return error(sl,
                 name + "() can only be used as the iterable of a for loop");
  return error(sl, "unknown builtin '" + name + "'");
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool Emitter::containsReturn(const ast::Block &block) {
  for (auto &s : block) {
    if (isa<ReturnStmt>(s.get()))
      return true;
    if (auto *i = dyn_cast<IfStmt>(s.get()))
      if (containsReturn(i->body) || containsReturn(i->orelse))
        return true;
  }
  return false;
}

void Emitter::collectAssigned(const ast::Block &block,
                              std::set<std::string> &out) {
  std::function<void(const Expr &)> target = [&](const Expr &t) {
    if (auto *n = dyn_cast<NameExpr>(&t))
      out.insert(n->name);
    else if (auto *tu = dyn_cast<TupleExpr>(&t))
      for (auto &x : tu->elts)
        target(*x);
    else if (auto *li = dyn_cast<ListExpr>(&t))
      for (auto &x : li->elts)
        target(*x);
  };
  for (auto &s : block) {
    if (auto *a = dyn_cast<AssignStmt>(s.get()))
      for (auto &t : a->targets)
        target(*t);
    else if (auto *a = dyn_cast<AugAssignStmt>(s.get()))
      target(*a->target);
    else if (auto *a = dyn_cast<AnnAssignStmt>(s.get()))
      target(*a->target);
    else if (auto *i = dyn_cast<IfStmt>(s.get())) {
      collectAssigned(i->body, out);
      collectAssigned(i->orelse, out);
    } else if (auto *f = dyn_cast<ForStmt>(s.get())) {
      target(*f->target);
      collectAssigned(f->body, out);
    }
  }
}

void Emitter::assign(const Expr &target, SVal v, SourceLoc sl) {
  if (auto *n = dyn_cast<NameExpr>(&target)) {
    if (!v.ok()) {
      vars[n->name] = v;
      return;
    }
    if (v.kind == SVal::Kind::Namespace || v.kind == SVal::Kind::Builtin ||
        v.kind == SVal::Kind::Method) {
      vars[n->name] = v;
      return;
    }
    if (info.findParam(n->name) &&
        info.findParam(n->name)->kind == ParamKind::Tensor &&
        v.kind != SVal::Kind::Tensor) {
      error(target.loc(),
            "cannot assign to tensor parameter '" + n->name + "'");
      return;
    }
    vars[n->name] = v;
    partial.erase(n->name);
    return;
  }
  if (isa<TupleExpr>(target) || isa<ListExpr>(target)) {
    const auto &elts = isa<TupleExpr>(target) ? cast<TupleExpr>(target).elts
                                              : cast<ListExpr>(target).elts;
    if (!(v.isConst() && v.cval.isTuple()) && v.kind != SVal::Kind::Tuple) {
      if (v.ok())
        error(sl, "cannot unpack " + describe(v));
      return;
    }
    std::vector<SVal> items = tupleItems(v);
    if (items.size() != elts.size()) {
      error(sl, "cannot unpack " + std::to_string(items.size()) +
                    " values into " + std::to_string(elts.size()) + " names");
      return;
    }
    for (size_t i = 0; i < elts.size(); ++i)
      assign(*elts[i], items[i], sl);
    return;
  }
  if (isa<SubscriptExpr>(target)) {
    error(target.loc(), "element assignment is not supported; use "
                        "tile.where to update parts of a tile, or tile.store");
    return;
  }
  error(target.loc(), "cannot assign to this expression");
}

bool Emitter::emitWork(Work work) {
  while (!work.empty()) {
    auto &[block, idx] = work.back();
    if (idx >= block->size()) {
      work.pop_back();
      continue;
    }
    const Stmt &s = *(*block)[idx++];
    if (diags.tooManyErrors() || bodyTooLarge)
      return false;
    // Unrolled static_range loops and inlined helpers multiply: bound the
    // work (nested unrolling or branching recursion would not finish).
    if (++statementsEmitted > kMaxEmittedStatements) {
      error(s.loc(), "kernel too large: more than " +
                         std::to_string(kMaxEmittedStatements) +
                         " statements after unrolling static_range loops "
                         "and inlining helper calls");
      bodyTooLarge = true;
      return false;
    }
    if (!emitStmt(s, work))
      return false;
  }
  return true;
}

bool Emitter::emitStmt(const Stmt &s, Work &rest) {
  Location l = loc(s.loc());
  switch (s.getKind()) {
  case Stmt::Kind::Expr: {
    auto &es = cast<ExprStmt>(s);
    if (isa<StrExpr>(es.value.get()))
      return true; // docstring-like
    emit(*es.value);
    return true;
  }
  case Stmt::Kind::Assign: {
    auto &as = cast<AssignStmt>(s);
    SVal v = emit(*as.value);
    for (auto &t : as.targets)
      assign(*t, v, s.loc());
    return true;
  }
  case Stmt::Kind::AnnAssign: {
    auto &as = cast<AnnAssignStmt>(s);
    if (!as.value) {
      error(s.loc(), "a declaration needs a value");
      return true;
    }
    SVal v = emit(*as.value);
    if (v.ok() && as.annotation) {
      SVal t = emit(*as.annotation);
      if (t.isConst() && t.cval.isDType() && (v.isConst() || v.isTyped()))
        v = castTo(v, t.cval.getDType(), l);
    }
    assign(*as.target, v, s.loc());
    return true;
  }
  case Stmt::Kind::AugAssign: {
    auto &as = cast<AugAssignStmt>(s);
    if (!isa<NameExpr>(as.target.get())) {
      error(as.target->loc(), "augmented assignment needs a plain name");
      return true;
    }
    SVal cur = emit(*as.target);
    SVal v = emit(*as.value);
    if (!cur.ok() || !v.ok()) {
      assign(*as.target, SVal::invalid(), s.loc());
      return true;
    }
    SVal r = emitBinary(as.op, cur, v, s.loc());
    // Keep the variable's dtype (x += 1 on an f16 tile stays f16), but a
    // tile may grow from a scalar.
    if (r.ok() && cur.isTyped() && r.isTyped() && r.dtype != cur.dtype)
      r = castTo(r, cur.dtype, l);
    assign(*as.target, r, s.loc());
    return true;
  }
  case Stmt::Kind::If:
    return emitIf(cast<IfStmt>(s), rest);
  case Stmt::Kind::For:
    emitFor(cast<ForStmt>(s));
    return true;
  case Stmt::Kind::While:
    error(s.loc(), "'while' loops are not supported; use 'for ... in range()'");
    return true;
  case Stmt::Kind::Break:
  case Stmt::Kind::Continue:
    error(s.loc(), std::string("'") +
                       (isa<BreakStmt>(s) ? "break" : "continue") +
                       "' is not supported in kernels");
    return true;
  case Stmt::Kind::Pass:
    return true;
  case Stmt::Kind::Return: {
    auto &rs = cast<ReturnStmt>(s);
    if (loopDepth > 0) {
      error(s.loc(), "'return' inside a loop is not supported");
      return true;
    }
    if (!helpers.empty()) {
      helpers.back().result =
          rs.value ? emit(*rs.value) : SVal::constant(ConstValue::none());
      return false;
    }
    if (rs.value)
      error(rs.value->loc(), "a kernel cannot return a value; store results "
                             "with tile.store");
    return false;
  }
  case Stmt::Kind::Import:
    return true; // `import tessera` and friends at any level are harmless.
  case Stmt::Kind::FunctionDef:
    error(s.loc(), "nested function definitions are not supported; define "
                   "helpers at module level");
    return true;
  case Stmt::Kind::Unsupported:
    error(s.loc(), "'" + cast<UnsupportedStmt>(s).what +
                       "' is not supported in kernels");
    return true;
  }
  return true;
}

bool Emitter::emitIf(const IfStmt &s, Work &rest) {
  SVal c = emit(*s.cond);
  if (!c.ok())
    return true;
  if (c.isConst()) {
    // Constexpr if: only the taken branch is emitted (and checked).
    const ast::Block &taken = c.cval.truthy() ? s.body : s.orelse;
    // The branch continues with the rest of the enclosing code.
    Work combined = rest;
    combined.push_back({&taken, 0});
    rest.clear();
    return emitWork(std::move(combined));
  }
  Value cond = condition(c, s.cond->loc());
  if (!cond)
    return true;
  Location l = loc(s.loc());

  bool hasReturn = containsReturn(s.body) || containsReturn(s.orelse);
  if (hasReturn) {
    if (!helpers.empty()) {
      error(s.loc(), "'return' under a run-time condition is not supported in "
                     "helper functions");
      return true;
    }
    // Both arms continue with the rest of the function; nothing merges.
    auto ifOp = scf::IfOp::create(b, l, TypeRange{}, cond, true, true);
    Work after = rest;
    rest.clear();
    Vars saved = vars;
    auto savedPartial = partial;
    for (int arm = 0; arm < 2; ++arm) {
      mlir::Block &blk = arm == 0 ? ifOp.getThenRegion().front()
                                  : ifOp.getElseRegion().front();
      OpBuilder::InsertionGuard g(b);
      if (blk.empty() || !blk.back().hasTrait<OpTrait::IsTerminator>()) {
        b.setInsertionPointToEnd(&blk);
        scf::YieldOp::create(b, l);
      }
      b.setInsertionPoint(blk.getTerminator());
      vars = saved;
      partial = savedPartial;
      Work w = after;
      w.push_back({arm == 0 ? &s.body : &s.orelse, 0});
      emitWork(std::move(w));
    }
    vars = saved;
    partial = savedPartial;
    return false; // Everything after was emitted inside the arms.
  }

  // Merge form: emit both arms, then yield every variable assigned in
  // either arm that is defined on both paths.
  std::set<std::string> assigned;
  collectAssigned(s.body, assigned);
  collectAssigned(s.orelse, assigned);
  auto tmp = scf::IfOp::create(b, l, TypeRange{}, cond, true, true);
  Vars before = vars;
  Vars armVars[2];
  for (int arm = 0; arm < 2; ++arm) {
    mlir::Block &blk =
        arm == 0 ? tmp.getThenRegion().front() : tmp.getElseRegion().front();
    OpBuilder::InsertionGuard g(b);
    if (blk.empty() || !blk.back().hasTrait<OpTrait::IsTerminator>()) {
      b.setInsertionPointToEnd(&blk);
      scf::YieldOp::create(b, l);
    }
    b.setInsertionPoint(blk.getTerminator());
    vars = before;
    emitWork({{arm == 0 ? &s.body : &s.orelse, 0}});
    armVars[arm] = vars;
  }
  vars = before;

  std::vector<std::string> merged;
  std::vector<DType> mergedT;
  std::vector<SmallVector<int64_t>> mergedShape;
  for (const std::string &name : assigned) {
    auto i0 = armVars[0].find(name), i1 = armVars[1].find(name);
    if (i0 == armVars[0].end() || i1 == armVars[1].end()) {
      vars.erase(name);
      partial[name] = s.loc();
      continue;
    }
    SVal &x = i0->second, &y = i1->second;
    if (!x.ok() || !y.ok()) {
      vars[name] = SVal::invalid();
      continue;
    }
    if (x.isConst() && y.isConst() && x.cval == y.cval) {
      vars[name] = x;
      continue;
    }
    bool xNum = x.isTyped() || (x.isConst() && x.cval.isNumber());
    bool yNum = y.isTyped() || (y.isConst() && y.cval.isNumber());
    if (!xNum || !yNum) {
      if (x.kind == SVal::Kind::Tensor && y.kind == SVal::Kind::Tensor &&
          x.value == y.value) {
        vars[name] = x;
        continue;
      }
      error(s.loc(), "'" + name + "' is assigned different kinds of values (" +
                         describe(x) + ", " + describe(y) +
                         ") in the branches of a run-time 'if'");
      vars[name] = SVal::invalid();
      continue;
    }
    SmallVector<SVal> ops{x, y};
    auto t = joinDTypes(ops);
    if (!t)
      t = (x.cval.isFloat() || y.cval.isFloat()) ? DType::F32
                                                 : constDType(x.cval);
    SmallVector<int64_t> shape;
    if (x.isTile() && y.isTile() && x.shape() != y.shape()) {
      error(s.loc(), "'" + name + "' has shape " + shapeText(x.shape()) +
                         " in one branch and " + shapeText(y.shape()) +
                         " in the other");
      vars[name] = SVal::invalid();
      continue;
    }
    if (x.isTile())
      shape.assign(x.shape().begin(), x.shape().end());
    else if (y.isTile())
      shape.assign(y.shape().begin(), y.shape().end());
    merged.push_back(name);
    mergedT.push_back(*t);
    mergedShape.push_back(shape);
  }

  SmallVector<Type> types;
  for (size_t i = 0; i < merged.size(); ++i)
    types.push_back(mergedShape[i].empty()
                        ? scalarType(mergedT[i])
                        : Type(tileType(mergedShape[i], mergedT[i])));
  for (int arm = 0; arm < 2; ++arm) {
    mlir::Block &blk =
        arm == 0 ? tmp.getThenRegion().front() : tmp.getElseRegion().front();
    Operation *term = blk.getTerminator();
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(term);
    SmallVector<Value> vals;
    for (size_t i = 0; i < merged.size(); ++i) {
      SVal v = armVars[arm][merged[i]];
      SVal m = mergedShape[i].empty()
                   ? castTo(v, mergedT[i], l)
                   : toTile(v, mergedShape[i], mergedT[i], l);
      vals.push_back(m.value);
    }
    scf::YieldOp::create(b, l, vals);
    term->erase();
  }
  if (merged.empty())
    return true;
  auto ifOp = scf::IfOp::create(b, l, types, cond, false, false);
  ifOp.getThenRegion().takeBody(tmp.getThenRegion());
  ifOp.getElseRegion().takeBody(tmp.getElseRegion());
  tmp.erase();
  for (size_t i = 0; i < merged.size(); ++i)
    vars[merged[i]] = SVal::typed(ifOp.getResult(i), mergedT[i]);
  return true;
}

void Emitter::emitFor(const ForStmt &s) {
  Location l = loc(s.loc());
  auto *call = dyn_cast<CallExpr>(s.iter.get());
  SVal callee = call ? emit(*call->callee) : SVal::invalid();
  if (!call || callee.kind != SVal::Kind::Builtin ||
      (callee.name != "range" && callee.name != "static_range")) {
    if (callee.ok() || !call)
      error(s.iter->loc(), "for loops iterate over range(...) or "
                           "tile.static_range(...)");
    return;
  }
  if (!s.orelse.empty()) {
    error(s.loc(), "'for ... else' is not supported");
    return;
  }
  auto *target = dyn_cast<NameExpr>(s.target.get());
  if (!target) {
    error(s.target->loc(), "the loop variable must be a plain name");
    return;
  }
  std::vector<SVal> args;
  for (auto &a : call->args) {
    args.push_back(emit(*a));
    if (!args.back().ok())
      return;
  }
  if (args.empty() || args.size() > 3 || !call->keywords.empty()) {
    error(s.iter->loc(), callee.name + "() takes 1 to 3 positional arguments");
    return;
  }
  SVal lo = args.size() >= 2 ? args[0] : SVal::constant(ConstValue::integer(0));
  SVal hi = args.size() >= 2 ? args[1] : args[0];
  SVal step =
      args.size() == 3 ? args[2] : SVal::constant(ConstValue::integer(1));
  for (SVal *v : {&lo, &hi, &step})
    if (!(v->isConst() && (v->cval.isInt() || v->cval.isBool())) &&
        !(v->kind == SVal::Kind::Scalar && !isFloatT(v->dtype))) {
      error(s.iter->loc(),
            callee.name + "() bounds must be integers, got " + describe(*v));
      return;
    }
  if (step.isConst() && step.cval.getInt() <= 0) {
    error(s.iter->loc(), "range() step must be positive");
    return;
  }

  if (callee.name == "static_range") {
    if (!lo.isConst() || !hi.isConst() || !step.isConst()) {
      error(s.iter->loc(), "static_range() bounds must be compile-time "
                           "constants");
      return;
    }
    int64_t n = 0;
    for (int64_t i = lo.cval.getInt(); i < hi.cval.getInt();
         i += step.cval.getInt()) {
      if (++n > 4096) {
        error(s.iter->loc(), "static_range() unrolls more than 4096 times");
        return;
      }
      vars[target->name] = SVal::constant(ConstValue::integer(i));
      ++loopDepth;
      emitWork({{&s.body, 0}});
      --loopDepth;
    }
    return;
  }

  Value lov = indexValue(lo, s.iter->loc());
  Value hiv = indexValue(hi, s.iter->loc());
  Value stv = indexValue(step, s.iter->loc());
  if (!lov || !hiv || !stv)
    return;

  // Loop-carried variables: assigned in the body and defined before it.
  std::set<std::string> assigned;
  collectAssigned(s.body, assigned);
  assigned.erase(target->name);
  std::vector<std::string> carried;
  for (const std::string &name : assigned) {
    auto it = vars.find(name);
    if (it == vars.end())
      continue;
    const SVal &v = it->second;
    if (v.isTyped() || (v.isConst() && v.cval.isNumber()))
      carried.push_back(name);
  }
  std::vector<DType> types;
  std::vector<SmallVector<int64_t>> shapes;
  for (auto &name : carried) {
    const SVal &v = vars[name];
    types.push_back(v.isTyped() ? v.dtype : constDType(v.cval));
    shapes.push_back(v.isTile() ? SmallVector<int64_t>(v.shape())
                                : SmallVector<int64_t>());
  }

  Vars before = vars;
  auto beforePartial = partial;
  for (int attempt = 0; attempt < 4; ++attempt) {
    vars = before;
    partial = beforePartial;
    SmallVector<Value> inits;
    for (size_t i = 0; i < carried.size(); ++i) {
      SVal v = vars[carried[i]];
      SVal m = shapes[i].empty() ? castTo(v, types[i], l)
                                 : toTile(v, shapes[i], types[i], l);
      inits.push_back(m.value);
    }
    unsigned errorsBefore = diags.errorCount();
    auto forOp = scf::ForOp::create(b, l, lov, hiv, stv, inits);
    mlir::Block *body = forOp.getBody();
    OpBuilder::InsertionGuard g(b);
    if (body->empty() || !body->back().hasTrait<OpTrait::IsTerminator>()) {
      b.setInsertionPointToEnd(body);
      scf::YieldOp::create(b, l);
    }
    b.setInsertionPoint(body->getTerminator());
    vars[target->name] = SVal::typed(forOp.getInductionVar(), DType::I64);
    for (size_t i = 0; i < carried.size(); ++i)
      vars[carried[i]] = SVal::typed(forOp.getRegionIterArg(i), types[i]);
    ++loopDepth;
    emitWork({{&s.body, 0}});
    --loopDepth;

    // Did any carried variable change type?
    bool retry = false;
    bool failedHere = diags.errorCount() != errorsBefore;
    for (size_t i = 0; i < carried.size() && !failedHere; ++i) {
      auto it = vars.find(carried[i]);
      if (it == vars.end() || !it->second.ok()) {
        failedHere = true;
        break;
      }
      SVal &v = it->second;
      if (v.isConst())
        continue;
      if (!v.isTyped()) {
        error(s.loc(), "'" + carried[i] + "' changes from a number to " +
                           describe(v) + " inside the loop");
        failedHere = true;
        break;
      }
      if (v.kind == SVal::Kind::Scalar && !shapes[i].empty()) {
        error(s.loc(), "'" + carried[i] + "' changes from a tile of shape " +
                           shapeText(shapes[i]) +
                           " to a scalar inside the loop");
        failedHere = true;
        break;
      }
      if (v.isTile() && !shapes[i].empty() &&
          v.shape() != ArrayRef<int64_t>(shapes[i])) {
        error(s.loc(), "'" + carried[i] +
                           "' changes shape inside the loop, "
                           "from " +
                           shapeText(shapes[i]) + " to " +
                           shapeText(v.shape()));
        failedHere = true;
        break;
      }
      if (v.isTile() && shapes[i].empty()) {
        shapes[i].assign(v.shape().begin(), v.shape().end());
        retry = true;
      }
      DType j = promoteTyped(types[i], v.dtype);
      if (j != types[i]) {
        types[i] = j;
        retry = true;
      }
    }
    if (retry && !failedHere && attempt < 3) {
      forOp.erase();
      continue;
    }
    // Yield.
    Operation *term = body->getTerminator();
    b.setInsertionPoint(term);
    SmallVector<Value> yields;
    for (size_t i = 0; i < carried.size(); ++i) {
      auto it = vars.find(carried[i]);
      SVal v = (it == vars.end() || !it->second.ok())
                   ? SVal::typed(forOp.getRegionIterArg(i), types[i])
                   : it->second;
      SVal m = shapes[i].empty() ? castTo(v, types[i], l)
                                 : toTile(v, shapes[i], types[i], l);
      yields.push_back(m.ok() ? m.value : forOp.getRegionIterArg(i));
    }
    scf::YieldOp::create(b, l, yields);
    term->erase();
    // Names first assigned inside the loop do not survive it.
    Vars after = before;
    for (size_t i = 0; i < carried.size(); ++i)
      after[carried[i]] = SVal::typed(forOp.getResult(i), types[i]);
    vars = std::move(after);
    partial = beforePartial;
    return;
  }
}

//===----------------------------------------------------------------------===//
// Kernel entry
//===----------------------------------------------------------------------===//

EmittedKernel Emitter::run() {
  EmittedKernel out;
  const FunctionDef &fn = *decl.fn;
  Location fnLoc = loc(fn.loc());
  OwningOpRef<ModuleOp> mod = ModuleOp::create(fnLoc);
  b.setInsertionPointToEnd(mod->getBody());

  auto has = [](const std::vector<std::string> &v, const std::string &s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };

  SmallVector<Type> argTypes;
  struct Bound {
    int param;
    int arg;
  };
  std::vector<Bound> bound;
  for (auto [pi, p] : llvm::enumerate(info.params)) {
    if (p.kind == ParamKind::Constexpr)
      continue;
    if (p.kind == ParamKind::Tensor) {
      if (p.optional && has(spec.absentTensors, p.name))
        continue;
      DType dt;
      if (auto d = parseDType(p.dtype)) {
        dt = *d;
      } else if (auto d = dtypeFromName(p.dtype)) {
        dt = *d;
      } else if (auto it = env.find(p.dtype);
                 it != env.end() && it->second.isDType()) {
        dt = it->second.getDType();
      } else {
        diags.error(SourceLoc{fn.loc().file, p.line, p.col, 1},
                    "dtype '" + p.dtype + "' of parameter '" + p.name +
                        "' is not bound");
        return out;
      }
      int64_t rank = p.dims.size();
      bool unit = has(spec.unitStrideTensors, p.name) && rank > 0;
      SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
      SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
      if (unit)
        strides.back() = 1;
      // The runtime passes every tensor with its first element as the
      // aligned pointer (descriptor offset 0).
      auto layout = StridedLayoutAttr::get(&ctx, /*offset=*/0, strides);
      argTypes.push_back(MemRefType::get(shape, storageType(dt), layout));
      AbiArg a;
      a.param = pi;
      a.isTensor = true;
      a.dtype = dt;
      a.rank = rank;
      a.unitInnerStride = unit;
      out.abi.push_back(a);
    } else {
      DType dt = p.scalarKind == ScalarKind::Int ? DType::I64 : DType::F32;
      if (p.scalarKind == ScalarKind::Bool)
        dt = DType::Bool;
      argTypes.push_back(scalarType(dt));
      AbiArg a;
      a.param = pi;
      a.dtype = dt;
      out.abi.push_back(a);
    }
    bound.push_back({(int)pi, (int)argTypes.size() - 1});
  }

  auto funcType = b.getFunctionType(argTypes, {});
  auto func = func::FuncOp::create(b, fnLoc, info.name, funcType);
  func->setAttr("tile.kernel", b.getUnitAttr());
  out.numWarps = env.count("num_warps") ? env["num_warps"].getInt() : 4;
  out.numStages = env.count("num_stages") ? env["num_stages"].getInt() : 2;
  func->setAttr("tile.num_warps", b.getI32IntegerAttr(out.numWarps));
  func->setAttr("tile.num_stages", b.getI32IntegerAttr(out.numStages));
  // The program schedule: blocks that loop over the programs (persistent)
  // and the order programs are taken in (groups of program_group along
  // axis 0). The GPU lowering implements both (outlineKernel).
  // (bindSpecialization checked both values.)
  if (auto it = env.find("persistent");
      it != env.end() && it->second.isBool() && it->second.getBool())
    func->setAttr("tile.persistent", b.getUnitAttr());
  if (auto it = env.find("program_group");
      it != env.end() && it->second.isInt() && it->second.getInt() > 0)
    func->setAttr(
        "tile.program_group",
        b.getI32IntegerAttr(static_cast<int32_t>(it->second.getInt())));
  // A producer warpgroup feeding the TMA rings of consumer warpgroups
  // (tessera-warp-specialize), where the GPU lowering has such rings.
  if (auto it = env.find("warp_specialize");
      it != env.end() && it->second.isBool() && it->second.getBool())
    func->setAttr("tile.warp_specialize", b.getUnitAttr());
  // Two consumer warpgroups taking turns at the tensor cores
  // (tessera-warpgroup-pingpong), where warp specialisation gives two.
  if (auto it = env.find("pingpong");
      it != env.end() && it->second.isBool() && it->second.getBool())
    func->setAttr("tile.pingpong", b.getUnitAttr());
  // VECTOR_WIDTH, where a configuration binds it, caps the elements per
  // vector access of the GPU lowering (tessera-gpu-vectorize-elementwise).
  if (auto it = env.find("VECTOR_WIDTH");
      it != env.end() && it->second.isInt() && it->second.getInt() >= 1)
    func->setAttr("tile.vector_width",
                  b.getI32IntegerAttr(static_cast<int32_t>(
                      std::min<int64_t>(it->second.getInt(), 64))));
  // Indices of every tensor fit in 31 bits (Specialization::index32).
  if (spec.index32)
    func->setAttr("tile.index32", b.getUnitAttr());
  // tile.dot inputs may run on tf32 tensor cores (precision "tf32").
  if (auto policy = PrecisionPolicy::parse(spec.precision, nullptr);
      policy && policy->tf32Dots)
    func->setAttr("tile.dot_precision", b.getStringAttr("tf32"));
  // The shape symbol of every tensor dimension ("" for a fixed extent):
  // dimensions with the same symbol are equal at launch (checked by the
  // runtime), which tessera-unify-shape-dims exploits.
  for (const Bound &bd : bound) {
    const ParamInfo &p = info.params[bd.param];
    if (p.kind != ParamKind::Tensor)
      continue;
    SmallVector<Attribute> syms;
    for (const auto &d : p.dims)
      syms.push_back(b.getStringAttr(d.symbol));
    func.setArgAttr(bd.arg, "tile.dim_symbols", b.getArrayAttr(syms));
    // Alignment facts of the launch (Specialization::alignedTensors).
    bool unit = has(spec.unitStrideTensors, p.name) && !p.dims.empty();
    if (unit && has(spec.alignedTensors, p.name))
      func.setArgAttr(bd.arg, "tile.aligned", b.getBoolAttr(true));
    else if (spec.alignmentKnown)
      func.setArgAttr(bd.arg, "tile.aligned", b.getBoolAttr(false));
  }
  mlir::Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  // Parameters, absent optionals, shape symbols.
  std::map<std::string, SVal> symbols;
  for (const Bound &bd : bound) {
    const ParamInfo &p = info.params[bd.param];
    Value arg = entry->getArgument(bd.arg);
    if (p.kind == ParamKind::Tensor) {
      SVal v;
      v.kind = SVal::Kind::Tensor;
      v.value = arg;
      v.param = bd.param;
      v.dtype = out.abi[bd.arg].dtype;
      v.name = p.name;
      std::vector<SVal> dims;
      for (auto [di, d] : llvm::enumerate(p.dims)) {
        if (d.symbol.empty()) {
          dims.push_back(SVal::constant(ConstValue::integer(d.fixed)));
          continue;
        }
        auto it = symbols.find(d.symbol);
        if (it == symbols.end()) {
          Value dim = memref::DimOp::create(b, fnLoc, arg, di);
          Value i64 = arith::IndexCastOp::create(b, fnLoc, b.getI64Type(), dim);
          it = symbols.emplace(d.symbol, SVal::typed(i64, DType::I64)).first;
        }
        dims.push_back(it->second);
      }
      vars["\x01shape:" + std::to_string(bd.param)] =
          SVal::tuple(std::move(dims), SVal::Kind::Shape);
      vars[p.name] = v;
    } else {
      vars[p.name] = SVal::typed(arg, out.abi[bd.arg].dtype);
    }
  }
  for (const ParamInfo &p : info.params)
    if (p.kind == ParamKind::Tensor && p.optional &&
        has(spec.absentTensors, p.name))
      vars[p.name] = SVal::constant(ConstValue::none());
  for (auto &[sym, v] : symbols)
    if (!vars.count(sym))
      vars[sym] = v;
  for (const ParamInfo &p : info.params)
    if (p.kind == ParamKind::Constexpr)
      if (auto it = env.find(p.name); it != env.end())
        vars[p.name] = SVal::constant(it->second);

  emitWork({{&fn.body, 0}});
  if (entry->empty() || !entry->back().hasTrait<OpTrait::IsTerminator>()) {
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b, fnLoc);
  }
  if (diags.hasErrors())
    return out;

  // Verify; a failure here is a compiler bug, reported at the op's location.
  std::string verifyMessage;
  {
    ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      llvm::raw_string_ostream os(verifyMessage);
      os << d.getLocation() << ": " << d.str() << "\n";
      return success();
    });
    if (failed(verify(*mod))) {
      diags.error(fn.loc(), "internal compiler error: generated IR does not "
                            "verify:\n" +
                                verifyMessage);
      return out;
    }
  }
  out.module = std::move(mod);
  return out;
}

} // namespace

EmittedKernel(::tessera::sema::emitKernel)(
    MLIRContext &context, const ast::Module &module, const KernelDecl &decl,
    const ConstEnv &env, const Specialization &spec, const SourceManager &sm,
    ::tessera::DiagnosticEngine &diags) {
  context.loadDialect<tl::TileDialect, arith::ArithDialect, func::FuncDialect,
                      math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                      tensor::TensorDialect>();
  return Emitter(context, module, decl, env, spec, sm, diags).run();
}

void(::tessera::sema::registerTesseraDialects)(DialectRegistry &registry) {
  registry.insert<tl::TileDialect, arith::ArithDialect, func::FuncDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect>();
}
