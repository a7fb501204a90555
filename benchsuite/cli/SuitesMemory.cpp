//===- SuitesMemory.cpp - vector_ops and memory_bandwidth -----------------===//
//
// BLAS-1 operations and STREAM (f32): problem sizes from seed document 002
// (`full`) and a small representative subset (`quick`). Every case is
// validated against its plain C++ baseline (benchsuite/baselines, which
// shares no code with Tessera) before it is timed.
//
//===----------------------------------------------------------------------===//

#include "SuiteCommon.h"

#include "CudaKernels.h"
#include "Loops.h"

#include "tessera/bench/Counting.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace tessera;
using namespace tessera::bench;

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

std::vector<double> toDoubles(const std::vector<float> &v, int64_t n,
                              int64_t stride = 1) {
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[size_t(i)] = v[size_t(i * stride)];
  return out;
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
  if (spec.seedSimt) {
    // The seed's kernel: (x, y, result, alpha) with `operation` fixed. It
    // writes `result` (axpy too) and leaves the square root of norm to the
    // host.
    const std::string &op = spec.op;
    p.family = "seed/vector_operations";
    p.kernel = "vector_operations";
    p.fixed = {{"operation", ConstValue::string(op)},
               {"result_dtype", ConstValue::dtype(DType::F32)}};
    if (op == "axpy") {
      p.args = {view(buf->a, n, s), view(buf->b, n, s), view(buf->c, n, s),
                Arg(double(alpha))};
      p.reset = [buf] { std::fill(buf->c.begin(), buf->c.end(), 0.0f); };
      p.result = [buf, n, s] { return toDoubles(buf->c, n, s); };
    } else if (op == "add" || op == "mul") {
      p.args.push_back(Arg(1.0));
    } else {
      TensorView out = TensorView::contiguous(buf->out.data(), DType::F32, {1});
      p.args = {view(buf->a, n), view(buf->b, n), out, Arg(1.0)};
      if (op == "norm") {
        p.after.clear();
        p.result = [buf] {
          return std::vector<double>{std::sqrt(double(buf->out[0]))};
        };
      }
    }
  }
  // Beside cuda results: the same operation as a CUDA C++ kernel (NVRTC).
  if (ctx.device == DeviceKind::Cuda) {
    namespace ck = cudakernels;
    const std::string &op = spec.op;
    const int64_t n64 = n, s64 = s;
    p.deviceBaselineName = "CUDA C++ (NVRTC)";
    if (op == "axpy") {
      p.deviceBaseline = nvrtcBaseline(ctx, ck::axpy(),
                                       {spanView(buf->a), spanView(buf->b),
                                        Arg(double(alpha)), Arg(n64), Arg(s64)},
                                       ck::elementwiseGrid(n));
    } else if (op == "add" || op == "mul") {
      p.deviceBaseline =
          nvrtcBaseline(ctx, ck::elementwise(op),
                        {spanView(buf->a), spanView(buf->b), spanView(buf->c),
                         Arg(0.0), Arg(n64), Arg(s64)},
                        ck::elementwiseGrid(n));
    } else {
      std::string rop = op == "norm"         ? "sumsq"
                        : op == "reduce_sum" ? "sum"
                        : op == "reduce_max" ? "max"
                                             : "dot";
      // The accumulator starts at the identity; the launches of a batch
      // accumulate into it (the baseline is timed, not checked).
      buf->c[0] = ck::reduceIdentity(rop);
      TensorView out = TensorView::contiguous(buf->c.data(), DType::F32, {1});
      int sms = 132;
      if (auto info = ctx.rt->deviceInfo(DeviceKind::Cuda); info.ok())
        sms = info->computeUnits;
      p.deviceBaseline = nvrtcBaseline(ctx, ck::reduce(rop),
                                       {view(buf->a, n),
                                        view(rop == "dot" ? buf->b : buf->a, n),
                                        out, Arg(n64)},
                                       ck::reduceGrid(n, sms));
    }
  }
  runPlan(ctx, spec, p, r);
  return r;
}

const char *const kVectorOps[] = {"axpy", "dot",        "norm",      "add",
                                  "mul",  "reduce_sum", "reduce_max"};

