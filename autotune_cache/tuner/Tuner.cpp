//===- Tuner.cpp - Tuning tile kernels on a device ------------------------===//

#include "tessera/autotune/Tuner.h"

#include "tessera/Support/Hash.h"
#include "tessera/Support/Tolerance.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <future>
#include <numeric>
#include <set>
#include <thread>

using namespace tessera;
using namespace tessera::autotune;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(v));
  return buf;
}

/// Position just past the parenthesis matching the one at `open`, skipping
/// string literals; npos when unbalanced.
size_t matchParen(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"' || c == '\'') {
      for (++i; i < s.size() && s[i] != c; ++i)
        if (s[i] == '\\')
          ++i;
      continue;
    }
    if (c == '#') {
      while (i < s.size() && s[i] != '\n')
        ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if ((c == ')' || c == ']' || c == '}') && --depth == 0)
      return i + 1;
  }
  return std::string_view::npos;
}

/// Statistics of timing samples (ms).
TimingStats statsOf(std::vector<double> v, std::string method) {
  TimingStats s;
  s.method = std::move(method);
  s.samples = int64_t(v.size());
  if (v.empty())
    return s;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  s.medianMs = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.minMs = v.front();
  s.meanMs = std::accumulate(v.begin(), v.end(), 0.0) / double(n);
  double ss = 0;
  for (double x : v)
    ss += (x - s.meanMs) * (x - s.meanMs);
  s.stddevMs = n > 1 ? std::sqrt(ss / double(n - 1)) : 0;
  return s;
}

/// The tolerance between two configurations' outputs: the same computation
/// summed in another order (tile sizes change the order of reductions and
/// dots), so each side carries the reduction error of the tolerance table
/// over at most `k` terms, `k` bounded by the largest tensor extent.
Tolerance configTolerance(DType dt, int64_t k) {
  Tolerance t = toleranceFor(dt, ToleranceOp::Reduction, k);
  return {2 * t.atol, 2 * t.rtol};
}

/// The configuration of `space` whose parameters have the value labels of
/// `m`; nullopt when `m` names other parameters or a value outside the
/// space (a record from before a space edit).
std::optional<Config>
configOfLabels(const Space &space,
               const std::map<std::string, std::string> &m) {
  Config c(space.params().size());
  if (m.size() != c.size())
    return std::nullopt;
  for (size_t i = 0; i < c.size(); ++i) {
    const Parameter &p = space.params()[i];
    auto it = m.find(p.name);
    if (it == m.end())
      return std::nullopt;
    auto pos = std::find(p.labels.begin(), p.labels.end(), it->second);
    if (pos == p.labels.end())
      return std::nullopt;
    c[i] = uint32_t(pos - p.labels.begin());
  }
  return c;
}

/// The span of storage a view reaches, in elements.
int64_t extentOf(const TensorView &v) {
  int64_t e = 1;
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (v.shape[d] == 0)
      return 0;
    e += (v.shape[d] - 1) * (d < v.strides.size() ? v.strides[d] : 0);
  }
  return e;
}

/// Copies of the tensor arguments the tuner runs on, and a snapshot of
/// their initial contents to restore before each correctness run.
struct Scratch {
  std::vector<Arg> args;
  std::vector<std::vector<unsigned char>> buffers, initial;
  std::vector<int> tensorIndex; // args index of buffers[i]

