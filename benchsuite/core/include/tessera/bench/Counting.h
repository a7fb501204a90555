//===- Counting.h - FLOPs and bytes of one kernel launch --------*- C++ -*-===//
//
// The work of one launch under the conventions documented in
// docs/bench-json.md ("Counting conventions"). Bytes are the ideal DRAM
// traffic: every input read once and every output written once; FLOPs count
// a fused multiply-add as two.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCH_COUNTING_H
#define TESSERA_BENCH_COUNTING_H

#include <cstdint>
#include <string_view>

namespace tessera::bench {

struct Work {
  double flops = 0;
  double bytes = 0;
  /// flops / bytes (0 when bytes is 0).
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
  bool operator==(const Work &) const = default;
};

/// C = A*B (+ beta*C): 2*m*n*k FLOPs (the epilogue is not counted); bytes =
/// A (m*k) and B (k*n) read at `inBytes`, C (m*n) written at `outBytes`, and
/// C read as well when `beta`.
Work gemmWork(int64_t m, int64_t n, int64_t k, int inBytes, int outBytes,
              bool beta);

/// STREAM as McCalpin counts it: copy (c = a) and scale (b = s*c) move 2
/// words per element, add (c = a + b) and triad (a = b + s*c) 3 words.
/// FLOPs per element: copy 0, scale 1, add 1, triad 2. An unknown op gives
/// zero work (see isKnownStreamOp).
Work streamWork(std::string_view op, int64_t n, int elemBytes);
bool isKnownStreamOp(std::string_view op);

/// BLAS-1 style vector operations over n elements (words read + written;
/// FLOPs per element):
///   axpy  y = a*x + y   3 words, 2      dot    x.y          2 words + 1, 2
///   norm  ||x||_2       1 word + 1, 2   add    z = x + y    3 words, 1
///   mul   z = x * y     3 words, 1      reduce_sum / reduce_max  1 word + 1, 1
/// ("+ 1": the scalar result is written once). Unknown op: zero work.
Work vectorOpWork(std::string_view op, int64_t n, int elemBytes);
bool isKnownVectorOp(std::string_view op);

/// Row softmax of a rows x cols matrix: input read once, output written once;
/// 5 FLOPs per element (max, subtract, exp, sum, scale), exp counted as one.
Work softmaxWork(int64_t rows, int64_t cols, int elemBytes);

/// Layer norm over the last dimension: input read once, output written once,
/// plus gamma and beta (2 * cols elements) when `affine`; 5 FLOPs per element
/// (sum, subtract, square and accumulate, normalise) plus 2 (scale, shift)
/// when `affine`; the per-row rsqrt is not counted.
Work layerNormWork(int64_t rows, int64_t cols, int elemBytes, bool affine);

/// Number of (query, key) pairs an attention head computes: seqQ * seqK, or
/// when `causal` (top-left aligned, query i sees keys j <= i, as PyTorch's
/// is_causal and the kernel library) sum over i of min(seqK, i + 1).
int64_t attentionPairs(int64_t seqQ, int64_t seqK, bool causal);

/// Attention forward O = softmax(Q K^T) V: 4 * B * H * pairs * D FLOPs (two
/// matmuls; softmax not counted); bytes = Q and O (B*H*Sq*D each) and K and V
/// (B*H*Sk*D each), each read or written once.
Work attentionWork(int64_t batch, int64_t heads, int64_t seqQ, int64_t seqK,
                   int64_t headDim, bool causal, int elemBytes);

/// Causal softmax of `matrices` [seqQ x seqK] score matrices (top-left
/// aligned, as attentionPairs): only the kept pairs are read and computed
/// (5 FLOPs each), every output element is written: bytes = (pairs +
/// matrices * seqQ * seqK) * elemBytes.
Work causalSoftmaxWork(int64_t matrices, int64_t seqQ, int64_t seqK,
                       int elemBytes);

/// nccl-tests' bus bandwidth of an all-reduce over `ranks` devices:
/// algbw * 2 * (ranks - 1) / ranks, where algbw = message bytes / time
/// (0 for fewer than one rank).
double allReduceBusBandwidth(double algbw, int ranks);

} // namespace tessera::bench

#endif // TESSERA_BENCH_COUNTING_H
