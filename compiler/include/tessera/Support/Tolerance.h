//===- Tolerance.h - Dtype-aware tolerance table ----------------*- C++ -*-===//
//
// The single tolerance table used by every correctness check: the tests
// (tests/integration/support applies it to whole tensors), the autotuner and
// the benchmarks. Plain C++. docs/testing.md carries the same table with
// the reasoning; keep the two in sync.
//
// Model. The reference (Reference.h) reads exactly the rounded inputs the
// kernel reads, computes in double and rounds its result to the output dtype
// T. So input quantization is *not* an error source; what remains is
//   (1) the kernel's arithmetic error: f32 accumulation, reassociation and
//       fast approximate exp/rsqrt/division, and
//   (2) output rounding: kernel and reference each round a slightly
//       different pre-rounding value to T, and when the two straddle a
//       rounding boundary the stored results differ by exactly one ulp of T.
// An element passes when |actual - expected| <= atol + rtol * |expected|.
//
// Base table (element-wise ops, output and expected both stored in T). For a
// float type with m stored mantissa bits one ulp of a value in [2^e, 2^e+1)
// is 2^(e-m), so atol = rtol >= 2^-m is the smallest choice that accepts a
// one-ulp disagreement at every magnitude (rtol covers |e| >= 1, atol the
// values below 1):
//
//   dtype     m   2^-m (1 ulp at 1.0)   atol = rtol   meaning
//   f32      23   1.19e-7               1e-5          ~84 ulp: approximate
//                                                     transcendentals and
//                                                     reordered f32 math
//   f16      10   9.77e-4               1e-3          1 ulp
//   bf16      7   7.81e-3               1.6e-2        2 ulp (industry value)
//   fp8_e4m3  3   1.25e-1               1.25e-1       1 ulp
//   fp8_e5m2  2   2.5e-1                2.5e-1        1 ulp
//   fp6_e3m2  2   2.5e-1                2.5e-1        1 ulp
//   fp6_e2m3  3   1.25e-1               1.25e-1       1 ulp
//   fp4_e2m1  1   5e-1                  5e-1          1 ulp
//   (a product of fp6/fp4 inputs, exact in f16, is checked with f16's
//   tolerance: see docs/testing.md)
//   integers  -   -                     0             exact
//
// (A half-ulp fp8 tolerance such as 6.25e-2 for e4m3 rejects correct
// kernels: two correctly rounded results one ulp apart at |x| = 8 differ by
// 1.0, but 6.25e-2 + 6.25e-2 * 8 = 0.5625.)
//
// Scaling with the reduction length K (pass reductionLength = K; s = sqrt(K)):
//   * Reduction, Gemm: atol = base.atol * s, rtol = base.rtol. A K-term dot
//     product of O(1) values with random signs has magnitude ~ s, and the
//     f32 accumulation error of a blocked/tree summation (what tiled GPU
//     kernels do) also grows like s * eps_f32 * |values|, because independent
//     rounding errors add in quadrature. Scaling atol by s therefore keeps the
//     allowance the same fraction of the typical result; rtol, which covers
//     output rounding, does not depend on K. (A strictly sequential f32 loop
//     over K ~ 1e6 can exceed this; the reference is never that loop.)
//   * Softmax, LayerNorm: outputs are normalized (O(1)), so the row
//     statistics' f32 error enters as a *relative* error ~ s * 2^-24. Both
//     atol and rtol get + 8 * s * 2^-24 (a 8x margin for the tail over many
//     rows); K is the row length. Negligible except for f32 and long rows.
//   * Attention: like Softmax, plus atol doubled: flash kernels round the
//     probabilities P to the input dtype before the P*V product, a second
//     rounding of the same size as the output rounding. Pass K = max(Sk, D).
//   * Elementwise: base values, K ignored.
// Integer (and bool) outputs are exact for every op.
//
// Outputs compared against a *wider* expected tensor (e.g. a bf16 kernel
// result against an f32 reference result): start from the tolerance of the
// computation's precision and add withOutputRounding(tol, bf16), which adds
// one half-ulp of the output type relative: round-to-nearest is off by at most
// half an ulp from the wider value.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SUPPORT_TOLERANCE_H
#define TESSERA_SUPPORT_TOLERANCE_H

