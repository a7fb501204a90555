//===- Emitter.h - The tile-language emitter (private) ----------*- C++ -*-===//
//
// Walks a kernel body once per specialisation. Every expression evaluates to
// an SVal: a compile-time constant (folded on the spot, Python semantics), a
// typed run-time scalar, a tile (static-shape tensor value), a global tensor
// (kernel argument), or one of the callable/namespace values. Constants are
// "weak": they take the dtype of the typed operand they meet.
//
// The emitter is split by concern: TypeRules.cpp (materialisation, casts,
// broadcasting, promotion), Expressions.cpp, Builtins.cpp (the built-in
// table's dispatch and the compute built-ins), MemoryOps.cpp (loads, stores,
// atomics), Statements.cpp, and MLIRGen.cpp (kernel set-up).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_SEMA_EMITTER_H
#define TESSERA_LIB_SEMA_EMITTER_H

#include "tessera/Sema/MLIRGen.h"
#include "tessera/Sema/TypeRules.h"

#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tessera::sema::detail {

using namespace mlir;
using namespace ::tessera::ast;
using ::tessera::ConstValue;
using ::tessera::DType;
using ::tessera::SourceLoc;
namespace tl = mlir::tessera::tile;

constexpr int64_t kMaxTileElements = int64_t(1) << 22;
/// Batch entries a batched tile.dot unrolls at most.
constexpr int64_t kMaxDotBatch = 16;
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
  /// A tensor, or a scalar parameter as read: index into KernelInfo::params.
  int param = -1;

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

/// "(a, b)" ("(a,)" for one dimension).
std::string shapeText(ArrayRef<int64_t> shape);
/// How a value is named in diagnostics ("f32 tile of shape (64,)").
std::string describe(const SVal &v);
/// The elements of a tuple value (constant or not); any other value is a
/// one-element list.
std::vector<SVal> tupleItems(const SVal &v);

using KwArgs = std::map<std::string, std::pair<SVal, SourceLoc>>;

/// Removes and returns keyword argument `name`, else positional `pos`.
std::optional<SVal> takeArg(const std::vector<SVal> &args, KwArgs &kw,
                            const char *name, size_t pos);

