//===- CpuPeak.cpp - CPU compute and bandwidth peaks ----------------------===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//

#include "CpuPeak.h"
#include "Loops.h"
#include "ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define TESSERA_X86 1
#else
#define TESSERA_X86 0
#endif

using namespace tessera::bench;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

//===----------------------------------------------------------------------===//
// FMA throughput kernels. Each runs `iters` iterations of kChains
// independent FMA chains acc = acc * m + a (m slightly below 1, so values
// converge to a normal number and never become denormal or overflow), and
// returns a value derived from every accumulator so nothing is dead.
//===----------------------------------------------------------------------===//

constexpr float kMul = 0.9999999f;
constexpr float kAdd = 1.0e-7f;

#if TESSERA_X86
/// 16 chains: enough to cover a 4-cycle FMA latency on two 512-bit FMA ports
/// with room to spare, and 18 of the 32 zmm registers.
__attribute__((target("avx512f"))) float fmaLoopAvx512(int64_t iters) {
  const __m512 m = _mm512_set1_ps(kMul);
  const __m512 a = _mm512_set1_ps(kAdd);
  __m512 acc[16];
  for (int c = 0; c < 16; ++c)
    acc[c] = _mm512_set1_ps(0.5f + 0.01f * c);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < 16; ++c)
      acc[c] = _mm512_fmadd_ps(acc[c], m, a);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < 16; ++c)
    sum = _mm512_add_ps(sum, acc[c]);
  // Horizontal sum through memory (GCC 12's _mm512_reduce_add_ps trips
  // -Wuninitialized inside its own header).
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0.0f;
  for (float v : lanes)
    total += v;
  return total;
}
constexpr int64_t kAvx512FlopsPerIter = 16 * 16 * 2;

/// 12 chains of 256-bit FMAs: 14 of the 16 ymm registers of an AVX2 machine.
__attribute__((target("avx2,fma"))) float fmaLoopAvx2(int64_t iters) {
  const __m256 m = _mm256_set1_ps(kMul);
  const __m256 a = _mm256_set1_ps(kAdd);
  __m256 acc[12];
  for (int c = 0; c < 12; ++c)
    acc[c] = _mm256_set1_ps(0.5f + 0.01f * c);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < 12; ++c)
      acc[c] = _mm256_fmadd_ps(acc[c], m, a);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < 12; ++c)
    sum = _mm256_add_ps(sum, acc[c]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0.0f;
  for (float v : lanes)
    total += v;
  return total;
}
constexpr int64_t kAvx2FlopsPerIter = 12 * 8 * 2;
#endif

/// Scalar fallback: 8 chains of std::fma.
float fmaLoopScalar(int64_t iters) {
  float acc[8];
  for (int c = 0; c < 8; ++c)
    acc[c] = 0.5f + 0.01f * c;
  for (int64_t i = 0; i < iters; ++i) {
    for (float &v : acc) {
      v = std::fma(v, kMul, kAdd);
      // Keep each chain in its own scalar register: the point is to measure
      // the scalar path, not what the vectoriser makes of it.
#if TESSERA_X86
      asm volatile("" : "+x"(v));
#elif defined(__aarch64__)
      asm volatile("" : "+w"(v));
#endif
    }
  }
  float total = 0.0f;
  for (float v : acc)
    total += v;
  return total;
}
constexpr int64_t kScalarFlopsPerIter = 8 * 2;

struct FmaKernel {
  float (*loop)(int64_t);
  int64_t flopsPerIter;
  const char *name;
};

bool supports(FmaIsa isa) {
#if TESSERA_X86
  __builtin_cpu_init();
  switch (isa) {
  case FmaIsa::Avx512:
    return __builtin_cpu_supports("avx512f");
  case FmaIsa::Avx2:
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  default:
    return true;
  }
#else
  return isa == FmaIsa::Scalar || isa == FmaIsa::Auto;
#endif
}

FmaKernel selectKernel(FmaIsa requested) {
  FmaIsa isa = requested == FmaIsa::Auto ? FmaIsa::Avx512 : requested;
#if TESSERA_X86
  if (isa == FmaIsa::Avx512 && supports(FmaIsa::Avx512))
    return {fmaLoopAvx512, kAvx512FlopsPerIter, "avx512f"};
  if ((isa == FmaIsa::Avx512 || isa == FmaIsa::Avx2) &&
      supports(FmaIsa::Avx2))
    return {fmaLoopAvx2, kAvx2FlopsPerIter, "avx2+fma"};
#endif
  return {fmaLoopScalar, kScalarFlopsPerIter, "scalar"};
}

std::atomic<float> fmaSink{0.0f};

