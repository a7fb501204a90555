//===- Result.h - Benchmark results and their JSON schema -------*- C++ -*-===//
//
// The results of one tessera-bench run and their JSON form (schema version 1,
// documented field by field in docs/bench-json.md). Every sample is kept.
// JSON types stay out of this header.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCH_RESULT_H
#define TESSERA_BENCH_RESULT_H

#include "tessera/Support/Status.h"
#include "tessera/bench/Counting.h"
#include "tessera/bench/Stats.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::bench {

/// The schema version this library writes and reads.
inline constexpr int kSchemaVersion = 1;

/// Compile time per stage and tuning time, in ms (0 = not run / not measured).
struct CompileTimesMs {
  double parse = 0, sema = 0, tilePasses = 0, lowering = 0, codegen = 0,
         ptx = 0, cubin = 0, tuning = 0;
  /// Sum of the compile stages (tuning excluded).
  double total() const {
    return parse + sema + tilePasses + lowering + codegen + ptx + cubin;
  }
  bool operator==(const CompileTimesMs &) const = default;
};

/// The shape of a kernel's GPU code (the scorecard, `tessera-bench sass`):
/// figures read from its cubin and disassembly, and the same figures of the
/// baseline's code for the same work (docs/bench-json.md lists the names).
struct CodeShape {
  std::string arch;      ///< "sm_90a"
  std::string function;  ///< the kernel's entry in the cubin
  std::string assembler; ///< "ptxas" (whole program) or "nvJitLink"
  std::map<std::string, double> metrics;
  std::string baselineName; ///< "Triton 3.5.1", "" without a baseline
  std::map<std::string, double> baseline;
  std::map<std::string, std::string> baselineConfig;
  /// Why the baseline is absent (not installed, cannot express the kernel).
  std::string baselineNote;
  bool operator==(const CodeShape &) const = default;
};

/// What the `sim` device counted in one extra launch of a case
/// (`tessera-bench run --device sim --counters`; the definitions are in
/// runtime/lib/Sim/README.md).
struct CaseCounters {
  double launchMs = 0; ///< wall time of the counting launch
  /// Global memory: warp requests, 32-byte sectors touched, the fewest that
  /// could carry the requested bytes, bytes moved (sectors x 32), bytes the
  /// lanes asked for, and ideal / touched sectors.
  int64_t globalRequests = 0, globalSectors = 0, globalIdealSectors = 0,
          globalBytesMoved = 0, globalUsefulBytes = 0;
  double coalescingEfficiency = 1;
  /// Shared memory: warp requests, wavefronts, ideal wavefronts.
  int64_t sharedRequests = 0, sharedWavefronts = 0, sharedIdealWavefronts = 0;
  double barriersPerBlock = 0;
  int64_t maxBarriersPerBlock = 0;
  int64_t divergentBranches = 0, warpBranchInstances = 0;
  /// One memory instruction of the GPU code.
  struct Site {
    std::string space, kind;  ///< "global"/"shared", "load"/"store"/"atomic"
    std::string op, location; ///< "vector.load", "softmax.tile:52:10"
    int64_t widthBytes = 0, requests = 0, sectors = 0, idealSectors = 0,
            usefulBytes = 0, wavefronts = 0, idealWavefronts = 0;
    bool operator==(const Site &) const = default;
  };
  std::vector<Site> sites;
  /// One conditional branch of the GPU code.
  struct Branch {
    std::string op, location;
    int64_t instances = 0, divergent = 0;
    bool operator==(const Branch &) const = default;
  };
  std::vector<Branch> branches;
  /// Shared-memory wavefronts per warp request (0 without requests).
  double wavefrontsPerSharedRequest() const {
    return sharedRequests ? double(sharedWavefronts) / double(sharedRequests)
                          : 0;
  }
  double idealWavefrontsPerSharedRequest() const {
    return sharedRequests
               ? double(sharedIdealWavefronts) / double(sharedRequests)
               : 0;
  }
  bool operator==(const CaseCounters &) const = default;
};