  static StatusOr<Scratch> make(const std::vector<Arg> &in) {
    Scratch s;
    s.args = in;
    for (size_t i = 0; i < in.size(); ++i) {
      const TensorView *t = in[i].tensor();
      if (!t)
        continue;
      if (t->device)
        return Status(StatusCode::kInvalidArgument,
                      "tuning runs on copies of host tensors; argument " +
                          std::to_string(i) + " is a device buffer");
      size_t bytes = storageBytes(t->dtype, size_t(extentOf(*t)));
      std::vector<unsigned char> b(bytes);
      if (bytes)
        std::memcpy(b.data(), t->data, bytes);
      s.initial.push_back(b);
      s.buffers.push_back(std::move(b));
      s.tensorIndex.push_back(int(i));
    }
    s.rebind();
    return s;
  }
  void rebind() {
    for (size_t b = 0; b < buffers.size(); ++b) {
      TensorView v = *args[size_t(tensorIndex[b])].tensor();
      v.data = buffers[b].data();
      args[size_t(tensorIndex[b])] = Arg(v);
    }
  }
  void restore() {
    for (size_t b = 0; b < buffers.size(); ++b)
      std::copy(initial[b].begin(), initial[b].end(), buffers[b].begin());
  }
  /// Every element of every tensor, as doubles (the outputs to compare).
  std::vector<std::vector<double>> values() const {
    std::vector<std::vector<double>> out;
    for (size_t b = 0; b < buffers.size(); ++b) {
      const TensorView &v = *args[size_t(tensorIndex[b])].tensor();
      std::vector<double> vals;
      vals.reserve(size_t(v.numel()));
      std::vector<int64_t> idx(v.shape.size(), 0);
      int64_t n = v.numel();
      for (int64_t k = 0; k < n; ++k) {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d)
          off += idx[d] * v.strides[d];
        vals.push_back(loadAsDouble(buffers[b].data(), v.dtype, size_t(off)));
        for (int d = int(idx.size()) - 1; d >= 0; --d) {
          if (++idx[size_t(d)] < v.shape[size_t(d)])
            break;
          idx[size_t(d)] = 0;
        }
      }
      out.push_back(std::move(vals));
    }
    return out;
  }
};

/// Times launches of `k` on `args` until the samples are steady (relative
/// standard deviation below the target) or a cap is reached.
StatusOr<TimingStats> measure(Kernel &k, const std::vector<Arg> &args,
                              const MeasureOptions &m, DeviceKind device) {
  for (int i = 0; i < m.warmupLaunches; ++i)
    TESSERA_RETURN_IF_ERROR(k.launch(args));
  std::vector<double> samples;
  Clock::time_point t0 = Clock::now();
  while (true) {
    TESSERA_ASSIGN_OR_RETURN(double ms,
                             k.launchTimed(args, {}, /*flushCaches=*/true));
    samples.push_back(ms);
    int n = int(samples.size());
    if (n >= m.maxSamples || secondsSince(t0) >= m.maxSeconds)
      break;
    if (n >= m.minSamples) {
      TimingStats st = statsOf(samples, "");
      if (st.meanMs > 0 && st.stddevMs / st.meanMs < m.targetRsd)
        break;
    }
  }
  return statsOf(samples,
                 device == DeviceKind::Cuda
                     ? "cuda: events around each launch, L2 flushed "
                       "before it, median"
                     : std::string(deviceKindName(device)) +
                           ": steady_clock around each whole-grid launch, "
                           "median");
}

std::string firstLine(const std::string &s) {
  return s.substr(0, s.find('\n'));
}

/// What a strategy learns from a stored or fresh evaluation of `config`:
/// its median, or why it is invalid.
Evaluation evaluationOf(const Config &config, const EvaluatedConfig &e) {
  Evaluation ev;
  ev.config = config;
  if (e.stats)
    ev.score = e.stats->medianMs;
  else
    ev.invalidReason = e.invalidReason;
  return ev;
}

} // namespace

//===----------------------------------------------------------------------===//
// Spaces, keys, identities
//===----------------------------------------------------------------------===//

