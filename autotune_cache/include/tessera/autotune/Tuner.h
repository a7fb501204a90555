//===- Tuner.h - Tuning tile kernels on a device ----------------*- C++ -*-===//
//
// The autotuner proper: a kernel's `@autotune` space searched with a
// strategy (Strategy.h), every candidate compiled (in parallel, ahead of
// measuring), checked against the default configuration's output and
// timed, the winner and every evaluation kept in the persistent cache
// (TuningCache.h). `TunedKernel` is what applications launch: it consults
// the cache by key at launch and tunes, falls back to the default, or uses
// the nearest stored key when the key is new.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_AUTOTUNE_TUNER_H
#define TESSERA_AUTOTUNE_TUNER_H

#include "tessera/autotune/Space.h"
#include "tessera/autotune/Strategy.h"
#include "tessera/autotune/TuningCache.h"
#include "tessera/runtime/Runtime.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::autotune {

/// How a candidate is timed (see Measure in Tuner.cpp).
struct MeasureOptions {
  /// Stop sampling once the relative standard deviation of the samples is
  /// below this (after `minSamples`), or at `maxSamples` / `maxSeconds`.
  double targetRsd = 0.01;
  int minSamples = 5;
  int maxSamples = 200;
  double maxSeconds = 1.0;
  int warmupLaunches = 1;
};

struct TuneOptions {
  DeviceKind device = DeviceKind::Cpu;
  /// Precision policy the kernel is compiled with ("" = fp32).
  std::string precision;
  /// Constants fixed for every candidate (not tuned), e.g. HEAD_DIM.
  std::map<std::string, ConstValue> fixed;
  std::string strategy = "auto";
  /// New evaluations (configurations stored by an earlier run are reused
  /// and not counted) and/or wall seconds; {0, 0} means 64 evaluations.
  Budget budget;
  uint64_t seed = 1;
  /// Candidates compiled in parallel ahead of measuring (0: hardware
  /// threads).
  unsigned compileThreads = 0;
  MeasureOptions measure;
  /// The best few are measured again before the winner is chosen.
  int remeasureTop = 3;
  /// Cache directory ("" = $TESSERA_CACHE_DIR/tuning or
  /// ~/.cache/tessera/tuning).
  std::string cacheDir;
  /// Called after each evaluation (for progress output).
  std::function<void(const EvaluatedConfig &, size_t done, size_t budget)>
      progress;
};

struct TuneResult {
  RecordKey key;
  std::map<std::string, std::string> best;
  TimingStats bestStats;
  /// This run's evaluations and those reused from the cache.
  size_t evaluated = 0, invalid = 0, reused = 0;
  double seconds = 0;
  /// The record came from the cache (nothing was tuned).
  bool fromCache = false;
  TuningRecord record;
};

/// The search space of kernel `kernel` (its `@autotune(space=...)`, with
/// its restrictions as the validity predicate).
StatusOr<Space> kernelSpace(const Program &program, const std::string &kernel);

/// The constants of configuration `c` of `space`.
std::map<std::string, ConstValue> configConstants(const Space &space,
                                                  const Config &c);

/// The constants of the configuration of `space` that `labels` names by
/// value labels (a record's `best`); nullopt when it is not one of its
/// configurations (a record from before a space edit).
std::optional<std::map<std::string, ConstValue>>
labelledConstants(const Space &space,
                  const std::map<std::string, std::string> &labels);

/// Identity of a kernel for the tuning cache: a hash of its source with its
/// own `@autotune(...)` decorator left out (editing the space keeps the
/// identity; the record's per-parameter space says which evaluations still
/// apply).
std::string kernelIdentityHash(const Program &program,
                               const std::string &kernel);

/// The key a launch with `args` tunes for: the `key=[...]` names (shape
/// symbols and scalar parameters), every tensor's dtype, the precision.
StatusOr<std::map<std::string, std::string>>
launchKey(const KernelInfo &info, const std::vector<Arg> &args,
          const std::string &precision);

/// The tuning cache directory for `info`: TuneOptions::cacheDir if set,
/// else the kernel's `@autotune(cache="DIR")` (a path, relative to the
/// working directory), else "" (TuningCache's default).
std::string cacheDirectory(const KernelInfo &info, const TuneOptions &options);

/// The device the records are keyed by.
DeviceId deviceId(Runtime &rt, DeviceKind kind);

class Tuner {
public:
  Tuner(Runtime &rt, std::shared_ptr<Program> program, std::string kernel,
        TuneOptions options);
  /// Tunes for the key of `args` (host tensors: the tuner runs on copies,
  /// the caller's data is not modified). A stored record with the same key
  /// is the answer unless `force`; with `force` its evaluations are reused
  /// and the budget continues the search.
  StatusOr<TuneResult> tune(const std::vector<Arg> &args, bool force = false);

private:
  Runtime &rt_;
  std::shared_ptr<Program> program_;
  std::string kernel_;
  TuneOptions opts_;
};

/// What a TunedKernel does at a key it has no record for.
enum class MissPolicy {
  Tune,    ///< tune now (then launch the winner)
  Default, ///< the kernel's default configuration
  Nearest, ///< the record with the nearest key, else the default
};
std::optional<MissPolicy> parseMissPolicy(std::string_view name);

struct TunedKernelOptions {
  TuneOptions tune;
  MissPolicy onMiss = MissPolicy::Nearest;
};

/// A kernel with an `@autotune` space, launched with the configuration the
/// cache holds for each key. After the first launch of a key the lookup is
/// in process (a map from the key to the compiled kernel).
class TunedKernel {
public:
  static StatusOr<std::shared_ptr<TunedKernel>>
  create(Runtime &rt, std::shared_ptr<Program> program, std::string kernel,
         TunedKernelOptions options = {});

  Status launch(const std::vector<Arg> &args, const LaunchOptions &opts = {});
  /// The configuration (constants) a launch with `args` would use, and
  /// where it came from ("cache", "nearest", "tuned", "default").
  StatusOr<std::pair<std::map<std::string, ConstValue>, std::string>>
  resolve(const std::vector<Arg> &args);

private:
  struct Entry {
    std::shared_ptr<Kernel> kernel;
    std::map<std::string, ConstValue> constants;
    std::string source;
  };
  TunedKernel(Runtime &rt, std::shared_ptr<Program> program, std::string kernel,
              TunedKernelOptions options);
  StatusOr<const Entry *> entryFor(const std::vector<Arg> &args);

  Runtime &rt_;
  std::shared_ptr<Program> program_;
  std::string kernel_;
  const KernelInfo *info_ = nullptr;
  /// The kernel's space and the record key without its key values (set
  /// when the kernel has an @autotune space).
  std::optional<Space> space_;
  RecordKey keyBase_;
  TunedKernelOptions opts_;
  std::unique_ptr<TuningCache> cache_;
  std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
};

} // namespace tessera::autotune

#endif // TESSERA_AUTOTUNE_TUNER_H