CaseSpec vectorCase(const std::string &op, int64_t n, int64_t stride) {
  CaseSpec c;
  c.suite = "vector_ops";
  c.kernel = op;
  c.op = op;
  c.n = n;
  c.stride = stride;
  c.pattern = stride == 1 ? "sequential" : "strided_" + std::to_string(stride);
  c.name = op + " n=" + std::to_string(n) +
           (stride == 1 ? "" : " stride " + std::to_string(stride));
  c.params = {{"N", std::to_string(n)}, {"pattern", c.pattern}};
  return c;
}

std::vector<CaseSpec> vectorOpCases(const CaseRequest &req) {
  std::vector<CaseSpec> out;
  if (req.sizes == SizeSet::Gpu)
    return out; // not in the GPU set
  if (req.sizes == SizeSet::Custom) {
    // N=..., optionally stride=S (axpy and add only, as the strided cases).
    for (const auto &dims : req.custom) {
      if (!matches(dims, {"N"}, {"stride"}))
        continue;
      int64_t stride = dimOr(dims, "stride", 1);
      for (const char *op : kVectorOps)
        if (stride == 1 || std::string(op) == "axpy" ||
            std::string(op) == "add")
          out.push_back(vectorCase(op, dims.at("N"), stride));
    }
    addSeedSimtVariants(out, req);
    return out;
  }
  std::vector<int64_t> ns;
  if (req.sizes == SizeSet::Full)
    ns = {1024,    4096,    16384,    65536,   262144,
          1048576, 4194304, 16777216, 67108864};
  else if (req.device == DeviceKind::Sim)
    ns = {4096, 65536};
  else
    ns = {65536, 4194304};
  for (int64_t n : ns)
    for (const char *op : kVectorOps)
      out.push_back(vectorCase(op, n, 1));
  addSeedSimtVariants(out, req);
  std::vector<int64_t> strided = req.sizes == SizeSet::Full
                                     ? std::vector<int64_t>{1048576, 4194304}
                                     : std::vector<int64_t>{ns.back()};
  std::vector<int64_t> strides = req.sizes == SizeSet::Full
                                     ? std::vector<int64_t>{2, 4, 8}
                                     : std::vector<int64_t>{4};
  for (int64_t n : strided)
    for (int64_t s : strides)
      for (const char *op : {"axpy", "add"})
        out.push_back(vectorCase(op, n, s));
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
  if (spec.seedSimt) {
    // The seed's kernel (sequential pattern only: its strided and random
    // patterns move other elements than STREAM's): (a, b, c, scalar,
    // stride) with `operation` and `access_pattern` fixed.
    p.family = "seed/memory_bandwidth";
    p.kernel = "memory_bandwidth_kernel";
    p.fixed = {{"operation", ConstValue::string(op)},
               {"access_pattern", ConstValue::string("sequential")}};
    p.args = {a, b, c, Arg(double(scalar)), Arg(int64_t(1))};
  }
  if (ctx.device == DeviceKind::Cuda) {
    namespace ck = cudakernels;
    const int64_t n64 = n, s64 = s;
    p.deviceBaselineName = "CUDA C++ (NVRTC)";
    if (random)
      p.deviceBaseline = nvrtcBaseline(ctx, ck::gather(op),
                                       {spanView(buf->a), spanView(buf->b),
                                        viewI32(buf->idx, n), view(buf->c, n),
                                        Arg(double(scalar)), Arg(n64)},
                                       ck::elementwiseGrid(n));
    else
      p.deviceBaseline =
          nvrtcBaseline(ctx, ck::elementwise(op),
                        {spanView(buf->a), spanView(buf->b), spanView(buf->c),
                         Arg(double(scalar)), Arg(n64), Arg(s64)},
                        ck::elementwiseGrid(n));
  }
  runPlan(ctx, spec, p, r);
  return r;
}

