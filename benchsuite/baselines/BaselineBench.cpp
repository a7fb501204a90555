//===- BaselineBench.cpp - Google Benchmark runs of the CPU baselines -----===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
//
// Sanity numbers for the baselines: OpenBLAS sgemm, STREAM triad/copy,
// softmax and layer norm, plus the cost of a ThreadPool dispatch against
// spawning threads. Every case runs on 1 thread and on all hardware threads
// (the second argument). Rates use wall-clock time.
//
// Extra flag, handled before Google Benchmark's own:
//   --peaks[=THREADS]   measure the CPU peaks (CpuPeak.h) with the default
//                       options, print them in the cache format and exit.
//
//===----------------------------------------------------------------------===//

#include "CpuPeak.h"
#include "Loops.h"
#include "OpenBlas.h"
#include "ThreadPool.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace tessera::bench;

namespace {

std::vector<float> randomVector(int64_t n, unsigned seed) {
  std::vector<float> v(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// Adds {size, 1} and, on a multi-core machine, {size, all threads}.
void sizesByThreads(benchmark::internal::Benchmark *b,
                    std::initializer_list<int64_t> sizes) {
  int all = hardwareThreads();
  for (int64_t size : sizes) {
    b->Args({size, 1});
    if (all > 1)
      b->Args({size, all});
  }
}

void setBytesRate(benchmark::State &state, double bytesPerIteration) {
  state.counters["GB/s"] = benchmark::Counter(
      bytesPerIteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

void BM_OpenBlasSgemm(benchmark::State &state) {
  OpenBlas *blas = OpenBlas::get();
  if (!blas->available()) {
    state.SkipWithError(blas->unavailableReason().c_str());
    return;
  }
  int64_t n = state.range(0);
  int threads = static_cast<int>(state.range(1));
  blas->setNumThreads(threads);
  std::vector<float> a = randomVector(n * n, 1), b = randomVector(n * n, 2);
  std::vector<float> c(static_cast<size_t>(n * n), 0.0f);
  for (auto _ : state) {
    blas->sgemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                c.data(), n);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(gemmFlops(n, n, n) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_OpenBlasSgemm)
    ->Apply([](auto *b) { sizesByThreads(b, {256, 512, 1024}); })
    ->ArgNames({"n", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

//===----------------------------------------------------------------------===//
// STREAM
//===----------------------------------------------------------------------===//

void BM_Triad(benchmark::State &state) {
  int64_t n = state.range(0);
  int threads = static_cast<int>(state.range(1));
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 0.0f);
  for (auto _ : state) {
    loops::triad(a.data(), b.data(), c.data(), 3.0f, n, threads);
    benchmark::ClobberMemory();
  }
  setBytesRate(state, 3.0 * sizeof(float) * double(n));
}
BENCHMARK(BM_Triad)
    ->Apply([](auto *b) { sizesByThreads(b, {1 << 20, 64 << 20}); })
    ->ArgNames({"n", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_Copy(benchmark::State &state) {
  int64_t n = state.range(0);
  int threads = static_cast<int>(state.range(1));
  std::vector<float> a(n, 1.0f), c(n, 0.0f);
  for (auto _ : state) {
    loops::copy(a.data(), c.data(), n, threads);
    benchmark::ClobberMemory();
  }
  setBytesRate(state, 2.0 * sizeof(float) * double(n));
}
BENCHMARK(BM_Copy)
    ->Apply([](auto *b) { sizesByThreads(b, {1 << 20, 64 << 20}); })
    ->ArgNames({"n", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

//===----------------------------------------------------------------------===//
// Softmax and layer norm, 4096 x 1024.
//===----------------------------------------------------------------------===//

constexpr int64_t kRows = 4096;
constexpr int64_t kCols = 1024;

void BM_Softmax(benchmark::State &state) {
  int threads = static_cast<int>(state.range(1));
  std::vector<float> x = randomVector(kRows * kCols, 3);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    loops::softmax(x.data(), y.data(), kRows, kCols, threads);
    benchmark::ClobberMemory();
  }
  // Read x once, write y once.
  setBytesRate(state, 2.0 * sizeof(float) * double(kRows * kCols));
}
BENCHMARK(BM_Softmax)
    ->Apply([](auto *b) { sizesByThreads(b, {kRows}); })
    ->ArgNames({"rows", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_LayerNorm(benchmark::State &state) {
  int threads = static_cast<int>(state.range(1));
  std::vector<float> x = randomVector(kRows * kCols, 4);
  std::vector<float> w = randomVector(kCols, 5), b = randomVector(kCols, 6);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    loops::layerNorm(x.data(), w.data(), b.data(), y.data(), kRows, kCols,
                     1e-5f, threads);
    benchmark::ClobberMemory();
  }
  // Read x, write y, read weight and bias once.
  setBytesRate(state, sizeof(float) * (2.0 * double(kRows * kCols) +
                                       2.0 * double(kCols)));
}
BENCHMARK(BM_LayerNorm)
    ->Apply([](auto *b) { sizesByThreads(b, {kRows}); })
    ->ArgNames({"rows", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

//===----------------------------------------------------------------------===//
// Parallel dispatch cost: an empty job on the persistent pool versus
// creating and joining the same number of std::threads.
//===----------------------------------------------------------------------===//

void BM_PoolDispatch(benchmark::State &state) {
  int threads = static_cast<int>(state.range(0));
  std::vector<int> sink(static_cast<size_t>(threads) * 16);
  for (auto _ : state)
    ThreadPool::global().run(threads, [&](int tid, int) { sink[tid * 16]++; });
  benchmark::DoNotOptimize(sink.data());
}
BENCHMARK(BM_PoolDispatch)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("threads")
    ->UseRealTime();

void BM_ThreadSpawn(benchmark::State &state) {
  int threads = static_cast<int>(state.range(0));
  std::vector<int> sink(static_cast<size_t>(threads) * 16);
  for (auto _ : state) {
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; ++t)
      workers.emplace_back([&, t] { sink[t * 16]++; });
    sink[0]++;
    for (std::thread &w : workers)
      w.join();
  }
  benchmark::DoNotOptimize(sink.data());
}
BENCHMARK(BM_ThreadSpawn)->Arg(2)->ArgName("threads")->UseRealTime();

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--peaks", 7) != 0 ||
        (argv[i][7] != '\0' && argv[i][7] != '='))
      continue;
    int threads = argv[i][7] == '=' ? std::atoi(argv[i] + 8) : 0;
    CpuPeaks peaks = measureCpuPeaks(threads);
    std::fputs(toCacheString(peaks).c_str(), stdout);
    return 0;
  }

  OpenBlas *blas = OpenBlas::get();
  if (blas->available()) {
    benchmark::AddCustomContext("openblas_library", blas->libraryPath());
    benchmark::AddCustomContext("openblas_core", blas->coreName());
    if (!blas->forcedCoreTypeName().empty())
      benchmark::AddCustomContext("openblas_forced_coretype",
                                  blas->forcedCoreTypeName());
  } else {
    benchmark::AddCustomContext("openblas_library", "unavailable");
  }
  benchmark::AddCustomContext("hardware_threads",
                              std::to_string(hardwareThreads()));

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
