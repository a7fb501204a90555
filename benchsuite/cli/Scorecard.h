//===- Scorecard.h - tessera-bench sass: code shape beside Triton -*- C++ -*-//
//
// `tessera-bench sass` compiles every library kernel at its default
// configuration for each GPU architecture asked for, reads the cubin
// (ptxas's resource figures) and its disassembly (the instruction mix of the
// whole kernel and of its main loop), and puts the same figures of the
// Triton version of the kernel beside them (docs/perf.md).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCH_CLI_SCORECARD_H
#define TESSERA_BENCH_CLI_SCORECARD_H

#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace tessera::bench {

struct ScorecardOptions {
  std::string kernelsDir;
  std::vector<std::string> kernels; ///< empty: every scorecard kernel
  std::vector<std::string> archs = {"sm_80", "sm_90a"};
  std::string baseline = "auto";  ///< auto, triton, none
  std::string assembler = "auto"; ///< auto, ptxas, nvjitlink
  std::string nvdisasm;           ///< empty: search
  std::string tritonPython;       ///< empty: $TESSERA_TRITON_PYTHON or venv
  std::string format = "table";   ///< table, json, md, summary
  std::vector<std::string> outs;
};

void addScorecardOptions(CLI::App &cmd, ScorecardOptions &options);

/// Runs the scorecard; 0 on success, 1 when a kernel does not compile or
/// its disassembly cannot be read, 2 for bad options or an explicitly asked
/// baseline that is not installed.
int runScorecard(const ScorecardOptions &options);

} // namespace tessera::bench

#endif // TESSERA_BENCH_CLI_SCORECARD_H
