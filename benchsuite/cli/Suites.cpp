//===- Suites.cpp - The benchmark suites of tessera-bench -----------------===//
//
// vector_ops and memory_bandwidth (f32): problem sizes from seed document
// 002 (`full`) and a small representative subset (`quick`). Every case is
// validated against its plain C++ baseline (benchsuite/baselines, which
// shares no code with Tessera) under the tolerance table of
// tessera/Support/Tolerance.h before it is timed.
//
//===----------------------------------------------------------------------===//

#include "Suites.h"

#include "Loops.h"

#include "tessera/Support/Tolerance.h"
#include "tessera/bench/Counting.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace tessera;
using namespace tessera::bench;

StatusOr<std::shared_ptr<Program>>
RunContext::program(const std::string &family) {
  if (auto it = programs.find(family); it != programs.end())
    return it->second;
  TESSERA_ASSIGN_OR_RETURN(auto p,
                           rt->loadFile(kernelsDir + "/" + family + ".tile"));
  programs[family] = p;
  return p;
}

namespace {

/// Host arrays of one case (f32 data, i32 indices), kept alive by the
/// closures that use them.
struct Buffers {
  std::vector<float> a, b, c, c0;
  std::vector<int32_t> idx;
  std::vector<float> out = std::vector<float>(1, 0.0f);
};

void fillUniform(std::vector<float> &v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (float &x : v)
    x = d(rng);
}

/// Inputs a and b (uniform in [-1, 1], seeds `seed` and `seed` + 1) and a
/// zeroed output c, each spanning n elements `stride` apart.
std::shared_ptr<Buffers> makeBuffers(int64_t n, int64_t stride, uint64_t seed) {
  auto buf = std::make_shared<Buffers>();
  size_t span = size_t(n > 0 ? (n - 1) * stride + 1 : 0);
  buf->a.resize(span);
  buf->b.resize(span);
  buf->c.assign(span, 0.0f);
  fillUniform(buf->a, seed);
  fillUniform(buf->b, seed + 1);
  return buf;
}

TensorView view(std::vector<float> &v, int64_t n, int64_t stride = 1) {
  TensorView t;
  t.data = v.data();
  t.dtype = DType::F32;
  t.shape = {n};
  t.strides = {stride};
  return t;
}

TensorView viewI32(std::vector<int32_t> &v, int64_t n) {
  TensorView t;
  t.data = v.data();
  t.dtype = DType::I32;
  t.shape = {n};
  t.strides = {1};
  return t;
}

/// The parts of a case that differ between kernels.
struct Plan {
  std::string family, kernel, baselineName = "C++ loop (-O3 -march=native)";
  std::vector<Arg> args;
  /// Puts outputs (and in-place inputs) back to their initial state.
  std::function<void()> reset;
  /// Extra launches after the main one (norm_finalize).
  std::vector<std::pair<std::string, std::vector<Arg>>> after;
  /// The Tessera result and the baseline's, as doubles, after one run each
  /// from the initial state.
  std::function<std::vector<double>()> result;
  std::function<std::vector<double>()> expected;
  /// One timed baseline call.
  std::function<void()> baseline;
  ToleranceOp op = ToleranceOp::Elementwise;
  int64_t reductionLength = 1;
  Work work;
};

std::string firstLine(const std::string &s) {
  return s.substr(0, s.find('\n'));
}

/// Compiles (with the tuning mode), validates, times; fills `r`.
void runPlan(RunContext &ctx, Plan &plan, CaseResult &r) {
  auto fail = [&](const std::string &why) {
    r.passed = false;
    r.failure = why;
  };
  auto prog = ctx.program(plan.family);
  if (!prog.ok())
    return fail(firstLine(prog.status().toString()));
  // The configuration: the tuning cache (cached), tuned now (on), or the
  // kernel's defaults (off).
  std::map<std::string, ConstValue> consts;
  r.configSource = "default";
  const KernelInfo *info = (*prog)->findKernel(plan.kernel);
  if (!info)
    return fail("no kernel '" + plan.kernel + "' in " + plan.family);
  if (ctx.tune != TuneMode::Off && info->autotune) {
    autotune::TunedKernelOptions ko;
    ko.tune.device = ctx.device;
    ko.tune.cacheDir = ctx.cacheDir;
    ko.tune.budget.evaluations = 16;
    ko.onMiss = ctx.tune == TuneMode::On && ctx.device != DeviceKind::Sim
                    ? autotune::MissPolicy::Tune
                    : autotune::MissPolicy::Nearest;
    auto tk = autotune::TunedKernel::create(*ctx.rt, *prog, plan.kernel, ko);
    if (!tk.ok())
      return fail(firstLine(tk.status().toString()));
    auto t0 = std::chrono::steady_clock::now();
    auto how = (*tk)->resolve(plan.args);
    if (!how.ok())
      return fail("tuning: " + firstLine(how.status().toString()));
    if (how->second == "tuned")
      r.compile.tuning = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
    consts = how->first;
    r.configSource = how->second;
  }
  CompileOptions co;
  co.constants = consts;
  auto kernel = ctx.rt->compile(**prog, plan.kernel, co, ctx.device);
  if (!kernel.ok())
    return fail(firstLine(kernel.status().toString()));
  for (const auto &[n, v] : consts)
    r.config[n] = v.toString();
  const CompileTimes &ct = (*kernel)->compileTimes();
  r.compile.parse = ct.parse;
  r.compile.sema = ct.sema;
  r.compile.tilePasses = ct.tilePasses;
  r.compile.lowering = ct.lowering;
  r.compile.codegen = ct.codegen;
  std::vector<std::pair<std::shared_ptr<Kernel>, std::vector<Arg>>> extra;
  for (auto &[name, args] : plan.after) {
    auto k = ctx.rt->compile(**prog, name, {}, ctx.device);
    if (!k.ok())
      return fail(firstLine(k.status().toString()));
    extra.push_back({*k, args});
  }
  // On cuda launchTimed flushes the L2 before the kernel (the cpu cache is
  // flushed by the sampler's callback).
  const bool flushGpu = ctx.flushCaches && ctx.device == DeviceKind::Cuda;
  auto launchAll = [&]() -> StatusOr<double> {
    TESSERA_ASSIGN_OR_RETURN(double ms,
                             (*kernel)->launchTimed(plan.args, {}, flushGpu));
    for (auto &[k, args] : extra) {
      TESSERA_ASSIGN_OR_RETURN(double more, k->launchTimed(args, {}, false));
      ms += more;
    }
    return ms;
  };

  // Validation: one run from the initial state against the baseline's.
  plan.reset();
  if (auto s = launchAll(); !s.ok())
    return fail("launch failed: " + firstLine(s.status().toString()));
  std::vector<double> got = plan.result();
  plan.reset();
  std::vector<double> want = plan.expected();
  Tolerance tol = toleranceFor(DType::F32, plan.op, plan.reductionLength);
  int64_t bad = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    double e = std::fabs(got[i] - want[i]);
    if (std::isfinite(e)) {
      r.maxAbsError = std::max(r.maxAbsError, e);
      if (want[i] != 0)
        r.maxRelError = std::max(r.maxRelError, e / std::fabs(want[i]));
    }
    if (!isClose(got[i], want[i], tol))
      ++bad;
  }
  if (got.size() != want.size() || bad) {
    char msg[200];
    std::snprintf(msg, sizeof(msg),
                  "wrong result: %lld of %zu elements outside atol %.3g / "
                  "rtol %.3g (max abs error %.3g)",
                  static_cast<long long>(bad), want.size(), tol.atol, tol.rtol,
                  r.maxAbsError);
    return fail(msg);
  }

