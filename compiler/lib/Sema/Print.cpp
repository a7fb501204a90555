//===- Print.cpp - print() and tile.device_print in kernel bodies ---------===//
//
// A print becomes one `gpu.printf` whose format string holds everything
// known at compile time (strings and constexprs, spelled as Python prints
// them) and a conversion for each run-time scalar: integers as %d / %lld,
// floats widened to f64 as %g, bools as True / False (one printf per
// combination of the run-time bools, chosen with scf.if, so that a line is
// never split). The targets lower gpu.printf: vprintf on cuda, the C
// library's printf on cpu and sim (tessera-lower-kernel-prints). A tile
// program prints once per program instance (tessera-print-once-per-block
// on the GPU); a SIMT program once per thread.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessera::sema::detail {

namespace {

/// At most this many run-time bools in one print (2^n printf variants).
constexpr size_t kMaxPrintedBools = 4;

/// `s` as literal text of a printf format.
std::string escapeFormat(const std::string &s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '%')
      out += '%';
  }
  return out;
}

/// One piece of the line: literal text, or a run-time value with its
/// conversion (`bools` index for a run-time bool).
struct Piece {
  std::string text;
  Value value;
  int boolIndex = -1;
};

void emitVariants(OpBuilder &b, Location l, ArrayRef<Piece> pieces,
                  ArrayRef<Value> bools, SmallVectorImpl<bool> &chosen) {
  if (chosen.size() < bools.size()) {
    auto ifOp = scf::IfOp::create(b, l, bools[chosen.size()],
                                  /*withElseRegion=*/true);
    for (bool branch : {true, false}) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(branch ? ifOp.thenBlock() : ifOp.elseBlock());
      chosen.push_back(branch);
      emitVariants(b, l, pieces, bools, chosen);
      chosen.pop_back();
    }
    return;
  }
  std::string format;
  SmallVector<Value> args;
  for (const Piece &p : pieces) {
    if (p.boolIndex >= 0)
      format += chosen[p.boolIndex] ? "True" : "False";
    else
      format += p.text;
    if (p.value)
      args.push_back(p.value);
  }
  gpu::PrintfOp::create(b, l, b.getStringAttr(format), args);
}

} // namespace

SVal lowerPrint(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  bool device = call.name == "device_print";
  std::string sep = " ", end = "\n";
  for (auto [key, target] :
       {std::pair<const char *, std::string *>{"sep", &sep}, {"end", &end}}) {
    auto k = call.kwarg(key);
    if (!k)
      continue;
    if (!k->isConst() || !(k->cval.isStr() || k->cval.isNone()))
      return call.error(call.name + "() " + key +
                        "= must be a constexpr string, got " + describe(*k));
    if (k->cval.isStr())
      *target = k->cval.getStr();
  }
  // Python's flush= is accepted: every line is flushed when the launch
  // ends (cpu, sim) or the host synchronises (cuda).
  if (auto f = call.kwarg("flush"); f && !f->isConst())
    return call.error(call.name + "() flush= must be a constexpr bool");
  if (!call.noKwargs())
    return SVal::invalid();
  if (device && (call.args.empty() || !call.args[0].isConst() ||
                 !call.args[0].cval.isStr()))
    return call.error("tile.device_print(prefix, ...) starts with a string "
                      "prefix");

  SmallVector<Piece> pieces;
  SmallVector<Value> bools;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const SVal &a = call.args[i];
    if (i)
      pieces.push_back({escapeFormat(sep), Value()});
    if (a.isConst()) {
      const ConstValue &c = a.cval;
      pieces.push_back(
          {escapeFormat(c.isStr() ? c.getStr() : c.toString()), Value()});
      continue;
    }
    if (a.isTile())
      return call.error(
          call.name + "() prints scalars, got " + describe(a) +
          "; print elements (t[0], t[i, j]) or a reduction (tile.max(t))");
    if (a.kind != SVal::Kind::Scalar)
      return call.error(call.name + "() cannot print " + describe(a));
    Value v = a.value;
    Type t = v.getType();
    if (a.dtype == DType::Bool) {
      if (bools.size() == kMaxPrintedBools)
        return call.error(call.name + "() prints at most " +
                          std::to_string(kMaxPrintedBools) +
                          " run-time bools in one call");
      pieces.push_back({"", Value(), int(bools.size())});
      bools.push_back(v);
    } else if (isa<FloatType>(t)) {
      if (!t.isF64())
        v = arith::ExtFOp::create(b, l, b.getF64Type(), v);
      pieces.push_back({"%g", v});
    } else if (t.isIndex()) {
      pieces.push_back(
          {"%lld", arith::IndexCastOp::create(b, l, b.getI64Type(), v)});
    } else if (t.isInteger(64)) {
      pieces.push_back({"%lld", v});
    } else if (auto it = dyn_cast<IntegerType>(t)) {
      if (it.getWidth() < 32)
        v = arith::ExtSIOp::create(b, l, b.getI32Type(), v);
      pieces.push_back({"%d", v});
    } else {
      return call.error(call.name + "() cannot print " + describe(a));
    }
  }
  pieces.push_back({escapeFormat(end), Value()});
  SmallVector<bool> chosen;
  emitVariants(b, l, pieces, bools, chosen);
  return SVal::constant(ConstValue::none());
}

} // namespace tessera::sema::detail
