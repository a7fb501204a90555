//===- Roofline.cpp - Peak table and roofline efficiency ------------------===//
//
// The GPU peak table (dense figures: NVIDIA publishes tensor-core figures
// "with sparsity", which are halved here) and the roofline maths. Sources are
// listed per entry and in docs/bench-json.md.
//
//===----------------------------------------------------------------------===//

#include "tessera/bench/Roofline.h"

#include "tessera/Support/Status.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

using namespace tessera;
using namespace tessera::bench;

namespace {
// clang-format off
// name, matchAll, matchNone, boost MHz, tensor MHz,
//   fp64, fp32, tf32, fp16, bf16, fp8, int8 (dense TFLOPS / TOPS), GB/s, source
constexpr GpuPeakEntry kTable[] = {
  {"H100 PCIe 80GB", "H100 PCIE", "", 1755, 1620,
   26, 51, 378, 756, 756, 1513, 1513, 2000,
   "NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe column; sparse tensor"
   " figures halved)"},
  {"H100 NVL 94GB", "H100 NVL", "", 1785, 1545,
   30, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5, 3900,
   "NVIDIA H100 Tensor Core GPU datasheet (H100 NVL column, per GPU; "
   "sparse tensor figures halved)"},
  {"H100 SXM5 80GB", "H100", "PCIE NVL", 1980, 1830,
   34, 67, 494.7, 989.4, 989.4, 1978.9, 1978.9, 3350,
   "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column; sparse tensor "
   "figures halved)"},
  {"H200 SXM 141GB", "H200", "NVL", 1980, 1830,
   34, 67, 494.7, 989.4, 989.4, 1978.9, 1978.9, 4800,
   "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column; sparse tensor "
   "figures halved)"},
  {"A100 PCIe 80GB", "A100 PCIE 80GB", "", 1410, 1410,
   9.7, 19.5, 156, 312, 312, 0, 624, 1935,
   "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB PCIe column; sparse "
   "tensor figures halved)"},
  {"A100 PCIe 40GB", "A100 PCIE", "80GB", 1410, 1410,
   9.7, 19.5, 156, 312, 312, 0, 624, 1555,
   "NVIDIA A100 Tensor Core GPU datasheet (A100 40GB PCIe column; sparse "
   "tensor figures halved)"},
  {"A100 SXM4 80GB", "A100 80GB", "PCIE", 1410, 1410,
   9.7, 19.5, 156, 312, 312, 0, 624, 2039,
   "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM column; sparse "
   "tensor figures halved)"},
  {"A100 SXM4 40GB", "A100", "PCIE 80GB", 1410, 1410,
   9.7, 19.5, 156, 312, 312, 0, 624, 1555,
   "NVIDIA A100 Tensor Core GPU datasheet (A100 40GB SXM column; sparse "
   "tensor figures halved)"},
  {"L40S", "L40S", "", 2520, 2520,
   1.43, 91.6, 183, 362.05, 362.05, 733, 733, 864,
   "NVIDIA L40S datasheet (sparse tensor figures halved); FP64 = 1/64 of "
   "FP32 (Ada Lovelace architecture whitepaper)"},
  {"L4", "L4", "", 2040, 2040,
   0.47, 30.3, 60, 121, 121, 242.5, 242.5, 300,
   "NVIDIA L4 Tensor Core GPU datasheet (sparse tensor figures halved); "
   "FP64 = 1/64 of FP32 (Ada Lovelace architecture whitepaper)"},
  {"GeForce RTX 4090", "RTX 4090", "D", 2520, 2520,
   1.29, 82.6, 82.6, 165.2, 165.2, 330.3, 660.6, 1008,
   "NVIDIA Ada Lovelace GPU architecture whitepaper, appendix table (RTX "
   "4090; tensor figures with FP32 accumulate, dense); FP64 = 1/64 of FP32"},
  {"GeForce RTX 3090", "RTX 3090", "TI", 1695, 1695,
   0.556, 35.6, 35.6, 71, 71, 0, 284, 936,
   "NVIDIA Ampere GA102 GPU architecture whitepaper, table of RTX 3090 "
   "(tensor figures with FP32 accumulate, dense); FP64 = 1/64 of FP32"},
  {"V100 SXM2", "V100", "PCIE", 1530, 1530,
   7.8, 15.7, 0, 125, 0, 0, 62.8, 900,
   "NVIDIA Tesla V100 datasheet (SXM2 column); INT8 = 4 x FP32 (dp4a, "
   "Volta whitepaper)"},
  {"V100 PCIe", "V100 PCIE", "", 1380, 1380,
   7, 14, 0, 112, 0, 0, 56, 900,
   "NVIDIA Tesla V100 datasheet (PCIe column); INT8 = 4 x FP32 (dp4a, "
   "Volta whitepaper)"},
};
// clang-format on

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur.push_back(
          static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty())
    out.push_back(std::move(cur));
  return out;
}

bool contains(const std::vector<std::string> &haystack,
              const std::string &word) {
  return std::find(haystack.begin(), haystack.end(), word) != haystack.end();
}

bool matches(const GpuPeakEntry &e, const std::vector<std::string> &name) {
  for (const std::string &w : words(e.matchAll))
    if (!contains(name, w))
      return false;
  for (const std::string &w : words(e.matchNone))
    if (contains(name, w))
      return false;
  return true;
}

bool isTensorPath(ComputePath p) {
  return p != ComputePath::Fp32 && p != ComputePath::Fp64;
}
} // namespace

