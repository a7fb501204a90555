//===- Loops.cpp - Plain C++ baselines for the benchmark suite ------------===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
//
// Every kernel is a small function over `__restrict` pointers and a length,
// called on each thread's sub-range; this keeps the loops trivially
// vectorisable. Reductions keep kLanes independent f32 accumulators (four
// 512-bit or eight 256-bit registers) which the compiler maps onto vector
// registers without needing -ffast-math.
//
//===----------------------------------------------------------------------===//

#include "Loops.h"
#include "ThreadPool.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

using namespace tessera::bench;

namespace {

/// Independent accumulators per reduction.
constexpr int kLanes = 64;

/// Alignment (in elements) of the boundaries between thread sub-ranges: one
/// 64-byte cache line of f32, so that threads never share an output line.
constexpr int64_t kSplitAlign = 16;

/// A per-thread partial result, padded to its own cache line.
struct alignas(64) Partial {
  float value;
};

/// Runs `body(begin, end)` over a static split of [0, n).
template <typename Body>
void parallelElements(int64_t n, int threads, const Body &body) {
  int used = loops::effectiveThreads(n, threads);
  if (used <= 1) {
    if (n > 0)
      body(int64_t(0), n);
    return;
  }
  ThreadPool::global().run(used, [&](int tid, int parts) {
    auto [begin, end] = splitRange(n, parts, tid, kSplitAlign);
    if (begin < end)
      body(begin, end);
  });
}

/// Runs `partial(begin, end) -> float` over a static split of [0, n) and
/// folds the per-thread partials in thread order with `combine`.
template <typename PartialFn, typename CombineFn>
float parallelReduce(int64_t n, int threads, float identity,
                     const PartialFn &partial, const CombineFn &combine) {
  int used = loops::effectiveThreads(n, threads);
  if (used <= 1)
    return n > 0 ? partial(int64_t(0), n) : identity;
  std::vector<Partial> partials(used, Partial{identity});
  ThreadPool::global().run(used, [&](int tid, int parts) {
    auto [begin, end] = splitRange(n, parts, tid, kSplitAlign);
    if (begin < end)
      partials[tid].value = partial(begin, end);
  });
  float result = identity;
  for (const Partial &p : partials)
    result = combine(result, p.value);
  return result;
}

/// Runs `body(rowBegin, rowEnd)` over a static split of the rows, using at
/// most one thread per row and per kMinElementsPerThread elements.
template <typename Body>
void parallelRows(int64_t rows, int64_t cols, int threads, const Body &body) {
  if (rows <= 0)
    return;
  int used =
      loops::effectiveThreads(rows * std::max<int64_t>(cols, 1), threads);
  used = static_cast<int>(std::min<int64_t>(used, rows));
  if (used <= 1) {
    body(int64_t(0), rows);
    return;
  }
  ThreadPool::global().run(used, [&](int tid, int parts) {
    auto [begin, end] = splitRange(rows, parts, tid, 1);
    if (begin < end)
      body(begin, end);
  });
}

/// max by value: unlike std::max, which returns a reference, this is a plain
/// select that GCC if-converts and vectorises (vmaxps). Same NaN behaviour
/// as std::max(a, b).
inline float maxOf(float a, float b) { return a < b ? b : a; }

/// Sums kLanes accumulators pairwise.
inline float foldSum(float *acc) {
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int j = 0; j < width; ++j)
      acc[j] += acc[j + width];
  return acc[0];
}

/// Max of kLanes accumulators.
inline float foldMax(float *acc) {
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int j = 0; j < width; ++j)
      acc[j] = maxOf(acc[j], acc[j + width]);
  return acc[0];
}

//===----------------------------------------------------------------------===//
// Sequential kernels.
//===----------------------------------------------------------------------===//

void copyKernel(const float *__restrict a, float *__restrict c, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    c[i] = a[i];
}

void scaleKernel(const float *__restrict a, float *__restrict c, float s,
                 int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    c[i] = s * a[i];
}

void addKernel(const float *__restrict a, const float *__restrict b,
               float *__restrict c, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    c[i] = a[i] + b[i];
}