StatusOr<Space> autotune::kernelSpace(const Program &program,
                                      const std::string &kernel) {
  const KernelInfo *info = program.findKernel(kernel);
  if (!info)
    return Status(StatusCode::kNotFound, "no kernel '" + kernel + "'");
  if (!info->autotune)
    return Status(StatusCode::kInvalidArgument,
                  "kernel '" + kernel + "' has no @autotune space");
  std::vector<Parameter> params;
  for (const auto &[name, values] : info->autotune->space) {
    Parameter p;
    p.name = name;
    for (size_t i = 0; i < values.size(); ++i) {
      p.values.push_back(values[i].isNumber() ? values[i].asDouble()
                                              : double(i));
      p.labels.push_back(values[i].toString());
    }
    params.push_back(std::move(p));
  }
  const Program *prog = &program;
  std::vector<std::pair<std::string, std::vector<ConstValue>>> space =
      info->autotune->space;
  bool restricted = !info->autotune->restrictions.empty();
  std::function<bool(const Config &)> valid;
  if (restricted)
    valid = [prog, kernel, space](const Config &c) {
      std::map<std::string, ConstValue> consts;
      for (size_t i = 0; i < space.size() && i < c.size(); ++i)
        consts[space[i].first] = space[i].second[c[i]];
      auto ok = prog->satisfiesRestrictions(kernel, consts);
      return ok.ok() && *ok;
    };
  return Space(std::move(params), std::move(valid));
}

std::map<std::string, ConstValue> autotune::configConstants(const Space &space,
                                                            const Config &c) {
  std::map<std::string, ConstValue> out;
  for (size_t i = 0; i < space.params().size() && i < c.size(); ++i)
    out[space.params()[i].name] =
        ConstValue::parse(space.params()[i].labels[c[i]]);
  return out;
}

std::optional<std::map<std::string, ConstValue>>
autotune::labelledConstants(const Space &space,
                            const std::map<std::string, std::string> &labels) {
  std::optional<Config> c = configOfLabels(space, labels);
  if (!c)
    return std::nullopt;
  return configConstants(space, *c);
}

std::string autotune::kernelIdentityHash(const Program &program,
                                         const std::string &kernel) {
  std::string_view src = program.source();
  const KernelInfo *info = program.findKernel(kernel);
  std::string text(src);
  if (info && info->autotune) {
    // The decorators sit between the previous definition and `def kernel`:
    // cut the last autotune(...) call there.
    std::string def = "def " + kernel;
    size_t defPos = text.find(def + "(");
    if (defPos != std::string::npos) {
      size_t at = text.rfind("autotune", defPos);
      size_t open = at == std::string::npos ? at : text.find('(', at);
      if (open != std::string::npos && open < defPos) {
        size_t close = matchParen(text, open);
        if (close != std::string::npos && close <= defPos)
          text.erase(at, close - at);
      }
    }
  }
  return hex(fnv1a(kernel + '\0' + text));
}

StatusOr<std::map<std::string, std::string>>
autotune::launchKey(const KernelInfo &info, const std::vector<Arg> &args,
                    const std::string &precision) {
  std::map<std::string, std::string> key;
  std::map<std::string, int64_t> symbols;
  std::map<std::string, std::string> scalars;
  size_t a = 0;
  for (const ParamInfo &p : info.params) {
    if (p.kind == ParamKind::Constexpr)
      continue;
    if (a >= args.size())
      return Status(StatusCode::kInvalidArgument,
                    "kernel '" + info.name + "' expects more arguments (" +
                        p.name + " is missing)");
    const Arg &arg = args[a++];
    if (p.kind == ParamKind::Tensor) {
      const TensorView *t = arg.tensor();
      if (!t) {
        key["dtype:" + p.name] = "None";
        continue;
      }
      key["dtype:" + p.name] = dtypeName(t->dtype);
      for (size_t d = 0; d < p.dims.size() && d < t->shape.size(); ++d)
        if (!p.dims[d].symbol.empty())
          symbols.emplace(p.dims[d].symbol, t->shape[d]);
    } else {
      scalars[p.name] = arg.describe();
    }
  }
  if (info.autotune)
    for (const std::string &k : info.autotune->key) {
      if (auto it = symbols.find(k); it != symbols.end())
        key[k] = std::to_string(it->second);
      else if (auto s = scalars.find(k); s != scalars.end())
        key[k] = s->second;
    }
  if (!precision.empty())
    key["precision"] = precision;
  return key;
}

DeviceId autotune::deviceId(Runtime &rt, DeviceKind kind) {
  DeviceId d;
  d.kind = deviceKindName(kind);
  if (auto info = rt.deviceInfo(kind); info.ok()) {
    d.name = info->name;
    d.arch = info->arch;
    d.smCount = info->computeUnits;
  }
  return d;
}

