//===- BaselinesTest.cpp - Tests for the CPU baselines --------------------===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
//
// Checks benchsuite/baselines against straightforward scalar loops: sizes
// that are not multiples of the vector width or of the thread split, strides
// 2/4/8, gathers with repeated indices; OpenBLAS sgemm against a triple loop;
// and that the CPU peak micro-benchmarks return sane numbers quickly.
//
//===----------------------------------------------------------------------===//

#include "CpuPeak.h"
#include "Loops.h"
#include "OpenBlas.h"
#include "ThreadPool.h"

#include "BaselinesTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace tessera::bench;

namespace {

using tessera::bench::baselinetest::randomVector;

/// Sizes around the vector width (16 f32), the reduction block (64) and
/// large enough for 2 and 3 threads to really be used (> 3 *
/// kMinElementsPerThread), none a multiple of the thread count.
const std::vector<int64_t> kSizes = {0,
                                     1,
                                     7,
                                     15,
                                     16,
                                     17,
                                     63,
                                     64,
                                     65,
                                     1001,
                                     3 * loops::kMinElementsPerThread + 7};
const std::vector<int> kThreads = {1, 2, 3};

/// Relative closeness allowing for one fused multiply-add versus a separate
/// multiply and add.
void expectNearRel(float expected, float actual, float rel, const char *what,
                   int64_t i) {
  float tol = rel * std::max(1.0f, std::fabs(expected));
  EXPECT_NEAR(expected, actual, tol) << what << " at " << i;
}

//===----------------------------------------------------------------------===//
// ThreadPool
//===----------------------------------------------------------------------===//

TEST(BaselinesThreadPool, RunsEveryThreadIdOnce) {
  for (int threads : {1, 2, 3, 5}) {
    std::vector<std::atomic<int>> hits(threads);
    ThreadPool::global().run(threads, [&](int tid, int n) {
      EXPECT_EQ(n, threads);
      hits[tid].fetch_add(1);
    });
    for (int t = 0; t < threads; ++t)
      EXPECT_EQ(hits[t].load(), 1) << "tid " << t << " of " << threads;
  }
}

TEST(BaselinesThreadPool, ManyBackToBackJobs) {
  std::atomic<int64_t> total{0};
  for (int i = 0; i < 2000; ++i)
    ThreadPool::global().run(2, [&](int tid, int) { total += tid + 1; });
  EXPECT_EQ(total.load(), 2000 * 3);
}

TEST(BaselinesThreadPool, NestedRunIsSerial) {
  std::atomic<int> inner{0};
  ThreadPool::global().run(2, [&](int, int) {
    ThreadPool::global().run(3, [&](int, int n) {
      EXPECT_EQ(n, 3);
      inner.fetch_add(1);
    });
  });
  EXPECT_EQ(inner.load(), 6);
}

TEST(BaselinesThreadPool, SplitRangeCoversAndAligns) {
  for (int64_t n : {0, 1, 15, 16, 100, 1000, 12345}) {
    for (int parts : {1, 2, 3, 7}) {
      int64_t expectBegin = 0;
      for (int i = 0; i < parts; ++i) {
        auto [begin, end] = splitRange(n, parts, i, 16);
        EXPECT_EQ(begin, expectBegin);
        EXPECT_LE(begin, end);
        if (end != n) {
          EXPECT_EQ(end % 16, 0);
        }
        expectBegin = end;
      }
      EXPECT_EQ(expectBegin, n);
    }
  }
}

TEST(BaselinesThreadPool, EffectiveThreadsRespectsGrain) {
  EXPECT_EQ(loops::effectiveThreads(10, 4), 1);
  EXPECT_EQ(loops::effectiveThreads(2 * loops::kMinElementsPerThread, 4), 2);
  EXPECT_EQ(loops::effectiveThreads(100 * loops::kMinElementsPerThread, 3), 3);
  EXPECT_EQ(loops::effectiveThreads(100 * loops::kMinElementsPerThread, 0),
            std::min(hardwareThreads(), 100));
}

//===----------------------------------------------------------------------===//
// STREAM and element-wise kernels
//===----------------------------------------------------------------------===//

TEST(BaselinesLoops, StreamContiguous) {
  for (int64_t n : kSizes) {
    std::vector<float> a = randomVector(n, 1), b = randomVector(n, 2);
    for (int threads : kThreads) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " threads=" << threads);
      std::vector<float> c(n + 1, -7.0f);
      const float s = 1.75f;

      loops::copy(a.data(), c.data(), n, threads);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(c[i], a[i]) << i;
      loops::scale(a.data(), c.data(), s, n, threads);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(c[i], s * a[i]) << i;
      loops::add(a.data(), b.data(), c.data(), n, threads);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(c[i], a[i] + b[i]) << i;
      loops::mul(a.data(), b.data(), c.data(), n, threads);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(c[i], a[i] * b[i]) << i;
      loops::triad(a.data(), b.data(), c.data(), s, n, threads);
      for (int64_t i = 0; i < n; ++i)
        expectNearRel(a[i] + s * b[i], c[i], 1e-6f, "triad", i);
      // Nothing past the end was written.
      EXPECT_EQ(c[n], -7.0f);

      std::vector<float> y = b;
      loops::axpy(s, a.data(), y.data(), n, threads);
      for (int64_t i = 0; i < n; ++i)
        expectNearRel(s * a[i] + b[i], y[i], 1e-6f, "axpy", i);
    }
  }
}

