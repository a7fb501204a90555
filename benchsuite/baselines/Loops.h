//===- Loops.h - Plain C++ baselines for the benchmark suite ----*- C++ -*-===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The "what a competent engineer writes in C++" baselines: STREAM kernels,
/// BLAS-1 style vector operations, row softmax and row layer norm on f32
/// arrays. They are compiled with -O3 -march=native, use `__restrict`
/// pointers and multi-accumulator reductions so that the compiler vectorises
/// them, and are parallelised with a static split over the persistent
/// ThreadPool.
///
/// Conventions shared by every function here:
///  - `threads` is the number of threads the caller asks for (<= 0 means all
///    hardware threads). Fewer are used when a call has too little work to
///    amortise a dispatch: at least kMinElementsPerThread elements per
///    thread (rows are never split).
///  - Output arrays must not overlap input arrays.
///  - Reductions accumulate in f32 with many independent accumulators and
///    combine per-thread partials in thread order, so a result is
///    deterministic for a given (n, threads) but differs in the last bits
///    from a sequential left-to-right sum.
///
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCHSUITE_BASELINES_LOOPS_H
#define TESSERA_BENCHSUITE_BASELINES_LOOPS_H

#include <cstdint>

namespace tessera::bench::loops {

/// Minimum number of elements a thread is given in the element-wise kernels
/// and reductions (64 KiB of f32 per input stream); smaller calls use fewer
/// threads than requested.
inline constexpr int64_t kMinElementsPerThread = 16384;

/// Number of threads a call over `work` elements actually uses when the
/// caller asks for `threads`.
int effectiveThreads(int64_t work, int threads);

//===----------------------------------------------------------------------===//
// STREAM kernels (McCalpin): copy and scale move 2 words per element, add and
// triad 3 words per element.
//===----------------------------------------------------------------------===//

/// c[i] = a[i] for i in [0, n).
void copy(const float *a, float *c, int64_t n, int threads = 1);
/// c[i] = s * a[i].
void scale(const float *a, float *c, float s, int64_t n, int threads = 1);
/// c[i] = a[i] + b[i]. This is also the `add` of the vector_ops suite.
void add(const float *a, const float *b, float *c, int64_t n, int threads = 1);
/// c[i] = a[i] + s * b[i].
void triad(const float *a, const float *b, float *c, float s, int64_t n,
           int threads = 1);

/// Strided variants: `n` logical elements, element i lives at index
/// i * stride of every array (each array spans (n - 1) * stride + 1 floats).
/// stride must be >= 1; stride 1 is the contiguous kernel.
void copyStrided(const float *a, float *c, int64_t n, int64_t stride,
                 int threads = 1);
/// c[i*stride] = s * a[i*stride].
void scaleStrided(const float *a, float *c, float s, int64_t n, int64_t stride,
                  int threads = 1);
/// c[i*stride] = a[i*stride] + b[i*stride].
void addStrided(const float *a, const float *b, float *c, int64_t n,
                int64_t stride, int threads = 1);
/// c[i*stride] = a[i*stride] + s * b[i*stride].
void triadStrided(const float *a, const float *b, float *c, float s, int64_t n,
                  int64_t stride, int threads = 1);

/// Gather variants: inputs are read at idx[i], the output is written densely.
/// Indices are 32-bit (arrays of up to 2^31 - 1 elements), as GPU kernels and
/// AVX-512 gathers use.
/// c[i] = a[idx[i]].
void copyGather(const float *a, const int32_t *idx, float *c, int64_t n,
                int threads = 1);
/// c[i] = s * a[idx[i]].
void scaleGather(const float *a, const int32_t *idx, float *c, float s,
                 int64_t n, int threads = 1);
/// c[i] = a[idx[i]] + b[idx[i]].
void addGather(const float *a, const float *b, const int32_t *idx, float *c,
               int64_t n, int threads = 1);
/// c[i] = a[idx[i]] + s * b[idx[i]].
void triadGather(const float *a, const float *b, const int32_t *idx, float *c,
                 float s, int64_t n, int threads = 1);

//===----------------------------------------------------------------------===//
// Vector operations (vector_ops suite). `add` is the STREAM add above.
//===----------------------------------------------------------------------===//

/// y[i] = alpha * x[i] + y[i].
void axpy(float alpha, const float *x, float *y, int64_t n, int threads = 1);
/// Strided axpy: element i at index i * stride of both arrays.
void axpyStrided(float alpha, const float *x, float *y, int64_t n,
                 int64_t stride, int threads = 1);
/// c[i] = a[i] * b[i].
void mul(const float *a, const float *b, float *c, int64_t n, int threads = 1);
/// Returns sum_i x[i] * y[i] (0 for n == 0).
float dot(const float *x, const float *y, int64_t n, int threads = 1);
/// Returns sqrt(sum_i x[i]^2), accumulated in f32 (0 for n == 0).
float norm2(const float *x, int64_t n, int threads = 1);
/// Returns sum_i x[i] (0 for n == 0).
float reduceSum(const float *x, int64_t n, int threads = 1);
/// Returns max_i x[i] (-inf for n == 0; NaN inputs give an unspecified
/// result).
float reduceMax(const float *x, int64_t n, int threads = 1);

//===----------------------------------------------------------------------===//
// Row-wise kernels on row-major matrices. Rows are distributed over threads.
//===----------------------------------------------------------------------===//

/// Numerically stable softmax of each row of x [rows x cols] into y:
/// max pass, exp-and-sum pass, scale pass. exp is a branch-free polynomial
/// (relative error below 4e-7) that the compiler vectorises; see README.md.
void softmax(const float *x, float *y, int64_t rows, int64_t cols,
             int threads = 1);

/// Causal softmax: the rows are a stack of [rowsPerMatrix x cols] attention
/// matrices; row r has query position q = r % rowsPerMatrix, and columns
/// k > q are masked (written as 0 and never read). Pass rowsPerMatrix = rows
/// for a single matrix.
void softmaxCausal(const float *x, float *y, int64_t rows, int64_t cols,
                   int64_t rowsPerMatrix, int threads = 1);

/// Layer norm of each row of x [rows x hidden] into y:
/// y = (x - mean) / sqrt(var + eps) * weight + bias, with the mean and the
/// (biased) variance computed in two passes. weight and bias may be null,
/// meaning all-ones and all-zeros.
void layerNorm(const float *x, const float *weight, const float *bias, float *y,
               int64_t rows, int64_t hidden, float eps, int threads = 1);

/// Attention forward o = softmax(scale * q k^T) v for `heads` independent
/// heads (batch x heads flattened), q and o [heads x seqQ x headDim], k and v
/// [heads x seqK x headDim], row-major. With `causal`, query i sees keys
/// j <= i + (seqK - seqQ) (bottom-right aligned, as the kernel library). The
/// scores of one row are kept (seqK floats per thread); exp is the same
/// polynomial as softmax. Rows are distributed over threads.
void attention(const float *q, const float *k, const float *v, float *o,
               int64_t heads, int64_t seqQ, int64_t seqK, int64_t headDim,
               float scale, bool causal, int threads = 1);

} // namespace tessera::bench::loops

#endif // TESSERA_BENCHSUITE_BASELINES_LOOPS_H