/// Runs `kernel` with `iters` iterations on `threads` threads that start
/// together; returns the aggregate GFLOP/s over the wall time from the start
/// signal to the last thread's finish.
double runFmaOnce(const FmaKernel &kernel, int64_t iters, int threads) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<Clock::time_point> ends(threads);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire))
        std::this_thread::yield();
      float r = kernel.loop(iters);
      ends[t] = Clock::now();
      fmaSink.store(r, std::memory_order_relaxed);
    });
  while (ready.load() < threads)
    std::this_thread::yield();
  Clock::time_point start = Clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread &t : pool)
    t.join();
  Clock::time_point last = *std::max_element(ends.begin(), ends.end());
  double seconds = std::chrono::duration<double>(last - start).count();
  double flops = static_cast<double>(kernel.flopsPerIter) *
                 static_cast<double>(iters) * threads;
  return seconds > 0 ? flops / seconds * 1e-9 : 0.0;
}

/// Calibrates the iteration count on one thread so that a run lasts at least
/// `minSeconds`.
int64_t calibrateIters(const FmaKernel &kernel, double minSeconds) {
  int64_t iters = 1024;
  for (;;) {
    Clock::time_point start = Clock::now();
    fmaSink.store(kernel.loop(iters), std::memory_order_relaxed);
    double seconds = secondsSince(start);
    if (seconds >= minSeconds || iters >= (int64_t(1) << 40))
      return iters;
    double factor = seconds > 0 ? 1.2 * minSeconds / seconds : 16.0;
    iters = static_cast<int64_t>(static_cast<double>(iters) *
                                 std::clamp(factor, 1.5, 16.0));
  }
}

double bestFmaGflops(const FmaKernel &kernel, int64_t iters, int threads,
                     int repetitions) {
  double best = 0.0;
  for (int r = 0; r < repetitions; ++r)
    best = std::max(best, runFmaOnce(kernel, iters, threads));
  return best;
}

//===----------------------------------------------------------------------===//
// Triad bandwidth.
//===----------------------------------------------------------------------===//

/// A page-aligned f32 array backed by anonymous memory (transparent huge
/// pages requested), not touched until first use.
class BigArray {
public:
  explicit BigArray(int64_t n) {
    bytes = static_cast<size_t>(n) * sizeof(float);
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return;
    madvise(p, bytes, MADV_HUGEPAGE);
    data = static_cast<float *>(p);
  }
  ~BigArray() {
    if (data)
      munmap(data, bytes);
  }
  BigArray(const BigArray &) = delete;
  BigArray &operator=(const BigArray &) = delete;

  float *data = nullptr;
  size_t bytes = 0;
};

int64_t lastLevelCacheBytes() {
  long size = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
  size = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (size <= 0)
    size = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  return size > 0 ? size : 0;
}

int64_t availableMemoryBytes() {
  // MemAvailable accounts for reclaimable page cache; fall back to free pages.
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t value = 0;
  std::string unit;
  while (meminfo >> key >> value) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:")
      return value * 1024;
  }
  long pages = sysconf(_SC_AVPHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  return pages > 0 && pageSize > 0 ? int64_t(pages) * pageSize : 0;
}

double measureTriad(int64_t n, int threads, int repetitions) {
  if (n <= 0)
    return 0.0;
  BigArray a(n), b(n), c(n);
  if (!a.data || !b.data || !c.data)
    return 0.0;

  // First touch with the same static split the triad uses, so that each
  // thread's pages are local to it on NUMA machines.
  int used = loops::effectiveThreads(n, threads);
  ThreadPool::global().run(used, [&](int tid, int parts) {
    auto [begin, end] = splitRange(n, parts, tid);
    for (int64_t i = begin; i < end; ++i) {
      a.data[i] = 1.0f;
      b.data[i] = 2.0f;
      c.data[i] = 0.0f;
    }
  });

  const float s = 3.0f;
  loops::triad(a.data, b.data, c.data, s, n, threads); // Warm-up.
  double best = 0.0;
  for (int r = 0; r < repetitions; ++r) {
    Clock::time_point start = Clock::now();
    loops::triad(a.data, b.data, c.data, s, n, threads);
    double seconds = secondsSince(start);
    if (seconds > 0)
      best = std::max(best, 3.0 * sizeof(float) * double(n) / seconds * 1e-9);
  }
  return best;
}

//===----------------------------------------------------------------------===//
// CPU identification.
//===----------------------------------------------------------------------===//

std::string trim(std::string s) {
  size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos)
    return {};
  size_t end = s.find_last_not_of(" \t\r\n");
  return s.substr(begin, end - begin + 1);
}

std::string cpuBrandString() {
#if TESSERA_X86
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) &&
      eax >= 0x80000004u) {
    char brand[49] = {};
    for (unsigned leaf = 0; leaf < 3; ++leaf) {
      unsigned regs[4] = {};
      __get_cpuid(0x80000002u + leaf, &regs[0], &regs[1], &regs[2], &regs[3]);
      std::memcpy(brand + 16 * leaf, regs, sizeof(regs));
    }
    std::string name = trim(brand);
    if (!name.empty())
      return name;
  }