std::string autotune::cacheDirectory(const KernelInfo &info,
                                     const TuneOptions &options) {
  if (!options.cacheDir.empty())
    return options.cacheDir;
  if (info.autotune && !info.autotune->cache.empty())
    return info.autotune->cache;
  return "";
}

std::optional<MissPolicy> autotune::parseMissPolicy(std::string_view name) {
  if (name == "tune")
    return MissPolicy::Tune;
  if (name == "default")
    return MissPolicy::Default;
  if (name == "nearest")
    return MissPolicy::Nearest;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Tuner
//===----------------------------------------------------------------------===//

Tuner::Tuner(Runtime &rt, std::shared_ptr<Program> program, std::string kernel,
             TuneOptions options)
    : rt_(rt), program_(std::move(program)), kernel_(std::move(kernel)),
      opts_(std::move(options)) {}

StatusOr<TuneResult> Tuner::tune(const std::vector<Arg> &args, bool force) {
  Clock::time_point t0 = Clock::now();
  if (opts_.device == DeviceKind::Sim)
    return Status(StatusCode::kFailedPrecondition,
                  "the sim device is for correctness only: it refuses to "
                  "tune (its timings say nothing about a GPU)");
  TESSERA_RETURN_IF_ERROR(rt_.deviceStatus(opts_.device));
  const KernelInfo *info = program_->findKernel(kernel_);
  if (!info)
    return Status(StatusCode::kNotFound, "no kernel '" + kernel_ + "'");
  TESSERA_ASSIGN_OR_RETURN(Space space, kernelSpace(*program_, kernel_));
  TESSERA_ASSIGN_OR_RETURN(auto keyValues,
                           launchKey(*info, args, opts_.precision));
  TESSERA_ASSIGN_OR_RETURN(auto cache,
                           TuningCache::open(cacheDirectory(*info, opts_)));

  TuneResult result;
  result.key.kernel = kernel_;
  result.key.kernelHash = kernelIdentityHash(*program_, kernel_);
  result.key.compilerVersion = compilerVersion();
  result.key.device = deviceId(rt_, opts_.device);
  result.key.keyValues = keyValues;

  std::map<std::string, std::vector<std::string>> spaceLabels;
  for (const Parameter &p : space.params())
    spaceLabels[p.name] = p.labels;
  auto labelsOf = [&](const Config &c) {
    std::map<std::string, std::string> m;
    for (size_t i = 0; i < c.size(); ++i)
      m[space.params()[i].name] = space.params()[i].labels[c[i]];
    return m;
  };
  // The stored configurations still inside this space, as Configs.
  auto toConfig = [&](const std::map<std::string, std::string> &m) {
    return configOfLabels(space, m);
  };

  std::optional<TuningRecord> prior = cache->lookup(result.key);
  if (prior && !force) {
    if (auto c = toConfig(prior->best)) {
      result.best = prior->best;
      result.bestStats = prior->bestStats;
      result.fromCache = true;
      result.record = *prior;
      result.reused = prior->evaluated.size();
      result.evaluated = prior->evaluated.size();
      result.seconds = secondsSince(t0);
      return result;
    }
    // The stored best is outside the edited space: tune again, reusing
    // the evaluations that still apply.
  }

  std::unique_ptr<Strategy> strategy = makeStrategy(opts_.strategy);
  if (!strategy)
    return Status(StatusCode::kInvalidArgument,
                  "unknown search strategy '" + opts_.strategy + "'");
  strategy->reset(space, opts_.seed);

  TESSERA_ASSIGN_OR_RETURN(Scratch scratch, Scratch::make(args));
  CompileOptions base;
  base.precision = opts_.precision;
  base.constants = opts_.fixed;

  // The reference output: the default configuration (the kernel's own
  // defaults for every tuned name).
  std::vector<std::vector<double>> reference;
  {
    auto k = rt_.compile(*program_, kernel_, base, opts_.device);
    Status s = k.ok() ? okStatus() : k.status();
    if (s.ok()) {
      scratch.restore();
      s = (*k)->launch(scratch.args);
    }
    if (!s.ok())
      return Status(StatusCode::kFailedPrecondition,
                    "cannot tune '" + kernel_ +
                        "': its default configuration, whose output every "
                        "candidate is checked against, fails: " +
                        firstLine(s.toString()));
    reference = scratch.values();
  }
  int64_t longest = 1;
  for (const Arg &a : args)
    if (const TensorView *t = a.tensor())
      for (int64_t e : t->shape)
        longest = std::max(longest, e);

  // What rules a configuration out before compiling it: on GPU targets a
  // block of more than 1024 threads. (Shared memory over the target's
  // limit is found by the GPU lowering, which computes it per
  // configuration, and reported as RESOURCE_EXHAUSTED.)
  auto prune = [&](const std::map<std::string, ConstValue> &c) -> Status {
    if (opts_.device == DeviceKind::Cpu)
      return okStatus();
    auto w = c.find("num_warps");
    if (w != c.end() && w->second.isInt() && w->second.getInt() * 32 > 1024)
      return Status(StatusCode::kResourceExhausted,
                    "num_warps=" + std::to_string(w->second.getInt()) +
                        " gives " + std::to_string(w->second.getInt() * 32) +
                        " threads per block; the limit is 1024");
    return okStatus();
  };

  std::vector<EvaluatedConfig> evaluations;
  std::set<uint64_t> seen;
  if (prior)
    for (const EvaluatedConfig &e : prior->evaluated)
      if (auto c = toConfig(e.config);
          c && space.isValid(*c) && seen.insert(space.index(*c)).second) {
        strategy->observe(evaluationOf(*c, e));
        evaluations.push_back(e);
        ++result.reused;
      }

  Budget budget = opts_.budget;
  if (budget.evaluations <= 0 && budget.seconds <= 0)
    budget.evaluations = 64;
  unsigned threads = opts_.compileThreads
                         ? opts_.compileThreads
                         : std::max(1u, std::thread::hardware_concurrency());

  // Checks and times a compiled candidate. Candidates whose code is the
  // same as one already measured in this run (parameters the device
  // ignores) take that measurement: timing identical code twice would only
  // let noise choose between them.
  std::map<uint64_t, std::shared_ptr<Kernel>> compiled;
  std::map<uint64_t, EvaluatedConfig> byCode;
  auto evaluate = [&](const Config &cfg,
                      const StatusOr<std::shared_ptr<Kernel>> &k) {
    EvaluatedConfig e;
    e.config = labelsOf(cfg);
    if (!k.ok()) {
      e.invalidReason = std::string(statusCodeName(k.status().code())) + ": " +
                        firstLine(k.status().message());
      return e;
    }
    uint64_t code = (*k)->codeFingerprint();
    if (auto it = byCode.find(code); code && it != byCode.end()) {
      e.stats = it->second.stats;
      e.invalidReason = it->second.invalidReason;
      if (e.stats)
        e.stats->method += " (same code as " + [&] {
          std::string d;
          for (const auto &[n, v] : it->second.config)
            d += (d.empty() ? "" : ",") + n + "=" + v;
          return d;
        }() + ")";
      return e;
    }
    auto remember = [&](EvaluatedConfig r) {
      if (code)
        byCode.emplace(code, r);
      return r;
    };
    scratch.restore();
    Status s = (*k)->launch(scratch.args);
    if (!s.ok()) {
      e.invalidReason = "launch failed: " + firstLine(s.toString());
      return remember(e);
    }
    auto got = scratch.values();
    for (size_t b = 0; b < got.size(); ++b) {
      DType dt = scratch.args[size_t(scratch.tensorIndex[b])].tensor()->dtype;
      Tolerance tol = configTolerance(dt, longest);
      for (size_t i = 0; i < got[b].size(); ++i) {
        double x = got[b][i], r = reference[b][i];
        if (!isClose(x, r, tol)) {
          char msg[160];
          std::snprintf(msg, sizeof(msg),
                        "wrong result: tensor argument %d element %zu is "
                        "%g, the default configuration gives %g",
                        scratch.tensorIndex[b], i, x, r);
          e.invalidReason = msg;
          return remember(e);
        }
      }
    }
    auto st = measure(**k, scratch.args, opts_.measure, opts_.device);
    if (!st.ok()) {
      e.invalidReason = "launch failed: " + firstLine(st.status().toString());
      return remember(e);
    }
    e.stats = *st;
    compiled[space.index(cfg)] = *k;
    return remember(e);
  };

  size_t fresh = 0;
  auto budgetLeft = [&]() -> int64_t {
    if (budget.seconds > 0 && secondsSince(t0) >= budget.seconds)
      return 0;
    if (budget.evaluations > 0)
      return budget.evaluations - int64_t(fresh);
    return int64_t(threads);
  };
  while (true) {
    int64_t left = budgetLeft();
    if (left <= 0)
      break;
    std::vector<Config> batch =
        strategy->propose(size_t(std::min<int64_t>(left, threads)));
    if (batch.empty())
      break;
    // Compile the batch in parallel, then check and time serially.
    std::vector<std::future<StatusOr<std::shared_ptr<Kernel>>>> jobs;
    for (const Config &c : batch) {
      CompileOptions o = base;
      for (auto &[n, v] : configConstants(space, c))
        o.constants[n] = v;
      // One thread: compile in this one, when the result is needed.
      auto policy = threads == 1 ? std::launch::deferred : std::launch::async;
      Status early = prune(o.constants);
      jobs.push_back(std::async(policy, [this, o, early] {
        if (!early.ok())
          return StatusOr<std::shared_ptr<Kernel>>(early);
        return rt_.compile(*program_, kernel_, o, opts_.device);
      }));
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      StatusOr<std::shared_ptr<Kernel>> k = jobs[i].get();
      EvaluatedConfig e = evaluate(batch[i], k);
      strategy->observe(evaluationOf(batch[i], e));
      evaluations.push_back(e);
      ++fresh;
      if (opts_.progress)
        opts_.progress(
            e, fresh,
            size_t(std::max<int64_t>(budget.evaluations, int64_t(fresh))));
    }
  }

  // Re-measure the best few of this run before choosing (a lucky sample
  // should not pick the winner).
  std::vector<size_t> order;
  for (size_t i = 0; i < evaluations.size(); ++i)
    if (evaluations[i].stats)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return evaluations[a].stats->medianMs < evaluations[b].stats->medianMs;
  });
  for (size_t r = 0; r < order.size() && int(r) < opts_.remeasureTop; ++r) {
    EvaluatedConfig &e = evaluations[order[r]];
    auto c = toConfig(e.config);
    if (!c)
      continue;
    auto it = compiled.find(space.index(*c));
    if (it == compiled.end())
      continue; // from the cache: compiled by an earlier run
    auto st = measure(*it->second, scratch.args, opts_.measure, opts_.device);
    if (st.ok() && st->medianMs > e.stats->medianMs)
      e.stats = *st; // keep the more pessimistic of the two medians
  }
  const EvaluatedConfig *best = nullptr;
  result.evaluated = evaluations.size();
  for (const EvaluatedConfig &e : evaluations) {
    if (!e.stats)
      ++result.invalid;
    if (e.stats && toConfig(e.config) &&
        (!best || e.stats->medianMs < best->stats->medianMs))
      best = &e;
  }
  if (!best)
    return Status(StatusCode::kFailedPrecondition,
                  "no configuration of '" + kernel_ +
                      "' compiled, ran and matched the default's output (" +
                      std::to_string(evaluations.size()) + " tried)");
  result.best = best->config;
  result.bestStats = *best->stats;
  result.seconds = secondsSince(t0);

  TuningRecord rec;
  rec.key = result.key;
  rec.space = spaceLabels;
  rec.best = result.best;
  rec.bestStats = result.bestStats;
  rec.evaluated = evaluations;
  rec.strategy = strategy->name();
  rec.tuningSeconds = result.seconds + (prior ? prior->tuningSeconds : 0);
  // updatedAt: TuningCache::store stamps it.
  TESSERA_RETURN_IF_ERROR(cache->store(rec));
  result.record = rec;
  return result;
}

