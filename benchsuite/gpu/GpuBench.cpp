//===- GpuBench.cpp - Tessera kernels on the cuda device vs cuBLAS --------===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
//
// tessera-gpu-bench [--quick] [--all-configs] [--filter SUBSTR]
//
// Runs kernels of kernels_dsl/ on the `cuda` device with their data in
// device memory (Runtime::allocate), checks every result before timing it,
// and prints one line per case: GEMM against cuBLAS (loaded with dlopen),
// STREAM copy/triad, softmax and layer norm as bandwidth against the DRAM
// peak, and attention. Without a usable CUDA device it prints the reason
// and exits 0. See README.md in this folder.
//
//===----------------------------------------------------------------------===//

#include "CuBlas.h"
#include "Cuda/CudaDevice.h"
#include "tessera/Driver/Driver.h"
#include "tessera/Support/Tolerance.h"
#include "tessera/runtime/Runtime.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace tessera;

namespace {

//===----------------------------------------------------------------------===//
// Options and shared state
//===----------------------------------------------------------------------===//

struct Options {
  bool quick = false;
  bool allConfigs = false;
  std::string filter;
};

/// What the cases share: the runtime, the parsed kernel files, the cuBLAS
/// handle (null when cuBLAS is unavailable) and the tally of outcomes.
struct Bench {
  Options options;
  Runtime *runtime = nullptr;
  std::unique_ptr<bench::CuBlas> cublas;
  /// DRAM bandwidth from the memory clock and bus width, GB/s; 0 if unknown.
  double peakBandwidthGBs = 0;
  std::map<std::string, std::shared_ptr<Program>> programs;
  int passed = 0;
  int failed = 0;
  /// Configurations that failed to compile because they need more shared
  /// memory (or other resources) than the device has.
  int didNotFit = 0;

