//===- Warmup.cpp - Tuning jobs and warmup manifests ----------------------===//

#include "tessera/autotune/Warmup.h"

#include "tessera/autotune/Inputs.h"
#include "tessera/autotune/Tuner.h"
#include "tessera/autotune/TuningCache.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace tessera;
using namespace tessera::autotune;
using json = nlohmann::json;

std::string
autotune::describeAssignments(const std::map<std::string, std::string> &m) {
  std::string s;
  for (const auto &[k, v] : m)
    s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

/// Tunes one job; prints a line (and progress on a terminal).
Status autotune::runTuneJob(Runtime &rt, const TuneJob &job,
                            const std::string &cacheDir, bool progress,
                            std::vector<std::string> *report) {
  TESSERA_ASSIGN_OR_RETURN(auto program, rt.loadFile(job.file));
  const KernelInfo *info = program->findKernel(job.kernel);
  if (!info)
    return Status(StatusCode::kNotFound,
                  "no kernel '" + job.kernel + "' in " + job.file);
  TESSERA_ASSIGN_OR_RETURN(GeneratedArgs gen,
                           generateArgs(*info, job.shapes, job.precision));
  TuneOptions o;
  o.device = job.device;
  o.precision = job.precision;
  o.fixed = job.fixed;
  o.strategy = job.strategy;
  o.budget.evaluations = job.budget;
  o.budget.seconds = job.seconds;
  o.seed = job.seed;
  o.cacheDir = cacheDir;
  if (progress)
    o.progress = [&](const EvaluatedConfig &e, size_t done, size_t total) {
      std::fprintf(stderr, "\r\033[K  [%zu/%zu] %s: %s", done, total,
                   describeAssignments(e.config).c_str(),
                   e.stats ? (std::to_string(e.stats->medianMs) + " ms").c_str()
                           : e.invalidReason.substr(0, 60).c_str());
      std::fflush(stderr);
    };
  Tuner tuner(rt, program, job.kernel, o);
  auto r = tuner.tune(gen.args, job.force);
  if (progress)
    std::fprintf(stderr, "\r\033[K");
  if (!r.ok())
    return r.status();
  std::printf(
      "%s.%s [%s] %s: best %s  median %.4f ms (%lld samples)  "
      "%zu evaluated (%zu invalid, %zu reused)  %.2f s%s\n",
      job.file.c_str(), job.kernel.c_str(),
      describeAssignments(r->key.keyValues).c_str(), deviceKindName(job.device),
      describeAssignments(r->best).c_str(), r->bestStats.medianMs,
      static_cast<long long>(r->bestStats.samples), r->evaluated, r->invalid,
      r->reused, r->seconds, r->fromCache ? "  (cached)" : "");
  if (report)
    report->push_back(json{
        {"file", job.file},
        {"kernel", job.kernel},
        {"key", r->key.keyValues},
        {"best", r->best},
        {"median_ms", r->bestStats.medianMs},
        {"evaluated", r->evaluated},
        {"invalid", r->invalid},
        {"reused", r->reused},
        {"seconds", r->seconds},
        {"cached",
         r->fromCache}}.dump());
  return okStatus();
}

/// A warmup manifest (see docs/autotune.md):
///   {"version": 1, "entries": [{"file": "kernels_dsl/gemm.tile",
///     "kernel": "gemm", "device": "cpu", "precision": "",
///     "shapes": [{"M": 1024, "N": 1024, "K": 1024}, ...],
///     "fixed": {"HEAD_DIM": 64}, "budget": 32, "strategy": "auto"}]}
StatusOr<std::vector<TuneJob>>
autotune::readWarmupManifest(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return Status(StatusCode::kNotFound, "cannot read manifest " + path);
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception &e) {
    return Status(StatusCode::kInvalidArgument,
                  path + ": not valid JSON: " + e.what());
  }
  std::vector<TuneJob> jobs;
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  try {
    if (!j.is_object() || !j.contains("entries") || !j["entries"].is_array())
      return Status(StatusCode::kInvalidArgument,
                    path + ": expected {\"entries\": [...]}");
    for (const json &e : j["entries"]) {
      TuneJob base;
      std::string file = e.at("file").get<std::string>();
      base.file = std::filesystem::path(file).is_absolute()
                      ? file
                      : (dir / file).lexically_normal().string();
      base.kernel = e.at("kernel").get<std::string>();
      base.precision = e.value("precision", "");
      base.strategy = e.value("strategy", "auto");
      base.budget = e.value("budget", int64_t(0));
      base.seconds = e.value("seconds", 0.0);
      std::string dev = e.value("device", "cpu");
      auto kind = parseDeviceKind(dev);
      if (!kind)
        return Status(StatusCode::kInvalidArgument,
                      path + ": unknown device '" + dev + "'");
      base.device = *kind;
      if (e.contains("fixed"))
        for (auto &[k, v] : e["fixed"].items())
          base.fixed[k] = ConstValue::parse(v.is_string() ? v.get<std::string>()
                                                          : v.dump());
      for (const json &s : e.at("shapes")) {
        TuneJob job = base;
        for (auto &[k, v] : s.items())
          job.shapes[k] = v.get<int64_t>();
        jobs.push_back(job);
      }
    }
  } catch (const std::exception &e) {
    return Status(StatusCode::kInvalidArgument,
                  path + ": bad manifest entry: " + e.what());
  }
  return jobs;
}

