//===- Suites.h - The benchmark suites of tessera-bench ---------*- C++ -*-===//
//
// A suite lists its cases for a request (size set or explicit sizes,
// precisions, device) and runs one case: compile (with the tuning mode),
// validate against a reference under the dtype tolerance table, time
// Tessera and the baseline with the sampler, count the work.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCHSUITE_CLI_SUITES_H
#define TESSERA_BENCHSUITE_CLI_SUITES_H

#include "tessera/autotune/Tuner.h"
#include "tessera/bench/Result.h"
#include "tessera/bench/Roofline.h"
#include "tessera/bench/Sampler.h"
#include "tessera/runtime/Runtime.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tessera::bench {

/// Quick, full (seed document 002), explicit (`--sizes "M=...;..."`), or
/// `gpu`: the fixed set of large cases recorded on GPUs (docs/bench.md),
/// each suite in its own precisions unless --precision is given.
enum class SizeSet { Quick, Full, Custom, Gpu };
enum class TuneMode { Off, Cached, On };

/// What `run` asked for.
struct CaseRequest {
  SizeSet sizes = SizeSet::Quick;
  DeviceKind device = DeviceKind::Cpu;
  /// Explicit sizes (`--sizes "M=4096,N=4096,K=4096;..."`), with
  /// SizeSet::Custom: each map applies to the suites whose dimensions it
  /// names.
  std::vector<std::map<std::string, int64_t>> custom;
  /// Precision policies (`--precision`); empty = each suite's defaults.
  std::vector<std::string> precisions;
};

/// One case before it runs.
struct CaseSpec {
  std::string suite, kernel, name;
  std::map<std::string, std::string> params;
  std::string precision = "fp32"; ///< policy, e.g. "bf16@accum(fp32)"
  int64_t n = 0;                  ///< elements per array
  int64_t stride = 1;             ///< strided access patterns
  std::string op, pattern;
  /// Named dimensions (M, N, K, B, H, S, D, ...) and flags (causal,
  /// transA, transB as 0/1).
  std::map<std::string, int64_t> dims;
  /// One point of the kernel's autotune space to compile the case with
  /// (`--configs all`); empty: the configuration the --tune mode gives.
  std::map<std::string, ConstValue> config;
  /// Runs the seed's thread-level (SIMT) form of the kernel
  /// (kernels_dsl/seed/) on the same work, beside the tile form.
  bool seedSimt = false;
  int64_t dim(const std::string &name, int64_t otherwise = 0) const {
    auto it = dims.find(name);
    return it == dims.end() ? otherwise : it->second;
  }
};

/// Which baseline runs beside each case.
enum class BaselineChoice { Auto, None, OpenBlas, Loop };

/// What every case of a run shares.
struct RunContext {
  Runtime *rt = nullptr;
  DeviceKind device = DeviceKind::Cpu;
  std::string kernelsDir;
  TuneMode tune = TuneMode::Cached;
  std::string cacheDir;
  SamplerOptions sampler;
  bool flushCaches = true;
  /// `--counters` (sim only): one more launch of each validated case with
  /// LaunchOptions::counters, its figures in CaseResult::counters.
  bool counters = false;
  BaselineChoice baseline = BaselineChoice::Auto;
  /// GPU architecture whose PTX/cubin compile times and resources are
  /// reported for every case ("" = none).
  std::string gpuArch;
  std::optional<Peaks> peaks;
  std::unique_ptr<CpuCacheFlusher> cpuFlusher;
  /// GPU artifacts already compiled in this run, by program, kernel,
  /// specialisation and architecture: cases that share a specialisation
  /// (sizes of one configuration) compile it for the GPU once.
  struct GpuArtifacts {
    double ptxMs = 0, cubinMs = 0;
    std::map<std::string, double> resources;
    std::string note; ///< why there are none
  };
  std::map<std::string, GpuArtifacts> gpuArtifacts;
  /// Loaded kernel files by name ("vector_ops").
  std::map<std::string, std::shared_ptr<Program>> programs;
  StatusOr<std::shared_ptr<Program>> program(const std::string &family);
};

struct Suite {
  std::string name, description;
  /// The kernel file (without .tile) whose kernels the cases run, for
  /// `--configs all`; empty when the suite has none (all_reduce).
  std::string family;
  /// Precision policies the suite accepts, and those run by default.
  std::vector<std::string> precisions, defaultPrecisions;
  /// The dimension names a `--sizes` entry must give for this suite.
  std::vector<std::string> sizeKeys;
  std::function<std::vector<CaseSpec>(const CaseRequest &)> cases;
  std::function<CaseResult(RunContext &, const CaseSpec &)> run;
};

/// Every suite, in the order `list` shows them.
const std::vector<Suite> &allSuites();

/// `--configs all`: each case whose kernel (in the suite's family) has an
/// autotune space becomes one case per point of the space that satisfies
/// the kernel's `restrict=` expressions, in the space's order (last
/// parameter fastest), named "<name> [BLOCK_M=128,BLOCK_N=64,...]" and
/// compiled with that point (configSource "space"). Other cases, and every
/// case when the kernel file does not load (each then reports the error
/// when it runs), are kept as they are.
std::vector<CaseSpec> withEveryConfig(RunContext &ctx, const Suite &suite,
                                      std::vector<CaseSpec> cases);

/// Parses `--sizes` text "K=V,K=V;K=V,..." (positive integers; names are
/// case-sensitive, e.g. "M=4096,N=4096,K=4096;B=8,H=16,S=1024,D=64").
StatusOr<std::vector<std::map<std::string, int64_t>>>
parseSizeList(const std::string &text);

/// The canonical spelling of a precision policy as suites use it ("fp32",
/// "fp16", "bf16", "tf32", "fp8_e4m3@accum(fp32)", ...); an error for an
/// unknown policy.
StatusOr<std::string> canonicalPrecision(const std::string &text);

} // namespace tessera::bench

#endif // TESSERA_BENCHSUITE_CLI_SUITES_H