void triadKernel(const float *__restrict a, const float *__restrict b,
                 float *__restrict c, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    c[i] = a[i] + s * b[i];
}

void mulKernel(const float *__restrict a, const float *__restrict b,
               float *__restrict c, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    c[i] = a[i] * b[i];
}

void axpyKernel(float alpha, const float *__restrict x, float *__restrict y,
                int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = alpha * x[i] + y[i];
}

void copyStridedKernel(const float *__restrict a, float *__restrict c,
                       int64_t n, int64_t stride) {
  for (int64_t i = 0; i < n; ++i)
    c[i * stride] = a[i * stride];
}

void scaleStridedKernel(const float *__restrict a, float *__restrict c, float s,
                        int64_t n, int64_t stride) {
  for (int64_t i = 0; i < n; ++i)
    c[i * stride] = s * a[i * stride];
}

void addStridedKernel(const float *__restrict a, const float *__restrict b,
                      float *__restrict c, int64_t n, int64_t stride) {
  for (int64_t i = 0; i < n; ++i)
    c[i * stride] = a[i * stride] + b[i * stride];
}

void triadStridedKernel(const float *__restrict a, const float *__restrict b,
                        float *__restrict c, float s, int64_t n,
                        int64_t stride) {
  for (int64_t i = 0; i < n; ++i)
    c[i * stride] = a[i * stride] + s * b[i * stride];
}

void axpyStridedKernel(float alpha, const float *__restrict x,
                       float *__restrict y, int64_t n, int64_t stride) {
  for (int64_t i = 0; i < n; ++i)
    y[i * stride] = alpha * x[i * stride] + y[i * stride];
}

void copyGatherKernel(const float *__restrict a, const int32_t *__restrict idx,
                      float *__restrict c, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    c[i] = a[idx[i]];
}

void scaleGatherKernel(const float *__restrict a, const int32_t *__restrict idx,
                       float *__restrict c, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    c[i] = s * a[idx[i]];
}

void addGatherKernel(const float *__restrict a, const float *__restrict b,
                     const int32_t *__restrict idx, float *__restrict c,
                     int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    c[i] = a[idx[i]] + b[idx[i]];
}

void triadGatherKernel(const float *__restrict a, const float *__restrict b,
                       const int32_t *__restrict idx, float *__restrict c,
                       float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    c[i] = a[idx[i]] + s * b[idx[i]];
}

float sumKernel(const float *__restrict x, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j)
      acc[j] += x[i + j];
  for (int j = 0; i < n; ++i, ++j)
    acc[j] += x[i];
  return foldSum(acc);
}

float dotKernel(const float *__restrict x, const float *__restrict y,
                int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j)
      acc[j] += x[i + j] * y[i + j];
  for (int j = 0; i < n; ++i, ++j)
    acc[j] += x[i] * y[i];
  return foldSum(acc);
}

float sumSquaresKernel(const float *__restrict x, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j)
      acc[j] += x[i + j] * x[i + j];
  for (int j = 0; i < n; ++i, ++j)
    acc[j] += x[i] * x[i];
  return foldSum(acc);
}

float maxKernel(const float *__restrict x, int64_t n) {
  float acc[kLanes];
  for (float &a : acc)
    a = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j)
      acc[j] = maxOf(acc[j], x[i + j]);
  for (int j = 0; i < n; ++i, ++j)
    acc[j] = maxOf(acc[j], x[i]);
  return foldMax(acc);
}

