//===- SuitesDense.cpp - gemm, layer_norm, softmax, attention -------------===//
//
// The compute-heavy suites, in every precision policy the kernels accept.
// Inputs are uniform in [-1, 1) rounded to the storage dtype; the reference
// works on exactly those values in f32 (OpenBLAS for GEMM, the plain C++
// loops of benchsuite/baselines for the others, which share no code with
// Tessera) and is rounded to the output dtype before the comparison under
// the tolerance table. The same reference, on all threads, is the baseline
// timed beside each cpu case.
//
//===----------------------------------------------------------------------===//

#include "SuiteCommon.h"

#include "CuBlas.h"
#include "CudaKernels.h"
#include "Loops.h"
#include "OpenBlas.h"

#include "tessera/bench/Counting.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

using namespace tessera;
using namespace tessera::bench;

namespace {

/// The precisions a request runs for a suite: --precision filtered to what
/// the suite accepts, else its defaults.
std::vector<std::string> precisionsFor(const CaseRequest &req,
                                       const std::vector<std::string> &accepted,
                                       const std::vector<std::string> &dflt) {
  if (req.precisions.empty())
    return dflt;
  std::vector<std::string> out;
  for (const std::string &p : req.precisions)
    if (std::find(accepted.begin(), accepted.end(), p) != accepted.end())
      out.push_back(p);
  return out;
}

/// The plain C++ loop `compute(threads)`, writing `ref`, is both the
/// reference (its output, rounded by runPlan) and the timed cpu baseline.
void useLoopReference(Plan &p, std::function<void(int)> compute,
                      std::shared_ptr<std::vector<float>> ref, int threads) {
  p.expected = [=] {
    compute(threads);
    return std::vector<double>(ref->begin(), ref->end());
  };
  p.baseline = [=] { compute(threads); };
  p.baselineName = "C++ loop";
}

//===----------------------------------------------------------------------===//
// gemm
//===----------------------------------------------------------------------===//

const std::vector<std::string> kGemmPrecisions = {"fp32",
                                                  "tf32",
                                                  "fp16",
                                                  "bf16",
                                                  "fp8_e4m3@accum(fp32)",
                                                  "fp8_e5m2@accum(fp32)",
                                                  "fp6_e3m2@accum(fp32)",
                                                  "fp6_e2m3@accum(fp32)",
                                                  "fp4_e2m1@accum(fp32)"};

/// The precisions of the `gpu` size set: the packed types (fp6/fp4) are
/// read element by element (no tensor-core path for them here), too slow
/// for its 4096-cubed problems; --precision still selects them.
std::vector<std::string> unpackedGemmPrecisions() {
  std::vector<std::string> out;
  for (const std::string &p : kGemmPrecisions)
    if (!isPackedDType(storageOf(p)))
      out.push_back(p);
  return out;
}

CaseSpec gemmCase(int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                  const std::string &precision, const std::string &shape) {
  std::string t =
      ta || tb ? std::string(" ") + (ta ? "T" : "N") + (tb ? "T" : "N") : "";
  CaseSpec c =
      makeCase("gemm", "gemm", precision, dimsText({m, n, k}) + t,
               {{"M", m}, {"N", n}, {"K", k}, {"transA", ta}, {"transB", tb}});
  c.params["shape"] = shape;
  return c;
}

std::vector<CaseSpec> gemmCases(const CaseRequest &req) {
  std::vector<std::string> precisions =
      precisionsFor(req, kGemmPrecisions,
                    req.sizes == SizeSet::Gpu
                        ? unpackedGemmPrecisions()
                        : std::vector<std::string>{"fp32", "fp16", "bf16"});
  std::vector<CaseSpec> out;
  if (req.sizes == SizeSet::Gpu) {
    // Squares at 1024, 2048 and 4096 in every precision.
    for (const std::string &p : precisions)
      for (int64_t s : {1024, 2048, 4096})
        out.push_back(gemmCase(s, s, s, false, false, p, "square"));
    return out;
  }
  if (req.sizes == SizeSet::Custom) {
    for (const auto &d : req.custom)
      if (matches(d, {"M", "N", "K"}, {"transA", "transB"}))
        for (const std::string &p : precisions)
          out.push_back(gemmCase(d.at("M"), d.at("N"), d.at("K"),
                                 dimOr(d, "transA", 0), dimOr(d, "transB", 0),
                                 p, "custom"));
    return out;
  }
  if (req.sizes == SizeSet::Full) {
    // Seed document 002: squares, LLM shapes x batch, transposes.
    for (const std::string &p : precisions) {
      for (int64_t s : {256, 512, 1024, 2048, 4096, 8192, 16384})
        out.push_back(gemmCase(s, s, s, false, false, p, "square"));
      const int64_t llm[][3] = {{8192, 4096, 4096},
                                {4096, 11008, 4096},
                                {2048, 2048, 8192},
                                {1024, 4096, 1024},
                                {512, 2048, 512}};
      for (const auto &s : llm)
        for (int64_t batch : {1, 8, 16, 32, 64})
          out.push_back(
              gemmCase(batch * s[0], s[1], s[2], false, false, p, "llm"));
      for (int64_t s : {1024, 2048})
        for (bool ta : {false, true})
          for (bool tb : {false, true})
            out.push_back(gemmCase(s, s, s, ta, tb, p, "transpose"));
    }
    return out;
  }
  for (const std::string &p : precisions) {
    if (req.device == DeviceKind::Sim) {
      out.push_back(gemmCase(128, 96, 80, false, false, p, "square"));
      continue;
    }
    if (req.device == DeviceKind::Cuda) {
      out.push_back(gemmCase(4096, 4096, 4096, false, false, p, "square"));
      out.push_back(gemmCase(4096, 11008, 4096, false, false, p, "llm"));
      out.push_back(gemmCase(2048, 2048, 2048, false, true, p, "transpose"));
      continue;
    }
    // cpu: f32 at two squares, an LLM shape and two transposes; the
    // narrow types (converted on the fly on the cpu) at 512 only.
    out.push_back(gemmCase(512, 512, 512, false, false, p, "square"));
    if (p != "fp32")
      continue;
    out.push_back(gemmCase(1024, 1024, 1024, false, false, p, "square"));
    out.push_back(gemmCase(512, 2048, 512, false, false, p, "llm"));
    out.push_back(gemmCase(1024, 1024, 1024, true, false, p, "transpose"));
    out.push_back(gemmCase(1024, 1024, 1024, false, true, p, "transpose"));
  }
  return out;
}

/// op(X)[i, j] of an opRows x opCols operand stored row-major, as the
/// transpose (opCols x opRows) when `t`.
inline float at(const std::vector<float> &x, bool t, int64_t opRows,
                int64_t opCols, int64_t i, int64_t j) {
  return t ? x[size_t(j * opRows + i)] : x[size_t(i * opCols + j)];
}

CaseResult runGemm(RunContext &ctx, const CaseSpec &spec) {
  CaseResult r = startResult(ctx, spec);
  const int64_t M = spec.dim("M"), N = spec.dim("N"), K = spec.dim("K");
  const bool ta = spec.dim("transA"), tb = spec.dim("transB");
  const DType storage = storageOf(spec.precision);
  const int threads = int(ctx.rt->numThreads());
  auto a = HostArray::make(storage, M * K);
  auto b = HostArray::make(storage, K * N);
  auto c = HostArray::make(DType::F32, M * N);
  a->fillUniform(11);
  b->fillUniform(12);
  // f32 copies of the stored values: what OpenBLAS and the checks read.
  auto af = std::make_shared<std::vector<float>>(a->toF32());
  auto bf = std::make_shared<std::vector<float>>(b->toF32());
  auto ref = std::make_shared<std::vector<float>>(size_t(M * N));

  Plan p;
  p.family = "gemm";
  p.kernel = "gemm";
  p.precision = spec.precision;
  p.fixed = {{"TRANS_A", ConstValue::boolean(ta)},
             {"TRANS_B", ConstValue::boolean(tb)}};
  p.args = {
      a->view(ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}),
      b->view(tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}),
      c->view({M, N}), Arg(1.0), Arg(0.0)};
  p.reset = [c] { c->fill(0.0); };

  // Large problems are checked on a sample of outputs (double dot
  // products); the others on every output, against OpenBLAS when it loads.
  const bool sampled = double(M) * double(N) * double(K) > 2.2e9;
  std::vector<std::pair<int64_t, int64_t>> picks;
  if (sampled) {
    std::mt19937_64 rng(13);
    std::uniform_int_distribution<int64_t> di(0, M - 1), dj(0, N - 1);
    for (int s = 0; s < 2048; ++s)
      picks.push_back({di(rng), dj(rng)});
    picks.push_back({0, 0});
    picks.push_back({M - 1, N - 1});
  }
  OpenBlas *blas = OpenBlas::get();
  const bool useBlas =
      blas->available() && ctx.baseline != BaselineChoice::Loop;
  if (useBlas)
    blas->setNumThreads(threads);
  const int64_t lda = ta ? M : K, ldb = tb ? K : N;
  auto blasCall = [=](float *out) {
    blas->sgemm(ta, tb, M, N, K, 1.0f, af->data(), lda, bf->data(), ldb, 0.0f,
                out, N);
  };
  if (sampled) {
    p.result = [c, picks, N] {
      std::vector<double> out;
      for (auto [i, j] : picks)
        out.push_back(loadAsDouble(c->data(), DType::F32, size_t(i * N + j)));
      return out;
    };
    p.expected = [=] {
      std::vector<double> out;
      for (auto [i, j] : picks) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc +=
              double(at(*af, ta, M, K, i, k)) * double(at(*bf, tb, K, N, k, j));
        out.push_back(acc);
      }
      return out;
    };
  } else {
    p.result = [c] { return c->toF64(); };
    p.expected = [=] {
      if (useBlas) {
        blasCall(ref->data());
      } else {
        std::fill(ref->begin(), ref->end(), 0.0f);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t k = 0; k < K; ++k) {
            float aik = at(*af, ta, M, K, i, k);
            for (int64_t j = 0; j < N; ++j)
              (*ref)[size_t(i * N + j)] += aik * at(*bf, tb, K, N, k, j);
          }
      }
      return std::vector<double>(ref->begin(), ref->end());
    };
  }
  if (useBlas) {
    p.baselineName = "OpenBLAS sgemm";
    p.baseline = [=] { blasCall(ref->data()); };
  }
  // cuBLAS beside cuda results: row-major, untransposed, f32/tf32/f16/bf16
  // operands (what the wrapper supports), f32 C, on device buffers.
  const bool cublasKinds =
      storage == DType::F32 || storage == DType::F16 || storage == DType::BF16;
  if (ctx.device == DeviceKind::Cuda && !ta && !tb && cublasKinds &&
      ctx.baseline != BaselineChoice::Loop &&
      ctx.baseline != BaselineChoice::OpenBlas) {
    p.deviceBaselineName =
        spec.precision == "tf32" ? "cuBLAS (TF32)" : "cuBLAS";
    Runtime *rt = ctx.rt;
    const std::string precision = spec.precision;
    const bool flush = ctx.flushCaches;
    p.deviceBaseline = [=]() -> StatusOr<Plan::TimedBatch> {
      struct State {
        DeviceBuffer a, b, c;
        std::unique_ptr<CuBlas> blas;
      };
      auto st = std::make_shared<State>();
      // Allocating first opens the device and makes its context current,
      // which cuBLAS binds its handle to. The operands are copied once.
      TESSERA_ASSIGN_OR_RETURN(st->a,
                               rt->allocate(DeviceKind::Cuda, a->bytes.size()));
      TESSERA_ASSIGN_OR_RETURN(st->b,
                               rt->allocate(DeviceKind::Cuda, b->bytes.size()));
      TESSERA_ASSIGN_OR_RETURN(st->c,
                               rt->allocate(DeviceKind::Cuda, c->bytes.size()));
      TESSERA_RETURN_IF_ERROR(st->a.copyFrom(a->data(), a->bytes.size()));
      TESSERA_RETURN_IF_ERROR(st->b.copyFrom(b->data(), b->bytes.size()));
      std::string error;
      st->blas = CuBlas::open(&error);
      if (!st->blas)
        return Status(StatusCode::kUnavailable, error);
      const CuBlasOperand operand = storage == DType::F16 ? CuBlasOperand::F16
                                    : storage == DType::BF16
                                        ? CuBlasOperand::BF16
                                        : CuBlasOperand::F32;
      const CuBlasCompute compute =
          precision == "tf32" ? CuBlasCompute::F32FastTF32 : CuBlasCompute::F32;
      // cuBLAS enqueues on the legacy default stream: the calls of a batch
      // run back to back between the runtime's CUDA events, after its L2
      // flush, exactly as Tessera's launches are timed.
      return Plan::TimedBatch([=](int launches) -> StatusOr<double> {
        return rt->timeBatch(
            DeviceKind::Cuda,
            [&]() -> Status {
              std::string err;
              if (!st->blas->gemm(operand, compute, M, N, K, 1.0f, st->a.data(),
                                  st->b.data(), 0.0f, st->c.data(), &err))
                return Status(StatusCode::kInternal, "cuBLAS: " + err);
              return okStatus();
            },
            launches, flush);
      });
    };
  }
  // f32 (and fp8, fp6, fp4, whose products are exact in f32) against
  // another f32 GEMM: the table's Gemm rule with the f32 base raised to
  // 1e-4 (the reference rounds differently, it is not exact).
  if (spec.precision == "tf32")
    p.tolerance = tf32GemmTolerance(K);
  else if (storage == DType::F32 || storage == DType::F8E4M3 ||
           storage == DType::F8E5M2 || isPackedDType(storage))
    p.tolerance = Tolerance{1e-4 * std::sqrt(double(K)), 1e-4};
  p.op = ToleranceOp::Gemm;
  p.reductionLength = K;
  p.outDType = DType::F32;
  p.path = pathOf(spec.precision, ctx.device);
  p.work = gemmWork(M, N, K, int(dtypeSize(storage)), 4, false);
  if (isPackedDType(storage)) // A and B hold dtypeBits(storage) per element
    p.work.bytes = double(storageBytes(storage, size_t(M * K)) +
                          storageBytes(storage, size_t(K * N))) +
                   4.0 * double(M) * double(N);
  runPlan(ctx, spec, p, r);
  return r;
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

