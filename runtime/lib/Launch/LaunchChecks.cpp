//===- LaunchChecks.cpp - Launch-time checks and argument packing ---------===//

#include "Launch/LaunchChecks.h"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace tessera;
using namespace tessera::launch;

namespace {
/// Appends NAME=VALUE to the `@heuristics` part of a variant key
/// ("NAME=VALUE;...", which variantSpec reads back).
void appendHeuristic(std::string &key, const std::string &name,
                     const ConstValue &value) {
  key += (key.empty() ? "" : ";") + name + "=" + value.toString();
}

/// Why a TMA tensor map cannot describe `t`, empty when it can: its first
/// element 16-byte aligned, a unit innermost stride, the strides of
/// dimensions it steps along positive multiples of 16 bytes below 2^40,
/// and every extent in [1, 2^31) (coordinates are 32-bit).
std::string tensorMapObstacle(const TensorView &t) {
  const int64_t rank = int64_t(t.shape.size());
  const int64_t elem = int64_t(dtypeSize(t.dtype));
  if (rank == 0)
    return "it has no dimensions";
  if (reinterpret_cast<uintptr_t>(t.data) % 16)
    return "its first element is not 16-byte aligned";
  for (int64_t d = 0; d < rank; ++d)
    if (t.shape[d] < 1 || t.shape[d] > std::numeric_limits<int32_t>::max())
      return "dimension " + std::to_string(d) + " has " +
             std::to_string(t.shape[d]) + " elements";
  if (t.strides.back() != 1 && t.shape.back() > 1)
    return "its innermost stride is not 1";
  for (int64_t d = 0; d + 1 < rank; ++d) {
    int64_t bytes = t.strides[d] * elem;
    if (t.shape[d] > 1 &&
        (bytes <= 0 || bytes % 16 || bytes >= (int64_t(1) << 40)))
      return "dimension " + std::to_string(d) + " has a stride of " +
             std::to_string(bytes) + " bytes";
  }
  return "";
}

std::string paramWhere(const ParamInfo &p) {
  return "parameter '" + p.name + "'";
}
} // namespace

Specialization launch::variantSpec(const Specialization &spec,
                                   const KernelInfo &info,
                                   const VariantKey &key) {
  const std::string &heuristics = key.heuristics;
  Specialization s = spec;
  s.alignmentKnown = true;
  s.index32 = key.index32;
  s.declaredGrid = key.declaredGrid;
  for (size_t start = 0; start < heuristics.size();) {
    size_t end = heuristics.find(';', start);
    if (end == std::string::npos)
      end = heuristics.size();
    std::string item = heuristics.substr(start, end - start);
    size_t eq = item.find('=');
    s.constants[item.substr(0, eq)] = ConstValue::parse(item.substr(eq + 1));
    start = end + 1;
  }
  for (size_t i = 0; i < info.params.size(); ++i) {
    if (info.params[i].kind != ParamKind::Tensor)
      continue;
    if (key.unitMask >> i & 1)
      s.unitStrideTensors.push_back(info.params[i].name);
    if (key.alignedMask >> i & 1)
      s.alignedTensors.push_back(info.params[i].name);
    if (key.absentMask >> i & 1)
      s.absentTensors.push_back(info.params[i].name);
  }
  return s;
}

StatusOr<TensorMapGeometry>
launch::tensorMapGeometry(const TensorView &t, const driver::TensorMapArg &m,
                          const std::string &kernel, const std::string &param) {
  TensorMapGeometry g;
  g.rank = int(t.shape.size());
  g.elementBytes = int64_t(dtypeSize(t.dtype));
  std::string why = tensorMapObstacle(t);
  if (why.empty() && (g.rank > 5 || size_t(g.rank) != m.box.size()))
    why = "a rank-" + std::to_string(g.rank) + " tensor for a rank-" +
          std::to_string(m.box.size()) + " box";
  if (!why.empty())
    return internalError("kernel '%s': parameter '%s' cannot be copied by "
                         "TMA: %s",
                         kernel.c_str(), param.c_str(), why.c_str());
  g.strides[0] = uint64_t(g.elementBytes);
  for (int inner = 0; inner < g.rank; ++inner) {
    int d = g.rank - 1 - inner;
    g.dims[inner] = uint64_t(t.shape[d]);
    g.box[inner] = unsigned(m.box[d]);
    if (inner == 0)
      continue;
    // A dimension of one element is never stepped along: any stride past
    // the inner ones describes it.
    g.strides[inner] =
        t.shape[d] > 1
            ? uint64_t(t.strides[d] * g.elementBytes)
            : (g.strides[inner - 1] * g.dims[inner - 1] + 15) / 16 * 16;
  }
  return g;
}