/// exp(x) for x <= 88, branch-free so that loops calling it vectorise (a call
/// to std::exp blocks vectorisation without -ffast-math). Cody-Waite range
/// reduction x = n ln2 + r with |r| <= ln2/2, a degree-6 Taylor polynomial
/// for e^r (relative error about 2e-7), and 2^n built in the exponent bits.
/// Inputs below -87.5 (including -inf) give exactly 0.
inline float expPoly(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;
  constexpr float kRound = 12582912.0f; // 1.5 * 2^23
  constexpr float kMin = -87.5f;
  float xc = x < kMin ? kMin : x; // NaN stays NaN.
  xc = xc > 88.0f ? 88.0f : xc;
  float n = std::fma(xc, kLog2e, kRound) - kRound;
  float r = std::fma(n, -kLn2Hi, xc);
  r = std::fma(n, -kLn2Lo, r);
  float p = 1.0f / 720.0f;
  p = std::fma(p, r, 1.0f / 120.0f);
  p = std::fma(p, r, 1.0f / 24.0f);
  p = std::fma(p, r, 1.0f / 6.0f);
  p = std::fma(p, r, 0.5f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
  float result = p * std::bit_cast<float>(bits);
  return x < kMin ? 0.0f : result;
}

/// y[k] = exp(x[k] - m); returns sum_k y[k].
float expSumKernel(const float *__restrict x, float *__restrict y, int64_t n,
                   float m) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      float e = expPoly(x[i + j] - m);
      y[i + j] = e;
      acc[j] += e;
    }
  for (int j = 0; i < n; ++i, ++j) {
    float e = expPoly(x[i] - m);
    y[i] = e;
    acc[j] += e;
  }
  return foldSum(acc);
}

void scaleInPlaceKernel(float *__restrict y, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] *= s;
}

void fillZeroKernel(float *__restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = 0.0f;
}

/// Softmax of the first `valid` elements of a row; the rest is zeroed.
void softmaxRow(const float *__restrict x, float *__restrict y, int64_t cols,
                int64_t valid) {
  if (valid > 0) {
    float m = maxKernel(x, valid);
    float sum = expSumKernel(x, y, valid, m);
    scaleInPlaceKernel(y, 1.0f / sum, valid);
  }
  fillZeroKernel(y + valid, cols - valid);
}

/// Sum of (x - mean)^2.
float centredSquaresKernel(const float *__restrict x, int64_t n, float mean) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      float d = x[i + j] - mean;
      acc[j] += d * d;
    }
  for (int j = 0; i < n; ++i, ++j) {
    float d = x[i] - mean;
    acc[j] += d * d;
  }
  return foldSum(acc);
}

void layerNormRow(const float *__restrict x, const float *__restrict weight,
                  const float *__restrict bias, float *__restrict y,
                  int64_t hidden, float eps) {
  float invN = 1.0f / static_cast<float>(hidden);
  float mean = sumKernel(x, hidden) * invN;
  float var = centredSquaresKernel(x, hidden, mean) * invN;
  float rstd = 1.0f / std::sqrt(var + eps);
  if (weight && bias) {
    for (int64_t i = 0; i < hidden; ++i)
      y[i] = (x[i] - mean) * rstd * weight[i] + bias[i];
  } else if (weight) {
    for (int64_t i = 0; i < hidden; ++i)
      y[i] = (x[i] - mean) * rstd * weight[i];
  } else if (bias) {
    for (int64_t i = 0; i < hidden; ++i)
      y[i] = (x[i] - mean) * rstd + bias[i];
  } else {
    for (int64_t i = 0; i < hidden; ++i)
      y[i] = (x[i] - mean) * rstd;
  }
}

float plus(float a, float b) { return a + b; }

} // namespace

int loops::effectiveThreads(int64_t work, int threads) {
  int requested = resolveThreads(threads);
  int64_t byWork = std::max<int64_t>(1, work / kMinElementsPerThread);
  return static_cast<int>(std::min<int64_t>(requested, byWork));
}

//===----------------------------------------------------------------------===//
// STREAM
//===----------------------------------------------------------------------===//

void loops::copy(const float *a, float *c, int64_t n, int threads) {
  parallelElements(n, threads, [&](int64_t b, int64_t e) {
    copyKernel(a + b, c + b, e - b);
  });
}

void loops::scale(const float *a, float *c, float s, int64_t n, int threads) {
  parallelElements(n, threads, [&](int64_t b, int64_t e) {
    scaleKernel(a + b, c + b, s, e - b);
  });
}

void loops::add(const float *a, const float *b, float *c, int64_t n,
                int threads) {
  parallelElements(n, threads, [&](int64_t lo, int64_t hi) {
    addKernel(a + lo, b + lo, c + lo, hi - lo);
  });
}