const std::vector<std::string> kRowPrecisions = {
    "fp32", "fp16", "bf16", "fp8_e4m3@accum(fp32)", "fp8_e5m2@accum(fp32)"};

CaseSpec layerNormCase(int64_t b, int64_t s, int64_t h,
                       const std::string &precision) {
  return makeCase("layer_norm", "layernorm", precision, dimsText({b, s, h}),
                  {{"B", b}, {"S", s}, {"H", h}});
}

std::vector<CaseSpec> layerNormCases(const CaseRequest &req) {
  std::vector<std::string> precisions =
      precisionsFor(req, kRowPrecisions, {"fp32", "fp16"});
  std::vector<CaseSpec> out;
  for (const std::string &p : precisions) {
    if (req.sizes == SizeSet::Custom) {
      for (const auto &d : req.custom)
        if (matches(d, {"S", "H"}, {"B"}))
          out.push_back(
              layerNormCase(dimOr(d, "B", 1), d.at("S"), d.at("H"), p));
    } else if (req.sizes == SizeSet::Gpu) {
      out.push_back(layerNormCase(1, 4096, 4096, p));
    } else if (req.sizes == SizeSet::Full) {
      for (int64_t b : {1, 4, 8, 16, 32, 64, 128})
        for (int64_t s : {128, 256, 512, 1024, 2048, 4096, 8192})
          for (int64_t h : {768, 1024, 1536, 2048, 4096, 8192, 11008})
            if (b * s * h <= (int64_t(1) << 30))
              out.push_back(layerNormCase(b, s, h, p));
    } else if (req.device == DeviceKind::Sim) {
      out.push_back(layerNormCase(1, 8, 768, p));
    } else if (req.device == DeviceKind::Cuda) {
      out.push_back(layerNormCase(16, 2048, 4096, p));
      out.push_back(layerNormCase(8, 1024, 11008, p));
    } else {
      out.push_back(layerNormCase(4, 512, 768, p));
      if (p == "fp32")
        out.push_back(layerNormCase(1, 2048, 4096, p));
    }
  }
  addSeedSimtVariants(out, req);
  return out;
}