std::array<int64_t, 3> launch::launchGridOf(const driver::ProgramSchedule &s,
                                            const std::array<int64_t, 3> &grid,
                                            int64_t resident) {
  if (!s.logicalGrid)
    return grid;
  int64_t total = grid[0] * grid[1] * grid[2];
  if (s.persistent)
    total = std::min(total, std::max<int64_t>(resident, 1));
  return {total, 1, 1};
}

std::string Signature::defaultHeuristics() const {
  std::string key;
  for (const std::string &n : info->heuristics) {
    ConstValue v;
    if (auto it = spec.constants.find(n); it != spec.constants.end())
      v = it->second;
    else if (const ParamInfo *p = info->findParam(n); p && p->defaultValue)
      v = *p->defaultValue;
    appendHeuristic(key, n, v);
  }
  return key;
}

StatusOr<std::pair<const TensorView *, std::string>>
Signature::tensorOfParam(const std::vector<Arg> &args, int param) const {
  for (size_t ai = 0; ai < args.size() && ai < launchParams.size(); ++ai)
    if (launchParams[ai] == param && args[ai].tensor())
      return std::make_pair(args[ai].tensor(), info->params[param].name);
  return internalError("kernel '%s': no tensor for the tensor map of "
                       "parameter %d",
                       name.c_str(), param);
}

