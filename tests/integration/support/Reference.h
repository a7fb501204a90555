//===- Reference.h - Reference implementations for kernel tests -*- C++ -*-===//
//
// Plain, obviously-correct implementations of the operations Tessera kernels
// compute, used as the correctness oracle by the end-to-end tests. They are
// written independently of the compiler and share no code with it.
//
// Common contract of every function here:
//   * Inputs and outputs are HostTensors with any dtype and any (non-negative)
//     strides; shapes are checked and a mismatch aborts (Check.h).
//   * Inputs are read as doubles (so the reference sees exactly the rounded
//     values the kernel read), all arithmetic is IEEE double, and each
//     result is written once through storeFromDouble, i.e. correctly rounded
//     to the output dtype.
//   * All inputs are read before any output is written, so an output may
//     alias an input.
//   * Special values (NaN, +-inf) follow plain IEEE double arithmetic of the
//     formula as written; the resulting rules for each operation are stated
//     next to it and in docs/testing.md. Kernels are tested against them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_SUPPORT_REFERENCE_H
#define TESSERA_TESTS_SUPPORT_REFERENCE_H

#include "HostTensor.h"

#include <cstdint>

namespace tessera::testing {

//===----------------------------------------------------------------------===//
// Matrix and row operations
//===----------------------------------------------------------------------===//

/// C = alpha * A * B + beta * C, with A: [M, K], B: [K, N], C: [M, N].
/// Transposed operands are passed as transposed() views. Each dot product is
/// accumulated in double in k order. When beta == 0, C is not read (as in
/// BLAS), so NaN or poison in C does not propagate. alpha == 0 is not
/// special: A and B are still read, so NaN/inf in them still propagates.
/// K == 0 gives C = beta * C (or 0 when beta == 0).
void gemm(const HostTensor &a, const HostTensor &b, HostTensor &c,
          double alpha = 1.0, double beta = 0.0);

/// Row softmax over the last axis of `x` ([rows, cols]) into `y` (same
/// shape). Callers flatten any leading dimensions into rows.
///
/// Causal masking (`causal` = true): column c of row r is masked when c > r
/// (top-left aligned; there is no offset for cols != rows, so every row has
/// at least column 0 visible and rows r >= cols see every column). Masked
/// outputs are exactly 0 and masked inputs are never read, whatever they
/// hold.
///
/// Over the unmasked entries of a row the result is the stable formula
/// y = exp(x - max) / sum(exp(x - max)) evaluated in IEEE arithmetic, so:
///   * a row with any NaN gives NaN in every unmasked output;
///   * a row with any +inf gives NaN in every unmasked output (inf - inf);
///   * a row whose unmasked entries are all -inf gives NaN in every unmasked
///     output (-inf - -inf);
///   * otherwise, -inf entries give exactly 0 and the finite entries a
///     proper distribution (the max entry contributes exp(0) = 1 to the sum,
///     so there is no overflow or division by zero for any finite input).
void softmax(const HostTensor &x, HostTensor &y, bool causal = false);

/// Layer normalization over the last axis of `x` ([rows, hidden]) into `y`
/// (same shape): y = (x - mean) / sqrt(var + eps) * weight + bias, with the
/// mean and the biased variance (divided by hidden) of the row computed in
/// two passes. `weight` and `bias` are 1-D [hidden]; an undefined
/// HostTensor means weight 1 / bias 0. If `mean` / `rstd` are non-null they
/// receive the per-row mean and 1 / sqrt(var + eps), shape [rows].
///
/// Special values: a row containing any NaN or +-inf gives NaN in every
/// output of that row (the mean is non-finite, so the variance is NaN). A
/// constant row has var = 0 and gives y = bias exactly when eps > 0, and NaN
/// (0 * inf) when eps == 0.
void layerNorm(const HostTensor &x, const HostTensor &weight,
               const HostTensor &bias, HostTensor &y, double eps,
               HostTensor *mean = nullptr, HostTensor *rstd = nullptr);

/// The conventional attention scale 1 / sqrt(headDim).
double defaultAttentionScale(int64_t headDim);

/// Scaled dot-product attention, one softmax per (batch*head, query):
///   s[b, i, j] = scale * dot(Q[b, i, :], K[b, j, :])
///   O[b, i, :] = sum_j softmax_j(s[b, i, :]) * V[b, j, :]
/// with Q: [BH, Sq, D], K: [BH, Sk, D], V: [BH, Sk, Dv], O: [BH, Sq, Dv].
///
/// Causal masking: key j is masked for query i when j > i + (Sk - Sq), i.e.
/// the mask is aligned to the bottom-right corner so the last query sees
/// every key (the KV-cache / FlashAttention convention; for Sq == Sk this is
/// the usual j > i). Masked keys are skipped entirely (their K and V rows
/// are not read for that query). A query that sees no key at all (causal
/// with Sk < Sq, or Sk == 0) gets O = 0 and lse = -inf, the FlashAttention
/// convention, rather than the NaN of an all-masked softmax.
///
/// The row softmax over visible keys follows the softmax() rules (NaN or
/// +inf scores, or all -inf scores, give a NaN output row), and p * V uses
/// IEEE products (a zero probability times an infinite V element is NaN).
/// If `lse` is non-null it receives, shape [BH, Sq], the natural-log
/// log-sum-exp of the visible scaled scores.
void attention(const HostTensor &q, const HostTensor &k, const HostTensor &v,
               HostTensor &o, bool causal, double scale,
               HostTensor *lse = nullptr);

//===----------------------------------------------------------------------===//
// Vector operations and reductions
//
// These take tensors of any rank (1-D in the usual case) and work in
// logical order; all operands of one call must have the same shape.
//===----------------------------------------------------------------------===//

/// y = alpha * x + y, in place.
void axpy(double alpha, const HostTensor &x, HostTensor &y);

/// Sum of x[i] * y[i], accumulated in double in logical order.
double dot(const HostTensor &x, const HostTensor &y);

/// Euclidean norm sqrt(sum x[i]^2), accumulated in double.
double norm2(const HostTensor &x);

/// out = x + y element-wise.
void add(const HostTensor &x, const HostTensor &y, HostTensor &out);

/// out = x * y element-wise.
void mul(const HostTensor &x, const HostTensor &y, HostTensor &out);

/// Sum of all elements in double (0 for an empty tensor; NaN propagates, and
/// +inf + -inf is NaN).
double reduceSum(const HostTensor &x);

/// Largest element. NaN anywhere gives NaN; an empty tensor gives -inf.
double reduceMax(const HostTensor &x);

/// out[r] = reduceSum of row r of `x` ([rows, cols]); out is [rows].
void reduceSumRows(const HostTensor &x, HostTensor &out);

/// out[r] = reduceMax of row r of `x` ([rows, cols]); out is [rows]. Rows of
/// length 0 give -inf.
void reduceMaxRows(const HostTensor &x, HostTensor &out);

//===----------------------------------------------------------------------===//
// STREAM kernels (McCalpin), on 1-D tensors with any strides
//===----------------------------------------------------------------------===//

/// c = a.
void streamCopy(const HostTensor &a, HostTensor &c);

/// c = s * a.
void streamScale(const HostTensor &a, HostTensor &c, double s);

/// c = a + b.
void streamAdd(const HostTensor &a, const HostTensor &b, HostTensor &c);

/// c = a + s * b.
void streamTriad(const HostTensor &a, const HostTensor &b, HostTensor &c,
                 double s);

/// out[i] = src[indices[i]] (the random-access STREAM variant). `src` is
/// 1-D; `indices` has an integer dtype (i32 or i64 normally) and the same
/// shape as `out`. An index outside [0, src.dim(0)) aborts.
void gather(const HostTensor &src, const HostTensor &indices, HostTensor &out);

} // namespace tessera::testing

#endif // TESSERA_TESTS_SUPPORT_REFERENCE_H