TEST(BaselinesLoops, StreamStrided) {
  for (int64_t stride : {1, 2, 4, 8}) {
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(17), int64_t(1001),
                      int64_t(2 * loops::kMinElementsPerThread + 5)}) {
      int64_t span = n == 0 ? 0 : (n - 1) * stride + 1;
      std::vector<float> a = randomVector(span, 3), b = randomVector(span, 4);
      for (int threads : kThreads) {
        SCOPED_TRACE(testing::Message() << "stride=" << stride << " n=" << n
                                        << " threads=" << threads);
        const float s = -0.5f;
        auto check = [&](const std::vector<float> &c, auto expected,
                         const char *what) {
          for (int64_t i = 0; i < span; ++i) {
            if (i % stride == 0)
              expectNearRel(expected(i), c[i], 1e-6f, what, i);
            else
              ASSERT_EQ(c[i], 42.0f) << what << ": gap element " << i;
          }
        };
        std::vector<float> c(span, 42.0f);
        loops::copyStrided(a.data(), c.data(), n, stride, threads);
        check(
            c, [&](int64_t i) { return a[i]; }, "copy");
        c.assign(span, 42.0f);
        loops::scaleStrided(a.data(), c.data(), s, n, stride, threads);
        check(
            c, [&](int64_t i) { return s * a[i]; }, "scale");
        c.assign(span, 42.0f);
        loops::addStrided(a.data(), b.data(), c.data(), n, stride, threads);
        check(
            c, [&](int64_t i) { return a[i] + b[i]; }, "add");
        c.assign(span, 42.0f);
        loops::triadStrided(a.data(), b.data(), c.data(), s, n, stride,
                            threads);
        check(
            c, [&](int64_t i) { return a[i] + s * b[i]; }, "triad");

        std::vector<float> y(span, 42.0f);
        for (int64_t i = 0; i < span; i += stride)
          y[i] = b[i];
        loops::axpyStrided(s, a.data(), y.data(), n, stride, threads);
        check(
            y, [&](int64_t i) { return s * a[i] + b[i]; }, "axpy");
      }
    }
  }
}