void loops::triad(const float *a, const float *b, float *c, float s, int64_t n,
                  int threads) {
  parallelElements(n, threads, [&](int64_t lo, int64_t hi) {
    triadKernel(a + lo, b + lo, c + lo, s, hi - lo);
  });
}

void loops::copyStrided(const float *a, float *c, int64_t n, int64_t stride,
                        int threads) {
  if (stride == 1)
    return copy(a, c, n, threads);
  parallelElements(n, threads, [&](int64_t b, int64_t e) {
    copyStridedKernel(a + b * stride, c + b * stride, e - b, stride);
  });
}

void loops::scaleStrided(const float *a, float *c, float s, int64_t n,
                         int64_t stride, int threads) {
  if (stride == 1)
    return scale(a, c, s, n, threads);
  parallelElements(n, threads, [&](int64_t b, int64_t e) {
    scaleStridedKernel(a + b * stride, c + b * stride, s, e - b, stride);
  });
}

void loops::addStrided(const float *a, const float *b, float *c, int64_t n,
                       int64_t stride, int threads) {
  if (stride == 1)
    return add(a, b, c, n, threads);
  parallelElements(n, threads, [&](int64_t lo, int64_t hi) {
    int64_t off = lo * stride;
    addStridedKernel(a + off, b + off, c + off, hi - lo, stride);
  });
}

void loops::triadStrided(const float *a, const float *b, float *c, float s,
                         int64_t n, int64_t stride, int threads) {
  if (stride == 1)
    return triad(a, b, c, s, n, threads);
  parallelElements(n, threads, [&](int64_t lo, int64_t hi) {
    int64_t off = lo * stride;
    triadStridedKernel(a + off, b + off, c + off, s, hi - lo, stride);
  });
}

void loops::copyGather(const float *a, const int32_t *idx, float *c, int64_t n,
                       int threads) {
  parallelElements(n, threads, [&](int64_t b, int64_t e) {
    copyGatherKernel(a, idx + b, c + b, e - b);
  });
}

void loops::scaleGather(const float *a, const int32_t *idx, float *c, float s,
                        int64_t n, int threads) {
  parallelElements(n, threads, [&](int64_t b, int64_t e) {
    scaleGatherKernel(a, idx + b, c + b, s, e - b);
  });
}

void loops::addGather(const float *a, const float *b, const int32_t *idx,
                      float *c, int64_t n, int threads) {
  parallelElements(n, threads, [&](int64_t lo, int64_t hi) {
    addGatherKernel(a, b, idx + lo, c + lo, hi - lo);
  });
}

void loops::triadGather(const float *a, const float *b, const int32_t *idx,
                        float *c, float s, int64_t n, int threads) {
  parallelElements(n, threads, [&](int64_t lo, int64_t hi) {
    triadGatherKernel(a, b, idx + lo, c + lo, s, hi - lo);
  });
}

//===----------------------------------------------------------------------===//
// Vector operations
//===----------------------------------------------------------------------===//

void loops::axpy(float alpha, const float *x, float *y, int64_t n,
                 int threads) {
  parallelElements(n, threads, [&](int64_t b, int64_t e) {
    axpyKernel(alpha, x + b, y + b, e - b);
  });
}

void loops::axpyStrided(float alpha, const float *x, float *y, int64_t n,
                        int64_t stride, int threads) {
  if (stride == 1)
    return axpy(alpha, x, y, n, threads);
  parallelElements(n, threads, [&](int64_t b, int64_t e) {
    axpyStridedKernel(alpha, x + b * stride, y + b * stride, e - b, stride);
  });
}

void loops::mul(const float *a, const float *b, float *c, int64_t n,
                int threads) {
  parallelElements(n, threads, [&](int64_t lo, int64_t hi) {
    mulKernel(a + lo, b + lo, c + lo, hi - lo);
  });
}

float loops::dot(const float *x, const float *y, int64_t n, int threads) {
  return parallelReduce(
      n, threads, 0.0f,
      [&](int64_t b, int64_t e) { return dotKernel(x + b, y + b, e - b); },
      plus);
}