inline bool isFloatT(DType t) { return isFloatDType(t); }
/// Why no tile, scalar or shared array has the packed type `t`.
inline std::string packedTileError(DType t) {
  return std::string(dtypeName(t)) +
         " is a packed storage type: tensors of it are read with tile.load, "
         "which widens to f16; tiles take f16, bf16 or f32";
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

  // Everything below is used by the lowerings of the built-ins (free
  // functions in Builtins.cpp and MemoryOps.cpp), so it is public: this
  // header is private to the library.
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
    case DType::F6E3M2:
    case DType::F6E2M3:
    case DType::F4E2M1:
      // Packed tensors are read as bytes and decoded to f16 tiles (see
      // emitPackedLoad): no tile or scalar has a packed type.
      return b.getF16Type();
    }
    return b.getF32Type();
  }
  Type storageType(DType t) {
    return t == DType::Bool || isPackedDType(t) ? b.getI8Type() : scalarType(t);
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
  /// An i32 tile of `shape` holding each element's position along `dim`.
  SVal positionsAlong(ArrayRef<int64_t> shape, int64_t dim, Location l);
  /// `a` where `cond` holds, else `c`: all three broadcast to `shape`, the
  /// values converted to `t`.
  SVal selectTiles(const SVal &cond, const SVal &a, const SVal &c, DType t,
                   ArrayRef<int64_t> shape, Location l);
  /// Tile `x` at `index` along dimension `dim` (which goes).
  SVal pickAlong(const SVal &x, int64_t dim, int64_t index, Location l,
                 SourceLoc sl);
  /// Calls the lowering of built-in `name` (Builtins.def).
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
  /// Notes, at their declarations, the run-time scalar parameters `v` is
  /// or holds: what to write to make them compile-time values.
  void noteRuntimeParameters(const SVal &v);
  Value indexValue(const SVal &v, SourceLoc sl);
  /// indexValue of each element; false after reporting an error.
  bool indexValues(const std::vector<SVal> &vs, SourceLoc sl,
                   SmallVectorImpl<Value> &out);
  SVal emitLoad(const CallExpr &e, std::vector<SVal> &args, KwArgs &kw);
  /// tile.load of a packed (fp6/fp4) tensor: the elements at `idx` (block
  /// offsets, or gather index tiles) decoded to an f16 tile of `shape`.
  SVal emitPackedLoad(const SVal &T, ArrayRef<int64_t> shape,
                      ArrayRef<Value> idx, bool gather, Value mask,
                      std::optional<SVal> other, Location l);
  SVal emitStore(const CallExpr &e, std::vector<SVal> &args, KwArgs &kw);
  SVal emitReduce(tl::ReduceKind kind, const SVal &x,
                  std::optional<int64_t> axis, Location l, SourceLoc sl);
  SVal emitMath(const std::string &fn, const SVal &x, Location l, SourceLoc sl);
  SVal emitDot(const SVal &a, const SVal &bb, const SVal *acc,
               std::optional<DType> accT, Location l, SourceLoc sl);
  SVal emitBatchedDot(const SVal &a, const SVal &bb, const SVal *acc,
                      std::optional<DType> accT, Location l, SourceLoc sl);

  // --- statements
  /// Runs `work` to completion. Returns false if the code path ended in a
  /// `return` (nothing after it may run). With `loopBody`, `work` ends where
  /// an iteration of the innermost loop ends: a `continue` drops the rest.
  bool emitWork(Work work, bool loopBody = false);
  bool runWork(Work &work);
  bool emitStmt(const Stmt &s, Work &rest);
  void assign(const Expr &target, SVal v, SourceLoc sl);
  bool emitIf(const IfStmt &s, Work &rest);
  void emitFor(const ForStmt &s);
  void collectAssigned(const ast::Block &block, std::set<std::string> &out,
                       size_t from = 0);
  bool containsReturn(const ast::Block &block);
  /// Whether `block` has a `continue` of the enclosing loop (outside the
  /// loops nested in it).
  bool containsContinue(const ast::Block &block);
  /// The names the statements still to run in `work` assign.
  void collectAssigned(const Work &work, std::set<std::string> &out);
  /// The element of global tensor or shared array `t` at `indices` (SIMT
  /// programs): as a typed scalar, or the memref and index values.
  SVal emitElementRead(const SVal &t, const SubscriptExpr &e);
  bool elementIndices(const SVal &t, const SubscriptExpr &e,
                      SmallVectorImpl<Value> &out);
  void emitElementStore(const SVal &t, const SubscriptExpr &e, SVal v,
                        SourceLoc sl);

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
  /// The note naming what made the kernel a SIMT program was given.
  bool simtNoted = false;
  /// The statement lists whose end is the end of an iteration of the
  /// innermost loop (see emitWork).
  std::vector<const Work *> loopBodies;
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
// Built-in calls
//===----------------------------------------------------------------------===//

/// One call of a built-in, as its lowering sees it: the positional arguments
/// (`self` first for a method call) and the keyword arguments not yet taken.
struct BuiltinCall {
  Emitter &em;
  const std::string &name;
  const CallExpr &expr;
  std::vector<SVal> args;
  KwArgs &kwargs;
  /// Called as a method (`x.name(...)`); args[0] is `x`.
  bool isMethod;
  Location l;
  SourceLoc sl;

  /// Reports `msg` at the call and returns an invalid value.
  SVal error(std::string msg) const { return em.error(sl, std::move(msg)); }
  /// Removes and returns keyword argument `n`.
  std::optional<SVal> kwarg(const char *n);
  /// Reports an error unless there are `lo` to `hi` positional arguments.
  bool arity(size_t lo, size_t hi);
  /// Reports an error if a keyword argument is left.
  bool noKwargs();
  /// Takes keyword `lastKeyword` (when given) as the last positional
  /// argument, then checks that no keyword is left and that there are `lo`
  /// to `hi` positional arguments (reporting the error when not).
  bool accept(size_t lo, size_t hi, const char *lastKeyword = nullptr);
};

/// The lowering functions named by Builtins.def.
#define TESSERA_BUILTIN(NAME, LOWERING, SCOPES, SECTION, CALL, SUMMARY)        \
  SVal lower##LOWERING(Emitter &em, BuiltinCall &call);
#include "tessera/Sema/Builtins.def"

} // namespace tessera::sema::detail

#endif // TESSERA_LIB_SEMA_EMITTER_H
