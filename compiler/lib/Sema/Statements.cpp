//===- Statements.cpp - Statements of kernel bodies
//-------------------------===//
//
// Assignments, `if` (constexpr conditions pick a branch at compile time;
// run-time ones become scf.if), `for` (scf.for, or unrolled for
// static_range), `return`.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SaveAndRestore.h"

namespace tessera::sema::detail {

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

/// Whether `block` has a statement of `kind`, directly or in the arms of
/// its `if`s (not in nested loops).
static bool containsInIfs(const ast::Block &block, Stmt::Kind kind) {
  for (auto &s : block) {
    if (s->getKind() == kind)
      return true;
    if (auto *i = dyn_cast<IfStmt>(s.get()))
      if (containsInIfs(i->body, kind) || containsInIfs(i->orelse, kind))
        return true;
  }
  return false;
}

bool Emitter::containsReturn(const ast::Block &block) {
  return containsInIfs(block, Stmt::Kind::Return);
}

bool Emitter::containsContinue(const ast::Block &block) {
  return containsInIfs(block, Stmt::Kind::Continue);
}

void Emitter::collectAssigned(const Work &work, std::set<std::string> &out) {
  for (const auto &[block, idx] : work)
    collectAssigned(*block, out, idx);
}

void Emitter::collectAssigned(const ast::Block &block,
                              std::set<std::string> &out, size_t from) {
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
  for (size_t i = from; i < block.size(); ++i) {
    const StmtPtr &s = block[i];
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
  if (auto *sub = dyn_cast<SubscriptExpr>(&target)) {
    SVal base = emit(*sub->value);
    if (!base.ok() || !v.ok())
      return;
    if (base.kind == SVal::Kind::Tensor && info.simt) {
      emitElementStore(base, *sub, v, sl);
      return;
    }
    if (base.kind == SVal::Kind::Tensor) {
      error(target.loc(), "global tensors are written with tile.store in "
                          "tile programs, not [] (element stores are for "
                          "SIMT programs: see docs/language.md)");
      return;
    }
    error(target.loc(), "element assignment is not supported on " +
                            describe(base) +
                            "; use tile.where to update parts of a tile");
    return;
  }
  error(target.loc(), "cannot assign to this expression");
}

bool Emitter::emitWork(Work work, bool loopBody) {
  if (!loopBody)
    return runWork(work);
  loopBodies.push_back(&work);
  bool r = runWork(work);
  loopBodies.pop_back();
  return r;
}

bool Emitter::runWork(Work &work) {
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
    // `x[i] op= v` on a tensor element or shared array (SIMT programs).
    if (auto *sub = dyn_cast<SubscriptExpr>(as.target.get());
        sub && info.simt) {
      SVal base = emit(*sub->value);
      if (!base.ok())
        return true;
      if (base.kind != SVal::Kind::Tensor) {
        error(as.target->loc(),
              "cannot update an element of " + describe(base));
        return true;
      }
      SVal cur = emitElementRead(base, *sub);
      SVal v = emit(*as.value);
      if (!cur.ok() || !v.ok())
        return true;
      SVal r = emitBinary(as.op, cur, v, s.loc());
      if (r.ok())
        emitElementStore(base, *sub, r, s.loc());
      return true;
    }
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
    error(s.loc(), "'break' is not supported in kernels");
    return true;
  case Stmt::Kind::Continue:
    // The rest of the iteration is not run (an `if` with a `continue` in
    // an arm runs the rest inside its other arm: see emitIf).
    if (!loopBodies.empty() && loopBodies.back() == &rest) {
      rest.clear();
      return true;
    }
    error(s.loc(), loopDepth == 0 ? "'continue' outside a loop"
                                  : "'continue' is supported in a loop's "
                                    "body and in the arms of 'if' "
                                    "statements there");
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
    bool iteration = !loopBodies.empty() && loopBodies.back() == &rest;
    Work combined = rest;
    combined.push_back({&taken, 0});
    rest.clear();
    return emitWork(std::move(combined), iteration);
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
  // either arm that is defined on both paths. With a `continue` in an arm
  // of an `if` in a loop body, both arms run the rest of the iteration
  // (where the `continue` does not skip it) and merge at its end.
  const bool forks = !loopBodies.empty() && loopBodies.back() == &rest &&
                     (containsContinue(s.body) || containsContinue(s.orelse));
  Work iteration;
  if (forks) {
    iteration = rest;
    rest.clear();
  }
  std::set<std::string> assigned;
  collectAssigned(s.body, assigned);
  collectAssigned(s.orelse, assigned);
  collectAssigned(iteration, assigned);
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
    Work w = iteration;
    w.push_back({arm == 0 ? &s.body : &s.orelse, 0});
    emitWork(std::move(w), forks);
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

/// Whether `v` is positive whatever the launch: a positive constant, the
/// grid's extent, or sums and products of such values (grid-stride loops'
/// steps, `tile.num_programs(0) * BLOCK`).
static bool isKnownPositive(Value v, int depth = 0) {
  if (depth > 8)
    return false;
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (auto c = dyn_cast<arith::ConstantIntOp>(op))
    return c.value() > 0;
  if (isa<tl::NumProgramsOp>(op))
    return true;
  if (isa<arith::MulIOp, arith::AddIOp>(op))
    return isKnownPositive(op->getOperand(0), depth + 1) &&
           isKnownPositive(op->getOperand(1), depth + 1);
  if (isa<arith::ExtSIOp, arith::ExtUIOp>(op))
    return isKnownPositive(op->getOperand(0), depth + 1);
  return false;
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
  if (step.isConst() && step.cval.getInt() == 0) {
    error(s.iter->loc(), callee.name + "() step must not be zero");
    return;
  }

  if (callee.name == "static_range") {
    if (!lo.isConst() || !hi.isConst() || !step.isConst()) {
      error(s.iter->loc(), "static_range() bounds must be compile-time "
                           "constants");
      for (const SVal &v : {lo, hi, step})
        noteRuntimeParameters(v);
      return;
    }
    int64_t n = 0;
    const int64_t st = step.cval.getInt(), end = hi.cval.getInt();
    for (int64_t i = lo.cval.getInt(); st > 0 ? i < end : i > end; i += st) {
      if (++n > 4096) {
        error(s.iter->loc(), "static_range() unrolls more than 4096 times");
        return;
      }
      vars[target->name] = SVal::constant(ConstValue::integer(i));
      ++loopDepth;
      emitWork({{&s.body, 0}}, true);
      --loopDepth;
    }
    return;
  }

  Value lov = indexValue(lo, s.iter->loc());
  Value hiv = indexValue(hi, s.iter->loc());
  Value stv = indexValue(step, s.iter->loc());
  if (!lov || !hiv || !stv)
    return;
  // A step that is not a positive constant iterates as Python's range does:
  // downwards when negative, an error when zero (a failed assertion, which
  // fails the launch; the loop then runs no iteration). The loop counts
  // iterations t = 0 .. n - 1 and the loop variable is lo + t * step.
  Value firstV = lov, stepV = stv;
  const bool countsIterations =
      !(step.isConst() && step.cval.getInt() > 0) && !isKnownPositive(stv);
  if (countsIterations) {
    Type i64 = b.getI64Type();
    auto c = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, l, i64, v);
    };
    Value zero = c(0), one = c(1);
    Value isZero =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, stv, zero);
    if (!step.isConst()) {
      SourceLoc il = s.iter->loc();
      Value nonZero =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, stv, zero);
      cf::AssertOp::create(b, l, nonZero,
                           std::string(sm.getName(il.file)) + ":" +
                               std::to_string(il.line) + ":" +
                               std::to_string(il.col) + ": " + callee.name +
                               "() step is zero");
    }
    Value up =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, stv, zero);
    Value span =
        arith::SelectOp::create(b, l, up, arith::SubIOp::create(b, l, hiv, lov),
                                arith::SubIOp::create(b, l, lov, hiv));
    span = arith::MaxSIOp::create(b, l, span, zero);
    Value mag = arith::SelectOp::create(b, l, up, stv,
                                        arith::SubIOp::create(b, l, zero, stv));
    mag = arith::SelectOp::create(b, l, isZero, one, mag);
    Value n = arith::CeilDivSIOp::create(b, l, span, mag);
    n = arith::SelectOp::create(b, l, isZero, zero, n);
    lov = zero;
    hiv = n;
    stv = one;
  }

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
    Value iv = forOp.getInductionVar();
    if (countsIterations)
      iv = arith::AddIOp::create(b, l, firstV,
                                 arith::MulIOp::create(b, l, iv, stepV));
    vars[target->name] = SVal::typed(iv, DType::I64);
    for (size_t i = 0; i < carried.size(); ++i)
      vars[carried[i]] = SVal::typed(forOp.getRegionIterArg(i), types[i]);
    ++loopDepth;
    emitWork({{&s.body, 0}}, true);
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

} // namespace tessera::sema::detail
