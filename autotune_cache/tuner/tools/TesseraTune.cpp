//===- TesseraTune.cpp - tessera-tune: tune, warm up, manage the cache ----===//
//
//   tessera-tune tune FILE -k KERNEL --shape M=1024,N=1024,K=1024
//   tessera-tune warmup MANIFEST.json [--bundle APP.tsbundle [--arch sm_90a]]
//   tessera-tune cache list | export FILE | import FILE
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/Inputs.h"
#include "tessera/autotune/Tuner.h"
#include "tessera/autotune/Warmup.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tessera;
using namespace tessera::autotune;
using json = nlohmann::json;

namespace {

StatusOr<std::map<std::string, ConstValue>> parseFixed(const std::string &t) {
  TESSERA_ASSIGN_OR_RETURN(auto parts, parseAssignments(t));
  std::map<std::string, ConstValue> out;
  for (const auto &[name, value] : parts)
    out[name] = ConstValue::parse(value);
  return out;
}

int fail(const Status &s) {
  std::fprintf(stderr, "tessera-tune: %s\n", s.toString().c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Tune Tessera kernels and manage the tuning cache"};
  app.require_subcommand(1);
  std::string cacheDir;
  app.add_option("--cache-dir", cacheDir,
                 "Tuning cache directory (default $TESSERA_CACHE_DIR/tuning)");

  TuneJob job;
  std::string shapes, fixed, device = "cpu";
  CLI::App *tune = app.add_subcommand("tune", "Tune one kernel for one key");
  tune->add_option("file", job.file, "Source file (.tile)")->required();
  tune->add_option("-k,--kernel", job.kernel, "Kernel")->required();
  tune->add_option("--shape", shapes, "Shape symbols: M=1024,N=1024,...")
      ->required();
  tune->add_option("--device", device, "cpu or cuda (sim refuses to tune)");
  tune->add_option("--precision", job.precision, "Precision policy");
  tune->add_option("--fixed", fixed, "Constants not tuned: NAME=V,...");
  tune->add_option(
      "--strategy", job.strategy, "Search strategy (" + [] {
        std::string s;
        for (const std::string &n : strategyNames())
          s += (s.empty() ? "" : ", ") + n;
        return s;
      }() + ")");
  tune->add_option("--budget", job.budget,
                   "New evaluations (default 64; stored ones are reused)");
  tune->add_option("--seconds", job.seconds, "Wall-time budget");
  tune->add_option("--seed", job.seed, "Search seed");
  tune->add_flag("--force", job.force,
                 "Tune even if the key is cached (continuing its search)");
  std::string jsonOut;
  tune->add_option("--json", jsonOut, "Also write the result as JSON");

  std::string manifest;
  CLI::App *warm = app.add_subcommand(
      "warmup", "Tune every kernel x key x device of a manifest (resumable)");
  warm->add_option("manifest", manifest, "Manifest JSON")->required();
  warm->add_option("--json", jsonOut, "Also write the results as JSON");
  std::string bundleOut;
  warm->add_option("--bundle", bundleOut,
                   "Also write a deployment bundle: the tuned "
                   "configurations and their compiled code");
  std::vector<std::string> bundleArchs;
  warm->add_option("--arch", bundleArchs,
                   "With --bundle: also compile every cuda entry for these "
                   "GPU architectures (repeat, e.g. --arch sm_90a --arch "
                   "sm_80); no GPU needed");

  CLI::App *cache = app.add_subcommand("cache", "List, export or import");
  cache->require_subcommand(1);
  CLI::App *list = cache->add_subcommand("list", "List the records");
  std::string path, kernelFilter;
  CLI::App *exp = cache->add_subcommand("export", "Export records to a file");
  exp->add_option("file", path)->required();
  exp->add_option("--kernel", kernelFilter, "Only this kernel's records");
  CLI::App *imp =
      cache->add_subcommand("import", "Merge an exported file into the cache");
  imp->add_option("file", path)->required();
  CLI::App *merge = cache->add_subcommand(
      "merge", "Merge another cache directory (or exported file) into this "
               "one");
  merge->add_option("source", path)->required();

  CLI11_PARSE(app, argc, argv);

  Runtime rt;
  bool tty = isatty(fileno(stderr));
  std::vector<std::string> report;
  if (*tune) {
    auto kind = parseDeviceKind(device);
    if (!kind)
      return fail(Status(StatusCode::kInvalidArgument,
                         "unknown device '" + device + "'"));
    job.device = *kind;
    auto s = parseShapes(shapes);
    if (!s.ok())
      return fail(s.status());
    job.shapes = *s;
    auto f = parseFixed(fixed);
    if (!f.ok())
      return fail(f.status());
    job.fixed = *f;
    Status st = runTuneJob(rt, job, cacheDir, tty, &report);
    if (!st.ok())
      return fail(st);
  } else if (*warm) {
    return runWarmup(rt, manifest, cacheDir, tty, jsonOut, bundleOut,
                     bundleArchs);
  } else {
    auto c = TuningCache::open(cacheDir);
    if (!c.ok())
      return fail(c.status());
    if (*list) {
      for (const TuningRecord &r : (*c)->records())
        std::printf("%s [%s] %s %s: %s  %.4f ms  (%zu evaluated, %s, %.1f s)\n",
                    r.key.kernel.c_str(),
                    describeAssignments(r.key.keyValues).c_str(),
                    r.key.device.kind.c_str(), r.key.device.name.c_str(),
                    describeAssignments(r.best).c_str(), r.bestStats.medianMs,
                    r.evaluated.size(), r.strategy.c_str(), r.tuningSeconds);
    } else if (*exp) {
      Status st = (*c)->exportTo(path, kernelFilter);
      if (!st.ok())
        return fail(st);
    } else if (*imp || *merge) {
      auto n = (*c)->importFrom(path);
      if (!n.ok())
        return fail(n.status());
      std::printf("imported %zu records\n", *n);
    }
    for (const std::string &w : (*c)->warnings())
      std::fprintf(stderr, "warning: %s\n", w.c_str());
  }
  if (!jsonOut.empty())
    if (Status st = writeJsonReport(jsonOut, report); !st.ok())
      return fail(st);
  return 0;
}