CaseResult runLayerNorm(RunContext &ctx, const CaseSpec &spec) {
  CaseResult r = startResult(ctx, spec);
  const int64_t B = spec.dim("B"), S = spec.dim("S"), H = spec.dim("H");
  const int64_t rows = B * S;
  const DType dt = storageOf(spec.precision);
  const int threads = int(ctx.rt->numThreads());
  const float eps = 1e-5f;
  auto x = HostArray::make(dt, rows * H);
  auto w = HostArray::make(dt, H);
  auto bias = HostArray::make(dt, H);
  auto y = HostArray::make(dt, rows * H);
  x->fillUniform(21);
  w->fillUniform(22, 0.5, 1.5);
  bias->fillUniform(23, -0.5, 0.5);
  auto xf = std::make_shared<std::vector<float>>(x->toF32());
  auto wf = std::make_shared<std::vector<float>>(w->toF32());
  auto bf = std::make_shared<std::vector<float>>(bias->toF32());
  auto ref = std::make_shared<std::vector<float>>(size_t(rows * H));
  Plan p;
  p.family = spec.seedSimt ? "seed/layernorm_safe" : "layernorm";
  p.kernel = spec.seedSimt ? "layernorm_safe" : "layernorm";
  p.precision = spec.precision;
  p.args = {x->view({B, S, H}), w->view({H}), bias->view({H}),
            y->view({B, S, H}), Arg(double(eps))};
  p.reset = [y] { y->fill(0.0); };
  p.result = [y] { return y->toF64(); };
  auto compute = [=](int t) {
    loops::layerNorm(xf->data(), wf->data(), bf->data(), ref->data(), rows, H,
                     eps, t);
  };
  useLoopReference(p, compute, ref, threads);
  if (ctx.device == DeviceKind::Cuda) {
    p.deviceBaselineName = "CUDA C++ (NVRTC, f32)";
    p.deviceBaseline =
        nvrtcBaseline(ctx, cudakernels::layerNorm(),
                      {spanView(*xf), spanView(*wf), spanView(*bf),
                       spanView(*ref), Arg(rows), Arg(H), Arg(double(eps))},
                      cudakernels::rowGrid(rows));
  }
  p.op = ToleranceOp::LayerNorm;
  p.reductionLength = H;
  p.outDType = dt;
  p.work = layerNormWork(rows, H, int(dtypeSize(dt)), true);
  runPlan(ctx, spec, p, r);
  return r;
}

