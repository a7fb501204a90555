//===- Sampler.h - Warm-up, cache flushes and the stopping rule -*- C++ -*-===//
//
// `sample()` repeats a timed call until the stopping rule holds, flushing
// caches before every call; it is independent of what is timed (a CPU loop,
// a GPU launch measured with events). `CpuCacheFlusher` evicts the CPU's
// last-level cache.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCH_SAMPLER_H
#define TESSERA_BENCH_SAMPLER_H

#include "tessera/Support/Status.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera::bench {

struct SamplerOptions {
  /// Untimed calls before the first sample (their results are discarded).
  int warmup = 2;
  /// Samples taken before the rsd test may stop the loop.
  int minSamples = 5;
  /// Hard limit on the number of samples.
  int maxSamples = 1000;
  /// Stop once stddev / mean of the samples is below this.
  double targetRsd = 0.01;
  /// Wall-clock limit, in seconds, on the sampling loop (flushes included,
  /// warm-up excluded). At least one sample is always taken.
  double maxSeconds = 2.0;
};

/// The samples (ms, in the order taken) and why the loop stopped.
struct SampleRun {
  std::vector<double> samples;
  /// "converged" | "max-samples" | "time-cap"
  std::string stopReason;
};

/// Calls `flush()` (may be empty) before every call of `timeOnce()`, the
/// warm-up calls included, so that every call starts from the same cache
/// state. `timeOnce()` returns one sample in ms or an error Status. After
/// `warmup` untimed calls, samples are taken until, checked in this order
/// after each sample:
///   1. at least minSamples were taken and their rsd < targetRsd
///      ("converged");
///   2. maxSamples were taken ("max-samples");
///   3. maxSeconds of wall time were spent in the sampling loop ("time-cap").
/// Errors: invalid options (warmup < 0, minSamples < 1, maxSamples <
/// minSamples, targetRsd < 0, maxSeconds <= 0) are INVALID_ARGUMENT; an error
/// from `timeOnce()` is returned with context; a negative or non-finite
/// sample is INVALID_ARGUMENT.
StatusOr<SampleRun> sample(const SamplerOptions &options,
                           const std::function<StatusOr<double>()> &timeOnce,
                           const std::function<void()> &flush = {});

/// Size of the CPU's last-level cache in bytes, read from
/// /sys/devices/system/cpu/cpu0/cache/index*/{level,size} (level 3 when
/// present, else the largest); 0 when it cannot be read.
size_t cpuLastLevelCacheBytes();

/// A CPU last-level-cache flush: a buffer of twice the LLC (64 MiB when the
/// LLC size cannot be read) that flush() writes and reads back, one word per
/// 64-byte line, so that the timed kernel's data are evicted.
class CpuCacheFlusher {
public:
  CpuCacheFlusher();
  /// Uses a buffer of `bytes` bytes (at least one cache line).
  explicit CpuCacheFlusher(size_t bytes);
  void flush();
  size_t bytes() const { return buffer_.size(); }

private:
  std::vector<unsigned char> buffer_;
  uint64_t round_ = 0;
};

} // namespace tessera::bench

#endif // TESSERA_BENCH_SAMPLER_H
