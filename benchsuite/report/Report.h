//===- Report.h - tessera-bench report: HTML and markdown -------*- C++ -*-===//
//
// `tessera-bench report RESULTS.json... --out DIR`: checks every result file
// with readResultFile, finds a Python interpreter that can import matplotlib
// and runs tessera_bench_report.py (argv, no shell), which writes
// DIR/index.html (self-contained: plots embedded), DIR/report.md and the PNG
// plots. The page, the plots and the interpreter search are documented in
// docs/bench-report.md.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCH_REPORT_H
#define TESSERA_BENCH_REPORT_H

#include "tessera/Support/Status.h"

#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace tessera::bench {

struct ReportOptions {
  std::vector<std::string> inputs; ///< result files (schema version 1)
  std::string outDir;              ///< created when missing
  std::string python;              ///< interpreter; empty = search
};

/// Registers the `report` subcommand's arguments on `cmd`: the positional
/// result files, the required `--out DIR` and the optional `--python PATH`.
void addReportOptions(CLI::App &cmd, ReportOptions &options);

/// Runs the report. Returns 0 when the page was written (the script prints
/// the paths it wrote); 2 when an input cannot be read or is not a valid
/// schema-version-1 result (the message names the file), when no interpreter
/// with matplotlib is found or the script is missing (nothing is written
/// then); 1 when the script failed (its stderr passes through).
int runReport(const ReportOptions &options);

/// The interpreter runReport uses: `preferred` when not empty, else
/// $TESSERA_PYTHON when set (either one alone, and it must import
/// matplotlib), else the first of the interpreter found when the build was
/// configured, /usr/bin/python3 and python3 on PATH that can import
/// matplotlib. UNAVAILABLE listing what was tried and why each failed, with
/// the advice to install python3-matplotlib.
StatusOr<std::string> findReportPython(const std::string &preferred);

/// The report script: $TESSERA_REPORT_SCRIPT when set, else the copy in the
/// source tree this library was built from.
std::string reportScriptPath();

} // namespace tessera::bench

#endif // TESSERA_BENCH_REPORT_H
