//===- CudaKernels.cpp - CUDA C++ baselines compiled with NVRTC -----------===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
//
// Each source is a shared prelude (block size, reduction operators, warp and
// block reductions) followed by one `extern "C"` kernel whose op-specific
// expression is substituted into a template text. The sources include no
// header: NVRTC compiles them with only its built-in declarations (expf,
// fmaxf, rsqrtf, atomics, shuffles), so no include path is needed.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

using namespace tessera;
using namespace tessera::bench;

namespace {

/// Replaces every `$KEY` of `text` by its value (no key here is a prefix of
/// another).
std::string
substitute(std::string text,
           const std::vector<std::pair<std::string, std::string>> &values) {
  for (const auto &[key, value] : values) {
    std::string pattern = "$" + key;
    for (size_t pos = text.find(pattern); pos != std::string::npos;
         pos = text.find(pattern, pos + value.size()))
      text.replace(pos, pattern.size(), value);
  }
  return text;
}

/// Declarations every kernel uses. `blockReduce` leaves the result in every
/// thread: each warp reduces the per-warp partials itself, so no second
/// barrier and broadcast are needed, and the leading barrier lets one
/// `scratch` array serve consecutive reductions.
const char *kPrelude = R"(
constexpr int kBlock = $BLOCK;
constexpr int kWarps = kBlock / 32;
static_assert(kBlock % 32 == 0 && kWarps <= 32, "block of whole warps");

struct SumOp {
  static __device__ __forceinline__ float identity() { return 0.0f; }
  static __device__ __forceinline__ float apply(float x, float y) {
    return x + y;
  }
};

struct MaxOp {
  static __device__ __forceinline__ float identity() {
    return __uint_as_float(0xff800000u); // -inf
  }
  static __device__ __forceinline__ float apply(float x, float y) {
    return fmaxf(x, y);
  }
};

template <class Op> __device__ __forceinline__ float warpReduce(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

template <class Op>
__device__ __forceinline__ float blockReduce(float v, float *scratch) {
  v = warpReduce<Op>(v);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  return warpReduce<Op>(lane < kWarps ? scratch[lane] : Op::identity());
}

// Float max through integer atomics on the bit pattern: for v >= +0 a larger
// float has a larger signed integer pattern; for sign-bit-set v (-0 and
// negatives) a larger float has a smaller unsigned pattern. Mixed signs are
// ordered correctly by both comparisons, so out[0] may start at -inf.
__device__ __forceinline__ void atomicMaxFloat(float *out, float v) {
  if ((__float_as_uint(v) >> 31) == 0)
    atomicMax(reinterpret_cast<int *>(out), __float_as_int(v));
  else
    atomicMin(reinterpret_cast<unsigned int *>(out), __float_as_uint(v));
}
)";

const char *kElementwise = R"(
extern "C" __global__ void __launch_bounds__(kBlock)
$NAME(const float *__restrict__ a, const float *__restrict__ b,
    float *__restrict__ c, float s, long long n, long long stride) {
  long long i = (long long)blockIdx.x * kBlock + threadIdx.x;
  if (i >= n)
    return;
  long long j = i * stride;
  c[j] = $EXPR;
}
)";

const char *kGather = R"(
extern "C" __global__ void __launch_bounds__(kBlock)
$NAME(const float *__restrict__ a, const float *__restrict__ b,
    const int *__restrict__ idx, float *__restrict__ c, float s,
    long long n) {
  long long i = (long long)blockIdx.x * kBlock + threadIdx.x;
  if (i >= n)
    return;
  long long j = idx[i];
  c[i] = $EXPR;
}
)";

const char *kAxpy = R"(
extern "C" __global__ void __launch_bounds__(kBlock)
$NAME(const float *__restrict__ x, float *__restrict__ y, float alpha,
    long long n, long long stride) {
  long long i = (long long)blockIdx.x * kBlock + threadIdx.x;
  if (i >= n)
    return;
  long long j = i * stride;
  y[j] += alpha * x[j];
}
)";