  auto flush = [&] {
    if (ctx.flushCaches && ctx.cpuFlusher)
      ctx.cpuFlusher->flush();
  };
  auto run = sample(ctx.sampler, launchAll, flush);
  if (!run.ok())
    return fail(firstLine(run.status().toString()));
  r.samples = run->samples;
  r.stopReason = run->stopReason;
  r.stats = computeStats(r.samples);
  r.work = plan.work;
  r.tflops = achievedTflops(r.work, r.stats.median);
  r.gbs = achievedGBs(r.work, r.stats.median);
  if (ctx.peaks) {
    Roofline rl =
        roofline(r.work, r.stats.median, *ctx.peaks, ComputePath::Fp32);
    if (rl.valid)
      r.rooflineEfficiency = rl.efficiency;
    r.computePath = std::string(computePathName(ComputePath::Fp32));
  }
  // The baseline runs on the host: beside cpu results only.
  if (plan.baseline && ctx.device == DeviceKind::Cpu) {
    auto timeBaseline = [&]() -> StatusOr<double> {
      auto t0 = std::chrono::steady_clock::now();
      plan.baseline();
      return std::chrono::duration<double, std::milli>(
                 std::chrono::steady_clock::now() - t0)
          .count();
    };
    auto b = sample(ctx.sampler, timeBaseline, flush);
    if (b.ok()) {
      CaseResult::Baseline base;
      base.name = plan.baselineName;
      base.samples = b->samples;
      base.stats = computeStats(base.samples);
      base.speedup =
          r.stats.median > 0 ? base.stats.median / r.stats.median : 0;
      r.baseline = base;
    }
  }
  r.passed = true;
}