//===----------------------------------------------------------------------===//
// softmax
//===----------------------------------------------------------------------===//

CaseSpec softmaxCase(int64_t b, int64_t h, int64_t sq, int64_t sk, bool causal,
                     const std::string &precision) {
  return makeCase(
      "softmax", "softmax", precision,
      dimsText({b, h, sq, sk}) + (causal ? " causal" : ""),
      {{"B", b}, {"H", h}, {"Sq", sq}, {"Sk", sk}, {"causal", causal}});
}

std::vector<CaseSpec> softmaxCases(const CaseRequest &req) {
  std::vector<std::string> precisions = precisionsFor(
      req, {"fp32", "fp16", "bf16", "fp8_e4m3@accum(fp32)"}, {"fp32", "fp16"});
  std::vector<CaseSpec> out;
  for (const std::string &p : precisions) {
    if (req.sizes == SizeSet::Custom) {
      for (const auto &d : req.custom) {
        if (matches(d, {"S"}, {"B", "H", "causal"}))
          out.push_back(softmaxCase(dimOr(d, "B", 1), dimOr(d, "H", 1),
                                    d.at("S"), d.at("S"), dimOr(d, "causal", 0),
                                    p));
        else if (matches(d, {"Sq", "Sk"}, {"B", "H", "causal"}))
          out.push_back(softmaxCase(dimOr(d, "B", 1), dimOr(d, "H", 1),
                                    d.at("Sq"), d.at("Sk"),
                                    dimOr(d, "causal", 0), p));
      }
    } else if (req.sizes == SizeSet::Gpu) {
      out.push_back(softmaxCase(1, 1, 4096, 4096, false, p));
    } else if (req.sizes == SizeSet::Full) {
      // Seed document 002, without the shapes whose host copies (input,
      // output, f32 reference) would not fit a workstation: at most 2^28
      // elements.
      for (int64_t b : {1, 4, 8, 16, 32})
        for (int64_t h : {8, 16, 32, 64})
          for (int64_t s : {128, 256, 512, 1024, 2048, 4096, 8192}) {
            if (b * h * s * s > (int64_t(1) << 28))
              continue;
            out.push_back(softmaxCase(b, h, s, s, false, p));
            if (s <= 2048)
              out.push_back(softmaxCase(b, h, s, s, true, p));
          }
      for (int64_t n : {1024, 4096, 16384, 65536, 262144})
        out.push_back(softmaxCase(1, 1, 1, n, false, p));
    } else if (req.device == DeviceKind::Sim) {
      out.push_back(softmaxCase(1, 2, 64, 64, false, p));
      out.push_back(softmaxCase(1, 2, 64, 64, true, p));
    } else if (req.device == DeviceKind::Cuda) {
      out.push_back(softmaxCase(8, 16, 2048, 2048, false, p));
      out.push_back(softmaxCase(8, 16, 2048, 2048, true, p));
      out.push_back(softmaxCase(1, 1, 1, 262144, false, p));
    } else {
      out.push_back(softmaxCase(1, 8, 512, 512, false, p));
      if (p != "fp32")
        continue;
      out.push_back(softmaxCase(1, 8, 512, 512, true, p));
      out.push_back(softmaxCase(1, 1, 1, 65536, false, p));
    }
  }
  addSeedSimtVariants(out, req);
  return out;
}