struct CaseResult {
  std::string suite, kernel,
      name; ///< "gemm", "gemm", "gemm f16 4096x4096x4096"
  std::string device, precision;
  std::map<std::string, std::string>
      params; ///< "M":"4096", "pattern":"strided_2"
  std::map<std::string, std::string> config; ///< chosen tuning config
  /// cache | tuned | default | nearest | space (a point of the autotune
  /// space, `--configs all`)
  std::string configSource;
  /// Validation failed (or compile/launch failed): passed = false, `failure`
  /// says why, and no speed field (samples, stats, stopReason, tflops, gbs,
  /// rooflineEfficiency, baseline speedup) may be set.
  bool passed = false;
  std::string failure;
  /// Not run, for a reason that is no fault of the kernel (all_reduce on
  /// fewer than two GPUs): passed = false, `failure` holds the reason, no
  /// speed fields; not counted as a failure.
  bool skipped = false;
  double maxAbsError = 0, maxRelError = 0;
  std::vector<double> samples; ///< ms, in the order taken
  SampleStats stats;
  std::string stopReason;
  /// Launches timed together in each sample (back to back between two CUDA
  /// events on cuda); each sample is their time / this count.
  int64_t launchesPerSample = 1;
  Work work;
  double tflops = 0, gbs = 0;
  std::optional<double> rooflineEfficiency; ///< 0..1
  std::string computePath;                  ///< computePathName(), "" = n/a
  CompileTimesMs compile;
  struct Baseline {
    std::string name; ///< e.g. "cuBLAS", "OpenBLAS"
    SampleStats stats;
    std::vector<double> samples;
    double speedup = 0;            ///< baseline median / tessera median
    int64_t launchesPerSample = 1; ///< as CaseResult::launchesPerSample
    bool operator==(const Baseline &) const = default;
  };
  std::optional<Baseline> baseline;
  std::map<std::string, double>
      resources; ///< registers, sharedBytes, occupancy...
  /// The GPU architecture `resources` and compile.ptx/cubin are for, and why
  /// they are absent when the GPU compile failed.
  std::string resourcesArch, resourcesNote;
  /// Set for scorecard cases, which are compiled and read but not run: such
  /// a case passes without samples and reports no speed.
  std::optional<CodeShape> code;
  /// The sim's counters of the case (`--counters`), when counted.
  std::optional<CaseCounters> counters;
  bool operator==(const CaseResult &) const = default;
};

struct RunHeader {
  int schemaVersion = kSchemaVersion;
  std::string tool = "tessera-bench", compilerVersion, gitRevision, commandLine;
  std::string startedAt; ///< ISO 8601 UTC, e.g. "2026-11-22T10:31:07Z"
  std::map<std::string, std::string>
      machine; ///< hostname, cpu, cores, memory, os
  std::map<std::string, std::string> device; ///< kind, name, arch, ...
  std::map<std::string, double> peaks;       ///< see peaksToMap()
  bool operator==(const RunHeader &) const = default;
};

struct RunResult {
  RunHeader header;
  std::vector<CaseResult> cases;
  bool operator==(const RunResult &) const = default;
};

/// Checks the invariants the schema demands: a failed case has a failure text
/// and no speed fields; a passed case has samples whose count matches its
/// stats; every number is finite. INVALID_ARGUMENT naming the case.
Status validate(const RunResult &run);

/// The run as pretty-printed JSON (schema version 1). Speed fields of a failed
/// case are never written.
std::string toJson(const RunResult &run);

/// Parses and validates a schema-version-1 document: DATA_LOSS for text that
/// is not JSON (e.g. a truncated file), INVALID_ARGUMENT for a wrong
/// schemaVersion, a missing required field, a field of the wrong type or a
/// failed case with speed fields; messages start with `nameForErrors` and
/// give the JSON path.
StatusOr<RunResult> fromJson(std::string_view text,
                             std::string_view nameForErrors);

/// Reads and parses a result file (NOT_FOUND when it does not exist).
StatusOr<RunResult> readResultFile(const std::string &path);

/// Validates, then writes atomically: a temporary file in the same directory,
/// flushed, then renamed over `path`.
Status writeResultFile(const std::string &path, const RunResult &run);

/// hostname, cpu (model name), cores (logical CPUs), memory (e.g. "125.8
/// GiB"), os (sysname release machine).
std::map<std::string, std::string> machineDescription();

/// The current time as ISO 8601 UTC with seconds ("2026-11-22T10:31:07Z").
std::string isoTimestampUtc();

} // namespace tessera::bench

#endif // TESSERA_BENCH_RESULT_H