  bool selected(const std::string &id) const {
    return options.filter.empty() ||
           id.find(options.filter) != std::string::npos;
  }
};

std::string kernelsDir() {
  if (const char *dir = std::getenv("TESSERA_KERNELS_DIR"); dir && *dir)
    return dir;
  std::error_code ec;
  if (std::filesystem::exists(TESSERA_DEFAULT_KERNELS_DIR "/gemm.tile", ec))
    return TESSERA_DEFAULT_KERNELS_DIR;
  if (const char *src = std::getenv("TESSERA_SOURCE_DIR"); src && *src)
    return std::string(src) + "/kernels_dsl";
  return "kernels_dsl";
}

StatusOr<std::shared_ptr<Program>> program(Bench &bench,
                                           const std::string &family) {
  auto it = bench.programs.find(family);
  if (it != bench.programs.end())
    return it->second;
  TESSERA_ASSIGN_OR_RETURN(
      std::shared_ptr<Program> p,
      bench.runtime->loadFile(kernelsDir() + "/" + family + ".tile"));
  bench.programs[family] = p;
  return p;
}

//===----------------------------------------------------------------------===//
// Configurations
//===----------------------------------------------------------------------===//

/// A point of a kernel's autotune space (plus fixed constants).
struct Config {
  std::map<std::string, ConstValue> constants;
  std::string label;
  bool isDefault = false;
};

std::string shortName(const std::string &name) {
  static const std::map<std::string, std::string> kShort = {
      {"BLOCK_M", "BM"},
      {"BLOCK_N", "BN"},
      {"BLOCK_K", "BK"},
      {"BLOCK_SIZE", "BS"},
      {"VECTOR_WIDTH", "VW"},
      {"WARP_REDUCE", "WR"},
      {"WARP_REDUCE_STAGES", "WRS"},
      {"num_warps", "w"},
      {"num_stages", "s"}};
  auto it = kShort.find(name);
  return it == kShort.end() ? name : it->second;
}

/// The value a specialisation binds to autotune parameter `name` when the
/// caller gives none: the parameter's declared default, else the first
/// value of the space (what the compiler binds).
ConstValue defaultValue(const KernelInfo &info, const std::string &name,
                        const std::vector<ConstValue> &space) {
  if (const ParamInfo *p = info.findParam(name); p && p->defaultValue)
    return *p->defaultValue;
  return space.front();
}

/// The autotune parameters as the kernel is compiled with `constants`,
/// e.g. "BM=128,BN=128,BK=32,w=4,s=2"; a '*' marks the kernel's default.
Config makeConfig(const KernelInfo &info,
                  std::map<std::string, ConstValue> constants) {
  Config c;
  c.isDefault = true;
  if (info.autotune)
    for (const auto &[name, values] : info.autotune->space) {
      ConstValue dflt = defaultValue(info, name, values);
      auto it = constants.find(name);
      const ConstValue &v = it == constants.end() ? dflt : it->second;
      if (v != dflt)
        c.isDefault = false;
      if (!c.label.empty())
        c.label += ',';
      c.label += shortName(name) + "=" + v.toString();
    }
  for (const auto &[name, value] : constants)
    if (!info.autotune ||
        std::none_of(info.autotune->space.begin(), info.autotune->space.end(),
                     [&](const auto &e) { return e.first == name; }))
      c.isDefault = false; // A constant outside the space (e.g. HEAD_DIM).
  if (c.label.empty())
    c.label = "-";
  if (c.isDefault)
    c.label += '*';
  c.constants = std::move(constants);
  return c;
}

/// The kernel's default configuration, then (with `all`) every other point
/// of its autotune space that satisfies its restrictions.
std::vector<Config> configsOf(const Program &program, const KernelInfo &info,
                              bool all) {
  std::vector<Config> result{makeConfig(info, {})};
  if (!all || !info.autotune)
    return result;
  const auto &space = info.autotune->space;
  std::vector<size_t> index(space.size(), 0);
  for (;;) {
    std::map<std::string, ConstValue> constants;
    for (size_t d = 0; d < space.size(); ++d)
      constants[space[d].first] = space[d].second[index[d]];
    Specialization spec;
    spec.constants = constants;
    auto ok = program.module().satisfiesRestrictions(info.name, spec);
    Config c = makeConfig(info, std::move(constants));
    if (ok.ok() && *ok && !c.isDefault)
      result.push_back(std::move(c));
    // Next point, last dimension fastest.
    size_t d = space.size();
    while (d > 0 && ++index[d - 1] == space[d - 1].second.size())
      index[--d] = 0;
    if (d == 0)
      break;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

/// An input on the host: the stored bytes in its dtype and the values they
/// hold (what the kernel reads), for the references.
struct HostData {
  DType dtype = DType::F32;
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

/// `n` values uniform in [lo, hi) from a fixed seed, rounded to `dtype`.
HostData randomData(DType dtype, size_t n, uint64_t seed, double lo = -1.0,
                    double hi = 1.0) {
  HostData d;
  d.dtype = dtype;
  d.bytes.resize(n * dtypeSize(dtype));
  d.values.resize(n);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; ++i) {
    double u = double(rng() >> 11) * 0x1p-53;
    storeFromDouble(d.bytes.data(), dtype, i, lo + (hi - lo) * u);
    d.values[i] = float(loadAsDouble(d.bytes.data(), dtype, i));
  }
  return d;
}

/// `v` rounded to `dtype`, as a kernel storing it would.
double roundTo(DType dtype, double v) {
  uint8_t bytes[8];
  storeFromDouble(bytes, dtype, 0, v);
  return loadAsDouble(bytes, dtype, 0);
}

/// A device buffer holding `data`.
StatusOr<DeviceBuffer> upload(Bench &bench, const HostData &data) {
  TESSERA_ASSIGN_OR_RETURN(
      DeviceBuffer buffer,
      bench.runtime->allocate(DeviceKind::Cuda, data.bytes.size()));
  TESSERA_RETURN_IF_ERROR(
      buffer.copyFrom(data.bytes.data(), data.bytes.size()));
  return buffer;
}

/// A device buffer of `n` elements of `dtype` filled with all-ones bytes (NaN
/// for the float types), so that an element the kernel does not write
/// fails the check.
StatusOr<DeviceBuffer> poisonedOutput(Bench &bench, DType dtype, size_t n) {
  size_t bytes = n * dtypeSize(dtype);
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer buffer,
                           bench.runtime->allocate(DeviceKind::Cuda, bytes));
  std::vector<uint8_t> poison(bytes, 0xFF);
  TESSERA_RETURN_IF_ERROR(buffer.copyFrom(poison.data(), bytes));
  return buffer;
}

Status poison(DeviceBuffer &buffer) {
  std::vector<uint8_t> bytes(buffer.bytes(), 0xFF);
  return buffer.copyFrom(bytes.data(), bytes.size());
}

/// The first `n` elements of a device buffer of `dtype`, as floats.
StatusOr<std::vector<float>> download(const DeviceBuffer &buffer, DType dtype,
                                      size_t n) {
  std::vector<uint8_t> bytes(n * dtypeSize(dtype));
  TESSERA_RETURN_IF_ERROR(buffer.copyTo(bytes.data(), bytes.size()));
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i)
    values[i] = float(loadAsDouble(bytes.data(), dtype, i));
  return values;
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

// Tolerances come from the shared table (tessera/Support/Tolerance.h).

/// GEMM output (f32) against cuBLAS over K terms: the table's Gemm rule
/// (atol grows like sqrt(K)), with the f32 base raised to 1e-4 because the
/// reference is cuBLAS, whose own rounding differs from Tessera's, not an
/// exact result.
Tolerance gemmTolerance(DType storage, int64_t k) {
  if (storage == DType::F32)
    return {1e-4 * std::sqrt(double(k)), 1e-4};
  return toleranceFor(storage, ToleranceOp::Gemm, k);
}

/// The outcome of comparing `count` output elements with their references.
struct Comparison {
  Tolerance tol;
  int64_t count = 0, mismatches = 0;
  double maxAbs = 0;
  /// Largest |expected|, the scale of the relative error reported.
  double maxExpected = 0;
  /// Largest |actual - expected| / allowance; <= 1 everywhere on a pass.
  double worstScore = 0;
  int64_t worstIndex = -1; ///< Flat index in the output.
  double worstActual = 0, worstExpected = 0;

  bool pass() const { return mismatches == 0 && count > 0; }

  void add(int64_t index, double actual, double expected) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    ++count;
    double abs = std::fabs(actual - expected);
    double score;
    if (!std::isfinite(actual) || !std::isfinite(expected)) {
      // NaN matches nothing here: the outputs are poisoned with NaN.
      score = actual == expected ? 0.0 : kInf;
      abs = score;
    } else {
      double allowance = tol.atol + tol.rtol * std::fabs(expected);
      score = allowance > 0 ? abs / allowance : abs > 0 ? kInf : 0.0;
      maxExpected = std::max(maxExpected, std::fabs(expected));
    }
    if (score > 1.0)
      ++mismatches;
    maxAbs = std::max(maxAbs, abs);
    if (worstIndex < 0 || score > worstScore) {
      worstScore = score;
      worstIndex = index;
      worstActual = actual;
      worstExpected = expected;
    }
  }

  /// Max abs error relative to the largest |expected|.
  double relative() const { return maxExpected > 0 ? maxAbs / maxExpected : 0; }

  /// The errors on a pass; the details on a failure, with the flat index
  /// of the worst element as [index / cols, index % cols].
  std::string describe(int64_t cols) const {
    if (pass())
      return formatString("abs err %.2e, rel %.2e (%.0f%% of tol)", maxAbs,
                          relative(), 100.0 * worstScore);
    if (count == 0)
      return "nothing was compared";
    int64_t row = cols > 0 ? worstIndex / cols : 0;
    int64_t col = cols > 0 ? worstIndex % cols : worstIndex;
    return formatString(
        "%lld of %lld elements outside atol %.3g, rtol %.3g; max abs err "
        "%.3g (rel to max |ref| %.3g); worst [%lld, %lld]: %.9g, expected "
        "%.9g",
        (long long)mismatches, (long long)count, tol.atol, tol.rtol, maxAbs,
        relative(), (long long)row, (long long)col, worstActual, worstExpected);
  }
};

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

struct Timing {
  double medianMs = 0, minMs = 0;
  int64_t launchesPerBatch = 0;
};

constexpr int kWarmupLaunches = 3;
constexpr int kBatches = 7;
constexpr double kMinBatchSeconds = 0.020;

/// Warms up, picks a batch size n so that n back-to-back calls of `once`
/// take at least kMinBatchSeconds, then times kBatches batches with the
/// wall clock: median and minimum per call.
StatusOr<Timing> measure(const std::function<Status()> &once) {
  for (int i = 0; i < kWarmupLaunches; ++i)
    TESSERA_RETURN_IF_ERROR(once());
  auto batch = [&](int64_t n) -> StatusOr<double> {
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < n; ++i)
      TESSERA_RETURN_IF_ERROR(once());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
        .count();
  };
  int64_t n = 1;
  for (;;) {
    TESSERA_ASSIGN_OR_RETURN(double seconds, batch(n));
    if (seconds >= kMinBatchSeconds)
      break;
    // Aim past the target so that the next batch reaches it.
    double perCall = seconds / double(n);
    int64_t next = perCall > 0
                       ? int64_t(std::ceil(1.25 * kMinBatchSeconds / perCall))
                       : 100 * n;
    n = std::clamp(next, 2 * n, 100 * n);
  }
  std::vector<double> perCallMs;
  for (int b = 0; b < kBatches; ++b) {
    TESSERA_ASSIGN_OR_RETURN(double seconds, batch(n));
    perCallMs.push_back(1e3 * seconds / double(n));
  }
  std::sort(perCallMs.begin(), perCallMs.end());
  return Timing{perCallMs[perCallMs.size() / 2], perCallMs.front(), n};
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

/// One table row: the case, its timing, its rate and up to two baselines.
struct Row {
  std::string kernel, dtype, size, config;
  Timing time;
  double rate = 0; ///< TFLOPS or GB/s, from the median.
  std::optional<double> base1Ms, base2Ms;
  /// For memory-bound rows, the share of the DRAM peak (percent).
  std::optional<double> peakPercent;
  std::string check;
};

void printGemmHeader() {
  std::printf("%-10s %-5s %-7s %-30s %9s %9s %8s %10s %8s %10s %8s  %s\n",
              "kernel", "dtype", "M=N=K", "config", "med ms", "min ms",
              "TFLOPS", "cuBLAS ms", "%cuBLAS", "TF32 ms", "%TF32", "check");
}

std::string msText(const std::optional<double> &ms) {
  return ms ? formatString("%.4f", *ms) : "-";
}

std::string percentText(const std::optional<double> &baseMs, double ms) {
  return baseMs ? formatString("%.1f", 100.0 * *baseMs / ms) : "-";
}

void printGemmRow(const Row &r) {
  std::printf("%-10s %-5s %-7s %-30s %9.4f %9.4f %8.2f %10s %8s %10s %8s  %s\n",
              r.kernel.c_str(), r.dtype.c_str(), r.size.c_str(),
              r.config.c_str(), r.time.medianMs, r.time.minMs, r.rate,
              msText(r.base1Ms).c_str(),
              percentText(r.base1Ms, r.time.medianMs).c_str(),
              msText(r.base2Ms).c_str(),
              percentText(r.base2Ms, r.time.medianMs).c_str(), r.check.c_str());
}

void printOtherHeader(const char *rateName) {
  std::printf("%-12s %-5s %-18s %-26s %9s %9s %8s %7s  %s\n", "kernel", "dtype",
              "size", "config", "med ms", "min ms", rateName,
              rateName[0] == 'G' ? "%peak" : "", "check");
}

void printOtherRow(const Row &r) {
  std::string peak = r.peakPercent ? formatString("%.1f", *r.peakPercent) : "";
  std::printf("%-12s %-5s %-18s %-26s %9.4f %9.4f %8.1f %7s  %s\n",
              r.kernel.c_str(), r.dtype.c_str(), r.size.c_str(),
              r.config.c_str(), r.time.medianMs, r.time.minMs, r.rate,
              peak.c_str(), r.check.c_str());
}

/// Prints a failed case and counts it. `status` may span several lines.
void printFailure(Bench &bench, const std::string &kernel,
                  const std::string &dtype, const std::string &size,
                  const std::string &config, const std::string &what,
                  bool didNotFit = false) {
  std::printf("%-12s %-5s %-18s %-26s FAILED: %s\n", kernel.c_str(),
              dtype.c_str(), size.c_str(), config.c_str(), what.c_str());
  std::fflush(stdout);
  if (didNotFit)
    ++bench.didNotFit;
  else
    ++bench.failed;
}

void printFailure(Bench &bench, const std::string &kernel,
                  const std::string &dtype, const std::string &size,
                  const std::string &config, const Status &status) {
  printFailure(bench, kernel, dtype, size, config, status.toString(),
               status.code() == StatusCode::kResourceExhausted);
}

std::string precisionOf(DType dtype) {
  return dtype == DType::F32 ? "fp32" : dtypeName(dtype);
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

bench::CuBlasOperand cublasOperand(DType dtype) {
  return dtype == DType::F16    ? bench::CuBlasOperand::F16
         : dtype == DType::BF16 ? bench::CuBlasOperand::BF16
                                : bench::CuBlasOperand::F32;
}

/// Times `compute` GEMMs of cuBLAS, each followed by a device
/// synchronisation as Kernel::launch does.
StatusOr<Timing> timeCublas(Bench &bench, bench::CuBlasCompute compute,
                            DType dtype, int64_t n, const DeviceBuffer &a,
                            const DeviceBuffer &b, DeviceBuffer &c) {
  return measure([&]() -> Status {
    std::string error;
    if (!bench.cublas->gemm(cublasOperand(dtype), compute, n, n, n, 1.0f,
                            a.data(), b.data(), 0.0f, c.data(), &error) ||
        !bench.cublas->synchronize(&error))
      return Status(StatusCode::kInternal, error);
    return Status::ok();
  });
}

/// C = A * B, M = N = K = n, A and B of `dtype`, C f32, for each selected
/// configuration. The reference is cuBLAS (CUBLAS_COMPUTE_32F) when it is
/// available, else a double-precision host product on a sample of elements.
///
/// `tf32`: f32 data under the precision policy "tf32" (tensor cores on
/// inputs rounded to tf32); the reference stays the exact-f32 cuBLAS
/// product, the tolerance is the tf32 one (f16's 10 mantissa bits) and the
/// baseline is cuBLAS with CUBLAS_COMPUTE_32F_FAST_TF32. fp8 inputs have no
/// cublasGemmEx form: the reference is cuBLAS on f16 copies of the same
/// values (exact in f16), checked to f32 accuracy, with no baseline.
void runGemm(Bench &bench, const Program &prog, const KernelInfo &info,
             const std::vector<Config> &configs, DType dtype, int64_t n,
             bool tf32 = false) {
  const bool fp8 = dtype == DType::F8E4M3 || dtype == DType::F8E5M2;
  const std::string dt = tf32 ? "tf32" : dtypeName(dtype),
                    size = std::to_string(n);
  std::vector<const Config *> selected;
  for (const Config &c : configs)
    if (bench.selected("gemm/" + dt + "/" + size + "/" + c.label))
      selected.push_back(&c);
  if (selected.empty())
    return;
  auto fail = [&](const std::string &config, const Status &s) {
    printFailure(bench, "gemm", dt, size, config, s);
  };

  const size_t elems = size_t(n) * size_t(n);
  HostData ha = randomData(dtype, elems, 1), hb = randomData(dtype, elems, 2);
  auto a = upload(bench, ha);
  auto b = upload(bench, hb);
  auto c = poisonedOutput(bench, DType::F32, elems);
  if (!a.ok() || !b.ok() || !c.ok()) {
    fail("-", !a.ok() ? a.status() : !b.ok() ? b.status() : c.status());
    return;
  }

  // Reference and baselines.
  std::optional<std::vector<float>> reference;
  std::optional<double> cublasMs, tf32Ms;
  if (bench.cublas) {
    auto ref = bench.runtime->allocate(DeviceKind::Cuda, elems * 4);
    // fp8: the same values as f16 for cuBLAS.
    std::optional<DeviceBuffer> a16, b16;
    if (fp8) {
      auto toF16 = [&](const HostData &h) {
        HostData d;
        d.dtype = DType::F16;
        d.bytes.resize(h.values.size() * 2);
        d.values = h.values;
        for (size_t i = 0; i < h.values.size(); ++i)
          storeFromDouble(d.bytes.data(), DType::F16, i, h.values[i]);
        return upload(bench, d);
      };
      auto x = toF16(ha), y = toF16(hb);
      if (x.ok() && y.ok()) {
        a16 = std::move(*x);
        b16 = std::move(*y);
      }
    }
    const void *refA = fp8 ? (a16 ? a16->data() : nullptr) : a->data();
    const void *refB = fp8 ? (b16 ? b16->data() : nullptr) : b->data();
    DType refType = fp8 ? DType::F16 : dtype;
    std::string error;
    if (!ref.ok()) {
      error = ref.status().toString();
    } else if (!refA || !refB) {
      error = "could not upload the f16 copies of the fp8 operands";
    } else if (bench.cublas->gemm(cublasOperand(refType),
                                  bench::CuBlasCompute::F32, n, n, n, 1.0f,
                                  refA, refB, 0.0f, ref->data(), &error) &&
               bench.cublas->synchronize(&error)) {
      auto values = download(*ref, DType::F32, elems);
      if (values.ok())
        reference = std::move(*values);
      else
        error = values.status().toString();
      auto t = fp8 ? StatusOr<Timing>(Status(StatusCode::kUnimplemented, ""))
                   : timeCublas(bench, bench::CuBlasCompute::F32, dtype, n, *a,
                                *b, *ref);
      if (t.ok())
        cublasMs = t->medianMs;
      else if (!fp8)
        error = t.status().toString();
      if (dtype == DType::F32) {
        auto t32 = timeCublas(bench, bench::CuBlasCompute::F32FastTF32, dtype,
                              n, *a, *b, *ref);
        if (t32.ok())
          tf32Ms = t32->medianMs;
        else
          error = t32.status().toString();
      }
    }
    if (!error.empty())
      std::printf("note: cuBLAS for gemm %s %s: %s\n", dt.c_str(), size.c_str(),
                  error.c_str());
  }
  // Without cuBLAS: exact products on the host for a sample of elements.
  std::vector<std::pair<int64_t, double>> sample;
  if (!reference) {
    std::mt19937_64 rng(3);
    for (int s = 0; s < 2048; ++s) {
      int64_t i = int64_t(rng() % uint64_t(n)),
              j = int64_t(rng() % uint64_t(n));
      double acc = 0;
      for (int64_t k = 0; k < n; ++k)
        acc += double(ha.values[i * n + k]) * double(hb.values[k * n + j]);
      sample.emplace_back(i * n + j, acc);
    }
  }

  CompileOptions opts;
  opts.precision = tf32                  ? "tf32"
                   : dtype == DType::F32 ? "fp32"
                                         : dt + "@accum(fp32)";
  for (const Config *config : selected) {
    opts.constants = config->constants;
    auto kernel =
        bench.runtime->compile(prog, info.name, opts, DeviceKind::Cuda);
    if (!kernel.ok()) {
      fail(config->label, kernel.status());
      continue;
    }
    auto av = a->view(dtype, {n, n});
    auto bv = b->view(dtype, {n, n});
    auto cv = c->view(DType::F32, {n, n});
    if (!av.ok() || !bv.ok() || !cv.ok()) {
      fail(config->label, !av.ok()   ? av.status()
                          : !bv.ok() ? bv.status()
                                     : cv.status());
      continue;
    }
    std::vector<Arg> args{*av, *bv, *cv, Arg(1.0), Arg(0.0)};
    Status s = poison(*c);
    if (s.isOk())
      s = (*kernel)->launch(args);
    if (!s.isOk()) {
      fail(config->label, s);
      continue;
    }
    auto out = download(*c, DType::F32, elems);
    if (!out.ok()) {
      fail(config->label, out.status());
      continue;
    }
    // tf32: rounded inputs (tf32GemmTolerance); fp8: exact products, f32
    // sums.
    Comparison cmp{tf32  ? tf32GemmTolerance(n)
                   : fp8 ? gemmTolerance(DType::F32, n)
                         : gemmTolerance(dtype, n)};
    if (reference) {
      for (size_t i = 0; i < elems; ++i)
        cmp.add(int64_t(i), (*out)[i], (*reference)[i]);
    } else {
      for (const auto &[index, expected] : sample)
        cmp.add(index, (*out)[size_t(index)], expected);
    }
    if (!cmp.pass()) {
      printFailure(bench, "gemm", dt, size, config->label,
                   cmp.describe(n) + (reference ? " (vs cuBLAS)" : ""));
      continue;
    }
    auto t = measure([&] { return (*kernel)->launch(args); });
    if (!t.ok()) {
      fail(config->label, t.status());
      continue;
    }
    Row row{"gemm", dt, size, config->label, *t};
    row.rate =
        2.0 * double(n) * double(n) * double(n) / (t->medianMs * 1e-3) / 1e12;
    row.base1Ms = cublasMs;
    row.base2Ms = tf32Ms;
    row.check = cmp.describe(n) + (reference ? "" : " (host sample)");
    printGemmRow(row);
    std::fflush(stdout);
    ++bench.passed;
  }
}

void runGemms(Bench &bench) {
  std::printf("\n== GEMM: C = A*B, A and B row-major in dtype, C f32, f32 "
              "accumulation; TFLOPS = 2*M*N*K / median\n");
  std::printf("   cuBLAS: cublasGemmEx, CUBLAS_COMPUTE_32F (no TF32); TF32: "
              "CUBLAS_COMPUTE_32F_FAST_TF32 (f32 only); %%cuBLAS = 100 * "
              "cuBLAS ms / Tessera ms, likewise %%TF32\n");
  auto prog = program(bench, "gemm");
  if (!prog.ok()) {
    printFailure(bench, "gemm", "-", "-", "-", prog.status());
    return;
  }
  const KernelInfo *info = (*prog)->findKernel("gemm");
  if (!info) {
    printFailure(bench, "gemm", "-", "-", "-", "no kernel 'gemm'");
    return;
  }
  std::vector<Config> configs =
      configsOf(**prog, *info, bench.options.allConfigs);
  std::printf("   %zu configuration(s) per size%s\n", configs.size(),
              bench.options.allConfigs ? " (the autotune space after its "
                                         "restrictions; * = default)"
                                       : " (* = the kernel's default)");
  printGemmHeader();
  std::vector<int64_t> sizes = bench.options.quick
                                   ? std::vector<int64_t>{1024, 4096}
                                   : std::vector<int64_t>{1024, 2048, 4096};
  for (DType dtype : {DType::F16, DType::BF16, DType::F32})
    for (int64_t n : sizes)
      runGemm(bench, **prog, *info, configs, dtype, n);
  for (int64_t n : sizes)
    runGemm(bench, **prog, *info, configs, DType::F32, n, /*tf32=*/true);
  for (DType dtype : {DType::F8E4M3, DType::F8E5M2})
    for (int64_t n : sizes)
      runGemm(bench, **prog, *info, configs, dtype, n);
}

//===----------------------------------------------------------------------===//
// Memory-bound kernels
//===----------------------------------------------------------------------===//

/// A memory-bound case: inputs, one output, the launch arguments built from
/// the device buffers, and the expected output.
struct MemoryCase {
  /// The kernel file, the kernel in it, and the name printed.
  std::string family, kernel, display, size;
  DType dtype = DType::F32;
  std::vector<HostData> inputs;
  size_t outputElems = 0;
  int64_t rowLength = 0; ///< For the failure text.
  /// Builds the arguments from the input buffers and the output buffer.
  std::function<StatusOr<std::vector<Arg>>(std::vector<DeviceBuffer> &,
                                           DeviceBuffer &)>
      args;
  /// The expected output (rounded to dtype) from the host inputs.
  std::function<std::vector<float>()> reference;
  Tolerance tol;
  double bytes = 0; ///< Counted traffic per launch.
  std::map<std::string, ConstValue> constants;
};

void runMemoryCase(Bench &bench, MemoryCase &mc) {
  const std::string dt = dtypeName(mc.dtype);
  auto fail = [&](const std::string &config, const Status &s) {
    printFailure(bench, mc.display, dt, mc.size, config, s);
  };
  auto prog = program(bench, mc.family);
  if (!prog.ok())
    return fail("-", prog.status());
  const KernelInfo *info = (*prog)->findKernel(mc.kernel);
  if (!info)
    return fail("-", notFound("no kernel '%s' in %s.tile", mc.kernel.c_str(),
                              mc.family.c_str()));
  Config config = makeConfig(*info, mc.constants);
  CompileOptions opts;
  opts.precision = precisionOf(mc.dtype);
  opts.constants = mc.constants;
  auto kernel =
      bench.runtime->compile(**prog, info->name, opts, DeviceKind::Cuda);
  if (!kernel.ok())
    return fail(config.label, kernel.status());

  std::vector<DeviceBuffer> inputs;
  for (const HostData &h : mc.inputs) {
    auto buffer = upload(bench, h);
    if (!buffer.ok())
      return fail(config.label, buffer.status());
    inputs.push_back(std::move(*buffer));
  }
  auto output = poisonedOutput(bench, mc.dtype, mc.outputElems);
  if (!output.ok())
    return fail(config.label, output.status());
  auto args = mc.args(inputs, *output);
  if (!args.ok())
    return fail(config.label, args.status());
  if (Status s = (*kernel)->launch(*args); !s.isOk())
    return fail(config.label, s);
  auto out = download(*output, mc.dtype, mc.outputElems);
  if (!out.ok())
    return fail(config.label, out.status());
  std::vector<float> expected = mc.reference();
  Comparison cmp{mc.tol};
  for (size_t i = 0; i < mc.outputElems; ++i)
    cmp.add(int64_t(i), (*out)[i], expected[i]);
  if (!cmp.pass()) {
    printFailure(bench, mc.display, dt, mc.size, config.label,
                 cmp.describe(mc.rowLength));
    return;
  }
  auto t = measure([&] { return (*kernel)->launch(*args); });
  if (!t.ok())
    return fail(config.label, t.status());
  Row row{mc.display, dt, mc.size, config.label, *t};
  row.rate = mc.bytes / (t->medianMs * 1e-3) / 1e9;
  if (bench.peakBandwidthGBs > 0)
    row.peakPercent = 100.0 * row.rate / bench.peakBandwidthGBs;
  row.check = cmp.describe(mc.rowLength);
  printOtherRow(row);
  std::fflush(stdout);
  ++bench.passed;
}

MemoryCase streamCase(const std::string &kernel, int64_t n) {
  MemoryCase mc;
  mc.family = "stream";
  mc.kernel = kernel;
  mc.display = "stream." + kernel;
  mc.size = std::to_string(n);
  mc.dtype = DType::F32;
  mc.outputElems = size_t(n);
  mc.rowLength = n;
  bool triad = kernel == "triad";
  mc.inputs.push_back(randomData(DType::F32, size_t(n), 11));
  if (triad)
    mc.inputs.push_back(randomData(DType::F32, size_t(n), 12));
  // McCalpin's counting: copy reads a and writes c; triad also reads b.
  mc.bytes = (triad ? 3.0 : 2.0) * 4.0 * double(n);
  mc.args = [n, triad](std::vector<DeviceBuffer> &in,
                       DeviceBuffer &out) -> StatusOr<std::vector<Arg>> {
    std::vector<Arg> args;
    for (DeviceBuffer &b : in) {
      TESSERA_ASSIGN_OR_RETURN(TensorView v, b.view(DType::F32, {n}));
      args.emplace_back(v);
    }
    TESSERA_ASSIGN_OR_RETURN(TensorView c, out.view(DType::F32, {n}));
    args.emplace_back(c);
    if (triad)
      args.emplace_back(3.0);
    return args;
  };
  mc.tol = triad ? toleranceFor(DType::F32, ToleranceOp::Elementwise)
                 : Tolerance{0, 0};
  return mc;
}

MemoryCase softmaxCase(DType dtype, int64_t rows, int64_t cols) {
  MemoryCase mc;
  mc.family = mc.kernel = mc.display = "softmax";
  mc.size = std::to_string(rows) + "x" + std::to_string(cols);
  mc.dtype = dtype;
  mc.outputElems = size_t(rows * cols);
  mc.rowLength = cols;
  mc.inputs.push_back(randomData(dtype, size_t(rows * cols), 21));
  mc.bytes = 2.0 * double(dtypeSize(dtype)) * double(rows * cols);
  mc.tol = toleranceFor(dtype, ToleranceOp::Softmax, cols);
  mc.args = [=](std::vector<DeviceBuffer> &in,
                DeviceBuffer &out) -> StatusOr<std::vector<Arg>> {
    TESSERA_ASSIGN_OR_RETURN(TensorView x,
                             in[0].view(dtype, {1, 1, rows, cols}));
    TESSERA_ASSIGN_OR_RETURN(TensorView y, out.view(dtype, {1, 1, rows, cols}));
    return std::vector<Arg>{x, y};
  };
  return mc;
}

std::vector<float> softmaxReference(const HostData &x, DType dtype,
                                    int64_t rows, int64_t cols) {
  std::vector<float> y(size_t(rows * cols));
  std::vector<double> e(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x.values.data() + r * cols;
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < cols; ++c)
      m = std::max(m, double(row[c]));
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      sum += e[size_t(c)] = std::exp(double(row[c]) - m);
    for (int64_t c = 0; c < cols; ++c)
      y[size_t(r * cols + c)] = float(roundTo(dtype, e[size_t(c)] / sum));
  }
  return y;
}

MemoryCase layerNormCase(DType dtype, int64_t rows, int64_t hidden) {
  MemoryCase mc;
  mc.family = mc.kernel = mc.display = "layernorm";
  mc.size = std::to_string(rows) + "x" + std::to_string(hidden);
  mc.dtype = dtype;
  mc.outputElems = size_t(rows * hidden);
  mc.rowLength = hidden;
  mc.inputs.push_back(randomData(dtype, size_t(rows * hidden), 31));
  mc.inputs.push_back(randomData(dtype, size_t(hidden), 32));
  mc.inputs.push_back(randomData(dtype, size_t(hidden), 33));
  // Read x and write out once, plus weight and bias.
  mc.bytes = double(dtypeSize(dtype)) *
             (2.0 * double(rows * hidden) + 2.0 * double(hidden));
  mc.tol = toleranceFor(dtype, ToleranceOp::LayerNorm, hidden);
  mc.args = [=](std::vector<DeviceBuffer> &in,
                DeviceBuffer &out) -> StatusOr<std::vector<Arg>> {
    TESSERA_ASSIGN_OR_RETURN(TensorView x,
                             in[0].view(dtype, {1, rows, hidden}));
    TESSERA_ASSIGN_OR_RETURN(TensorView w, in[1].view(dtype, {hidden}));
    TESSERA_ASSIGN_OR_RETURN(TensorView b, in[2].view(dtype, {hidden}));
    TESSERA_ASSIGN_OR_RETURN(TensorView y, out.view(dtype, {1, rows, hidden}));
    return std::vector<Arg>{x, w, b, y, Arg(1e-5)};
  };
  return mc;
}

std::vector<float> layerNormReference(const HostData &x, const HostData &w,
                                      const HostData &b, DType dtype,
                                      int64_t rows, int64_t hidden) {
  std::vector<float> y(size_t(rows * hidden));
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x.values.data() + r * hidden;
    double mean = 0, var = 0;
    for (int64_t h = 0; h < hidden; ++h)
      mean += row[h];
    mean /= double(hidden);
    for (int64_t h = 0; h < hidden; ++h)
      var += (row[h] - mean) * (row[h] - mean);
    var /= double(hidden);
    double rstd = 1.0 / std::sqrt(var + 1e-5);
    for (int64_t h = 0; h < hidden; ++h)
      y[size_t(r * hidden + h)] =
          float(roundTo(dtype, (row[h] - mean) * rstd * w.values[size_t(h)] +
                                   b.values[size_t(h)]));
  }
  return y;
}

