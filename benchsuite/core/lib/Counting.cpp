//===- Counting.cpp - FLOPs and bytes of one kernel launch ----------------===//
//
// The counting conventions of docs/bench-json.md. Counts are doubles: a
// 16384^3 GEMM already has 8.8e12 FLOPs.
//
//===----------------------------------------------------------------------===//

#include "tessera/bench/Counting.h"

#include <algorithm>

using namespace tessera::bench;

namespace {
double d(int64_t x) { return static_cast<double>(x); }
} // namespace

Work tessera::bench::gemmWork(int64_t m, int64_t n, int64_t k, int inBytes,
                              int outBytes, bool beta) {
  Work w;
  w.flops = 2.0 * d(m) * d(n) * d(k);
  w.bytes = (d(m) * d(k) + d(k) * d(n)) * inBytes +
            d(m) * d(n) * outBytes * (beta ? 2 : 1);
  return w;
}

bool tessera::bench::isKnownStreamOp(std::string_view op) {
  return op == "copy" || op == "scale" || op == "add" || op == "triad";
}

Work tessera::bench::streamWork(std::string_view op, int64_t n, int elemBytes) {
  double words = 0, flopsPerElem = 0;
  if (op == "copy") {
    words = 2;
  } else if (op == "scale") {
    words = 2;
    flopsPerElem = 1;
  } else if (op == "add") {
    words = 3;
    flopsPerElem = 1;
  } else if (op == "triad") {
    words = 3;
    flopsPerElem = 2;
  } else {
    return Work{};
  }
  return Work{flopsPerElem * d(n), words * d(n) * elemBytes};
}

bool tessera::bench::isKnownVectorOp(std::string_view op) {
  return op == "axpy" || op == "dot" || op == "norm" || op == "add" ||
         op == "mul" || op == "reduce_sum" || op == "reduce_max";
}

Work tessera::bench::vectorOpWork(std::string_view op, int64_t n,
                                  int elemBytes) {
  // (elements moved per input element, scalar outputs, FLOPs per element)
  double words = 0, scalars = 0, flopsPerElem = 0;
  if (op == "axpy") {
    words = 3, flopsPerElem = 2;
  } else if (op == "dot") {
    words = 2, scalars = 1, flopsPerElem = 2;
  } else if (op == "norm") {
    words = 1, scalars = 1, flopsPerElem = 2;
  } else if (op == "add" || op == "mul") {
    words = 3, flopsPerElem = 1;
  } else if (op == "reduce_sum" || op == "reduce_max") {
    words = 1, scalars = 1, flopsPerElem = 1;
  } else {
    return Work{};
  }
  return Work{flopsPerElem * d(n), (words * d(n) + scalars) * elemBytes};
}

Work tessera::bench::softmaxWork(int64_t rows, int64_t cols, int elemBytes) {
  double elems = d(rows) * d(cols);
  return Work{5 * elems, 2 * elems * elemBytes};
}

Work tessera::bench::layerNormWork(int64_t rows, int64_t cols, int elemBytes,
                                   bool affine) {
  double elems = d(rows) * d(cols);
  Work w;
  w.flops = (affine ? 7 : 5) * elems;
  w.bytes = (2 * elems + (affine ? 2 * d(cols) : 0)) * elemBytes;
  return w;
}

int64_t tessera::bench::attentionPairs(int64_t seqQ, int64_t seqK,
                                       bool causal) {
  if (seqQ <= 0 || seqK <= 0)
    return 0;
  if (!causal)
    return seqQ * seqK;
  // Rows i < seqK see i + 1 keys (1 + 2 + ... + r for r = min(seqQ, seqK)
  // rows); the remaining rows see all seqK keys.
  int64_t r = std::min(seqQ, seqK);
  return r * (r + 1) / 2 + (seqQ - r) * seqK;
}

Work tessera::bench::attentionWork(int64_t batch, int64_t heads, int64_t seqQ,
                                   int64_t seqK, int64_t headDim, bool causal,
                                   int elemBytes) {
  double bh = d(batch) * d(heads);
  Work w;
  w.flops = 4.0 * bh * d(attentionPairs(seqQ, seqK, causal)) * d(headDim);
  w.bytes = bh * (2 * d(seqQ) + 2 * d(seqK)) * d(headDim) * elemBytes;
  return w;
}

Work tessera::bench::causalSoftmaxWork(int64_t matrices, int64_t seqQ,
                                       int64_t seqK, int elemBytes) {
  Work w;
  double pairs = double(matrices) * double(attentionPairs(seqQ, seqK, true));
  w.flops = 5.0 * pairs;
  w.bytes = (pairs + double(matrices) * double(seqQ) * double(seqK)) *
            double(elemBytes);
  return w;
}

double tessera::bench::allReduceBusBandwidth(double algbw, int ranks) {
  if (ranks < 1)
    return 0;
  return algbw * 2.0 * double(ranks - 1) / double(ranks);
}