CaseResult runSoftmax(RunContext &ctx, const CaseSpec &spec) {
  CaseResult r = startResult(ctx, spec);
  const int64_t B = spec.dim("B"), H = spec.dim("H"), Sq = spec.dim("Sq"),
                Sk = spec.dim("Sk");
  const bool causal = spec.dim("causal");
  const int64_t rows = B * H * Sq;
  const DType dt = storageOf(spec.precision);
  const int threads = int(ctx.rt->numThreads());
  auto x = HostArray::make(dt, rows * Sk);
  auto y = HostArray::make(dt, rows * Sk);
  // Scores of a few units, as attention logits are.
  x->fillUniform(31, -4.0, 4.0);
  auto xf = std::make_shared<std::vector<float>>(x->toF32());
  auto ref = std::make_shared<std::vector<float>>(size_t(rows * Sk));
  Plan p;
  p.family = spec.seedSimt ? "seed/softmax_safe" : "softmax";
  p.kernel = spec.seedSimt ? "softmax_safe" : "softmax";
  p.precision = spec.precision;
  p.fixed = {
      {spec.seedSimt ? "causal_mask" : "CAUSAL", ConstValue::boolean(causal)}};
  p.args = {x->view({B, H, Sq, Sk}), y->view({B, H, Sq, Sk})};
  p.reset = [y] { y->fill(0.0); };
  p.result = [y] { return y->toF64(); };
  auto compute = [=](int t) {
    if (causal)
      loops::softmaxCausal(xf->data(), ref->data(), rows, Sk, Sq, t);
    else
      loops::softmax(xf->data(), ref->data(), rows, Sk, t);
  };
  useLoopReference(p, compute, ref, threads);
  if (ctx.device == DeviceKind::Cuda) {
    p.deviceBaselineName = "CUDA C++ (NVRTC, f32)";
    p.deviceBaseline = nvrtcBaseline(ctx, cudakernels::softmax(),
                                     {spanView(*xf), spanView(*ref), Arg(rows),
                                      Arg(Sk), Arg(Sq), Arg(int64_t(causal))},
                                     cudakernels::rowGrid(rows));
  }
  p.op = ToleranceOp::Softmax;
  p.reductionLength = Sk;
  p.outDType = dt;
  const int e = int(dtypeSize(dt));
  p.work =
      causal ? causalSoftmaxWork(B * H, Sq, Sk, e) : softmaxWork(rows, Sk, e);
  runPlan(ctx, spec, p, r);
  return r;
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

CaseSpec attentionCase(int64_t b, int64_t h, int64_t s, int64_t d, bool causal,
                       const std::string &precision) {
  return makeCase("attention", "attention", precision,
                  dimsText({b, h, s, d}) + (causal ? " causal" : ""),
                  {{"B", b}, {"H", h}, {"S", s}, {"D", d}, {"causal", causal}});
}

std::vector<CaseSpec> attentionCases(const CaseRequest &req) {
  std::vector<std::string> precisions = precisionsFor(
      req, {"fp32", "fp16", "bf16"},
      req.sizes == SizeSet::Gpu ? std::vector<std::string>{"fp16", "bf16"}
                                : std::vector<std::string>{"fp32", "fp16"});
  std::vector<CaseSpec> out;
  for (const std::string &p : precisions) {
    if (req.sizes == SizeSet::Gpu) {
      out.push_back(attentionCase(4, 16, 2048, 64, false, p));
    } else if (req.sizes == SizeSet::Custom) {
      for (const auto &d : req.custom)
        if (matches(d, {"S", "D"}, {"B", "H", "causal"}))
          out.push_back(attentionCase(dimOr(d, "B", 1), dimOr(d, "H", 1),
                                      d.at("S"), d.at("D"),
                                      dimOr(d, "causal", 0), p));
    } else if (req.sizes == SizeSet::Full) {
      // The FlashAttention papers' forward benchmark: 16k tokens per batch,
      // hidden size 2048 (H = 2048 / D), causal and not.
      for (int64_t d : {64, 128})
        for (int64_t s : {512, 1024, 2048, 4096, 8192, 16384})
          for (bool causal : {false, true})
            out.push_back(attentionCase(16384 / s, 2048 / d, s, d, causal, p));
    } else if (req.device == DeviceKind::Sim) {
      out.push_back(attentionCase(1, 1, 128, 64, false, p));
      out.push_back(attentionCase(1, 1, 128, 64, true, p));
    } else if (req.device == DeviceKind::Cuda) {
      out.push_back(attentionCase(4, 16, 4096, 128, false, p));
      out.push_back(attentionCase(4, 16, 4096, 128, true, p));
      out.push_back(attentionCase(8, 32, 2048, 64, false, p));
    } else {
      out.push_back(attentionCase(1, 4, 512, 64, false, p));
      if (p == "fp32")
        out.push_back(attentionCase(1, 4, 512, 64, true, p));
    }
  }
  return out;
}

CaseResult runAttention(RunContext &ctx, const CaseSpec &spec) {
  CaseResult r = startResult(ctx, spec);
  const int64_t B = spec.dim("B"), H = spec.dim("H"), S = spec.dim("S"),
                D = spec.dim("D");
  const bool causal = spec.dim("causal");
  if (D != 64 && D != 128) {
    r.failure = "attention: head dimension D must be 64 or 128 (the "
                "kernel's HEAD_DIM)";
    return r;
  }
  const DType dt = storageOf(spec.precision);
  const int threads = int(ctx.rt->numThreads());
  const int64_t elems = B * H * S * D;
  auto q = HostArray::make(dt, elems), k = HostArray::make(dt, elems),
       v = HostArray::make(dt, elems), o = HostArray::make(dt, elems);
  q->fillUniform(41);
  k->fillUniform(42);
  v->fillUniform(43);
  auto qf = std::make_shared<std::vector<float>>(q->toF32());
  auto kf = std::make_shared<std::vector<float>>(k->toF32());
  auto vf = std::make_shared<std::vector<float>>(v->toF32());
  auto ref = std::make_shared<std::vector<float>>(size_t(elems));
  const float scale = float(1.0 / std::sqrt(double(D)));
  Plan p;
  p.family = "attention";
  p.kernel = "attention";
  p.precision = spec.precision;
  p.fixed = {{"CAUSAL", ConstValue::boolean(causal)},
             {"HEAD_DIM", ConstValue::integer(D)}};
  p.args = {q->view({B, H, S, D}), k->view({B, H, S, D}), v->view({B, H, S, D}),
            o->view({B, H, S, D}), Arg(double(scale))};
  p.reset = [o] { o->fill(0.0); };
  p.result = [o] { return o->toF64(); };
  auto compute = [=](int t) {
    loops::attention(qf->data(), kf->data(), vf->data(), ref->data(), B * H, S,
                     S, D, scale, causal, t);
  };
  useLoopReference(p, compute, ref, threads);
  p.op = ToleranceOp::Attention;
  p.reductionLength = std::max(S, D);
  p.outDType = dt;
  p.path = pathOf(spec.precision, ctx.device);
  p.work = attentionWork(B, H, S, S, D, causal, int(dtypeSize(dt)));
  runPlan(ctx, spec, p, r);
  return r;
}

} // namespace

