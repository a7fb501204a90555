//===- Roofline.h - Peak table and roofline efficiency ----------*- C++ -*-===//
//
// Dense (no sparsity) peak throughput of known GPUs, with sources, and the
// roofline model: attainable = min(peak compute of the instruction path,
// intensity x peak bandwidth). See docs/bench-json.md ("Roofline", "Peak
// table").
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCH_ROOFLINE_H
#define TESSERA_BENCH_ROOFLINE_H

#include "tessera/bench/Counting.h"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tessera::bench {

/// The instruction path whose peak bounds a kernel.
enum class ComputePath {
  Fp32,
  Fp64,
  TensorTf32,
  TensorFp16,
  TensorBf16,
  TensorFp8,
  Int8
};

/// "fp32", "fp64", "tf32", "fp16", "bf16", "fp8", "int8".
std::string_view computePathName(ComputePath path);
/// Inverse of computePathName; nullopt for an unknown name.
std::optional<ComputePath> parseComputePath(std::string_view name);
/// The path a precision name or policy implies (an "@accum(...)" suffix is
/// ignored): with `tensorCores`, f16/fp16 -> TensorFp16, bf16 ->
/// TensorBf16, tf32 -> TensorTf32, fp8*/f8* -> TensorFp8; without, all of
/// these run as f32 FMAs -> Fp32 (the cpu computes tf32 dots in full f32
/// and converts narrow types to f32). f32/fp32 -> Fp32, f64/fp64 -> Fp64,
/// i8/int8 -> Int8 either way; nullopt otherwise.
std::optional<ComputePath> computePathForPrecision(std::string_view precision,
                                                   bool tensorCores);

struct Peaks {
  /// TFLOPS (TOPS for Int8) per path; a path the device lacks is absent.
  std::map<ComputePath, double> tflops;
  double bandwidthGBs = 0;
  /// Where the numbers come from (datasheet name, or "measured: ...").
  std::string source;
};

/// One row of the GPU peak table, as published (at the published clocks).
struct GpuPeakEntry {
  std::string_view name;      ///< e.g. "H100 SXM5 80GB"
  std::string_view matchAll;  ///< space-separated words that must all occur
  std::string_view matchNone; ///< space-separated words that must not occur
  int boostClockMHz;          ///< clock the non-tensor figures assume
  int tensorClockMHz;         ///< clock the tensor-core figures assume
  double fp64, fp32, tf32, fp16, bf16, fp8,
      int8; ///< dense TFLOPS/TOPS, 0 = none
  double bandwidthGBs;
  std::string_view source;
};

/// The whole table, most specific entries first.
std::span<const GpuPeakEntry> gpuPeakTable();

/// The peaks of the GPU called `deviceName`, matched on the words of the name
/// (case-insensitive; words are runs of letters and digits, so "L4" does not
/// match "L40S"). With clockMHz > 0 the compute peaks are scaled by clockMHz
/// / the clock the entry's figures assume; bandwidth is not scaled. nullopt
/// for an unknown GPU.
std::optional<Peaks> gpuPeaks(std::string_view deviceName, int clockMHz);

/// Peaks as a flat map for RunHeader::peaks: "<path>_tflops" per path and
/// "bandwidth_gbs".
std::map<std::string, double> peaksToMap(const Peaks &peaks);

/// Achieved rates of `work` done in `ms` milliseconds (0 when ms <= 0).
double achievedTflops(const Work &work, double ms);
double achievedGBs(const Work &work, double ms);

struct Roofline {
  double attainable = 0; ///< TFLOPS (0 when only bandwidth bounds the kernel)
  double efficiency =
      0; ///< achieved / attainable, 0..1 (above 1: peaks too low)
  bool memoryBound = false;
  /// False when the peaks lack what is needed (the path's compute peak for a
  /// kernel with FLOPs, bandwidth for one with bytes); the other fields are 0.
  bool valid = false;
};

/// attainable = min(peak compute of `path`, intensity * peak bandwidth);
/// efficiency = achieved TFLOPS / attainable. A kernel with no FLOPs is judged
/// on bandwidth alone: efficiency = achieved GB/s / peak GB/s, memoryBound.
Roofline roofline(const Work &work, double medianMs, const Peaks &peaks,
                  ComputePath path);

} // namespace tessera::bench

#endif // TESSERA_BENCH_ROOFLINE_H