#include "tessera/Support/DType.h"

#include <cstdint>

namespace tessera {

/// Allclose parameters: an element passes when |a - e| <= atol + rtol * |e|.
struct Tolerance {
  double atol = 0.0; ///< Absolute part, for values near zero.
  double rtol = 0.0; ///< Relative part, scaled by |expected|.
};

/// Operation classes with different error growth (see the file comment).
enum class ToleranceOp {
  Elementwise, ///< One rounding per output: add, mul, axpy, STREAM, copy.
  Reduction,   ///< Sums/dots/norms over reductionLength terms.
  Gemm,        ///< Matrix products; reductionLength = K.
  Softmax,     ///< Row softmax; reductionLength = row length.
  LayerNorm,   ///< Row normalization; reductionLength = hidden size.
  Attention,   ///< Softmax(QK^T)V; reductionLength = max(Sk, D).
};

/// Stable lower-case name of `op` ("elementwise", "gemm", ...).
const char *opName(ToleranceOp op);

/// Stored mantissa (fraction) bits of a float dtype: f32 23, f16 10, bf16 7,
/// fp8_e4m3 3, fp8_e5m2 2; 0 for integer dtypes and bool.
int mantissaBits(DType dtype);

/// One ulp at 1.0, 2^-mantissaBits (the largest relative spacing of
/// neighbouring normal values); 0 for integer dtypes and bool.
double ulpAtOne(DType dtype);

/// Smallest positive (subnormal) value of a float dtype; 0 for integers.
double minSubnormal(DType dtype);

/// The element-wise tolerance of the base table for outputs stored in
/// `dtype` (exact {0, 0} for integer dtypes and bool).
Tolerance baseTolerance(DType dtype);

/// Tolerance for comparing an output of `op` stored in `storage` against the
/// reference result stored in the same dtype; `reductionLength` (K >= 1; 0 is
/// treated as 1) is the length of the longest reduction feeding one output.
/// See the file comment for the rules.
Tolerance toleranceFor(DType storage, ToleranceOp op,
                       int64_t reductionLength = 1);

/// Tolerance for a GEMM whose f32 inputs the kernel may round to tf32 (the
/// "tf32" precision policy: tensor cores on the GPU, full f32 on cpu) against
/// the reference on the unrounded inputs. Unlike the rest of the table, input
/// quantization is an error source here: reducing both inputs to 10 mantissa
/// bits puts each product within 2^-10 (rounded to nearest, mma.sync) or
/// 2^-9 (truncated, sm_90a's wgmma) relative of the exact one, and K such
/// errors with random signs grow like sqrt(K) -- f16's row of the base table
/// (also 10 bits) scaled as Op::Gemm and doubled for truncation: atol
/// 2e-3 * sqrt(K), rtol 2e-3.
Tolerance tf32GemmTolerance(int64_t reductionLength);

/// `tol` widened for rounding the result to `output` when the expected tensor
/// is kept in a wider dtype: rtol grows by half an ulp of `output` at 1.0
/// (2^-(m+1)) and atol by half the smallest subnormal of `output`. Returns
/// `tol` unchanged for integer `output` dtypes.
Tolerance withOutputRounding(Tolerance tol, DType output);

/// True if `actual` matches `expected` under `tol`: NaN matches only NaN,
/// +inf only +inf, -inf only -inf, and finite values must satisfy
/// |actual - expected| <= atol + rtol * |expected|.
bool isClose(double actual, double expected, Tolerance tol);

} // namespace tessera

#endif // TESSERA_SUPPORT_TOLERANCE_H
