//===- Warmup.h - Tuning jobs and warmup manifests --------------*- C++ -*-===//
//
// One tuning job (kernel file x kernel x key x device) with generated
// inputs, and the warmup manifest that lists many (docs/autotune.md):
// `tessera-tune tune|warmup` and `tessera-bench warmup` run these.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_AUTOTUNE_WARMUP_H
#define TESSERA_AUTOTUNE_WARMUP_H

#include "tessera/runtime/Runtime.h"

#include <map>
#include <string>
#include <vector>

namespace tessera::autotune {

struct TuneJob {
  std::string file, kernel, precision, strategy = "auto";
  DeviceKind device = DeviceKind::Cpu;
  std::map<std::string, int64_t> shapes;
  std::map<std::string, ConstValue> fixed;
  int64_t budget = 0;
  double seconds = 0;
  uint64_t seed = 1;
  bool force = false;
};

/// "A=1,B=2" for a map of labels.
std::string describeAssignments(const std::map<std::string, std::string> &m);

/// Tunes `job` on inputs generated from the kernel's signature; prints its
/// one-line result on stdout (progress on stderr when `progress`); appends
/// the result as a JSON object text to `report` if given.
Status runTuneJob(Runtime &rt, const TuneJob &job, const std::string &cacheDir,
                  bool progress, std::vector<std::string> *report);

/// The jobs of a warmup manifest (file paths relative to the manifest).
StatusOr<std::vector<TuneJob>> readWarmupManifest(const std::string &path);

/// Tunes every job of `manifest` in turn (cached keys answer at once, so an
/// interrupted warmup resumes); prints one line per job and a summary;
/// writes the results to `jsonOut` and a deployment bundle to `bundleOut`
/// (see writeWarmupBundle) if not empty. Returns the exit status (1 if the
/// manifest is bad, a job failed or the bundle could not be written).
/// With `bundleArchs`, the bundle also holds, for every cuda job, code for
/// each of those GPU architectures (see writeWarmupBundle), and cuda jobs
/// are not tuned when there is no GPU here (their configurations come from
/// the cache's records, tuned elsewhere and imported).
int runWarmup(Runtime &rt, const std::string &manifest,
              const std::string &cacheDir, bool progress,
              const std::string &jsonOut, const std::string &bundleOut = "",
              const std::vector<std::string> &bundleArchs = {});

/// Writes a deployment bundle for tuned `jobs` (Runtime::saveBundle): the
/// code each job's key launches with (the configuration the tuning cache
/// at `cacheDir` holds, compiled as a TunedKernel's launch on the job's
/// generated inputs compiles it) and the cache's tuning records. Jobs on
/// devices whose code cannot be stored (sim) are left out with a note on
/// stderr. For every cuda job and every architecture of `cudaArchs`, also
/// the code of the configuration the cache's record for that key on a GPU
/// of that architecture names (the kernel's default configuration when
/// there is none), compiled here without a GPU.
Status writeWarmupBundle(Runtime &rt, const std::vector<TuneJob> &jobs,
                         const std::string &cacheDir, const std::string &path,
                         const std::vector<std::string> &cudaArchs = {});

/// What an application does at start with a bundle: loads its code into
/// `rt` (Runtime::loadBundle) and merges its tuning records into the tuning
/// cache at `cacheDir` ("" = the default), where TunedKernel finds them.
/// The runtime's errors (another version, another machine, a damaged
/// file) are returned; kernels then compile on first use.
StatusOr<BundleInfo> importBundle(Runtime &rt, const std::string &path,
                                  const std::string &cacheDir = "");

/// Writes the JSON object texts as one JSON array.
Status writeJsonReport(const std::string &path,
                       const std::vector<std::string> &objects);

} // namespace tessera::autotune

#endif // TESSERA_AUTOTUNE_WARMUP_H