//===----------------------------------------------------------------------===//
// TunedKernel
//===----------------------------------------------------------------------===//

TunedKernel::TunedKernel(Runtime &rt, std::shared_ptr<Program> program,
                         std::string kernel, TunedKernelOptions options)
    : rt_(rt), program_(std::move(program)), kernel_(std::move(kernel)),
      opts_(std::move(options)) {}

StatusOr<std::shared_ptr<TunedKernel>>
TunedKernel::create(Runtime &rt, std::shared_ptr<Program> program,
                    std::string kernel, TunedKernelOptions options) {
  const KernelInfo *info = program->findKernel(kernel);
  if (!info)
    return Status(StatusCode::kNotFound, "no kernel '" + kernel + "'");
  std::shared_ptr<TunedKernel> k(
      new TunedKernel(rt, std::move(program), std::move(kernel), options));
  k->info_ = info;
  // What every key's record shares, computed once.
  if (info->autotune) {
    TESSERA_ASSIGN_OR_RETURN(Space space,
                             kernelSpace(*k->program_, k->kernel_));
    k->space_ = std::move(space);
    k->keyBase_.kernel = k->kernel_;
    k->keyBase_.kernelHash = kernelIdentityHash(*k->program_, k->kernel_);
    k->keyBase_.compilerVersion = compilerVersion();
    k->keyBase_.device = deviceId(rt, options.tune.device);
  }
  TESSERA_ASSIGN_OR_RETURN(
      k->cache_, TuningCache::open(cacheDirectory(*info, options.tune)));
  return k;
}