TEST(BaselinesLoops, StreamGather) {
  const int64_t tableSize = 5000;
  std::vector<float> a = randomVector(tableSize, 5),
                     b = randomVector(tableSize, 6);
  for (int64_t n : kSizes) {
    // Random indices, with repeats.
    std::vector<int32_t> idx(n);
    std::mt19937 rng(static_cast<unsigned>(n));
    std::uniform_int_distribution<int32_t> pick(0, tableSize - 1);
    for (int32_t &i : idx)
      i = pick(rng);
    for (int threads : kThreads) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " threads=" << threads);
      const float s = 3.0f;
      std::vector<float> c(n);
      loops::copyGather(a.data(), idx.data(), c.data(), n, threads);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(c[i], a[idx[i]]) << i;
      loops::scaleGather(a.data(), idx.data(), c.data(), s, n, threads);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(c[i], s * a[idx[i]]) << i;
      loops::addGather(a.data(), b.data(), idx.data(), c.data(), n, threads);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(c[i], a[idx[i]] + b[idx[i]]) << i;
      loops::triadGather(a.data(), b.data(), idx.data(), c.data(), s, n,
                         threads);
      for (int64_t i = 0; i < n; ++i)
        expectNearRel(a[idx[i]] + s * b[idx[i]], c[i], 1e-6f, "triad", i);
    }
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST(BaselinesLoops, Reductions) {
  for (int64_t n : kSizes) {
    // Positive inputs keep the relative error of f32 sums meaningful.
    std::vector<float> x = randomVector(n, 7, 0.0f, 1.0f);
    std::vector<float> y = randomVector(n, 8, 0.0f, 1.0f);
    double sum = 0, dot = 0, sq = 0;
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) {
      sum += x[i];
      dot += double(x[i]) * y[i];
      sq += double(x[i]) * x[i];
      max = std::max(max, x[i]);
    }
    for (int threads : kThreads) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " threads=" << threads);
      EXPECT_NEAR(loops::reduceSum(x.data(), n, threads), sum,
                  1e-5 * std::max(1.0, sum));
      EXPECT_NEAR(loops::dot(x.data(), y.data(), n, threads), dot,
                  1e-5 * std::max(1.0, dot));
      EXPECT_NEAR(loops::norm2(x.data(), n, threads), std::sqrt(sq),
                  1e-5 * std::max(1.0, std::sqrt(sq)));
      EXPECT_EQ(loops::reduceMax(x.data(), n, threads), max);
    }
  }
}

TEST(BaselinesLoops, ReduceMaxFindsMaximumAnywhere) {
  const int64_t n = 3 * loops::kMinElementsPerThread + 11;
  std::vector<float> x = randomVector(n, 9, -100.0f, -1.0f);
  for (int64_t pos : {int64_t(0), int64_t(15), int64_t(64), n / 2, n - 1}) {
    std::vector<float> v = x;
    v[pos] = 5.0f;
    for (int threads : kThreads)
      EXPECT_EQ(loops::reduceMax(v.data(), n, threads), 5.0f)
          << "pos=" << pos << " threads=" << threads;
  }
}

//===----------------------------------------------------------------------===//
// Softmax and layer norm
//===----------------------------------------------------------------------===//

/// Reference softmax of the first `valid` entries of a row, in double.
std::vector<double> referenceSoftmax(const float *x, int64_t cols,
                                     int64_t valid) {
  std::vector<double> out(cols, 0.0);
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t k = 0; k < valid; ++k)
    m = std::max(m, double(x[k]));
  double sum = 0;
  for (int64_t k = 0; k < valid; ++k)
    sum += out[k] = std::exp(double(x[k]) - m);
  for (int64_t k = 0; k < valid; ++k)
    out[k] /= sum;
  return out;
}

void expectSoftmaxRow(const float *x, const float *y, int64_t cols,
                      int64_t valid, int64_t row) {
  std::vector<double> ref = referenceSoftmax(x, cols, valid);
  for (int64_t k = 0; k < cols; ++k) {
    if (k >= valid) {
      ASSERT_EQ(y[k], 0.0f) << "masked row " << row << " col " << k;
      continue;
    }
    ASSERT_NEAR(y[k], ref[k], 1e-6 + 2e-6 * ref[k])
        << "row " << row << " col " << k;
  }
}

TEST(BaselinesLoops, Softmax) {
  for (int64_t cols : {1, 3, 16, 17, 64, 100, 1029}) {
    int64_t rows = 3 * loops::kMinElementsPerThread / cols + 5;
    // Wide range so that exp sees large negative arguments.
    std::vector<float> x = randomVector(rows * cols, 10, -40.0f, 40.0f);
    for (int threads : kThreads) {
      SCOPED_TRACE(testing::Message()
                   << "cols=" << cols << " threads=" << threads);
      std::vector<float> y(rows * cols, -1.0f);
      loops::softmax(x.data(), y.data(), rows, cols, threads);
      for (int64_t r = 0; r < rows; ++r)
        expectSoftmaxRow(&x[r * cols], &y[r * cols], cols, cols, r);
    }
  }
}