float loops::norm2(const float *x, int64_t n, int threads) {
  float sumSq = parallelReduce(
      n, threads, 0.0f,
      [&](int64_t b, int64_t e) { return sumSquaresKernel(x + b, e - b); },
      plus);
  return std::sqrt(sumSq);
}

float loops::reduceSum(const float *x, int64_t n, int threads) {
  return parallelReduce(
      n, threads, 0.0f,
      [&](int64_t b, int64_t e) { return sumKernel(x + b, e - b); }, plus);
}

float loops::reduceMax(const float *x, int64_t n, int threads) {
  return parallelReduce(
      n, threads, -std::numeric_limits<float>::infinity(),
      [&](int64_t b, int64_t e) { return maxKernel(x + b, e - b); }, maxOf);
}

//===----------------------------------------------------------------------===//
// Row-wise kernels
//===----------------------------------------------------------------------===//

void loops::softmax(const float *x, float *y, int64_t rows, int64_t cols,
                    int threads) {
  if (cols <= 0)
    return;
  parallelRows(rows, cols, threads, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      softmaxRow(x + r * cols, y + r * cols, cols, cols);
  });
}

void loops::softmaxCausal(const float *x, float *y, int64_t rows, int64_t cols,
                          int64_t rowsPerMatrix, int threads) {
  if (cols <= 0)
    return;
  int64_t period = rowsPerMatrix > 0 ? rowsPerMatrix : rows;
  parallelRows(rows, cols, threads, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t valid = std::min(r % period + 1, cols);
      softmaxRow(x + r * cols, y + r * cols, cols, valid);
    }
  });
}

void loops::layerNorm(const float *x, const float *weight, const float *bias,
                      float *y, int64_t rows, int64_t hidden, float eps,
                      int threads) {
  if (hidden <= 0)
    return;
  parallelRows(rows, hidden, threads, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      layerNormRow(x + r * hidden, weight, bias, y + r * hidden, hidden, eps);
  });
}

void loops::attention(const float *q, const float *k, const float *v, float *o,
                      int64_t heads, int64_t seqQ, int64_t seqK,
                      int64_t headDim, float scale, bool causal, int threads) {
  // One work item per (head, query row): scores s_j = scale * q . k_j over
  // the visible keys, p = softmax(s), o = sum_j p_j v_j.
  const int64_t diag = seqK - seqQ;
  parallelRows(heads * seqQ, seqK * headDim, threads,
               [&](int64_t begin, int64_t end) {
                 std::vector<float> s(static_cast<size_t>(seqK));
                 std::vector<float> acc(static_cast<size_t>(headDim));
                 for (int64_t row = begin; row < end; ++row) {
                   const int64_t h = row / seqQ, i = row % seqQ;
                   const float *qi = q + row * headDim;
                   const float *kh = k + h * seqK * headDim;
                   const float *vh = v + h * seqK * headDim;
                   int64_t visible = seqK;
                   if (causal)
                     visible = std::clamp<int64_t>(i + diag + 1, 0, seqK);
                   float m = -std::numeric_limits<float>::infinity();
                   for (int64_t j = 0; j < visible; ++j) {
                     const float *kj = kh + j * headDim;
                     float dot = 0;
                     for (int64_t d = 0; d < headDim; ++d)
                       dot += qi[d] * kj[d];
                     s[size_t(j)] = dot * scale;
                     m = std::max(m, s[size_t(j)]);
                   }
                   float sum = 0;
                   for (int64_t j = 0; j < visible; ++j) {
                     s[size_t(j)] = expPoly(s[size_t(j)] - m);
                     sum += s[size_t(j)];
                   }
                   std::fill(acc.begin(), acc.end(), 0.0f);
                   for (int64_t j = 0; j < visible; ++j) {
                     const float *vj = vh + j * headDim;
                     const float p = s[size_t(j)];
                     for (int64_t d = 0; d < headDim; ++d)
                       acc[size_t(d)] += p * vj[d];
                   }
                   float *oi = o + row * headDim;
                   const float inv = visible > 0 ? 1.0f / sum : 0.0f;
                   for (int64_t d = 0; d < headDim; ++d)
                     oi[d] = acc[size_t(d)] * inv;
                 }
               });
}