CaseSpec streamCase(const std::string &op, int64_t bytes,
                    const std::string &pat) {
  CaseSpec c;
  c.suite = "memory_bandwidth";
  c.kernel = pat == "random" ? op + "_gather" : op;
  c.op = op;
  c.n = bytes / 4;
  c.pattern = pat;
  if (pat.rfind("strided_", 0) == 0)
    c.stride = std::stoll(pat.substr(8));
  c.name = op + " " + bytesText(bytes) + " " + pat;
  c.params = {{"bytes", std::to_string(bytes)},
              {"N", std::to_string(c.n)},
              {"pattern", pat}};
  return c;
}

/// Seed SIMT variants (addSeedSimtVariants) of the sequential cases.
void addSequentialSeedVariants(std::vector<CaseSpec> &cases,
                               const CaseRequest &req) {
  addSeedSimtVariants(cases, req);
  std::erase_if(cases, [](const CaseSpec &c) {
    return c.seedSimt && c.pattern != "sequential";
  });
}

std::vector<CaseSpec> streamCases(const CaseRequest &req) {
  const char *const ops[] = {"copy", "scale", "add", "triad"};
  std::vector<CaseSpec> out;
  if (req.sizes == SizeSet::Gpu) {
    // STREAM copy and triad on 2^26 f32 per array.
    for (const char *op : {"copy", "triad"})
      out.push_back(streamCase(op, int64_t(4) << 26, "sequential"));
    return out;
  }
  if (req.sizes == SizeSet::Custom) {
    // bytes=B (per array) or N=elements; optionally stride=S or random=1.
    for (const auto &dims : req.custom) {
      if (!matches(dims, {"bytes"}, {"stride", "random"}) &&
          !matches(dims, {"N"}, {"stride", "random"}))
        continue;
      int64_t bytes = dimOr(dims, "bytes", dimOr(dims, "N", 0) * 4);
      if (bytes < 4)
        continue;
      int64_t stride = dimOr(dims, "stride", 1);
      std::string pat = dims.count("random") ? "random"
                        : stride > 1 ? "strided_" + std::to_string(stride)
                                     : "sequential";
      for (const char *op : ops)
        out.push_back(streamCase(op, bytes / 4 * 4, pat));
    }
    addSequentialSeedVariants(out, req);
    return out;
  }
  std::vector<int64_t> bytes;
  if (req.sizes == SizeSet::Full)
    for (int64_t mib : {1, 4, 16, 64, 256, 1024, 4096, 8192, 16384})
      bytes.push_back(mib << 20);
  else if (req.device == DeviceKind::Sim)
    bytes = {int64_t(256) << 10};
  else
    bytes = {int64_t(1) << 20, int64_t(64) << 20};
  std::vector<std::string> patterns =
      req.sizes == SizeSet::Full
          ? std::vector<std::string>{"sequential", "strided_2", "strided_4",
                                     "strided_8", "random"}
          : std::vector<std::string>{"sequential", "strided_4", "random"};
  for (int64_t b : bytes)
    for (const std::string &pat : patterns)
      for (const char *op : ops) {
        // Quick: every op sequentially, triad for the other patterns.
        if (req.sizes == SizeSet::Quick && pat != "sequential" &&
            std::string(op) != "triad")
          continue;
        out.push_back(streamCase(op, b, pat));
      }
  addSequentialSeedVariants(out, req);
  return out;
}

} // namespace

Suite bench::vectorOpsSuite() {
  Suite s;
  s.name = "vector_ops";
  s.family = "vector_ops";
  s.description = "BLAS-1 operations (axpy, dot, norm, add, mul, reduce_sum, "
                  "reduce_max), sequential and strided";
  s.precisions = s.defaultPrecisions = {"fp32"};
  s.sizeKeys = {"N", "[stride]"};
  s.cases = vectorOpCases;
  s.run = runVectorOp;
  return s;
}

Suite bench::memoryBandwidthSuite() {
  Suite s;
  s.name = "memory_bandwidth";
  s.family = "stream";
  s.description = "STREAM copy/scale/add/triad, sequential, strided and "
                  "random (gather)";
  s.precisions = s.defaultPrecisions = {"fp32"};
  s.sizeKeys = {"bytes|N", "[stride]", "[random=1]"};
  s.cases = streamCases;
  s.run = runStream;
  return s;
}