std::vector<double> toDoubles(const std::vector<float> &v, int64_t n,
                              int64_t stride = 1) {
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[size_t(i)] = v[size_t(i * stride)];
  return out;
}

CaseResult startResult(const RunContext &ctx, const CaseSpec &spec) {
  CaseResult r;
  r.suite = spec.suite;
  r.kernel = spec.kernel;
  r.name = spec.name;
  r.device = deviceKindName(ctx.device);
  r.precision = "fp32";
  r.params = spec.params;
  return r;
}

//===----------------------------------------------------------------------===//
// vector_ops
//===----------------------------------------------------------------------===//

CaseResult runVectorOp(RunContext &ctx, const CaseSpec &spec) {
  CaseResult r = startResult(ctx, spec);
  const int64_t n = spec.n, s = spec.stride;
  const int threads = int(ctx.rt->numThreads());
  auto buf = makeBuffers(n, s, 1);
  const float alpha = 1.5f;
  Plan p;
  p.family = "vector_ops";
  p.kernel = spec.op;
  p.work = vectorOpWork(spec.op, n, 4);
  std::vector<float> b0 = buf->b;
  if (spec.op == "axpy") {
    p.args = {view(buf->a, n, s), view(buf->b, n, s), Arg(double(alpha))};
    p.reset = [buf, b0] { buf->b = b0; };
    p.result = [buf, n, s] { return toDoubles(buf->b, n, s); };
    p.expected = [buf, b0, n, s, alpha] {
      std::vector<float> y = b0;
      loops::axpyStrided(alpha, buf->a.data(), y.data(), n, s, 1);
      return toDoubles(y, n, s);
    };
    p.baseline = [buf, n, s, alpha, threads] {
      loops::axpyStrided(alpha, buf->a.data(), buf->b.data(), n, s, threads);
    };
  } else if (spec.op == "add" || spec.op == "mul") {
    bool add = spec.op == "add";
    p.args = {view(buf->a, n, s), view(buf->b, n, s), view(buf->c, n, s)};
    p.reset = [buf] { std::fill(buf->c.begin(), buf->c.end(), 0.0f); };
    p.result = [buf, n, s] { return toDoubles(buf->c, n, s); };
    p.expected = [buf, n, s, add] {
      std::vector<float> c(buf->c.size(), 0.0f);
      if (add)
        loops::addStrided(buf->a.data(), buf->b.data(), c.data(), n, s, 1);
      else // mul cases are contiguous
        loops::mul(buf->a.data(), buf->b.data(), c.data(), n, 1);
      return toDoubles(c, n, s);
    };
    p.baseline = [buf, n, s, add, threads] {
      if (add)
        loops::addStrided(buf->a.data(), buf->b.data(), buf->c.data(), n, s,
                          threads);
      else
        loops::mul(buf->a.data(), buf->b.data(), buf->c.data(), n, threads);
    };
  } else {
    // Reductions into out[0] (f32), zeroed (or -inf) first.
    std::string op = spec.op;
    float init =
        op == "reduce_max" ? -std::numeric_limits<float>::infinity() : 0.0f;
    TensorView out;
    out.data = buf->out.data();
    out.dtype = DType::F32;
    out.shape = {1};
    out.strides = {1};
    if (op == "dot")
      p.args = {view(buf->a, n), view(buf->b, n), out};
    else
      p.args = {view(buf->a, n), out};
    if (op == "norm")
      p.after.push_back({"norm_finalize", {out}});
    p.reset = [buf, init] { buf->out[0] = init; };
    p.result = [buf] { return std::vector<double>{buf->out[0]}; };
    auto compute = [buf, n, op](int t) -> float {
      if (op == "dot")
        return loops::dot(buf->a.data(), buf->b.data(), n, t);
      if (op == "norm")
        return loops::norm2(buf->a.data(), n, t);
      if (op == "reduce_sum")
        return loops::reduceSum(buf->a.data(), n, t);
      return loops::reduceMax(buf->a.data(), n, t);
    };
    p.expected = [compute] { return std::vector<double>{compute(1)}; };
    p.baseline = [compute, threads, buf] { buf->c[0] = compute(threads); };
    p.op =
        op == "reduce_max" ? ToleranceOp::Elementwise : ToleranceOp::Reduction;
    p.reductionLength = n;
  }
  runPlan(ctx, p, r);
  return r;
}