// Four accumulators per thread keep four loads in flight in the grid-stride
// loop; the tail loop takes the last (fewer than four) strides.
const char *kReduce = R"(
extern "C" __global__ void __launch_bounds__(kBlock)
$NAME(const float *__restrict__ a, const float *__restrict__ b,
    float *__restrict__ out, long long n) {
  __shared__ float scratch[kWarps];
  const long long step = (long long)gridDim.x * kBlock;
  long long i = (long long)blockIdx.x * kBlock + threadIdx.x;
  float v0 = $OP::identity(), v1 = v0, v2 = v0, v3 = v0;
  for (; i + 3 * step < n; i += 4 * step) {
    v0 = $OP::apply(v0, term(a, b, i));
    v1 = $OP::apply(v1, term(a, b, i + step));
    v2 = $OP::apply(v2, term(a, b, i + 2 * step));
    v3 = $OP::apply(v3, term(a, b, i + 3 * step));
  }
  for (; i < n; i += step)
    v0 = $OP::apply(v0, term(a, b, i));
  float v = $OP::apply($OP::apply(v0, v1), $OP::apply(v2, v3));
  v = blockReduce<$OP>(v, scratch);
  if (threadIdx.x == 0)
    $ATOMIC(out, v);
}
)";

const char *kSoftmax = R"(
extern "C" __global__ void __launch_bounds__(kBlock)
$NAME(const float *__restrict__ x, float *__restrict__ y, long long rows,
    long long cols, long long rowsPerMatrix, long long causal) {
  __shared__ float scratch[kWarps];
  long long r = blockIdx.x;
  if (r >= rows)
    return;
  const float *xr = x + r * cols;
  float *yr = y + r * cols;
  // Columns [0, limit) are read; the rest of a causal row is written 0.
  long long limit = cols;
  if (causal != 0 && rowsPerMatrix > 0) {
    long long q = r % rowsPerMatrix;
    limit = q + 1 < cols ? q + 1 : cols;
  }
  float m = MaxOp::identity();
  for (long long j = threadIdx.x; j < limit; j += kBlock)
    m = fmaxf(m, xr[j]);
  m = blockReduce<MaxOp>(m, scratch);
  float sum = 0.0f;
  for (long long j = threadIdx.x; j < limit; j += kBlock)
    sum += expf(xr[j] - m);
  sum = blockReduce<SumOp>(sum, scratch);
  float inv = 1.0f / sum;
  for (long long j = threadIdx.x; j < cols; j += kBlock)
    yr[j] = j < limit ? expf(xr[j] - m) * inv : 0.0f;
}
)";

const char *kLayerNorm = R"(
extern "C" __global__ void __launch_bounds__(kBlock)
$NAME(const float *__restrict__ x, const float *__restrict__ w,
    const float *__restrict__ b, float *__restrict__ y, long long rows,
    long long hidden, float eps) {
  __shared__ float scratch[kWarps];
  long long r = blockIdx.x;
  if (r >= rows)
    return;
  const float *xr = x + r * hidden;
  float *yr = y + r * hidden;
  float sum = 0.0f;
  for (long long j = threadIdx.x; j < hidden; j += kBlock)
    sum += xr[j];
  float mean = blockReduce<SumOp>(sum, scratch) / (float)hidden;
  float sq = 0.0f;
  for (long long j = threadIdx.x; j < hidden; j += kBlock) {
    float d = xr[j] - mean;
    sq += d * d;
  }
  float var = blockReduce<SumOp>(sq, scratch) / (float)hidden;
  float rstd = rsqrtf(var + eps);
  for (long long j = threadIdx.x; j < hidden; j += kBlock)
    yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
}
)";

/// A source that fails to compile, saying why (for an unknown op).
std::string unknownOp(const char *family, const std::string &op) {
  std::string printable;
  for (char ch : op)
    printable += (ch == '"' || ch == '\\' || ch == '\n') ? '?' : ch;
  return std::string("#error \"unknown ") + family + " op '" + printable +
         "'\"\n";
}

CudaKernelSource
makeSource(const std::string &kernel, const std::string &body,
           const std::string &signature,
           const std::vector<std::pair<std::string, std::string>> &values) {
  CudaKernelSource src;
  src.name = kernel + ".cu";
  src.kernel = kernel;
  src.signature = signature;
  src.block = {cudakernels::kBlockSize, 1, 1};
  std::vector<std::pair<std::string, std::string>> all = {
      {"BLOCK", std::to_string(cudakernels::kBlockSize)}, {"NAME", kernel}};
  all.insert(all.end(), values.begin(), values.end());
  src.source = substitute(kPrelude, all) + substitute(body, all);
  return src;
}