#endif
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos)
        return trim(line.substr(colon + 1));
    }
  }
  return "unknown";
}

//===----------------------------------------------------------------------===//
// Cache format.
//===----------------------------------------------------------------------===//

constexpr std::string_view kFormatTag = "tessera-cpu-peaks/1";

/// Newlines would break the line format; replace them.
std::string oneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  return s;
}

std::string formatDouble(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc())
    return "0";
  return std::string(buf, end);
}

template <typename T> bool parseNumber(std::string_view text, T &out) {
  const char *first = text.data();
  const char *last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last;
}

} // namespace

int64_t tessera::bench::defaultTriadElements() {
  constexpr int64_t kMinArrayBytes = int64_t(128) << 20;
  int64_t perArray = std::max(4 * lastLevelCacheBytes(), kMinArrayBytes);
  if (int64_t avail = availableMemoryBytes(); avail > 0)
    perArray = std::min(perArray, avail / 4 / 3);
  // Keep at least something measurable on tiny machines.
  perArray = std::max<int64_t>(perArray, int64_t(16) << 20);
  return perArray / static_cast<int64_t>(sizeof(float));
}

CpuPeaks tessera::bench::measureCpuPeaks(int threads,
                                         const CpuPeakOptions &options) {
  CpuPeaks peaks;
  peaks.threads = resolveThreads(threads);
  peaks.cpuName = cpuBrandString();
  int repetitions = std::max(options.repetitions, 1);

  FmaKernel kernel = selectKernel(options.isa);
  peaks.isa = kernel.name;
  int64_t iters = calibrateIters(kernel, std::max(options.fmaSeconds, 1e-4));
  peaks.fp32GflopsPerCore = bestFmaGflops(kernel, iters, 1, repetitions);
  peaks.fp32GflopsAllCores =
      peaks.threads == 1
          ? peaks.fp32GflopsPerCore
          : bestFmaGflops(kernel, iters, peaks.threads, repetitions);

  int64_t n = options.triadElements > 0 ? options.triadElements
                                        : defaultTriadElements();
  peaks.triadGBs = measureTriad(n, peaks.threads, repetitions);
  return peaks;
}

std::string tessera::bench::toCacheString(const CpuPeaks &peaks) {
  std::string out;
  out += "format=" + std::string(kFormatTag) + "\n";
  out += "cpuName=" + oneLine(peaks.cpuName) + "\n";
  out += "isa=" + oneLine(peaks.isa) + "\n";
  out += "threads=" + std::to_string(peaks.threads) + "\n";
  out += "fp32GflopsPerCore=" + formatDouble(peaks.fp32GflopsPerCore) + "\n";
  out += "fp32GflopsAllCores=" + formatDouble(peaks.fp32GflopsAllCores) + "\n";
  out += "triadGBs=" + formatDouble(peaks.triadGBs) + "\n";
  return out;
}

bool tessera::bench::fromCacheString(std::string_view text, CpuPeaks &peaks) {
  CpuPeaks parsed;
  bool sawFormat = false, sawName = false, sawIsa = false, sawThreads = false;
  bool sawPerCore = false, sawAllCores = false, sawTriad = false;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view()
                                         : text.substr(eol + 1);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.empty())
      continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos)
      return false;
    std::string_view key = line.substr(0, eq);
    std::string_view value = line.substr(eq + 1);
    auto number = [&](double &out, bool &seen) {
      seen = parseNumber(value, out) && std::isfinite(out) && out >= 0.0;
      return seen;
    };
    if (key == "format") {
      if (value != kFormatTag)
        return false;
      sawFormat = true;
    } else if (key == "cpuName") {
      parsed.cpuName = std::string(value);
      sawName = true;
    } else if (key == "isa") {
      parsed.isa = std::string(value);
      sawIsa = true;
    } else if (key == "threads") {
      if (!parseNumber(value, parsed.threads) || parsed.threads <= 0)
        return false;
      sawThreads = true;
    } else if (key == "fp32GflopsPerCore") {
      if (!number(parsed.fp32GflopsPerCore, sawPerCore))
        return false;
    } else if (key == "fp32GflopsAllCores") {
      if (!number(parsed.fp32GflopsAllCores, sawAllCores))
        return false;
    } else if (key == "triadGBs") {
      if (!number(parsed.triadGBs, sawTriad))
        return false;
    }
  }
  if (!(sawFormat && sawName && sawIsa && sawThreads && sawPerCore &&
        sawAllCores && sawTriad))
    return false;
  peaks = std::move(parsed);
  return true;
}
