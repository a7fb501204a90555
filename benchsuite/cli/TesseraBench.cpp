//===- TesseraBench.cpp - tessera-bench: list, run, compare ---------------===//
//
//   tessera-bench list
//   tessera-bench run [--suite S,...] [--device cpu|cuda|sim]
//                     [--precision fp32,fp16,bf16,fp8_e4m3@accum(fp32),...]
//                     [--sizes quick|full|gpu|"M=4096,N=4096,K=4096;..."]
//                     [--configs tuned|all] [--dry-run]
//                     [--tune off|cached|on] [--baseline auto|none|...]
//                     [--gpu-arch auto|none|sm_XX]
//                     [--format table|json|csv|md] [--out FILE]
//                     [--counters] (sim only)
//   tessera-bench sass [--kernel K]... [--arch sm_80 --arch sm_90a]
//                      [--baseline auto|triton|none] [--format table|json|md]
//   tessera-bench compare BASE.json NEW.json [--threshold 5%]
//       (exit 1: a case regressed; 2: a file could not be read)
//   tessera-bench report RESULTS.json... --out DIR [--python PATH]
//   tessera-bench warmup MANIFEST.json [--cache-dir DIR] [--json FILE]
//   tessera-bench tuner-eval FILE... [--strategies ...] [--seeds N]
//
//===----------------------------------------------------------------------===//

#include "CpuPeak.h"
#include "Report.h"
#include "Scorecard.h"
#include "Suites.h"

#include "tessera/autotune/TunerEvalCli.h"
#include "tessera/autotune/Warmup.h"
#include "tessera/bench/Compare.h"
#include "tessera/bench/Format.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <unistd.h>

using namespace tessera;
using namespace tessera::bench;

namespace {

int failWith(int status, const std::string &what) {
  std::fprintf(stderr, "tessera-bench: %s\n", what.c_str());
  return status;
}
int fail(const std::string &what) { return failWith(1, what); }

std::vector<std::string> splitComma(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      out.push_back(item);
  return out;
}

std::string cacheRoot() {
  if (const char *d = std::getenv("TESSERA_CACHE_DIR"); d && *d)
    return d;
  if (const char *h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/tessera";
  return "";
}

/// The CPU peaks: measured once per machine (FMA throughput, STREAM triad)
/// and cached under the cache directory. Without `measure`, only the cached
/// ones (nullopt when there are none).
std::optional<Peaks> cpuPeaks(int threads, bool measure) {
  CpuPeaks p;
  std::string root = cacheRoot();
  std::string file =
      root.empty() ? "" : root + "/cpu-peaks-" + std::to_string(threads);
  bool cached = false;
  if (!file.empty()) {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    cached = in && fromCacheString(ss.str(), p) && p.threads == threads;
  }
  if (!cached && !measure)
    return std::nullopt;
  if (!cached) {
    p = measureCpuPeaks(threads);
    if (!file.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(root, ec);
      std::ofstream(file) << toCacheString(p);
    }
  }
  Peaks peaks;
  peaks.tflops[ComputePath::Fp32] = p.fp32GflopsAllCores / 1000.0;
  peaks.bandwidthGBs = p.triadGBs;
  peaks.source = "measured on this machine: FP32 FMA throughput (" +
                 std::to_string(threads) + " threads), STREAM triad";
  return peaks;
}

std::string gitRevision() {
#ifdef TESSERA_SOURCE_DIR_FOR_GIT
  std::string cmd = std::string("git -C '") + TESSERA_SOURCE_DIR_FOR_GIT +
                    "' rev-parse --short HEAD 2>/dev/null";
  if (FILE *f = popen(cmd.c_str(), "r")) {
    char buf[64] = {0};
    std::string out = std::fgets(buf, sizeof(buf), f) ? buf : "";
    pclose(f);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
      out.pop_back();
    return out;
  }
#endif
  return "";
}

/// The kernel library: beside the executable in an installation
/// (<prefix>/bin/tessera-bench and <prefix>/share/tessera/kernels_dsl),
/// else the source tree this binary was built from.
std::string defaultKernelsDir() {
  std::error_code ec;
  std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path installed =
        exe.parent_path().parent_path() / "share/tessera/kernels_dsl";
    if (std::filesystem::is_directory(installed, ec))
      return installed.string();
  }
  return TESSERA_DEFAULT_KERNELS_DIR;
}

} // namespace