std::vector<CaseSpec> vectorOpCases(SizeSet sizes, DeviceKind device) {
  std::vector<int64_t> ns;
  if (sizes == SizeSet::Full)
    ns = {1024,    4096,    16384,    65536,   262144,
          1048576, 4194304, 16777216, 67108864};
  else if (device == DeviceKind::Sim)
    ns = {4096, 65536};
  else
    ns = {65536, 4194304};
  std::vector<CaseSpec> out;
  for (int64_t n : ns)
    for (const char *op :
         {"axpy", "dot", "norm", "add", "mul", "reduce_sum", "reduce_max"}) {
      CaseSpec c;
      c.suite = "vector_ops";
      c.kernel = op;
      c.op = op;
      c.n = n;
      c.pattern = "sequential";
      c.name = std::string(op) + " n=" + std::to_string(n);
      c.params = {{"N", std::to_string(n)}, {"pattern", "sequential"}};
      out.push_back(c);
    }
  std::vector<int64_t> strided = sizes == SizeSet::Full
                                     ? std::vector<int64_t>{1048576, 4194304}
                                     : std::vector<int64_t>{ns.back()};
  std::vector<int64_t> strides = sizes == SizeSet::Full
                                     ? std::vector<int64_t>{2, 4, 8}
                                     : std::vector<int64_t>{4};
  for (int64_t n : strided)
    for (int64_t s : strides)
      for (const char *op : {"axpy", "add"}) {
        CaseSpec c;
        c.suite = "vector_ops";
        c.kernel = op;
        c.op = op;
        c.n = n;
        c.stride = s;
        c.pattern = "strided_" + std::to_string(s);
        c.name = std::string(op) + " n=" + std::to_string(n) + " stride " +
                 std::to_string(s);
        c.params = {{"N", std::to_string(n)}, {"pattern", c.pattern}};
        out.push_back(c);
      }
  return out;
}

//===----------------------------------------------------------------------===//
// memory_bandwidth (STREAM)
//===----------------------------------------------------------------------===//