int autotune::runWarmup(Runtime &rt, const std::string &manifest,
                        const std::string &cacheDir, bool progress,
                        const std::string &jsonOut,
                        const std::string &bundleOut,
                        const std::vector<std::string> &bundleArchs) {
  auto jobs = readWarmupManifest(manifest);
  if (!jobs.ok()) {
    std::fprintf(stderr, "warmup: %s\n", jobs.status().toString().c_str());
    return 1;
  }
  std::vector<std::string> report;
  auto t0 = std::chrono::steady_clock::now();
  int failed = 0;
  for (size_t i = 0; i < jobs->size(); ++i) {
    const TuneJob &job = (*jobs)[i];
    if (progress)
      std::fprintf(stderr, "[%zu/%zu] %s.%s\n", i + 1, jobs->size(),
                   job.file.c_str(), job.kernel.c_str());
    if (job.device == DeviceKind::Cuda && !bundleArchs.empty() &&
        !rt.deviceStatus(DeviceKind::Cuda).ok()) {
      // Bundled for --arch from the cache's records (tuned elsewhere).
      std::map<std::string, std::string> shapes;
      for (const auto &[name, value] : job.shapes)
        shapes[name] = std::to_string(value);
      std::printf("%s.%s [%s] cuda: not tuned here (no GPU); bundled for "
                  "the listed architectures\n",
                  job.file.c_str(), job.kernel.c_str(),
                  describeAssignments(shapes).c_str());
      continue;
    }
    Status st = runTuneJob(rt, job, cacheDir, progress, &report);
    if (!st.ok()) {
      ++failed;
      std::fprintf(stderr, "warmup: %s.%s: %s\n", job.file.c_str(),
                   job.kernel.c_str(), st.toString().c_str());
    }
  }
  std::printf(
      "warmup: %zu entries, %d failed, %.2f s\n", jobs->size(), failed,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count());
  if (!jsonOut.empty())
    if (Status st = writeJsonReport(jsonOut, report); !st.ok()) {
      std::fprintf(stderr, "warmup: %s\n", st.toString().c_str());
      return 1;
    }
  if (!bundleOut.empty()) {
    if (Status st =
            writeWarmupBundle(rt, *jobs, cacheDir, bundleOut, bundleArchs);
        !st.ok()) {
      std::fprintf(stderr, "warmup: %s\n", st.toString().c_str());
      return 1;
    }
    std::printf("warmup: bundle %s\n", bundleOut.c_str());
  }
  return failed ? 1 : 0;
}