StatusOr<Plan> Signature::check(const std::vector<Arg> &args,
                                const LaunchOptions &opts,
                                DeviceKind device) const {
  Plan out;
  out.key.index32 = true;
  if (args.size() != launchParams.size()) {
    std::string names;
    for (int pi : launchParams)
      names += (names.empty() ? "" : ", ") + info->params[pi].name;
    return invalidArgument(
        "kernel '%s' takes %zu launch arguments (%s), got %zu", name.c_str(),
        launchParams.size(), names.c_str(), args.size());
  }
  if (info->params.size() > 64)
    return unimplemented("kernels with more than 64 parameters");
  // The shape symbols' values and where each was first bound (the message
  // is built only when two bindings disagree).
  struct Bound {
    const std::string *symbol;
    int64_t value;
    const ParamInfo *param;
    size_t dim;
  };
  std::vector<Bound> symbols;
  symbols.reserve(8);
  for (size_t ai = 0; ai < args.size(); ++ai) {
    const ParamInfo &p = info->params[launchParams[ai]];
    const Arg &a = args[ai];
    if (p.kind == ParamKind::Tensor) {
      if (a.isNone()) {
        if (!p.optional)
          return invalidArgument("%s expects a tensor, got None",
                                 paramWhere(p).c_str());
        out.key.absentMask |= uint64_t(1) << launchParams[ai];
        continue;
      }
      const TensorView *t = a.tensor();
      if (!t)
        return invalidArgument("%s expects a tensor, got %s",
                               paramWhere(p).c_str(), a.describe().c_str());
      if (t->device && *t->device != device)
        return invalidArgument(
            "%s is in %s device memory; this kernel runs on %s",
            paramWhere(p).c_str(), deviceKindName(*t->device),
            deviceKindName(device));
      DType want = paramDTypes[launchParams[ai]];
      if (t->dtype != want)
        return invalidArgument("%s expects a %s tensor, got %s",
                               paramWhere(p).c_str(), dtypeName(want),
                               a.describe().c_str());
      if (t->shape.size() != p.dims.size())
        return invalidArgument("%s expects a tensor of rank %zu, got %s",
                               paramWhere(p).c_str(), p.dims.size(),
                               a.describe().c_str());
      if (t->strides.size() != t->shape.size())
        return invalidArgument("%s has %zu strides for rank %zu",
                               paramWhere(p).c_str(), t->strides.size(),
                               t->shape.size());
      bool empty = false;
      for (size_t d = 0; d < t->shape.size(); ++d) {
        if (t->shape[d] < 0)
          return invalidArgument("%s has a negative size %lld in dimension %zu",
                                 paramWhere(p).c_str(), (long long)t->shape[d],
                                 d);
        if (t->strides[d] < 0)
          return invalidArgument(
              "%s has a negative stride %lld in dimension %zu (negative "
              "strides are not supported)",
              paramWhere(p).c_str(), (long long)t->strides[d], d);
        empty |= t->shape[d] == 0;
        const DimInfo &di = p.dims[d];
        if (di.symbol.empty()) {
          if (t->shape[d] != di.fixed)
            return invalidArgument("%s dimension %zu must be %lld, got %lld",
                                   paramWhere(p).c_str(), d,
                                   (long long)di.fixed, (long long)t->shape[d]);
          continue;
        }
        auto it =
            std::find_if(symbols.begin(), symbols.end(), [&](const Bound &b) {
              return *b.symbol == di.symbol;
            });
        if (it == symbols.end())
          symbols.push_back({&di.symbol, t->shape[d], &p, d});
        else if (it->value != t->shape[d])
          return invalidArgument(
              "shape symbol '%s' is %lld for parameter '%s' dimension %zu, "
              "but %lld for parameter '%s' dimension %zu",
              di.symbol.c_str(), (long long)it->value, it->param->name.c_str(),
              it->dim, (long long)t->shape[d], p.name.c_str(), d);
      }
      if (!empty && !t->data)
        return invalidArgument("%s has a null data pointer",
                               paramWhere(p).c_str());
      // Element offsets must fit in 64 bits.
      __int128 span = 0;
      for (size_t d = 0; d < t->shape.size(); ++d)
        if (t->shape[d] > 0)
          span += (__int128)(t->shape[d] - 1) * t->strides[d];
      if (span > std::numeric_limits<int64_t>::max() / 16)
        return invalidArgument("%s spans too many elements",
                               paramWhere(p).c_str());
      constexpr int64_t kIndex32 = std::numeric_limits<int32_t>::max();
      if (span >= kIndex32)
        out.key.index32 = false;
      for (int64_t d : t->shape)
        if (d > kIndex32)
          out.key.index32 = false;
      if (!t->shape.empty() && (t->strides.back() == 1 || t->shape.back() <= 1))
        out.key.unitMask |= uint64_t(1) << launchParams[ai];
      continue;
    }
    // Scalars.
    if (a.tensor() || a.isNone())
      return invalidArgument("%s expects a scalar, got %s",
                             paramWhere(p).c_str(), a.describe().c_str());
    if (p.scalarKind == ScalarKind::Int && !a.integer())
      return invalidArgument("%s expects an int, got %s", paramWhere(p).c_str(),
                             a.describe().c_str());
    if (p.scalarKind == ScalarKind::Bool && !a.boolean())
      return invalidArgument("%s expects a bool, got %s", paramWhere(p).c_str(),
                             a.describe().c_str());
    if ((p.scalarKind == ScalarKind::Float ||
         p.scalarKind == ScalarKind::Any) &&
        !a.floating() && !a.integer())
      return invalidArgument("%s expects a float, got %s",
                             paramWhere(p).c_str(), a.describe().c_str());
  }

  // What the shape symbols decide (the @heuristics values, the declared
  // grid) is evaluated once per distinct binding: repeated launches on the
  // same shapes reuse it.
  std::sort(symbols.begin(), symbols.end(), [](const Bound &a, const Bound &b) {
    return *a.symbol < *b.symbol;
  });
  std::vector<std::pair<const std::string *, int64_t>> binding;
  binding.reserve(symbols.size());
  for (const Bound &b : symbols)
    binding.emplace_back(b.symbol, b.value);
  std::shared_ptr<const ShapeFacts> facts;
  {
    std::lock_guard<std::mutex> lock(shapeMutex_);
    if (lastShapes_ && lastShapes_->binding == binding)
      facts = lastShapes_;
  }
  if (!facts) {
    auto f = std::make_shared<ShapeFacts>();
    f->binding = binding;
    std::vector<std::pair<std::string, int64_t>> shapes;
    for (const Bound &b : symbols)
      shapes.emplace_back(*b.symbol, b.value);
    if (!info->heuristics.empty()) {
      auto values = module->evaluateHeuristics(name, spec, shapes);
      if (!values.ok())
        f->heuristicsStatus = values.status();
      for (size_t i = 0; values.ok() && i < values->size(); ++i) {
        const auto &[n, v] = (*values)[i];
        auto given = spec.constants.find(n);
        if (given != spec.constants.end() && given->second != v) {
          f->heuristicsStatus = invalidArgument(
              "kernel '%s' was specialised with %s=%s, but its @heuristics "
              "give %s for this launch's shapes",
              name.c_str(), n.c_str(), given->second.toString().c_str(),
              v.toString().c_str());
          break;
        }
        appendHeuristic(f->heuristics, n, v);
      }
    }
    if (module)
      f->grid = module->evaluateGrid(name, spec, shapes);
    std::lock_guard<std::mutex> lock(shapeMutex_);
    lastShapes_ = f;
    facts = std::move(f);
  }
  TESSERA_RETURN_IF_ERROR(facts->heuristicsStatus);
  out.key.heuristics = facts->heuristics;
  if (opts.grid) {
    out.grid = *opts.grid;
    // An explicit grid within the declared one keeps its guarantees (a
    // kernel that declares none assumes nothing); a larger one, or a
    // declared grid that cannot be evaluated, runs code that tests program
    // ids against every extent.
    if (!module || !info->hasGrid) {
      out.key.declaredGrid = true;
    } else {
      const auto &g = facts->grid;
      out.key.declaredGrid = g.ok();
      for (size_t i = 0; g.ok() && i < 3; ++i)
        out.key.declaredGrid &= out.grid[i] <= (i < g->size() ? (*g)[i] : 1);
    }
  } else {
    if (!facts->grid.ok())
      return facts->grid.status();
    const auto &g = *facts->grid;
    for (size_t i = 0; i < 3; ++i)
      out.grid[i] = i < g.size() ? g[i] : 1;
    out.key.declaredGrid = true;
  }
  for (int64_t g : out.grid)
    if (g < 0)
      return invalidArgument("grid extents must be non-negative");
  if (out.grid[0] > 0 && out.grid[1] > 0 && out.grid[2] > 0) {
    __int128 total = (__int128)out.grid[0] * out.grid[1] * out.grid[2];
    if (total > (int64_t(1) << 40))
      return invalidArgument("grid of %lld x %lld x %lld program instances is "
                             "too large",
                             (long long)out.grid[0], (long long)out.grid[1],
                             (long long)out.grid[2]);
  }
  // The index32 code takes program ids to be below the kernel's grid
  // bound; a larger grid runs the 64-bit code.
  if (out.key.index32 && module) {
    std::array<int64_t, 3> bound = index32GridBound(out.key);
    for (size_t i = 0; i < 3; ++i)
      if (out.grid[i] > bound[i])
        out.key.index32 = false;
  }
  return out;
}

