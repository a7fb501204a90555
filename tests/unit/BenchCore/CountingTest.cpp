//===- CountingTest.cpp - Tests of the FLOP/byte conventions --------------===//

#include "tessera/bench/Counting.h"

#include <gtest/gtest.h>

using namespace tessera::bench;

TEST(Counting, Gemm) {
  Work w = gemmWork(4096, 4096, 4096, 2, 4, false);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 4096 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * (4096.0 * 4096 * 2) + 4096.0 * 4096 * 4);
  Work small = gemmWork(2, 3, 5, 4, 4, true);
  EXPECT_DOUBLE_EQ(small.flops, 60);
  // A 2x5, B 5x3 read; C 2x3 read and written.
  EXPECT_DOUBLE_EQ(small.bytes, (10 + 15) * 4 + 2 * 6 * 4);
  EXPECT_DOUBLE_EQ(small.intensity(), 60.0 / 148);
}

TEST(Counting, StreamMcCalpin) {
  const int64_t n = 1 << 26;
  EXPECT_DOUBLE_EQ(streamWork("copy", n, 8).bytes, 2.0 * 8 * n);
  EXPECT_DOUBLE_EQ(streamWork("scale", n, 8).bytes, 2.0 * 8 * n);
  EXPECT_DOUBLE_EQ(streamWork("add", n, 8).bytes, 3.0 * 8 * n);
  EXPECT_DOUBLE_EQ(streamWork("triad", n, 4).bytes, 3.0 * 4 * n);
  EXPECT_DOUBLE_EQ(streamWork("copy", n, 8).flops, 0);
  EXPECT_DOUBLE_EQ(streamWork("scale", n, 8).flops, 1.0 * n);
  EXPECT_DOUBLE_EQ(streamWork("add", n, 8).flops, 1.0 * n);
  EXPECT_DOUBLE_EQ(streamWork("triad", n, 8).flops, 2.0 * n);
  EXPECT_EQ(streamWork("bogus", n, 8), Work{});
  EXPECT_FALSE(isKnownStreamOp("bogus"));
}

TEST(Counting, VectorOps) {
  EXPECT_EQ(vectorOpWork("axpy", 100, 4), (Work{200, 1200}));
  EXPECT_EQ(vectorOpWork("dot", 100, 4), (Work{200, 804}));
  EXPECT_EQ(vectorOpWork("norm", 100, 4), (Work{200, 404}));
  EXPECT_EQ(vectorOpWork("add", 100, 2), (Work{100, 600}));
  EXPECT_EQ(vectorOpWork("mul", 100, 2), (Work{100, 600}));
  EXPECT_EQ(vectorOpWork("reduce_sum", 100, 4), (Work{100, 404}));
  EXPECT_EQ(vectorOpWork("reduce_max", 100, 4), (Work{100, 404}));
  EXPECT_EQ(vectorOpWork("nope", 100, 4), Work{});
}

TEST(Counting, SoftmaxAndLayerNorm) {
  EXPECT_EQ(softmaxWork(4096, 1024, 4),
            (Work{5.0 * 4096 * 1024, 2.0 * 4096 * 1024 * 4}));
  EXPECT_EQ(layerNormWork(10, 20, 2, false), (Work{5.0 * 200, 2.0 * 200 * 2}));
  EXPECT_EQ(layerNormWork(10, 20, 2, true),
            (Work{7.0 * 200, (2.0 * 200 + 40) * 2}));
}

TEST(Counting, AttentionCausalPairsExact) {
  // Brute force count of j <= i over a small grid, square and not.
  for (int64_t sq : {1, 3, 7, 16}) {
    for (int64_t sk : {1, 4, 7, 20}) {
      int64_t pairs = 0;
      for (int64_t i = 0; i < sq; ++i)
        for (int64_t j = 0; j < sk; ++j)
          pairs += j <= i;
      EXPECT_EQ(attentionPairs(sq, sk, true), pairs) << sq << "x" << sk;
      EXPECT_EQ(attentionPairs(sq, sk, false), sq * sk);
    }
  }
  EXPECT_EQ(attentionPairs(4, 4, true), 10); // 1 + 2 + 3 + 4
  Work full = attentionWork(2, 3, 4, 4, 8, false, 2);
  Work causal = attentionWork(2, 3, 4, 4, 8, true, 2);
  EXPECT_DOUBLE_EQ(full.flops, 4.0 * 2 * 3 * 16 * 8);
  EXPECT_DOUBLE_EQ(causal.flops, 4.0 * 2 * 3 * 10 * 8);
  EXPECT_DOUBLE_EQ(full.bytes, 2.0 * 3 * (4 + 4 + 4 + 4) * 8 * 2);
  EXPECT_DOUBLE_EQ(causal.bytes, full.bytes);
  // Large causal: about half.
  Work big = attentionWork(4, 16, 2048, 2048, 64, true, 2);
  EXPECT_DOUBLE_EQ(big.flops, 4.0 * 4 * 16 * (2048.0 * 2049 / 2) * 64);
}

TEST(Counting, CausalSoftmaxReadsOnlyTheKeptPairs) {
  // 4 x 4 scores: 1 + 2 + 3 + 4 = 10 kept of 16, two matrices.
  Work w = causalSoftmaxWork(2, 4, 4, 2);
  EXPECT_DOUBLE_EQ(w.flops, 5.0 * 20);
  EXPECT_DOUBLE_EQ(w.bytes, (20.0 + 32.0) * 2);
  // Never more than the full softmax.
  Work full = softmaxWork(2 * 4, 4, 2);
  EXPECT_LT(w.flops, full.flops);
  EXPECT_LT(w.bytes, full.bytes);
}

TEST(Counting, AllReduceBusBandwidthAsNcclTests) {
  EXPECT_DOUBLE_EQ(allReduceBusBandwidth(100.0, 2), 100.0);
  EXPECT_DOUBLE_EQ(allReduceBusBandwidth(100.0, 8), 175.0);
  EXPECT_DOUBLE_EQ(allReduceBusBandwidth(100.0, 1), 0.0);
  EXPECT_DOUBLE_EQ(allReduceBusBandwidth(100.0, 0), 0.0);
}