std::string_view tessera::bench::computePathName(ComputePath path) {
  switch (path) {
  case ComputePath::Fp32:
    return "fp32";
  case ComputePath::Fp64:
    return "fp64";
  case ComputePath::TensorTf32:
    return "tf32";
  case ComputePath::TensorFp16:
    return "fp16";
  case ComputePath::TensorBf16:
    return "bf16";
  case ComputePath::TensorFp8:
    return "fp8";
  case ComputePath::Int8:
    return "int8";
  }
  return "unknown";
}

std::optional<ComputePath>
tessera::bench::parseComputePath(std::string_view name) {
  for (ComputePath p :
       {ComputePath::Fp32, ComputePath::Fp64, ComputePath::TensorTf32,
        ComputePath::TensorFp16, ComputePath::TensorBf16,
        ComputePath::TensorFp8, ComputePath::Int8})
    if (computePathName(p) == name)
      return p;
  return std::nullopt;
}

std::optional<ComputePath>
tessera::bench::computePathForPrecision(std::string_view precision,
                                        bool tensorCores) {
  std::string p;
  for (char c : precision.substr(0, precision.find('@')))
    p.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  auto tensor = [&](ComputePath path) {
    return tensorCores ? path : ComputePath::Fp32;
  };
  if (p == "f16" || p == "fp16" || p == "half")
    return tensor(ComputePath::TensorFp16);
  if (p == "bf16")
    return tensor(ComputePath::TensorBf16);
  if (p == "tf32")
    return tensor(ComputePath::TensorTf32);
  if (p.starts_with("fp8") || p.starts_with("f8"))
    return tensor(ComputePath::TensorFp8);
  // fp6 and fp4 operands are widened to f16 in registers: f16 dots.
  if (p.starts_with("fp6") || p.starts_with("fp4"))
    return tensor(ComputePath::TensorFp16);
  if (p == "f32" || p == "fp32" || p == "float")
    return ComputePath::Fp32;
  if (p == "f64" || p == "fp64" || p == "double")
    return ComputePath::Fp64;
  if (p == "i8" || p == "int8" || p == "s8")
    return ComputePath::Int8;
  return std::nullopt;
}

std::span<const GpuPeakEntry> tessera::bench::gpuPeakTable() {
  return std::span<const GpuPeakEntry>(kTable);
}

std::optional<Peaks> tessera::bench::gpuPeaks(std::string_view deviceName,
                                              int clockMHz) {
  std::vector<std::string> name = words(deviceName);
  for (const GpuPeakEntry &e : kTable) {
    if (!matches(e, name))
      continue;
    Peaks peaks;
    peaks.bandwidthGBs = e.bandwidthGBs;
    const std::pair<ComputePath, double> figures[] = {
        {ComputePath::Fp64, e.fp64},       {ComputePath::Fp32, e.fp32},
        {ComputePath::TensorTf32, e.tf32}, {ComputePath::TensorFp16, e.fp16},
        {ComputePath::TensorBf16, e.bf16}, {ComputePath::TensorFp8, e.fp8},
        {ComputePath::Int8, e.int8}};
    for (auto [path, value] : figures) {
      if (value <= 0)
        continue;
      double scale = 1;
      if (clockMHz > 0)
        scale = static_cast<double>(clockMHz) /
                (isTensorPath(path) ? e.tensorClockMHz : e.boostClockMHz);
      peaks.tflops[path] = value * scale;
    }
    peaks.source = std::string(e.name) + ": " + std::string(e.source);
    if (clockMHz > 0)
      peaks.source += formatString(
          "; compute scaled to %d MHz (table: %d MHz, tensor %d MHz)", clockMHz,
          e.boostClockMHz, e.tensorClockMHz);
    return peaks;
  }
  return std::nullopt;
}

std::map<std::string, double> tessera::bench::peaksToMap(const Peaks &peaks) {
  std::map<std::string, double> out;
  for (auto [path, value] : peaks.tflops)
    out[std::string(computePathName(path)) + "_tflops"] = value;
  out["bandwidth_gbs"] = peaks.bandwidthGBs;
  return out;
}

double tessera::bench::achievedTflops(const Work &work, double ms) {
  return ms > 0 ? work.flops / (ms * 1e-3) / 1e12 : 0;
}

double tessera::bench::achievedGBs(const Work &work, double ms) {
  return ms > 0 ? work.bytes / (ms * 1e-3) / 1e9 : 0;
}

Roofline tessera::bench::roofline(const Work &work, double medianMs,
                                  const Peaks &peaks, ComputePath path) {
  Roofline r;
  if (!(medianMs > 0))
    return r;
  double tflops = achievedTflops(work, medianMs);
  double gbs = achievedGBs(work, medianMs);
  if (work.flops <= 0) {
    // Data movement only: judged on bandwidth.
    if (peaks.bandwidthGBs <= 0 || work.bytes <= 0)
      return r;
    r.memoryBound = true;
    r.efficiency = gbs / peaks.bandwidthGBs;
    r.valid = true;
    return r;
  }
  auto it = peaks.tflops.find(path);
  if (it == peaks.tflops.end() || it->second <= 0)
    return r;
  double compute = it->second;
  double attainable = compute;
  if (work.bytes > 0) {
    if (peaks.bandwidthGBs <= 0)
      return r;
    // intensity [FLOP/B] x bandwidth [GB/s] = GFLOP/s; / 1000 -> TFLOPS.
    double memory = work.intensity() * peaks.bandwidthGBs / 1000;
    if (memory < compute) {
      attainable = memory;
      r.memoryBound = true;
    }
  }
  r.attainable = attainable;
  r.efficiency = tflops / attainable;
  r.valid = true;
  return r;
}