StatusOr<const TunedKernel::Entry *>
TunedKernel::entryFor(const std::vector<Arg> &args) {
  TESSERA_ASSIGN_OR_RETURN(auto keyValues,
                           launchKey(*info_, args, opts_.tune.precision));
  std::string flat;
  for (const auto &[k, v] : keyValues) {
    flat += k;
    flat += '=';
    flat += v;
    flat += ';';
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(flat); it != entries_.end())
    return &it->second;

  Entry e;
  e.source = "default";
  if (space_) {
    RecordKey key = keyBase_;
    key.keyValues = keyValues;
    std::optional<TuningRecord> rec = cache_->lookup(key);
    if (rec) {
      e.source = "cache";
    } else if (opts_.onMiss == MissPolicy::Nearest) {
      rec = cache_->nearest(key);
      if (rec)
        e.source = "nearest";
    } else if (opts_.onMiss == MissPolicy::Tune &&
               opts_.tune.device != DeviceKind::Sim) {
      Tuner t(rt_, program_, kernel_, opts_.tune);
      TESSERA_ASSIGN_OR_RETURN(TuneResult r, t.tune(args));
      rec = r.record;
      e.source = "tuned";
    }
    if (rec) {
      // Only configurations of the current space are used.
      if (auto c = configOfLabels(*space_, rec->best))
        e.constants = configConstants(*space_, *c);
      else
        e.source = "default";
    }
  }
  CompileOptions o;
  o.precision = opts_.tune.precision;
  o.constants = opts_.tune.fixed;
  for (const auto &[n, v] : e.constants)
    o.constants[n] = v;
  TESSERA_ASSIGN_OR_RETURN(
      e.kernel, rt_.compile(*program_, kernel_, o, opts_.tune.device));
  auto [it, inserted] = entries_.emplace(flat, std::move(e));
  return &it->second;
}

Status TunedKernel::launch(const std::vector<Arg> &args,
                           const LaunchOptions &opts) {
  TESSERA_ASSIGN_OR_RETURN(const Entry *e, entryFor(args));
  return e->kernel->launch(args, opts);
}

StatusOr<std::pair<std::map<std::string, ConstValue>, std::string>>
TunedKernel::resolve(const std::vector<Arg> &args) {
  TESSERA_ASSIGN_OR_RETURN(const Entry *e, entryFor(args));
  return std::make_pair(e->constants, e->source);
}
