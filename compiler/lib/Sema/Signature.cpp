//===- Signature.cpp - Kernel declarations --------------------------------===//

#include "tessera/Sema/Signature.h"

#include <algorithm>
#include <set>

using namespace tessera;
using namespace tessera::sema;
using namespace tessera::ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

/// Whether `v` is a value of a parameter of scalar kind `kind`.
bool hasKind(const ConstValue &v, ScalarKind kind) {
  switch (kind) {
  case ScalarKind::Float:
    return v.isNumber() && !v.isBool();
  case ScalarKind::Int:
    return v.isInt();
  case ScalarKind::Bool:
    return v.isBool();
  case ScalarKind::Str:
    return v.isStr();
  case ScalarKind::Any:
    return true;
  }
  return true;
}

/// "a.b.c" for a Name/Attribute chain, or "" for anything else.
std::string dottedName(const Expr *e) {
  if (auto *n = dyn_cast<NameExpr>(e))
    return n->name;
  if (auto *a = dyn_cast<AttributeExpr>(e)) {
    std::string base = dottedName(a->value.get());
    return base.empty() ? "" : base + "." + a->name;
  }
  return "";
}

enum class DecoratorKind { Kernel, Autotune, Heuristics, Unknown };

DecoratorKind classify(const std::string &name) {
  static const char *kernels[] = {"kernel", "tessera.kernel", "tile.kernel",
                                  "jit", "tessera.jit"};
  static const char *autotunes[] = {"autotune", "tessera.autotune",
                                    "tessera.kernel.autotune", "tile.autotune",
                                    "kernel.autotune"};
  for (const char *k : kernels)
    if (name == k)
      return DecoratorKind::Kernel;
  for (const char *a : autotunes)
    if (name == a)
      return DecoratorKind::Autotune;
  for (const char *h : {"heuristics", "tessera.heuristics", "tile.heuristics"})
    if (name == h)
      return DecoratorKind::Heuristics;
  return DecoratorKind::Unknown;
}

std::pair<DecoratorKind, const CallExpr *> splitDecorator(const Expr *d) {
  const CallExpr *call = dyn_cast<CallExpr>(d);
  const Expr *callee = call ? call->callee.get() : d;
  return {classify(dottedName(callee)), call};
}

bool isGenericDTypeName(const std::string &name) {
  return name.size() >= 5 && name.compare(name.size() - 5, 5, "dtype") == 0;
}

/// The dtype name an annotation item denotes ("f16" or a generic name), or
/// "" after reporting an error.
std::string dtypeItem(const Expr *e, DiagnosticEngine &diags) {
  std::string name;
  if (auto *s = dyn_cast<StrExpr>(e))
    name = s->value;
  else if (auto *n = dyn_cast<NameExpr>(e))
    name = n->name;
  else if (auto *a = dyn_cast<AttributeExpr>(e))
    name = a->name;
  if (name.empty()) {
    diags.error(e->loc(), "expected an element type as the last item of the "
                          "Tensor annotation");
    return "";
  }
  if (auto d = parseDType(name))
    return dtypeName(*d);
  if (isGenericDTypeName(name))
    return name;
  diags.error(e->loc(), "unknown element type '" + name + "'");
  return "";
}

/// A meta-parameter of the backend that `@kernel`, an autotune space or a
/// specialisation may set: its value when none does, and the values it
/// takes ("NAME must be `expected`").
struct BackendMeta {
  const char *name;
  ConstValue byDefault;
  bool (*valid)(const ConstValue &);
  std::string expected;
};

/// The largest `program_group` (programs of grid axis 0 per group in the
/// grouped program order).
constexpr int64_t kMaxProgramGroup = 65535;

const std::vector<BackendMeta> &backendMetas() {
  static const std::vector<BackendMeta> metas = {
      {"num_warps", ConstValue::integer(4),
       [](const ConstValue &v) {
         return v.isInt() && v.getInt() >= 1 && v.getInt() <= 64;
       },
       "an integer in [1, 64]"},
      {"num_stages", ConstValue::integer(2),
       [](const ConstValue &v) {
         return v.isInt() && v.getInt() >= 1 && v.getInt() <= 64;
       },
       "an integer in [1, 64]"},
      {"persistent", ConstValue::boolean(false),
       [](const ConstValue &v) { return v.isBool(); }, "True or False"},
      {"program_group", ConstValue::integer(0),
       [](const ConstValue &v) {
         return v.isInt() && v.getInt() >= 0 && v.getInt() <= kMaxProgramGroup;
       },
       "an integer in [0, " + std::to_string(kMaxProgramGroup) + "]"},
      {"warp_specialize", ConstValue::boolean(false),
       [](const ConstValue &v) { return v.isBool(); }, "True or False"},
      {"pingpong", ConstValue::boolean(false),
       [](const ConstValue &v) { return v.isBool(); }, "True or False"},
  };
  return metas;
}