TEST(BaselinesLoops, SoftmaxExtremeInputs) {
  const float inf = std::numeric_limits<float>::infinity();
  // -inf entries (user masking) give exactly 0; huge spreads underflow to 0;
  // large equal values do not overflow.
  std::vector<float> x = {0.0f,  -inf,  1.0f,   -1000.0f,
                          80.0f, 80.0f, 3.0e4f, 3.0e4f};
  std::vector<float> y(8);
  loops::softmax(x.data(), y.data(), 4, 2);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(y[4], 0.5f);
  EXPECT_EQ(y[5], 0.5f);
  EXPECT_EQ(y[6], 0.5f);
  EXPECT_EQ(y[7], 0.5f);
}

TEST(BaselinesLoops, ExpPolynomialAccuracy) {
  // Softmax over [t, 0] gives 1 / (1 + e^-t), which exposes exp's error over
  // the whole range softmax feeds it (arguments in [-87, 0]).
  for (float t = 0.0f; t < 87.0f; t += 0.37f) {
    float x[2] = {t, 0.0f};
    float y[2];
    loops::softmax(x, y, 1, 2);
    double e = std::exp(-double(t));
    double expected = e / (1.0 + e);
    ASSERT_NEAR(y[1], expected, 4e-7 * expected + 1e-38) << "t=" << t;
  }
}

TEST(BaselinesLoops, SoftmaxCausal) {
  const int64_t seq = 37, matrices = 30; // rows * cols > 3 * grain.
  const int64_t rows = seq * matrices, cols = seq;
  std::vector<float> x = randomVector(rows * cols, 11, -5.0f, 5.0f);
  for (int threads : kThreads) {
    SCOPED_TRACE(testing::Message() << "threads=" << threads);
    std::vector<float> y(rows * cols, -1.0f);
    loops::softmaxCausal(x.data(), y.data(), rows, cols, seq, threads);
    for (int64_t r = 0; r < rows; ++r)
      expectSoftmaxRow(&x[r * cols], &y[r * cols], cols, r % seq + 1, r);
  }
  // A single matrix with more columns than rows.
  std::vector<float> z = randomVector(4 * 9, 12);
  std::vector<float> w(4 * 9);
  loops::softmaxCausal(z.data(), w.data(), 4, 9, 4);
  for (int64_t r = 0; r < 4; ++r)
    expectSoftmaxRow(&z[r * 9], &w[r * 9], 9, r + 1, r);
}

TEST(BaselinesLoops, AttentionMatchesDoubleReference) {
  // Two heads, more keys than queries (the causal mask is bottom-right
  // aligned: query i sees keys j <= i + seqK - seqQ).
  const int64_t heads = 2, seqQ = 5, seqK = 7, d = 16;
  std::vector<float> q = randomVector(heads * seqQ * d, 21);
  std::vector<float> k = randomVector(heads * seqK * d, 22);
  std::vector<float> v = randomVector(heads * seqK * d, 23);
  const float scale = 0.25f;
  for (bool causal : {false, true})
    for (int threads : kThreads) {
      SCOPED_TRACE(testing::Message()
                   << "causal=" << causal << " threads=" << threads);
      std::vector<float> o(heads * seqQ * d, -7.0f);
      loops::attention(q.data(), k.data(), v.data(), o.data(), heads, seqQ,
                       seqK, d, scale, causal, threads);
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < seqQ; ++i) {
          int64_t visible = causal ? i + (seqK - seqQ) + 1 : seqK;
          std::vector<double> p(static_cast<size_t>(visible));
          double m = -1e300, sum = 0;
          for (int64_t j = 0; j < visible; ++j) {
            double s = 0;
            for (int64_t c = 0; c < d; ++c)
              s += double(q[(h * seqQ + i) * d + c]) *
                   double(k[(h * seqK + j) * d + c]);
            p[size_t(j)] = s * scale;
            m = std::max(m, p[size_t(j)]);
          }
          for (double &x : p)
            sum += (x = std::exp(x - m));
          for (int64_t c = 0; c < d; ++c) {
            double want = 0;
            for (int64_t j = 0; j < visible; ++j)
              want += p[size_t(j)] / sum * double(v[(h * seqK + j) * d + c]);
            EXPECT_NEAR(o[(h * seqQ + i) * d + c], want, 1e-5)
                << "head " << h << " row " << i << " col " << c;
          }
        }
    }
}

