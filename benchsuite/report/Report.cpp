//===- Report.cpp - tessera-bench report: HTML and markdown ---------------===//
//
// The C++ half of `tessera-bench report`: argument registration, input
// checks, the interpreter search and the run of the Python script with
// runProcess (an argument vector: no shell ever sees a file name).
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "tessera/Support/Process.h"
#include "tessera/bench/Result.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

using namespace tessera;
using namespace tessera::bench;

#ifndef TESSERA_REPORT_SCRIPT
#define TESSERA_REPORT_SCRIPT ""
#endif
#ifndef TESSERA_REPORT_PYTHON
#define TESSERA_REPORT_PYTHON ""
#endif

namespace {

int failWith(int status, const std::string &what) {
  std::fprintf(stderr, "tessera-bench report: %s\n", what.c_str());
  return status;
}

std::string envOr(const char *name, const std::string &fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

/// "" when `python` imports matplotlib, else why not.
std::string whyNoMatplotlib(const std::string &python) {
  ProcessOptions quiet;
  quiet.output = ProcessOptions::Output::Discard;
  quiet.searchPath = true;
  auto st = runProcess({python, "-c", "import matplotlib"}, quiet);
  if (!st.ok())
    return st.status().message();
  if (!st->success())
    return "cannot import matplotlib (" + st->describe() + ")";
  return "";
}

} // namespace

std::string tessera::bench::reportScriptPath() {
  return envOr("TESSERA_REPORT_SCRIPT", TESSERA_REPORT_SCRIPT);
}

StatusOr<std::string>
tessera::bench::findReportPython(const std::string &preferred) {
  // (interpreter, where it came from)
  std::vector<std::pair<std::string, std::string>> candidates;
  if (!preferred.empty()) {
    candidates.emplace_back(preferred, "--python");
  } else if (std::string env = envOr("TESSERA_PYTHON", ""); !env.empty()) {
    candidates.emplace_back(env, "$TESSERA_PYTHON");
  } else {
    std::string configured = TESSERA_REPORT_PYTHON;
    if (!configured.empty())
      candidates.emplace_back(configured, "found at configure time");
    if (configured != "/usr/bin/python3")
      candidates.emplace_back("/usr/bin/python3", "system");
    candidates.emplace_back("python3", "on PATH");
  }
  std::string tried;
  for (const auto &[python, origin] : candidates) {
    std::string why = whyNoMatplotlib(python);
    if (why.empty())
      return python;
    tried += "\n  " + python + " (" + origin + "): " + why;
  }
  return unavailable(
      "no Python interpreter with matplotlib; tried:%s\nInstall "
      "python3-matplotlib (scripts/install-deps.sh installs it), or name an "
      "interpreter that has matplotlib with --python or $TESSERA_PYTHON.",
      tried.c_str());
}

void tessera::bench::addReportOptions(CLI::App &cmd, ReportOptions &options) {
  cmd.add_option("results", options.inputs,
                 "Result files (JSON schema version 1); several are overlaid")
      ->type_name("FILE")
      ->required();
  cmd.add_option("--out", options.outDir,
                 "Output directory: index.html, report.md and the plots")
      ->type_name("DIR")
      ->required();
  cmd.add_option("--python", options.python,
                 "Python interpreter with matplotlib (default: "
                 "$TESSERA_PYTHON, else searched)")
      ->type_name("PATH");
}

int tessera::bench::runReport(const ReportOptions &options) {
  if (options.inputs.empty())
    return failWith(2, "no result files given");
  if (options.outDir.empty())
    return failWith(2, "no output directory given (--out DIR)");

  // Every input is read and validated before anything else happens, so a
  // bad file leaves the output directory untouched.
  for (const std::string &path : options.inputs) {
    StatusOr<RunResult> run = readResultFile(path);
    if (!run.ok()) {
      std::string message = run.status().toString();
      if (message.find(path) == std::string::npos)
        message = path + ": " + message;
      return failWith(2, message);
    }
  }
  std::error_code ec;
  if (std::filesystem::exists(options.outDir, ec) &&
      !std::filesystem::is_directory(options.outDir, ec))
    return failWith(2, options.outDir + ": exists and is not a directory");

  StatusOr<std::string> python = findReportPython(options.python);
  if (!python.ok())
    return failWith(2, python.status().message());
  std::string script = reportScriptPath();
  if (script.empty() || !std::filesystem::is_regular_file(script, ec))
    return failWith(2, "the report script '" + script +
                           "' does not exist (set $TESSERA_REPORT_SCRIPT "
                           "to tessera_bench_report.py)");
  // A relative path that starts with '-' would read as an option.
  if (script[0] == '-')
    script = "./" + script;

  std::vector<std::string> argv = {*python, script, "--out=" + options.outDir,
                                   "--"};
  argv.insert(argv.end(), options.inputs.begin(), options.inputs.end());
  ProcessOptions shared;
  shared.searchPath = true;
  StatusOr<ExitStatus> st = runProcess(argv, shared);
  if (!st.ok())
    return failWith(1, st.status().message());
  if (!st->success())
    return failWith(1, "the report script failed (" + st->describe() + ")");
  return 0;
}