const BackendMeta *findBackendMeta(const std::string &name) {
  for (const BackendMeta &m : backendMetas())
    if (name == m.name)
      return &m;
  return nullptr;
}

} // namespace

bool sema::isMetaParameter(std::string_view name) {
  return name == "num_warps" || name == "num_stages" || name == "num_ctas" ||
         name == "persistent" || name == "program_group" ||
         name == "warp_specialize" || name == "pingpong";
}

bool sema::isKernelDefinition(const FunctionDef &fn) {
  for (const ExprPtr &d : fn.decorators)
    if (splitDecorator(d.get()).first != DecoratorKind::Unknown)
      return true;
  return false;
}

ConstEnv sema::collectModuleConstants(const Module &module,
                                      DiagnosticEngine &diags) {
  ConstEnv env;
  // Every kernel's environment starts as a copy of these: bound their total
  // size (each one is bounded by kMaxConstantSize).
  int64_t totalSize = 0;
  auto tooLarge = [&](const ConstValue &v, size_t copies, SourceLoc loc) {
    totalSize += constantSize(v) * static_cast<int64_t>(copies);
    if (totalSize <= 4 * kMaxConstantSize)
      return false;
    diags.error(loc, "module-level constants are too large");
    return true;
  };
  for (const StmtPtr &s : module.body) {
    if (auto *a = dyn_cast<AssignStmt>(s.get())) {
      ConstResult r = evalConst(*a->value, env);
      if (!r.ok()) {
        diags.error(r.loc, "module-level value is not a constant: " + r.error);
        continue;
      }
      if (tooLarge(*r.value, a->targets.size(), a->loc()))
        return env;
      for (const ExprPtr &t : a->targets) {
        if (auto *n = dyn_cast<NameExpr>(t.get()))
          env[n->name] = *r.value;
        else
          diags.error(t->loc(), "module-level assignments must bind names");
      }
      continue;
    }
    if (auto *a = dyn_cast<AnnAssignStmt>(s.get())) {
      auto *n = dyn_cast<NameExpr>(a->target.get());
      if (!n || !a->value) {
        diags.error(a->loc(), "module-level annotated names need a value");
        continue;
      }
      ConstResult r = evalConst(*a->value, env);
      if (!r.ok()) {
        diags.error(r.loc, "module-level value is not a constant: " + r.error);
        continue;
      }
      if (tooLarge(*r.value, 1, a->loc()))
        return env;
      env[n->name] = *r.value;
      continue;
    }
    if (isa<FunctionDef, ImportStmt, PassStmt>(s.get()))
      continue;
    if (auto *e = dyn_cast<ExprStmt>(s.get()))
      if (isa<StrExpr>(e->value.get()))
        continue; // Module docstring.
    if (!isa<UnsupportedStmt>(s.get()))
      diags.error(s->loc(), "only function definitions, imports and constant "
                            "assignments may appear at module level");
  }
  return env;
}

namespace {

class SignatureAnalyzer {
public:
  SignatureAnalyzer(const FunctionDef &fn, const ConstEnv &moduleConstants,
                    DiagnosticEngine &diags)
      : fn_(fn), consts_(moduleConstants), diags_(diags) {}

  std::optional<KernelDecl> run();

private:
  void kernelDecorator(const CallExpr *call);
  void autotuneDecorator(const CallExpr *call);
  void heuristicsDecorator(const CallExpr *call);
  /// Checks that every `@heuristics` name is a constexpr parameter with a
  /// default, outside the autotune space.
  void checkHeuristics(const std::set<std::string> &spaceNames);
  void param(const Param &p);
  std::optional<ConstValue> constant(const Expr &e, const char *what) {
    ConstResult r = evalConst(e, consts_);
    if (!r.ok()) {
      diags_.error(r.loc,
                   std::string(what) + " must be a constant: " + r.error);
      return std::nullopt;
    }
    return r.value;
  }
  void addSymbol(const std::string &sym) {
    auto &syms = decl_.info.shapeSymbols;
    if (std::find(syms.begin(), syms.end(), sym) == syms.end())
      syms.push_back(sym);
  }
  void addGeneric(const std::string &name) {
    auto &g = decl_.info.genericDTypes;
    if (std::find(g.begin(), g.end(), name) == g.end())
      g.push_back(name);
  }