TEST(BaselinesLoops, LayerNorm) {
  const float eps = 1e-5f;
  for (int64_t hidden : {1, 5, 16, 65, 768, 1029}) {
    int64_t rows = 3 * loops::kMinElementsPerThread / hidden + 3;
    // Offset mean checks that the variance pass is centred.
    std::vector<float> x = randomVector(rows * hidden, 13, 9.0f, 11.0f);
    std::vector<float> w = randomVector(hidden, 14),
                       b = randomVector(hidden, 15);
    for (bool affine : {true, false}) {
      for (int threads : kThreads) {
        SCOPED_TRACE(testing::Message() << "hidden=" << hidden << " threads="
                                        << threads << " affine=" << affine);
        std::vector<float> y(rows * hidden);
        loops::layerNorm(x.data(), affine ? w.data() : nullptr,
                         affine ? b.data() : nullptr, y.data(), rows, hidden,
                         eps, threads);
        for (int64_t r = 0; r < rows; ++r) {
          const float *xr = &x[r * hidden];
          double mean = 0, var = 0;
          for (int64_t i = 0; i < hidden; ++i)
            mean += xr[i];
          mean /= hidden;
          for (int64_t i = 0; i < hidden; ++i)
            var += (xr[i] - mean) * (xr[i] - mean);
          var /= hidden;
          double rstd = 1.0 / std::sqrt(var + eps);
          for (int64_t i = 0; i < hidden; ++i) {
            double ref = (xr[i] - mean) * rstd;
            if (affine)
              ref = ref * w[i] + b[i];
            ASSERT_NEAR(y[r * hidden + i], ref, 2e-4 * (1 + std::fabs(ref)))
                << "row " << r << " col " << i;
          }
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// OpenBLAS
//===----------------------------------------------------------------------===//

TEST(BaselinesOpenBlas, SgemmMatchesNaive) {
  OpenBlas *blas = OpenBlas::get();
  if (!blas->available())
    GTEST_SKIP() << blas->unavailableReason();
  EXPECT_FALSE(blas->libraryPath().empty());

  const int64_t M = 37, N = 19, K = 23;
  for (int threads : {1, 2}) {
    blas->setNumThreads(threads);
    for (bool transA : {false, true}) {
      for (bool transB : {false, true}) {
        SCOPED_TRACE(testing::Message() << "transA=" << transA << " transB="
                                        << transB << " threads=" << threads);
        // Stored shapes, with padded leading dimensions.
        int64_t aRows = transA ? K : M, aCols = transA ? M : K;
        int64_t bRows = transB ? N : K, bCols = transB ? K : N;
        int64_t lda = aCols + 3, ldb = bCols + 5, ldc = N + 2;
        std::vector<float> A = randomVector(aRows * lda, 16);
        std::vector<float> B = randomVector(bRows * ldb, 17);
        std::vector<float> C = randomVector(M * ldc, 18);
        std::vector<float> C0 = C;
        const float alpha = 1.5f, beta = -0.25f;
        ASSERT_TRUE(blas->sgemm(transA, transB, M, N, K, alpha, A.data(), lda,
                                B.data(), ldb, beta, C.data(), ldc));
        for (int64_t i = 0; i < M; ++i) {
          for (int64_t j = 0; j < ldc; ++j) {
            if (j >= N) {
              ASSERT_EQ(C[i * ldc + j], C0[i * ldc + j]) << "padding";
              continue;
            }
            double acc = 0;
            for (int64_t k = 0; k < K; ++k) {
              double a = transA ? A[k * lda + i] : A[i * lda + k];
              double b = transB ? B[j * ldb + k] : B[k * ldb + j];
              acc += a * b;
            }
            double ref = alpha * acc + beta * C0[i * ldc + j];
            ASSERT_NEAR(C[i * ldc + j], ref, 1e-4 * (1 + std::fabs(ref)))
                << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(BaselinesOpenBlas, GemmFlopCount) {
  EXPECT_EQ(gemmFlops(1024, 1024, 1024), 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(gemmFlops(3, 5, 7), 210.0);
}

//===----------------------------------------------------------------------===//
// CPU peaks
//===----------------------------------------------------------------------===//

CpuPeakOptions tinyOptions() {
  CpuPeakOptions options;
  options.fmaSeconds = 0.005;
  options.triadElements = 1 << 20;
  options.repetitions = 2;
  return options;
}

void expectSanePeaks(const CpuPeaks &p, int threads) {
  EXPECT_TRUE(std::isfinite(p.fp32GflopsPerCore) && p.fp32GflopsPerCore > 0)
      << p.fp32GflopsPerCore;
  EXPECT_TRUE(std::isfinite(p.fp32GflopsAllCores) && p.fp32GflopsAllCores > 0)
      << p.fp32GflopsAllCores;
  EXPECT_TRUE(std::isfinite(p.triadGBs) && p.triadGBs > 0) << p.triadGBs;
  EXPECT_EQ(p.threads, threads);
  EXPECT_FALSE(p.cpuName.empty());
  EXPECT_FALSE(p.isa.empty());
}

TEST(BaselinesCpuPeak, TinyMeasurementIsSaneAndFast) {
  auto start = std::chrono::steady_clock::now();
  CpuPeaks peaks = measureCpuPeaks(2, tinyOptions());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  expectSanePeaks(peaks, 2);
  EXPECT_LT(seconds, 1.0);
  RecordProperty("cpu", peaks.cpuName);
}

TEST(BaselinesCpuPeak, EveryIsaPathRuns) {
  for (FmaIsa isa : {FmaIsa::Avx512, FmaIsa::Avx2, FmaIsa::Scalar}) {
    CpuPeakOptions options = tinyOptions();
    options.isa = isa;
    options.repetitions = 1;
    CpuPeaks peaks = measureCpuPeaks(1, options);
    expectSanePeaks(peaks, 1);
    if (isa == FmaIsa::Scalar) {
      EXPECT_EQ(peaks.isa, "scalar");
    }
  }
}

TEST(BaselinesCpuPeak, DefaultTriadSizeIsLargerThanCache) {
  int64_t n = defaultTriadElements();
  EXPECT_GE(n * int64_t(sizeof(float)), int64_t(16) << 20);
}

TEST(BaselinesCpuPeak, CacheStringRoundTrips) {
  CpuPeaks peaks;
  peaks.fp32GflopsPerCore = 123.456789012345;
  peaks.fp32GflopsAllCores = 246.9;
  peaks.triadGBs = 17.25;
  peaks.threads = 2;
  peaks.cpuName = "Some CPU = with\nnewline";
  peaks.isa = "avx512f";
  std::string text = toCacheString(peaks);
  CpuPeaks parsed;
  ASSERT_TRUE(fromCacheString(text, parsed)) << text;
  EXPECT_EQ(parsed.fp32GflopsPerCore, peaks.fp32GflopsPerCore);
  EXPECT_EQ(parsed.fp32GflopsAllCores, peaks.fp32GflopsAllCores);
  EXPECT_EQ(parsed.triadGBs, peaks.triadGBs);
  EXPECT_EQ(parsed.threads, 2);
  EXPECT_EQ(parsed.cpuName, "Some CPU = with newline");
  EXPECT_EQ(parsed.isa, "avx512f");
}

TEST(BaselinesCpuPeak, CacheStringRejectsBadInput) {
  CpuPeaks peaks;
  peaks.threads = 1;
  peaks.cpuName = "x";
  peaks.isa = "scalar";
  std::string good = toCacheString(peaks);
  CpuPeaks untouched;
  untouched.threads = 99;
  CpuPeaks out = untouched;
  EXPECT_FALSE(fromCacheString("", out));
  EXPECT_FALSE(fromCacheString("garbage", out));
  EXPECT_FALSE(fromCacheString("format=other/1\n", out));
  std::string badNumber = good;
  badNumber.replace(badNumber.find("triadGBs=0"), 10, "triadGBs=abc");
  EXPECT_FALSE(fromCacheString(badNumber, out));
  std::string missing = good.substr(0, good.find("triadGBs="));
  EXPECT_FALSE(fromCacheString(missing, out));
  EXPECT_EQ(out.threads, 99);
  // Unknown keys are ignored.
  EXPECT_TRUE(fromCacheString(good + "futureKey=1\n", out));
  EXPECT_EQ(out.threads, 1);
}

} // namespace