std::array<int64_t, 3>
Signature::index32GridBound(const VariantKey &launchKey) const {
  std::lock_guard<std::mutex> lock(gridBoundMutex_);
  auto it = gridBounds_.find(launchKey.heuristics);
  if (it == gridBounds_.end()) {
    // The specialisation the index32 variant is compiled with.
    VariantKey key = launchKey;
    key.index32 = true;
    Specialization s = variantSpec(spec, *info, key);
    it = gridBounds_.emplace(key.heuristics, module->index32GridBound(name, s))
             .first;
  }
  return it->second;
}

uint64_t Signature::alignedMask(const std::vector<Arg> &args) const {
  uint64_t mask = 0;
  for (size_t ai = 0; ai < args.size() && ai < launchParams.size(); ++ai) {
    const TensorView *t = args[ai].tensor();
    // Kernels read packed tensors byte by byte (no wide or TMA copies).
    if (!t || t->shape.empty() || t->strides.back() != 1 ||
        isPackedDType(t->dtype))
      continue;
    int64_t elem = int64_t(dtypeSize(t->dtype));
    if (elem <= 0)
      continue;
    bool ok = reinterpret_cast<uintptr_t>(t->data) % 16 == 0 &&
              t->shape.back() * elem % 16 == 0;
    for (size_t d = 0; ok && d + 1 < t->strides.size(); ++d)
      ok = t->strides[d] * elem % 16 == 0;
    // Also what a TMA copy of it needs.
    ok = ok && tensorMapObstacle(*t).empty();
    if (ok)
      mask |= uint64_t(1) << launchParams[ai];
  }
  return mask;
}

std::vector<int64_t> Signature::flatten(const std::vector<Arg> &args) const {
  // Flatten: tensors as (allocated, aligned, offset, sizes..., strides...)
  // -- for a CUDA C++ kernel as one pointer, null when omitted -- and
  // scalars as one slot each.
  std::vector<int64_t> slots;
  slots.reserve(64);
  for (size_t ai = 0; ai < args.size(); ++ai) {
    const Arg &a = args[ai];
    const ParamInfo &p = info->params[launchParams[ai]];
    if (p.kind == ParamKind::Tensor) {
      int64_t ptr = 0;
      if (!a.isNone())
        std::memcpy(&ptr, &a.tensor()->data, sizeof(ptr));
      if (barePointers) {
        slots.push_back(ptr);
        continue;
      }
      if (a.isNone())
        continue;
      const TensorView &t = *a.tensor();
      slots.push_back(ptr);
      slots.push_back(ptr);
      slots.push_back(0);
      for (int64_t d : t.shape)
        slots.push_back(d);
      for (int64_t s : t.strides)
        slots.push_back(s);
      continue;
    }
    int64_t slot = 0;
    if (p.scalarKind == ScalarKind::Int) {
      slot = *a.integer();
    } else if (p.scalarKind == ScalarKind::Bool) {
      unsigned char bv = *a.boolean() ? 1 : 0;
      std::memcpy(&slot, &bv, 1);
    } else {
      float f = a.floating() ? float(*a.floating()) : float(*a.integer());
      std::memcpy(&slot, &f, sizeof(f));
    }
    slots.push_back(slot);
  }
  return slots;
}