int main(int argc, char **argv) {
  // The benchmarks report cold compile times per stage: kernels are not
  // loaded from the disk cache unless TESSERA_KERNEL_CACHE says otherwise.
  ::setenv("TESSERA_KERNEL_CACHE", "off", /*overwrite=*/0);
  CLI::App app{"Tessera's benchmark suite"};
  app.require_subcommand(1);
  std::string kernelsDir = defaultKernelsDir();
  app.add_option("--kernels", kernelsDir, "Directory of the .tile kernels");

  CLI::App *list = app.add_subcommand("list", "Suites, devices and peaks");

  CLI::App *run = app.add_subcommand("run", "Run suites");
  std::string suites, device, sizes = "quick", tune = "cached",
                              format = "table", cacheDir, precisions,
                              baseline = "auto", gpuArch = "auto";
  std::vector<std::string> outs;
  double maxSeconds = 1.0;
  bool noFlush = false, counters = false;
  run->add_option("--suite", suites, "Suites (comma list; default all)");
  run->add_option("--device", device,
                  "cpu, cuda or sim (default: cuda if available, else cpu)");
  run->add_option("--precision", precisions,
                  "Precision policies (comma list, e.g. fp32,fp16,bf16,"
                  "tf32,fp8_e4m3@accum(fp32)); default: each suite's own");
  run->add_option("--sizes", sizes,
                  "quick, full, gpu (the large cases recorded on GPUs, "
                  "docs/bench.md), or explicit sizes \"M=4096,N=4096,K=4096;"
                  "...\" (each entry runs in the suites whose dimensions it "
                  "names; see `list`)");
  std::string configs = "tuned";
  bool dryRun = false;
  run->add_option("--configs", configs,
                  "tuned (the --tune mode's configuration) or all (every "
                  "point of the kernel's autotune space that satisfies its "
                  "restrict=, one case each)")
      ->check(CLI::IsMember({"tuned", "all"}));
  run->add_flag("--dry-run", dryRun,
                "Print the cases that would run (suite and name) and exit");
  run->add_option("--baseline", baseline,
                  "Baseline beside each case: auto (OpenBLAS for gemm, C++ "
                  "loops otherwise), none, openblas, loop")
      ->check(CLI::IsMember({"auto", "none", "openblas", "loop"}));
  run->add_option("--gpu-arch", gpuArch,
                  "GPU architecture whose PTX/cubin compile time, registers, "
                  "shared memory and occupancy each case reports: auto (the "
                  "cuda device's, else sm_90a), none, or e.g. sm_80");
  run->add_option("--tune", tune, "off, cached or on")
      ->check(CLI::IsMember({"off", "cached", "on"}));
  run->add_option("--format", format, "Terminal format: table, json, csv, md")
      ->check(CLI::IsMember({"table", "json", "csv", "md"}));
  run->add_option("--out", outs,
                  "Also write the results here (.json, .csv or .md by "
                  "extension; may be repeated)");
  run->add_option("--cache-dir", cacheDir, "Tuning cache directory");
  run->add_option("--max-seconds", maxSeconds,
                  "Sampling time cap per case and implementation");
  run->add_flag("--no-flush", noFlush,
                "Do not flush the last-level cache between samples");
  run->add_flag("--counters", counters,
                "With --device sim: one more launch per case that counts "
                "what a GPU would do (global sectors and coalescing, "
                "shared-memory bank conflicts, barriers, divergent "
                "branches); see docs/bench.md");

  CLI::App *sass = app.add_subcommand(
      "sass", "Code scorecard: registers, shared memory, occupancy and the "
              "SASS instruction mix of every kernel's cubin, beside Triton's "
              "for the same work (docs/perf.md)");
  ScorecardOptions sassOptions;
  addScorecardOptions(*sass, sassOptions);

  CLI::App *cmp = app.add_subcommand(
      "compare", "Compare two result files (exit 1 on a regression, 2 on "
                 "an unreadable file)");
  std::string base, next, threshold = "5%";
  cmp->add_option("base", base)->required();
  cmp->add_option("new", next)->required();
  cmp->add_option("--threshold", threshold, "Smallest change that counts");

  CLI::App *report = app.add_subcommand(
      "report", "Self-contained HTML page and markdown with tables and plots "
                "(matplotlib) from result files (docs/bench-report.md)");
  ReportOptions reportOptions;
  addReportOptions(*report, reportOptions);

  CLI::App *warm = app.add_subcommand(
      "warmup", "Tune every kernel x key x device of a manifest ahead of "
                "deployment (resumable; docs/autotune.md)");
  std::string manifest, warmJson, warmCache;
  warm->add_option("manifest", manifest, "Manifest JSON")->required();
  warm->add_option("--cache-dir", warmCache, "Tuning cache directory");
  warm->add_option("--json", warmJson, "Also write the results as JSON");

  CLI::App *eval = app.add_subcommand(
      "tuner-eval", "Replay the search strategies on measured tuning spaces");
  autotune::TunerEvalOptions evalOptions;
  autotune::addTunerEvalOptions(*eval, evalOptions);

  CLI11_PARSE(app, argc, argv);
  bool tty = isatty(fileno(stdout));
  if (*eval)
    return autotune::runTunerEval(evalOptions);
  if (*report)
    return runReport(reportOptions);
  if (*sass) {
    sassOptions.kernelsDir = kernelsDir;
    return runScorecard(sassOptions);
  }

  if (*cmp) {
    auto b = readResultFile(base);
    if (!b.ok())
      return failWith(2, b.status().toString());
    auto n = readResultFile(next);
    if (!n.ok())
      return failWith(2, n.status().toString());
    auto t = parseThreshold(threshold);
    if (!t.ok())
      return failWith(2, t.status().toString());
    Comparison c = compare(*b, *n, *t);
    std::fputs(formatComparison(c, tty).c_str(), stdout);
    return c.regressed ? 1 : 0;
  }

  Runtime rt;
  if (*warm)
    return autotune::runWarmup(rt, manifest, warmCache,
                               isatty(fileno(stderr)) != 0, warmJson);
  if (*list) {
    std::printf("suites:\n");
    for (const Suite &s : allSuites()) {
      CaseRequest quick, full;
      full.sizes = SizeSet::Full;
      std::string precs, keys;
      for (const std::string &p : s.precisions)
        precs += (precs.empty() ? "" : ", ") + p;
      for (const std::string &k : s.sizeKeys)
        keys += (keys.empty() ? "" : ",") + k;
      std::vector<CaseSpec> fullCases = s.cases(full);
      std::set<std::string> kernelSet;
      for (const CaseSpec &c : fullCases)
        kernelSet.insert(c.kernel);
      std::string kernels;
      for (const std::string &k : kernelSet)
        kernels += (kernels.empty() ? "" : ", ") + k;
      std::printf("  %-18s %s\n  %-18s kernels %s\n  %-18s %zu quick (cpu) / "
                  "%zu full cases; precisions %s; --sizes keys %s\n",
                  s.name.c_str(), s.description.c_str(), "", kernels.c_str(),
                  "", s.cases(quick).size(), fullCases.size(), precs.c_str(),
                  keys.c_str());
    }
    std::printf("devices:\n");
    for (DeviceKind k : {DeviceKind::Cpu, DeviceKind::Sim, DeviceKind::Cuda}) {
      auto info = rt.deviceInfo(k);
      if (!info.ok()) {
        std::printf("  %-5s unavailable: %s\n", deviceKindName(k),
                    info.status().message().c_str());
        continue;
      }
      std::printf("  %-5s %s (%s, %d %s)\n", deviceKindName(k),
                  info->name.c_str(), info->arch.c_str(), info->computeUnits,
                  k == DeviceKind::Cuda ? "SMs" : "threads");
      if (k == DeviceKind::Cuda) {
        if (auto p = gpuPeaks(info->name, info->clockMHz))
          for (const auto &[path, v] : p->tflops)
            std::printf("        peak %-12s %.1f TFLOPS\n",
                        std::string(computePathName(path)).c_str(), v);
      }
    }
    if (auto p = cpuPeaks(int(rt.numThreads()), /*measure=*/false))
      std::printf("cpu peaks: %.1f GFLOPS fp32, %.1f GB/s (%s)\n",
                  p->tflops[ComputePath::Fp32] * 1000, p->bandwidthGBs,
                  p->source.c_str());
    else
      std::printf("cpu peaks: not measured yet (the first `run` on cpu "
                  "measures and caches them)\n");
    return 0;
  }

  // run
  RunContext ctx;
  ctx.rt = &rt;
  ctx.kernelsDir = kernelsDir;
  ctx.cacheDir = cacheDir;
  ctx.tune = tune == "off"  ? TuneMode::Off
             : tune == "on" ? TuneMode::On
                            : TuneMode::Cached;
  if (device.empty())
    ctx.device = rt.deviceStatus(DeviceKind::Cuda).ok() ? DeviceKind::Cuda
                                                        : DeviceKind::Cpu;
  else if (auto k = parseDeviceKind(device))
    ctx.device = *k;
  else
    return fail("unknown device '" + device + "'");
  if (Status s = rt.deviceStatus(ctx.device); !s.ok())
    return fail(s.toString());
  if (counters && ctx.device != DeviceKind::Sim)
    return fail(std::string("--counters needs --device sim (the counters "
                            "come from the simulator running every GPU "
                            "thread); the device is ") +
                deviceKindName(ctx.device));
  ctx.counters = counters;
  ctx.sampler.maxSeconds = maxSeconds;
  ctx.flushCaches = !noFlush;
  ctx.baseline = baseline == "none"       ? BaselineChoice::None
                 : baseline == "openblas" ? BaselineChoice::OpenBlas
                 : baseline == "loop"     ? BaselineChoice::Loop
                                          : BaselineChoice::Auto;
  auto info = rt.deviceInfo(ctx.device);
  if (gpuArch == "auto")
    ctx.gpuArch = ctx.device == DeviceKind::Cuda && info.ok()
                      ? info->arch
                      : std::string("sm_90a");
  else if (gpuArch != "none")
    ctx.gpuArch = gpuArch;
  RunResult result;
  result.header.compilerVersion = compilerVersion();
  result.header.gitRevision = gitRevision();
  for (int i = 0; i < argc; ++i)
    result.header.commandLine += (i ? " " : "") + std::string(argv[i]);
  result.header.startedAt = isoTimestampUtc();
  result.header.machine = machineDescription();
  result.header.device["kind"] = deviceKindName(ctx.device);
  if (info.ok()) {
    result.header.device["name"] = info->name;
    result.header.device["arch"] = info->arch;
    result.header.device["computeUnits"] = std::to_string(info->computeUnits);
  }
  if (ctx.device == DeviceKind::Cpu) {
    ctx.peaks = cpuPeaks(int(rt.numThreads()), /*measure=*/!dryRun);
    ctx.cpuFlusher = std::make_unique<CpuCacheFlusher>();
  } else if (ctx.device == DeviceKind::Cuda && info.ok()) {
    ctx.peaks = gpuPeaks(info->name, info->clockMHz);
  } else {
    // sim: correctness only; its timings are of the simulator.
    ctx.sampler.warmup = 0;
    ctx.sampler.minSamples = 1;
    ctx.sampler.maxSamples = 2;
    ctx.flushCaches = false;
  }
  if (ctx.peaks) {
    result.header.peaks = peaksToMap(*ctx.peaks);
    result.header.device["peakSource"] = ctx.peaks->source;
  }

  std::vector<std::string> wanted = splitComma(suites);
  for (const std::string &w : wanted) {
    bool known = false;
    for (const Suite &s : allSuites())
      known |= s.name == w;
    if (!known)
      return fail("unknown suite '" + w + "' (see tessera-bench list)");
  }
  CaseRequest req;
  req.device = ctx.device;
  if (sizes == "quick") {
    req.sizes = SizeSet::Quick;
  } else if (sizes == "full") {
    req.sizes = SizeSet::Full;
  } else if (sizes == "gpu") {
    req.sizes = SizeSet::Gpu;
  } else {
    auto custom = parseSizeList(sizes);
    if (!custom.ok())
      return fail(custom.status().message());
    req.sizes = SizeSet::Custom;
    req.custom = *custom;
  }
  for (const std::string &p : splitComma(precisions)) {
    auto canon = canonicalPrecision(p);
    if (!canon.ok())
      return fail(canon.status().message());
    req.precisions.push_back(*canon);
  }
  std::vector<std::pair<const Suite *, std::vector<CaseSpec>>> plan;
  size_t total = 0;
  for (const Suite &s : allSuites()) {
    if (!wanted.empty() &&
        std::find(wanted.begin(), wanted.end(), s.name) == wanted.end())
      continue;
    std::vector<CaseSpec> cases = s.cases(req);
    if (configs == "all")
      cases = withEveryConfig(ctx, s, std::move(cases));
    if (cases.empty() && !wanted.empty())
      std::fprintf(stderr,
                   "tessera-bench: suite %s has no case for these sizes and "
                   "precisions\n",
                   s.name.c_str());
    total += cases.size();
    plan.push_back({&s, std::move(cases)});
  }
  if (total == 0)
    return fail("no case to run (see `tessera-bench list` for each suite's "
                "precisions and --sizes keys)");
  if (dryRun) {
    for (auto &[suite, cases] : plan)
      for (const CaseSpec &c : cases)
        std::printf("%s\t%s\n", suite->name.c_str(), c.name.c_str());
    return 0;
  }
  size_t done = 0;
  for (auto &[suite, cases] : plan) {
    const Suite &s = *suite;
    for (size_t i = 0; i < cases.size(); ++i) {
      ++done;
      if (tty) {
        std::fprintf(stderr, "\r\033[K[%zu/%zu] %s: %s", done, total,
                     s.name.c_str(), cases[i].name.c_str());
        std::fflush(stderr);
      }
      result.cases.push_back(s.run(ctx, cases[i]));
    }
  }
  if (tty)
    std::fprintf(stderr, "\r\033[K");

  if (format == "json")
    std::fputs(toJson(result).c_str(), stdout);
  else if (format == "csv")
    std::fputs(formatCsv(result).c_str(), stdout);
  else if (format == "md")
    std::fputs(formatMarkdown(result).c_str(), stdout);
  else
    std::fputs(formatTable(result, tty).c_str(), stdout);
  for (const std::string &out : outs) {
    std::string ext = std::filesystem::path(out).extension().string();
    if (ext == ".csv" || ext == ".md") {
      std::ofstream f(out);
      f << (ext == ".csv" ? formatCsv(result) : formatMarkdown(result));
      if (!f)
        return fail("cannot write " + out);
    } else if (Status st = writeResultFile(out, result); !st.ok()) {
      return fail(st.toString());
    }
  }
  int failed = 0;
  for (const CaseResult &c : result.cases)
    failed += c.passed || c.skipped ? 0 : 1;
  if (failed) {
    std::fprintf(stderr, "tessera-bench: %d case(s) FAILED validation\n",
                 failed);
    return 1;
  }
  return 0;
}