CaseResult runStream(RunContext &ctx, const CaseSpec &spec) {
  CaseResult r = startResult(ctx, spec);
  const int64_t n = spec.n, s = spec.stride;
  const int threads = int(ctx.rt->numThreads());
  const bool random = spec.pattern == "random";
  const std::string op = spec.op;
  const float scalar = 3.0f;
  auto buf = makeBuffers(n, s, 3);
  if (random) {
    buf->idx.resize(size_t(n));
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<int64_t> d(0, std::max<int64_t>(n - 1, 0));
    for (int32_t &i : buf->idx)
      i = int32_t(d(rng));
  }
  Plan p;
  p.family = "stream";
  p.kernel = random ? op + "_gather" : op;
  p.work = streamWork(op, n, 4);
  if (random) // the indices are read too
    p.work.bytes += double(n) * 4;
  TensorView a = view(buf->a, n, s), b = view(buf->b, n, s),
             c = view(buf->c, n, s);
  if (random) {
    TensorView idx = viewI32(buf->idx, n);
    if (op == "copy")
      p.args = {a, idx, c};
    else if (op == "scale")
      p.args = {a, idx, c, Arg(double(scalar))};
    else if (op == "add")
      p.args = {a, b, idx, c};
    else
      p.args = {a, b, idx, c, Arg(double(scalar))};
  } else {
    if (op == "copy")
      p.args = {a, c};
    else if (op == "scale")
      p.args = {a, c, Arg(double(scalar))};
    else if (op == "add")
      p.args = {a, b, c};
    else
      p.args = {a, b, c, Arg(double(scalar))};
  }
  auto kernelOn = [buf, n, s, op, random, scalar](float *out, int t) {
    const float *pa = buf->a.data(), *pb = buf->b.data();
    if (random) {
      const int32_t *ix = buf->idx.data();
      if (op == "copy")
        loops::copyGather(pa, ix, out, n, t);
      else if (op == "scale")
        loops::scaleGather(pa, ix, out, scalar, n, t);
      else if (op == "add")
        loops::addGather(pa, pb, ix, out, n, t);
      else
        loops::triadGather(pa, pb, ix, out, scalar, n, t);
    } else if (op == "copy") {
      loops::copyStrided(pa, out, n, s, t);
    } else if (op == "scale") {
      loops::scaleStrided(pa, out, scalar, n, s, t);
    } else if (op == "add") {
      loops::addStrided(pa, pb, out, n, s, t);
    } else {
      loops::triadStrided(pa, pb, out, scalar, n, s, t);
    }
  };
  p.reset = [buf] { std::fill(buf->c.begin(), buf->c.end(), 0.0f); };
  p.result = [buf, n, s] { return toDoubles(buf->c, n, s); };
  p.expected = [buf, n, s, kernelOn] {
    std::vector<float> out(buf->c.size(), 0.0f);
    kernelOn(out.data(), 1);
    return toDoubles(out, n, s);
  };
  p.baseline = [buf, kernelOn, threads] { kernelOn(buf->c.data(), threads); };
  runPlan(ctx, p, r);
  return r;
}

std::vector<CaseSpec> streamCases(SizeSet sizes, DeviceKind device) {
  std::vector<int64_t> bytes;
  if (sizes == SizeSet::Full)
    for (int64_t mib : {1, 4, 16, 64, 256, 1024, 4096, 8192, 16384})
      bytes.push_back(mib << 20);
  else if (device == DeviceKind::Sim)
    bytes = {int64_t(256) << 10};
  else
    bytes = {int64_t(1) << 20, int64_t(64) << 20};
  std::vector<std::string> patterns =
      sizes == SizeSet::Full
          ? std::vector<std::string>{"sequential", "strided_2", "strided_4",
                                     "strided_8", "random"}
          : std::vector<std::string>{"sequential", "strided_4", "random"};
  std::vector<CaseSpec> out;
  for (int64_t b : bytes)
    for (const std::string &pat : patterns)
      for (const char *op : {"copy", "scale", "add", "triad"}) {
        // Quick: every op sequentially, triad for the other patterns.
        if (sizes == SizeSet::Quick && pat != "sequential" &&
            std::string(op) != "triad")
          continue;
        CaseSpec c;
        c.suite = "memory_bandwidth";
        c.kernel = op;
        c.op = op;
        c.n = b / 4;
        c.pattern = pat;
        if (pat.rfind("strided_", 0) == 0)
          c.stride = std::stoll(pat.substr(8));
        std::string size = b >= (int64_t(1) << 20)
                               ? std::to_string(b >> 20) + " MiB"
                               : std::to_string(b >> 10) + " KiB";
        c.name = std::string(op) + " " + size + " " + pat;
        c.params = {{"bytes", std::to_string(b)},
                    {"N", std::to_string(c.n)},
                    {"pattern", pat}};
        out.push_back(c);
      }
  return out;
}

} // namespace

const std::vector<Suite> &bench::allSuites() {
  static const std::vector<Suite> suites = {
      {"vector_ops",
       "BLAS-1 operations (axpy, dot, norm, add, mul, reduce_sum, "
       "reduce_max), sequential and strided, f32",
       vectorOpCases, runVectorOp},
      {"memory_bandwidth",
       "STREAM copy/scale/add/triad, sequential, strided and random "
       "(gather), f32",
       streamCases, runStream},
  };
  return suites;
}