void runMemoryBound(Bench &bench) {
  std::printf("\n== Memory-bound kernels: GB/s = counted bytes / median "
              "(McCalpin: copy 2 words, triad 3 words per element; softmax "
              "and layernorm read and write each element once); %%peak of "
              "the DRAM bandwidth from clocks\n");
  printOtherHeader("GB/s");
  const int64_t streamN = int64_t(1) << 26;
  for (const char *k : {"copy", "triad"}) {
    std::string id =
        std::string("stream.") + k + "/f32/" + std::to_string(streamN);
    if (!bench.selected(id))
      continue;
    MemoryCase mc = streamCase(k, streamN);
    bool triad = std::string(k) == "triad";
    mc.reference = [&mc, triad] {
      const std::vector<float> &a = mc.inputs[0].values;
      std::vector<float> c(a.size());
      for (size_t i = 0; i < a.size(); ++i)
        c[i] = triad
                   ? float(double(a[i]) + 3.0 * double(mc.inputs[1].values[i]))
                   : a[i];
      return c;
    };
    runMemoryCase(bench, mc);
  }
  const int64_t rows = 4096, cols = 4096;
  for (DType dtype : {DType::F32, DType::F16}) {
    std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
    if (bench.selected(std::string("softmax/") + dtypeName(dtype) + "/" +
                       shape)) {
      MemoryCase mc = softmaxCase(dtype, rows, cols);
      mc.reference = [&mc, dtype, rows, cols] {
        return softmaxReference(mc.inputs[0], dtype, rows, cols);
      };
      runMemoryCase(bench, mc);
    }
    if (bench.selected(std::string("layernorm/") + dtypeName(dtype) + "/" +
                       shape)) {
      MemoryCase mc = layerNormCase(dtype, rows, cols);
      mc.reference = [&mc, dtype, rows, cols] {
        return layerNormReference(mc.inputs[0], mc.inputs[1], mc.inputs[2],
                                  dtype, rows, cols);
      };
      runMemoryCase(bench, mc);
    }
  }
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// O = softmax(scale * Q K^T) V for Q, K, V, O of [Z, H, S, D], non-causal.
/// The check recomputes a sample of query rows on the host in double.
void runAttention(Bench &bench, DType dtype) {
  const int64_t Z = 4, H = 16, S = 2048, D = 64;
  const std::string dt = dtypeName(dtype);
  const std::string size = "4x16x2048x2048x64";
  if (!bench.selected("attention/" + dt + "/" + size))
    return;
  auto fail = [&](const std::string &config, const Status &s) {
    printFailure(bench, "attention", dt, size, config, s);
  };
  auto prog = program(bench, "attention");
  if (!prog.ok())
    return fail("-", prog.status());
  const KernelInfo *info = (*prog)->findKernel("attention");
  if (!info)
    return fail("-", notFound("no kernel 'attention'"));
  // HEAD_DIM must equal D; 64x32 blocks are what the GPU mapping fits in
  // shared memory (the configuration the kernel tests run on cuda).
  Config config = makeConfig(*info, {{"HEAD_DIM", ConstValue::integer(D)},
                                     {"BLOCK_M", ConstValue::integer(64)},
                                     {"BLOCK_N", ConstValue::integer(32)}});
  CompileOptions opts;
  opts.precision = precisionOf(dtype);
  opts.constants = config.constants;
  auto kernel =
      bench.runtime->compile(**prog, "attention", opts, DeviceKind::Cuda);
  if (!kernel.ok())
    return fail(config.label, kernel.status());

  const size_t elems = size_t(Z * H * S * D);
  HostData hq = randomData(dtype, elems, 41), hk = randomData(dtype, elems, 42),
           hv = randomData(dtype, elems, 43);
  auto q = upload(bench, hq);
  auto k = upload(bench, hk);
  auto v = upload(bench, hv);
  auto o = poisonedOutput(bench, dtype, elems);
  for (const Status &s : {q.status(), k.status(), v.status(), o.status()})
    if (!s.isOk())
      return fail(config.label, s);
  std::vector<Arg> args;
  for (DeviceBuffer *b : {&*q, &*k, &*v, &*o}) {
    auto view = b->view(dtype, {Z, H, S, D});
    if (!view.ok())
      return fail(config.label, view.status());
    args.emplace_back(*view);
  }
  // Scale 1 rather than 1/sqrt(D): with inputs in [-1, 1] the softmax is then
  // peaked, so the check sees whether the right keys were weighted. The
  // scale does not change the work.
  const double scale = 1.0;
  args.emplace_back(scale);
  if (Status s = (*kernel)->launch(args); !s.isOk())
    return fail(config.label, s);
  auto out = download(*o, dtype, elems);
  if (!out.ok())
    return fail(config.label, out.status());

  Comparison cmp{toleranceFor(dtype, ToleranceOp::Attention, std::max(S, D))};
  std::mt19937_64 rng(44);
  std::vector<double> p(static_cast<size_t>(S));
  for (int64_t zh = 0; zh < Z * H; ++zh)
    for (int s = 0; s < 4; ++s) {
      int64_t m = s == 0 ? 0 : s == 1 ? S - 1 : int64_t(rng() % uint64_t(S));
      const float *qr = hq.values.data() + (zh * S + m) * D;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < S; ++j) {
        const float *kr = hk.values.data() + (zh * S + j) * D;
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += double(qr[d]) * double(kr[d]);
        p[size_t(j)] = scale * dot;
        mx = std::max(mx, p[size_t(j)]);
      }
      double sum = 0;
      for (double &x : p)
        sum += x = std::exp(x - mx);
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j)
          acc += p[size_t(j)] * double(hv.values[size_t((zh * S + j) * D + d)]);
        int64_t index = (zh * S + m) * D + d;
        cmp.add(index, (*out)[size_t(index)], roundTo(dtype, acc / sum));
      }
    }
  if (!cmp.pass()) {
    printFailure(bench, "attention", dt, size, config.label,
                 cmp.describe(D) + " (row = z*H*S + h*S + query)");
    return;
  }
  auto t = measure([&] { return (*kernel)->launch(args); });
  if (!t.ok())
    return fail(config.label, t.status());
  Row row{"attention", dt, size, config.label, *t};
  // Two products of 2*S*S*D flops per (batch, head).
  row.rate = 4.0 * double(Z * H) * double(S) * double(S) * double(D) /
             (t->medianMs * 1e-3) / 1e12;
  row.check = cmp.describe(D) + " (host sample)";
  printOtherRow(row);
  std::fflush(stdout);
  ++bench.passed;
}

