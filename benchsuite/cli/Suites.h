//===- Suites.h - The benchmark suites of tessera-bench ---------*- C++ -*-===//
//
// A suite lists its cases for a size set and runs one case: compile (with
// the tuning mode), validate against its baseline under the dtype tolerance
// table, time Tessera and the baseline with the sampler, count the work.
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

enum class SizeSet { Quick, Full };
enum class TuneMode { Off, Cached, On };

/// One case before it runs.
struct CaseSpec {
  std::string suite, kernel, name;
  std::map<std::string, std::string> params;
  int64_t n = 0;      ///< elements per array
  int64_t stride = 1; ///< strided access patterns
  std::string op, pattern;
};

/// What every case of a run shares.
struct RunContext {
  Runtime *rt = nullptr;
  DeviceKind device = DeviceKind::Cpu;
  std::string kernelsDir;
  TuneMode tune = TuneMode::Cached;
  std::string cacheDir;
  SamplerOptions sampler;
  bool flushCaches = true;
  std::optional<Peaks> peaks;
  std::unique_ptr<CpuCacheFlusher> cpuFlusher;
  /// Loaded kernel files by name ("vector_ops").
  std::map<std::string, std::shared_ptr<Program>> programs;
  StatusOr<std::shared_ptr<Program>> program(const std::string &family);
};

struct Suite {
  std::string name, description;
  std::function<std::vector<CaseSpec>(SizeSet, DeviceKind)> cases;
  std::function<CaseResult(RunContext &, const CaseSpec &)> run;
};

/// Every suite, in the order `list` shows them.
const std::vector<Suite> &allSuites();

} // namespace tessera::bench

#endif // TESSERA_BENCHSUITE_CLI_SUITES_H
