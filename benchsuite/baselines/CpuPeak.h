//===- CpuPeak.h - CPU compute and bandwidth peaks --------------*- C++ -*-===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Built-in micro-benchmarks that measure the machine's attainable peaks, the
/// denominators of the suite's "percent of peak" numbers on the CPU:
///  - single-precision FMA throughput (independent FMA chains in vector
///    registers, best ISA the CPU supports), on one thread and on N threads;
///  - memory bandwidth with STREAM triad over arrays much larger than the
///    last-level cache, counted as McCalpin does (3 words per element).
///
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCHSUITE_BASELINES_CPUPEAK_H
#define TESSERA_BENCHSUITE_BASELINES_CPUPEAK_H

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::bench {

/// Measured peaks of the host CPU.
struct CpuPeaks {
  /// FP32 GFLOP/s of one thread (an FMA counts as 2 flops).
  double fp32GflopsPerCore = 0.0;
  /// FP32 GFLOP/s of `threads` threads running together.
  double fp32GflopsAllCores = 0.0;
  /// STREAM triad bandwidth in GB/s (10^9 bytes/s) on `threads` threads.
  double triadGBs = 0.0;
  /// Thread count the all-core numbers were measured with.
  int threads = 0;
  /// CPU brand string (cpuid, else /proc/cpuinfo), or "unknown".
  std::string cpuName;
  /// Instruction set of the FMA loop: "avx512f", "avx2+fma" or "scalar".
  std::string isa;
};

/// Instruction set used by the FMA micro-benchmark.
enum class FmaIsa { Auto, Avx512, Avx2, Scalar };

/// Knobs of measureCpuPeaks(). The defaults take a few seconds and are meant
/// to run once per machine (store the result with toCacheString()).
struct CpuPeakOptions {
  /// Minimum duration of one timed FMA run, in seconds.
  double fmaSeconds = 0.1;
  /// Elements per triad array (three f32 arrays are allocated); 0 selects
  /// defaultTriadElements().
  int64_t triadElements = 0;
  /// Timed repetitions of each measurement; the best one is reported.
  int repetitions = 5;
  /// FMA instruction set; Auto picks the best one the CPU and OS support. An
  /// unsupported choice falls back to the next one down.
  FmaIsa isa = FmaIsa::Auto;
};

/// Default triad array length: each array 4x the last-level cache (McCalpin's
/// rule; 4 x 300 MiB = 1.2 GiB per array, 3.6 GiB in all on the development
/// VM), at least 128 MiB per array, and at most 1/4 of the available memory
/// for the three arrays together.
int64_t defaultTriadElements();

/// Runs the micro-benchmarks. `threads` <= 0 means all hardware threads.
/// Never fails: a triad allocation failure leaves triadGBs at 0.
CpuPeaks measureCpuPeaks(int threads, const CpuPeakOptions &options = {});

/// Serialises peaks as "key=value" lines (first line "format=...").
std::string toCacheString(const CpuPeaks &peaks);

/// Parses the output of toCacheString(). Returns false, leaving `peaks`
/// untouched, when the text is not in that format or a value is malformed.
/// Unknown keys are ignored.
bool fromCacheString(std::string_view text, CpuPeaks &peaks);

} // namespace tessera::bench

#endif // TESSERA_BENCHSUITE_BASELINES_CPUPEAK_H