void runAttentions(Bench &bench) {
  std::printf("\n== Attention (forward, non-causal), Z x H x S(q) x S(kv) x "
              "D; TFLOPS = 4*Z*H*S*S*D / median\n");
  printOtherHeader("TFLOPS");
  for (DType dtype : {DType::F16, DType::BF16})
    runAttention(bench, dtype);
}

//===----------------------------------------------------------------------===//
// Device description
//===----------------------------------------------------------------------===//

/// Prints the GPU as the runtime's CUDA layer sees it (the public runtime
/// API does not describe devices) and returns its DRAM peak in GB/s.
double describeDevice() {
  auto device = cuda::CudaDevice::open(0);
  if (!device.ok()) {
    std::printf("device: (properties unavailable: %s)\n",
                device.status().toString().c_str());
    return 0;
  }
  const cuda::CudaDeviceProperties &p = (*device)->properties();
  std::printf("device: %s, %s, %d SMs, %.1f GiB, L2 %.0f MiB, DRAM peak "
              "%.0f GB/s (from clocks), driver %d.%d\n",
              p.name.c_str(), p.archName().c_str(), p.smCount,
              double(p.totalMemoryBytes) / double(1ull << 30),
              double(p.l2CacheBytes) / double(1 << 20), p.peakBandwidthGBs(),
              p.driverVersion / 1000, (p.driverVersion % 1000) / 10);
  return p.peakBandwidthGBs();
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  CLI::App app{"Tessera kernels on the cuda device against cuBLAS"};
  app.add_flag("--quick", options.quick, "GEMM at 1024 and 4096 only");
  app.add_flag("--all-configs", options.allConfigs,
               "also every configuration of the GEMM autotune space");
  app.add_option("--filter", options.filter,
                 "only cases whose id (e.g. gemm/f16/4096/..., "
                 "stream.triad/f32/..., softmax/f16/...) contains SUBSTR")
      ->type_name("SUBSTR");
  CLI11_PARSE(app, argc, argv);

  // Never destroyed: JIT-compiled code must not be torn down after LLVM's
  // own static objects (docs/embedding.md).
  Bench bench;
  bench.options = options;
  bench.runtime = new Runtime();
  if (Status s = bench.runtime->deviceStatus(DeviceKind::Cuda); !s.isOk()) {
    std::printf("cuda device: %s\n", s.toString().c_str());
    return 0;
  }

  std::printf("== tessera-gpu-bench\n");
  bench.peakBandwidthGBs = describeDevice();
  std::string error;
  bench.cublas = bench::CuBlas::open(&error);
  if (bench.cublas)
    std::printf("cuBLAS: %s (version %d)\n",
                bench.cublas->libraryPath().c_str(), bench.cublas->version());
  else
    std::printf("cuBLAS: unavailable, no GEMM baseline (GEMM results are "
                "checked on a host sample instead):\n%s\n",
                error.c_str());
  std::printf("kernels: %s\n", kernelsDir().c_str());
  std::printf(
      "timing: wall clock around batches of back-to-back launches (each "
      "batch >= %.0f ms), %d batches after %d warm-up launches; median and "
      "min per launch.\n"
      "        Kernel::launch synchronises the device after every launch "
      "(cuCtxSynchronize), so launch and synchronisation overhead is "
      "included;\n"
      "        cuBLAS calls are timed the same way (each followed by "
      "cuCtxSynchronize). Every result is checked before it is timed.\n",
      kMinBatchSeconds * 1e3, kBatches, kWarmupLaunches);
  std::fflush(stdout);

  runGemms(bench);
  runMemoryBound(bench);
  runAttentions(bench);

  std::printf("\n%d case(s) passed, %d FAILED", bench.passed, bench.failed);
  if (bench.didNotFit)
    std::printf(", %d configuration(s) did not fit the device",
                bench.didNotFit);
  std::printf("\n");
  bench.cublas.reset(); // While the CUDA context is alive.
  return bench.failed ? 1 : 0;
}