/// The expression of element-wise op `op` on elements `a[j]`, `b[j]`; empty
/// when unknown.
std::string elementExpr(const std::string &op) {
  if (op == "copy")
    return "a[j]";
  if (op == "scale")
    return "s * a[j]";
  if (op == "add")
    return "a[j] + b[j]";
  if (op == "triad")
    return "a[j] + s * b[j]";
  if (op == "mul")
    return "a[j] * b[j]";
  return {};
}

int64_t cdiv(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

} // namespace

CudaKernelSource cudakernels::elementwise(const std::string &op) {
  std::string expr = elementExpr(op);
  CudaKernelSource src = makeSource(
      "baseline_" + op, kElementwise,
      R"(a: Tensor["A", f32], b: Tensor["B", f32], c: Tensor["C", f32], )"
      R"(s: float, n: int, stride: int)",
      {{"EXPR", expr}});
  if (expr.empty()) {
    src.name = "baseline_elementwise.cu";
    src.source = unknownOp("elementwise", op);
  }
  return src;
}

CudaKernelSource cudakernels::gather(const std::string &op) {
  std::string expr = op == "mul" ? std::string() : elementExpr(op);
  CudaKernelSource src = makeSource(
      "baseline_gather_" + op, kGather,
      R"(a: Tensor["A", f32], b: Tensor["B", f32], idx: Tensor["N", i32], )"
      R"(c: Tensor["N", f32], s: float, n: int)",
      {{"EXPR", expr}});
  if (expr.empty()) {
    src.name = "baseline_gather.cu";
    src.source = unknownOp("gather", op);
  }
  return src;
}

CudaKernelSource cudakernels::axpy() {
  return makeSource(
      "baseline_axpy", kAxpy,
      R"(x: Tensor["X", f32], y: Tensor["Y", f32], alpha: float, n: int, )"
      R"(stride: int)",
      {});
}

CudaKernelSource cudakernels::reduce(const std::string &op) {
  std::string term, combine = "SumOp", atomic = "atomicAdd";
  if (op == "dot") {
    term = "a[i] * b[i]";
  } else if (op == "sumsq") {
    term = "a[i] * a[i]";
  } else if (op == "sum") {
    term = "a[i]";
  } else if (op == "max") {
    term = "a[i]";
    combine = "MaxOp";
    atomic = "atomicMaxFloat";
  }
  // The reduced term of element i, as a device function ahead of the kernel.
  std::string termFn =
      "\n__device__ __forceinline__ float term(const float *__restrict__ a,\n"
      "                                      const float *__restrict__ b,\n"
      "                                      long long i) {\n  return " +
      term + ";\n}\n";
  CudaKernelSource src = makeSource(
      "baseline_reduce_" + op, termFn + kReduce,
      R"(a: Tensor["N", f32], b: Tensor["N", f32], out: Tensor["one", f32], )"
      R"(n: int)",
      {{"OP", combine}, {"ATOMIC", atomic}});
  if (term.empty()) {
    src.name = "baseline_reduce.cu";
    src.source = unknownOp("reduce", op);
  }
  return src;
}

float cudakernels::reduceIdentity(const std::string &op) {
  return op == "max" ? -std::numeric_limits<float>::infinity() : 0.0f;
}

CudaKernelSource cudakernels::softmax() {
  return makeSource(
      "baseline_softmax", kSoftmax,
      R"(x: Tensor["X", f32], y: Tensor["Y", f32], rows: int, cols: int, )"
      R"(rowsPerMatrix: int, causal: int)",
      {});
}

CudaKernelSource cudakernels::layerNorm() {
  return makeSource(
      "baseline_layer_norm", kLayerNorm,
      R"(x: Tensor["X", f32], w: Tensor["H", f32], b: Tensor["H", f32], )"
      R"(y: Tensor["Y", f32], rows: int, hidden: int, eps: float)",
      {});
}

std::array<int64_t, 3> cudakernels::elementwiseGrid(int64_t n) {
  return {cdiv(n, kBlockSize), 1, 1};
}

std::array<int64_t, 3> cudakernels::reduceGrid(int64_t n, int computeUnits) {
  int64_t cap = int64_t(kReduceBlocksPerSM) * std::max(computeUnits, 1);
  return {std::min(cdiv(n, kBlockSize), cap), 1, 1};
}

std::array<int64_t, 3> cudakernels::rowGrid(int64_t rows) {
  return {std::max<int64_t>(rows, 0), 1, 1};
}