Suite bench::gemmSuite() {
  Suite s;
  s.name = "gemm";
  s.family = "gemm";
  s.description = "C = A.B: squares, LLM shapes, transposes (baselines: "
                  "OpenBLAS on cpu, cuBLAS on cuda)";
  s.precisions = kGemmPrecisions;
  s.defaultPrecisions = {"fp32", "fp16", "bf16"};
  s.sizeKeys = {"M", "N", "K", "[transA]", "[transB]"};
  s.cases = gemmCases;
  s.run = runGemm;
  return s;
}

Suite bench::layerNormSuite() {
  Suite s;
  s.name = "layer_norm";
  s.family = "layernorm";
  s.description = "layer norm over the hidden axis, affine, [B, S, H]";
  s.precisions = kRowPrecisions;
  s.defaultPrecisions = {"fp32", "fp16"};
  s.sizeKeys = {"S", "H", "[B]"};
  s.cases = layerNormCases;
  s.run = runLayerNorm;
  return s;
}

Suite bench::softmaxSuite() {
  Suite s;
  s.name = "softmax";
  s.family = "softmax";
  s.description = "row softmax of [B, H, Sq, Sk] scores, causal and not";
  s.precisions = {"fp32", "fp16", "bf16", "fp8_e4m3@accum(fp32)"};
  s.defaultPrecisions = {"fp32", "fp16"};
  s.sizeKeys = {"S|Sq,Sk", "[B]", "[H]", "[causal]"};
  s.cases = softmaxCases;
  s.run = runSoftmax;
  return s;
}

Suite bench::attentionSuite() {
  Suite s;
  s.name = "attention";
  s.family = "attention";
  s.description = "fused attention forward, [B, H, S, D], causal and not";
  s.precisions = {"fp32", "fp16", "bf16"};
  s.defaultPrecisions = {"fp32", "fp16"};
  s.sizeKeys = {"S", "D", "[B]", "[H]", "[causal]"};
  s.cases = attentionCases;
  s.run = runAttention;
  return s;
}