Status autotune::writeWarmupBundle(Runtime &rt,
                                   const std::vector<TuneJob> &jobs,
                                   const std::string &cacheDir,
                                   const std::string &path,
                                   const std::vector<std::string> &cudaArchs) {
  TESSERA_ASSIGN_OR_RETURN(auto cache, TuningCache::open(cacheDir));
  const std::vector<TuningRecord> records = cache->records();
  std::vector<std::shared_ptr<Kernel>> kernels;
  std::vector<CrossCompile> crossCompiled;
  for (const TuneJob &job : jobs) {
    if (job.device == DeviceKind::Sim) {
      std::fprintf(stderr,
                   "warmup: %s.%s on sim: sim code is not bundled; left "
                   "out\n",
                   job.file.c_str(), job.kernel.c_str());
      continue;
    }
    TESSERA_ASSIGN_OR_RETURN(auto program, rt.loadFile(job.file));
    const KernelInfo *info = program->findKernel(job.kernel);
    if (!info)
      return notFound("no kernel '%s' in %s", job.kernel.c_str(),
                      job.file.c_str());
    TESSERA_ASSIGN_OR_RETURN(GeneratedArgs gen,
                             generateArgs(*info, job.shapes, job.precision));
    if (job.device == DeviceKind::Cuda && !cudaArchs.empty()) {
      // The configuration a GPU of each architecture launches this key
      // with: the record tuned on one, else the default.
      TESSERA_ASSIGN_OR_RETURN(auto keyValues,
                               launchKey(*info, gen.args, job.precision));
      const std::string identity = kernelIdentityHash(*program, job.kernel);
      auto space = kernelSpace(*program, job.kernel);
      for (const std::string &arch : cudaArchs) {
        CompileOptions c;
        c.precision = job.precision;
        c.constants = job.fixed;
        for (const TuningRecord &r : records)
          if (space.ok() && r.key.kernel == job.kernel &&
              r.key.kernelHash == identity && r.key.device.kind == "cuda" &&
              r.key.device.arch == arch &&
              r.key.compilerVersion == compilerVersion() &&
              r.key.keyValues == keyValues)
            if (auto constants = labelledConstants(*space, r.best)) {
              for (const auto &[name, value] : *constants)
                c.constants[name] = value;
              break;
            }
        crossCompiled.push_back(
            {program, job.kernel, c, DeviceKind::Cuda, arch});
      }
      if (!rt.deviceStatus(DeviceKind::Cuda).ok())
        continue; // no GPU here: the listed architectures only
    }
    TunedKernelOptions o;
    o.tune.device = job.device;
    o.tune.precision = job.precision;
    o.tune.fixed = job.fixed;
    o.tune.cacheDir = cacheDir;
    o.onMiss = MissPolicy::Default;
    TESSERA_ASSIGN_OR_RETURN(auto tuned,
                             TunedKernel::create(rt, program, job.kernel, o));
    // The launch compiles the variant an application's launch with such
    // inputs compiles; the kernel is then the runtime's cached one.
    TESSERA_RETURN_IF_ERROR(tuned->launch(gen.args), "%s.%s", job.file.c_str(),
                            job.kernel.c_str());
    TESSERA_ASSIGN_OR_RETURN(auto resolved, tuned->resolve(gen.args));
    CompileOptions c;
    c.precision = job.precision;
    c.constants = job.fixed;
    for (const auto &[name, value] : resolved.first)
      c.constants[name] = value;
    TESSERA_ASSIGN_OR_RETURN(auto kernel,
                             rt.compile(*program, job.kernel, c, job.device));
    kernels.push_back(std::move(kernel));
  }
  // The tuning records travel with the code (all of the cache's: the keys
  // an application meets may be others than the manifest's).
  TESSERA_ASSIGN_OR_RETURN(std::string exported, cache->exportText());
  return rt.saveBundle(path, kernels, exported, crossCompiled);
}

StatusOr<BundleInfo> autotune::importBundle(Runtime &rt,
                                            const std::string &path,
                                            const std::string &cacheDir) {
  TESSERA_ASSIGN_OR_RETURN(BundleInfo info, rt.loadBundle(path));
  if (info.tuningRecords.empty())
    return info;
  TESSERA_ASSIGN_OR_RETURN(auto cache, TuningCache::open(cacheDir));
  TESSERA_RETURN_IF_ERROR(cache->importText(info.tuningRecords, path).status(),
                          "the tuning records of bundle '%s'", path.c_str());
  return info;
}

Status autotune::writeJsonReport(const std::string &path,
                                 const std::vector<std::string> &objects) {
  json all = json::array();
  for (const std::string &o : objects)
    all.push_back(json::parse(o, nullptr, /*allow_exceptions=*/false));
  std::ofstream out(path);
  out << all.dump(2) << "\n";
  if (!out)
    return Status(StatusCode::kUnavailable, "cannot write " + path);
  return okStatus();
}