  const FunctionDef &fn_;
  const ConstEnv &consts_;
  DiagnosticEngine &diags_;
  KernelDecl decl_;
  unsigned errorsBefore_ = 0;
};

std::optional<KernelDecl> SignatureAnalyzer::run() {
  errorsBefore_ = diags_.errorCount();
  decl_.fn = &fn_;
  decl_.info.name = fn_.name;
  decl_.info.docstring = fn_.docstring;
  decl_.info.line = fn_.loc().line;

  bool seenKernel = false, seenAutotune = false, seenHeuristics = false;
  for (const ExprPtr &d : fn_.decorators) {
    auto [kind, call] = splitDecorator(d.get());
    switch (kind) {
    case DecoratorKind::Kernel:
      if (seenKernel)
        diags_.error(d->loc(), "duplicate @kernel decorator");
      seenKernel = true;
      kernelDecorator(call);
      break;
    case DecoratorKind::Autotune:
      if (seenAutotune)
        diags_.error(d->loc(), "duplicate @autotune decorator");
      seenAutotune = true;
      if (!call)
        diags_.error(d->loc(), "@autotune needs arguments: "
                               "@autotune(space=dict(...), key=[...])");
      else
        autotuneDecorator(call);
      break;
    case DecoratorKind::Heuristics:
      if (seenHeuristics)
        diags_.error(d->loc(), "duplicate @heuristics decorator");
      seenHeuristics = true;
      if (!call)
        diags_.error(d->loc(), "@heuristics needs arguments: "
                               "@heuristics(NAME=<expression>, ...)");
      else
        heuristicsDecorator(call);
      break;
    case DecoratorKind::Unknown: {
      std::string name = dottedName(call ? call->callee.get() : d.get());
      diags_.error(d->loc(),
                   "unknown decorator '@" +
                       (name.empty() ? std::string("<expression>") : name) +
                       "' (expected @kernel, @autotune or "
                       "@heuristics)");
      break;
    }
    }
  }

  // Autotune parameters are constexprs; collect their names first.
  std::set<std::string> spaceNames;
  if (decl_.info.autotune)
    for (const auto &[name, values] : decl_.info.autotune->space)
      spaceNames.insert(name);

  for (const Param &p : fn_.params)
    param(p);

  for (ParamInfo &p : decl_.info.params) {
    if (!spaceNames.count(p.name))
      continue;
    if (p.kind == ParamKind::Tensor) {
      diags_.error(SourceLoc{fn_.loc().file, p.line, p.col, 1},
                   "tensor parameter '" + p.name +
                       "' cannot be an autotune parameter");
      continue;
    }
    p.kind = ParamKind::Constexpr;
  }

  checkHeuristics(spaceNames);

  // Names must not collide.
  for (const std::string &sym : decl_.info.shapeSymbols)
    if (const ParamInfo *p = decl_.info.findParam(sym))
      diags_.error(SourceLoc{fn_.loc().file, p->line, p->col, 1},
                   "parameter '" + sym +
                       "' has the same name as a shape symbol");

  if (decl_.info.autotune) {
    for (const std::string &key : decl_.info.autotune->key) {
      bool known = decl_.info.findParam(key) ||
                   std::count(decl_.info.shapeSymbols.begin(),
                              decl_.info.shapeSymbols.end(), key) ||
                   spaceNames.count(key);
      if (!known)
        diags_.warning(fn_.nameLoc, "autotune key '" + key +
                                        "' names no parameter or shape "
                                        "symbol of '" +
                                        fn_.name + "'; it is ignored");
    }
  }

  if (diags_.errorCount() != errorsBefore_)
    return std::nullopt;
  return std::move(decl_);
}

void SignatureAnalyzer::kernelDecorator(const CallExpr *call) {
  if (!call)
    return;
  for (const ExprPtr &a : call->args)
    diags_.error(a->loc(), "@kernel takes keyword arguments only "
                           "(grid=, num_warps=, num_stages=, persistent=, "
                           "program_group=, warp_specialize=, pingpong=)");
  for (const Keyword &kw : call->keywords) {
    if (kw.name == "grid") {
      decl_.info.hasGrid = true;
      if (auto *t = dyn_cast<TupleExpr>(kw.value.get())) {
        if (t->elts.empty() || t->elts.size() > 3)
          diags_.error(kw.value->loc(),
                       "grid must have 1 to 3 dimensions, got " +
                           std::to_string(t->elts.size()));
        for (const ExprPtr &e : t->elts)
          decl_.grid.push_back(e.get());
      } else if (auto *l = dyn_cast<ListExpr>(kw.value.get())) {
        if (l->elts.empty() || l->elts.size() > 3)
          diags_.error(kw.value->loc(), "grid must have 1 to 3 dimensions");
        for (const ExprPtr &e : l->elts)
          decl_.grid.push_back(e.get());
      } else {
        decl_.grid.push_back(kw.value.get());
      }
      continue;
    }
    if (const BackendMeta *m = findBackendMeta(kw.name)) {
      auto v = constant(*kw.value, kw.name.c_str());
      if (v && !m->valid(*v))
        diags_.error(kw.value->loc(), kw.name + " must be " + m->expected);
      else if (v)
        decl_.decoratorDefaults[kw.name] = *v;
      continue;
    }
    diags_.error(kw.loc, "unknown @kernel argument '" + kw.name +
                             "' (expected grid, num_warps, num_stages, "
                             "persistent, program_group, warp_specialize or "
                             "pingpong)");
  }
}

void SignatureAnalyzer::heuristicsDecorator(const CallExpr *call) {
  for (const ExprPtr &a : call->args)
    diags_.error(a->loc(), "@heuristics takes keyword arguments only "
                           "(NAME=<expression>, ...)");
  for (const Keyword &kw : call->keywords) {
    bool twice = false;
    for (const auto &[name, expr] : decl_.heuristics)
      twice |= name == kw.name;
    if (twice) {
      diags_.error(kw.loc, "@heuristics sets '" + kw.name + "' twice");
      continue;
    }
    decl_.heuristics.emplace_back(kw.name, kw.value.get());
    decl_.info.heuristics.push_back(kw.name);
  }
  if (call->keywords.empty() && call->args.empty())
    diags_.error(call->loc(), "@heuristics needs at least one "
                              "NAME=<expression>");
}

void SignatureAnalyzer::checkHeuristics(
    const std::set<std::string> &spaceNames) {
  for (const auto &[name, expr] : decl_.heuristics) {
    const ParamInfo *p = decl_.info.findParam(name);
    std::string why;
    if (!p)
      why = "names no parameter of '" + fn_.name + "'";
    else if (spaceNames.count(name))
      why = "is an autotune parameter (the tuner chooses it)";
    else if (p->kind != ParamKind::Constexpr)
      why = "is not a constexpr parameter";
    else if (!p->defaultValue)
      why = "has no default (compiling without a launch uses it)";
    if (!why.empty())
      diags_.error(expr->loc(), "@heuristics: '" + name + "' " + why);
  }
}

void SignatureAnalyzer::autotuneDecorator(const CallExpr *call) {
  AutotuneSpec spec;
  for (const ExprPtr &a : call->args)
    diags_.error(a->loc(), "@autotune takes keyword arguments only "
                           "(space=, key=, restrict=, cache=)");
  bool haveSpace = false;
  for (const Keyword &kw : call->keywords) {
    if (kw.name == "space" || kw.name == "configs") {
      haveSpace = true;
      std::vector<std::pair<std::string, const Expr *>> entries;
      if (auto *c = dyn_cast<CallExpr>(kw.value.get());
          c && dottedName(c->callee.get()) == "dict") {
        for (const ExprPtr &a : c->args)
          diags_.error(a->loc(), "dict() entries must be NAME=[values]");
        for (const Keyword &e : c->keywords)
          entries.push_back({e.name, e.value.get()});
      } else if (auto *d = dyn_cast<DictExpr>(kw.value.get())) {
        for (size_t i = 0; i < d->keys.size(); ++i) {
          auto *k = dyn_cast<StrExpr>(d->keys[i].get());
          if (!k) {
            diags_.error(d->keys[i]->loc(), "space keys must be strings");
            continue;
          }
          entries.push_back({k->value, d->values[i].get()});
        }
      } else {
        diags_.error(kw.value->loc(), "space must be dict(NAME=[values], ...)");
        continue;
      }
      for (auto &[name, valuesExpr] : entries) {
        auto v = constant(*valuesExpr, "an autotune value list");
        if (!v)
          continue;
        if (!v->isTuple() || v->getTuple().empty()) {
          diags_.error(valuesExpr->loc(), "autotune parameter '" + name +
                                              "' needs a non-empty list of "
                                              "values");
          continue;
        }
        std::vector<ConstValue> values = v->getTuple();
        for (size_t i = 0; i < values.size(); ++i)
          for (size_t j = 0; j < i; ++j)
            if (values[i] == values[j])
              diags_.error(valuesExpr->loc(),
                           "autotune parameter '" + name + "' lists " +
                               values[i].toString() + " twice");
        for (const auto &existing : spec.space)
          if (existing.first == name)
            diags_.error(valuesExpr->loc(),
                         "autotune parameter '" + name + "' given twice");
        spec.space.push_back({name, std::move(values)});
      }
      continue;
    }
    if (kw.name == "key") {
      auto v = constant(*kw.value, "autotune key");
      if (!v)
        continue;
      std::vector<ConstValue> items =
          v->isTuple() ? v->getTuple() : std::vector<ConstValue>{*v};
      for (const ConstValue &item : items) {
        if (!item.isStr()) {
          diags_.error(kw.value->loc(), "autotune key entries must be strings");
          break;
        }
        spec.key.push_back(item.getStr());
      }
      continue;
    }
    if (kw.name == "restrict" || kw.name == "restrictions") {
      auto *list = dyn_cast<ListExpr>(kw.value.get());
      auto *tuple = dyn_cast<TupleExpr>(kw.value.get());
      const std::vector<ExprPtr> *elts = list    ? &list->elts
                                         : tuple ? &tuple->elts
                                                 : nullptr;
      if (!elts) {
        if (auto *s = dyn_cast<StrExpr>(kw.value.get())) {
          spec.restrictions.push_back(s->value);
          continue;
        }
        diags_.error(kw.value->loc(), "restrict must be a list of strings");
        continue;
      }
      for (const ExprPtr &e : *elts) {
        auto *s = dyn_cast<StrExpr>(e.get());
        if (!s) {
          diags_.error(e->loc(), "restrictions are strings, e.g. "
                                 "\"BLOCK_M * BLOCK_N <= 16384\"");
          continue;
        }
        spec.restrictions.push_back(s->value);
      }
      continue;
    }
    if (kw.name == "cache") {
      auto *s = dyn_cast<StrExpr>(kw.value.get());
      if (!s) {
        diags_.error(kw.value->loc(), "cache must be a string path");
        continue;
      }
      spec.cache = s->value;
      continue;
    }
    diags_.error(kw.loc, "unknown @autotune argument '" + kw.name +
                             "' (expected space, key, restrict or cache)");
  }
  if (!haveSpace)
    diags_.error(call->loc(), "@autotune needs space=dict(NAME=[values], ...)");
  decl_.info.autotune = std::move(spec);
}

void SignatureAnalyzer::param(const Param &p) {
  ParamInfo info;
  info.name = p.name;
  info.line = p.loc.line;
  info.col = p.loc.col;
  if (p.defaultValue) {
    auto v = constant(*p.defaultValue, "a default value");
    if (v)
      info.defaultValue = *v;
  }
  const Expr *ann = p.annotation.get();
  if (!ann) {
    if (!info.defaultValue) {
      diags_.error(p.loc,
                   "parameter '" + p.name +
                       "' needs a type annotation "
                       "(Tensor[...], float, int, bool, str or constexpr)");
      return;
    }
    const ConstValue &d = *info.defaultValue;
    if (d.isInt()) {
      info.kind = ParamKind::Scalar;
      info.scalarKind = ScalarKind::Int;
    } else if (d.isFloat()) {
      info.kind = ParamKind::Scalar;
      info.scalarKind = ScalarKind::Float;
    } else {
      info.kind = ParamKind::Constexpr;
      info.scalarKind = d.isBool()  ? ScalarKind::Bool
                        : d.isStr() ? ScalarKind::Str
                                    : ScalarKind::Any;
    }
    decl_.info.params.push_back(std::move(info));
    return;
  }

  if (auto *sub = dyn_cast<SubscriptExpr>(ann)) {
    std::string base = dottedName(sub->value.get());
    if (base == "Tensor" || base == "tessera.Tensor" || base == "tile.Tensor") {
      info.kind = ParamKind::Tensor;
      if (sub->indices.size() < 2) {
        diags_.error(ann->loc(),
                     "Tensor annotation needs dimensions and an "
                     "element type, e.g. Tensor[\"M\", \"K\", f16]");
        return;
      }
      for (size_t i = 0; i + 1 < sub->indices.size(); ++i) {
        const Expr *d = sub->indices[i].get();
        DimInfo dim;
        if (auto *s = dyn_cast<StrExpr>(d))
          dim.symbol = s->value;
        else if (auto *n = dyn_cast<NameExpr>(d))
          dim.symbol = n->name;
        else if (auto *iv = dyn_cast<IntExpr>(d);
                 iv && !iv->overflow && iv->value >= 0)
          dim.fixed = iv->value;
        else {
          diags_.error(d->loc(), "tensor dimensions are shape symbols "
                                 "(\"M\") or non-negative integers");
          return;
        }
        if (!dim.symbol.empty()) {
          if (parseDType(dim.symbol)) {
            diags_.error(d->loc(), "element type '" + dim.symbol +
                                       "' must be the last item of the Tensor "
                                       "annotation");
            return;
          }
          addSymbol(dim.symbol);
        }
        info.dims.push_back(dim);
      }
      info.dtype = dtypeItem(sub->indices.back().get(), diags_);
      if (info.dtype.empty())
        return;
      if (isGenericDTypeName(info.dtype))
        addGeneric(info.dtype);
      if (info.defaultValue) {
        if (!info.defaultValue->isNone()) {
          diags_.error(p.defaultValue->loc(),
                       "a tensor parameter's only default is None");
          return;
        }
        info.optional = true;
        info.defaultValue.reset();
      }
      decl_.info.params.push_back(std::move(info));
      return;
    }
    diags_.error(ann->loc(),
                 "unknown type annotation '" +
                     (base.empty() ? std::string("<expression>") : base) +
                     "[...]'");
    return;
  }

  std::string name = dottedName(ann);
  std::string last = name.substr(
      name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
  if (name == "float") {
    info.kind = ParamKind::Scalar;
    info.scalarKind = ScalarKind::Float;
    info.dtype = "f32";
  } else if (name == "int") {
    info.kind = ParamKind::Scalar;
    info.scalarKind = ScalarKind::Int;
    info.dtype = "i64";
  } else if (name == "bool") {
    info.kind = ParamKind::Constexpr;
    info.scalarKind = ScalarKind::Bool;
  } else if (name == "str") {
    info.kind = ParamKind::Constexpr;
    info.scalarKind = ScalarKind::Str;
  } else if (last == "constexpr") {
    info.kind = ParamKind::Constexpr;
    info.scalarKind = ScalarKind::Any;
  } else if (auto d = parseDType(last); d && isPackedDType(*d)) {
    diags_.error(ann->loc(), std::string(dtypeName(*d)) +
                                 " is a packed storage type for tensors; a "
                                 "scalar parameter takes f16 or f32");
    return;
  } else if (auto d = parseDType(last)) {
    info.kind = ParamKind::Scalar;
    info.scalarKind = isFloatDType(*d) ? ScalarKind::Float : ScalarKind::Int;
    if (*d == DType::Bool) {
      info.kind = ParamKind::Constexpr;
      info.scalarKind = ScalarKind::Bool;
    }
    info.dtype = dtypeName(*d);
  } else if (isGenericDTypeName(last)) {
    info.kind = ParamKind::Scalar;
    info.scalarKind = ScalarKind::Float;
    info.dtype = last;
    addGeneric(last);
  } else {
    diags_.error(ann->loc(),
                 "unknown type annotation '" +
                     (name.empty() ? std::string("<expression>") : name) + "'");
    return;
  }

  if (info.defaultValue) {
    const ConstValue &d = *info.defaultValue;
    if (!hasKind(d, info.scalarKind))
      diags_.error(p.defaultValue->loc(), "default value " + d.toString() +
                                              " does not match the type of '" +
                                              p.name + "'");
  }
  decl_.info.params.push_back(std::move(info));
}

} // namespace

std::optional<KernelDecl> sema::analyzeKernel(const FunctionDef &fn,
                                              const ConstEnv &moduleConstants,
                                              DiagnosticEngine &diags) {
  return SignatureAnalyzer(fn, moduleConstants, diags).run();
}

std::optional<ConstEnv>
sema::bindSpecialization(const KernelDecl &decl,
                         const ConstEnv &moduleConstants,
                         const Specialization &spec, std::string *error) {
  const KernelInfo &info = decl.info;
  ConstEnv env = moduleConstants;
  auto fail = [&](std::string msg) -> std::optional<ConstEnv> {
    if (error)
      *error = std::move(msg);
    return std::nullopt;
  };

  std::string policyError;
  auto policy = PrecisionPolicy::parse(spec.precision, &policyError);
  if (!policy)
    return fail(policyError);
  env["dtype"] = ConstValue::dtype(policy->storage);
  env["accum_dtype"] = ConstValue::dtype(policy->accum);

  std::set<std::string> known;
  for (const ParamInfo &p : info.params)
    if (p.kind == ParamKind::Constexpr)
      known.insert(p.name);
  if (info.autotune)
    for (const auto &[name, values] : info.autotune->space)
      known.insert(name);
  for (const std::string &g : info.genericDTypes)
    known.insert(g);
  for (const BackendMeta &m : backendMetas())
    known.insert(m.name);
  known.insert("dtype");
  known.insert("accum_dtype");

  for (const auto &[name, value] : spec.constants)
    if (!known.count(name))
      return fail("unknown specialisation constant '" + name +
                  "' for kernel '" + info.name + "'");

  // Constexpr parameters.
  for (const ParamInfo &p : info.params) {
    if (p.kind != ParamKind::Constexpr)
      continue;
    ConstValue v;
    if (auto it = spec.constants.find(p.name); it != spec.constants.end())
      v = it->second;
    else if (p.defaultValue)
      v = *p.defaultValue;
    else if (info.autotune) {
      bool found = false;
      for (const auto &[name, values] : info.autotune->space)
        if (name == p.name) {
          v = values.front();
          found = true;
        }
      if (!found)
        return fail("constexpr parameter '" + p.name + "' of '" + info.name +
                    "' has no default and no value in the specialisation");
    } else {
      return fail("constexpr parameter '" + p.name + "' of '" + info.name +
                  "' has no default and no value in the specialisation");
    }
    if (!hasKind(v, p.scalarKind))
      return fail("value " + v.toString() + " for constexpr parameter '" +
                  p.name + "' has the wrong type");
    env[p.name] = v;
  }

  // Meta-parameters of the space that are not parameters, and the backend's.
  if (info.autotune)
    for (const auto &[name, values] : info.autotune->space) {
      if (info.findParam(name))
        continue;
      auto it = spec.constants.find(name);
      if (it != spec.constants.end())
        env[name] = it->second;
      else if (auto d = decl.decoratorDefaults.find(name);
               d != decl.decoratorDefaults.end())
        env[name] = d->second;
      else
        env[name] = values.front();
    }
  // The backend's meta-parameters: a constexpr parameter of the same name
  // (bound above), the specialisation, the space (bound above), the
  // decorator, the backend's default.
  for (const BackendMeta &m : backendMetas()) {
    if (!info.findParam(m.name)) {
      bool inSpace =
          info.autotune &&
          std::any_of(info.autotune->space.begin(), info.autotune->space.end(),
                      [&](auto &e) { return e.first == m.name; });
      if (auto it = spec.constants.find(m.name); it != spec.constants.end())
        env[m.name] = it->second;
      else if (auto d = decl.decoratorDefaults.find(m.name);
               !inSpace && d != decl.decoratorDefaults.end())
        env[m.name] = d->second;
      else if (!inSpace)
        env[m.name] = m.byDefault;
    }
    if (!m.valid(env[m.name]))
      return fail(std::string(m.name) + " must be " + m.expected + ", got " +
                  env[m.name].toString());
  }

  // Generic dtypes.
  for (const auto &[name, value] : spec.constants) {
    if (std::find(info.genericDTypes.begin(), info.genericDTypes.end(), name) !=
            info.genericDTypes.end() ||
        name == "dtype" || name == "accum_dtype") {
      if (!value.isDType())
        return fail("generic dtype '" + name +
                    "' must be bound to a dtype, got " + value.toString());
      env[name] = value;
    }
  }
  for (const std::string &g : info.genericDTypes)
    if (!env.count(g) || !env[g].isDType())
      return fail("generic dtype '" + g + "' of '" + info.name +
                  "' is not bound; pass it in the specialisation");
  return env;
}
