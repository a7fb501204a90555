//===- Sampler.cpp - Warm-up, cache flushes and the stopping rule ---------===//
//
// The sampling loop and the CPU last-level-cache flusher.
//
//===----------------------------------------------------------------------===//

#include "tessera/bench/Sampler.h"
#include "tessera/bench/Stats.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

using namespace tessera;
using namespace tessera::bench;

StatusOr<SampleRun>
tessera::bench::sample(const SamplerOptions &options,
                       const std::function<StatusOr<double>()> &timeOnce,
                       const std::function<void()> &flush) {
  if (!timeOnce)
    return invalidArgument("sample: no timing function");
  if (options.warmup < 0)
    return invalidArgument("sample: warmup must be >= 0, got %d",
                           options.warmup);
  if (options.minSamples < 1)
    return invalidArgument("sample: minSamples must be >= 1, got %d",
                           options.minSamples);
  if (options.maxSamples < options.minSamples)
    return invalidArgument("sample: maxSamples (%d) < minSamples (%d)",
                           options.maxSamples, options.minSamples);
  if (!(options.targetRsd >= 0) || !std::isfinite(options.targetRsd))
    return invalidArgument("sample: targetRsd must be a finite value >= 0");
  if (!(options.maxSeconds > 0))
    return invalidArgument("sample: maxSeconds must be > 0");

  auto callOnce = [&]() -> StatusOr<double> {
    if (flush)
      flush();
    return timeOnce();
  };

  for (int i = 0; i < options.warmup; ++i) {
    StatusOr<double> t = callOnce();
    if (!t.ok())
      return t.status().withContext(formatString("warm-up call %d", i + 1));
  }

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  SampleRun run;
  run.samples.reserve(static_cast<size_t>(std::min(options.maxSamples, 4096)));
  RunningStats running;
  while (true) {
    StatusOr<double> t = callOnce();
    if (!t.ok())
      return t.status().withContext(
          formatString("sample %zu", run.samples.size() + 1));
    double ms = *t;
    if (!std::isfinite(ms) || ms < 0)
      return invalidArgument("sample %zu: invalid time %g ms",
                             run.samples.size() + 1, ms);
    run.samples.push_back(ms);
    running.add(ms);
    int64_t n = running.count();
    if (n >= options.minSamples && running.rsd() < options.targetRsd) {
      run.stopReason = "converged";
      break;
    }
    if (n >= options.maxSamples) {
      run.stopReason = "max-samples";
      break;
    }
    double elapsed =
        std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed >= options.maxSeconds) {
      run.stopReason = "time-cap";
      break;
    }
  }
  return run;
}

namespace {
/// Parses a sysfs cache size such as "32K", "1024K", "36M".
size_t parseCacheSize(const std::string &text) {
  size_t value = 0;
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    value = value * 10 + static_cast<size_t>(text[i++] - '0');
  if (i < text.size()) {
    switch (text[i]) {
    case 'K':
    case 'k':
      value <<= 10;
      break;
    case 'M':
    case 'm':
      value <<= 20;
      break;
    case 'G':
    case 'g':
      value <<= 30;
      break;
    default:
      break;
    }
  }
  return value;
}

std::string readFirstLine(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  if (in)
    std::getline(in, line);
  return line;
}
} // namespace

size_t tessera::bench::cpuLastLevelCacheBytes() {
  size_t level3 = 0, largest = 0;
  for (int index = 0; index < 16; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::string size = readFirstLine(dir + "/size");
    if (size.empty())
      continue;
    size_t bytes = parseCacheSize(size);
    largest = std::max(largest, bytes);
    if (readFirstLine(dir + "/level") == "3")
      level3 = std::max(level3, bytes);
  }
  return level3 ? level3 : largest;
}

CpuCacheFlusher::CpuCacheFlusher() {
  size_t llc = cpuLastLevelCacheBytes();
  buffer_.resize(llc ? 2 * llc : size_t(64) << 20);
}

CpuCacheFlusher::CpuCacheFlusher(size_t bytes)
    : buffer_(std::max<size_t>(bytes, 64)) {}

void CpuCacheFlusher::flush() {
  // Write one byte per line (the lines become dirty and must be written
  // back), then read them all; the sum is handed to an empty asm statement
  // so that neither loop is removed.
  ++round_;
  unsigned char tag = static_cast<unsigned char>(round_);
  const size_t n = buffer_.size();
  unsigned char *data = buffer_.data();
  for (size_t i = 0; i < n; i += 64)
    data[i] = static_cast<unsigned char>(data[i] + tag);
  unsigned sum = 0;
  for (size_t i = 0; i < n; i += 64)
    sum += data[i];
  asm volatile("" : : "r"(sum) : "memory");
}
