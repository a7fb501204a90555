//===- TunerTest.cpp - The tuner end to end on cpu ------------------------===//
//
// Real compilation, correctness checks against the default configuration,
// steady-clock timing and the persistent cache, on small problems so that
// the suite stays fast. Each test has its own cache directory.
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/Tuner.h"
#include "ScopedEnv.h"
#include "tessera/autotune/Inputs.h"
#include "tessera/autotune/Warmup.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

using namespace tessera;
using namespace tessera::autotune;

namespace {

std::string kernelsDir() {
  const char *src = std::getenv("TESSERA_SOURCE_DIR");
  return std::string(src ? src : ".") + "/kernels_dsl";
}

/// A fresh, empty cache directory for one test.
std::string freshCacheDir(const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tessera-tuner-test-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TuneOptions fastOptions(const std::string &cacheDir, int64_t budget) {
  TuneOptions o;
  o.cacheDir = cacheDir;
  o.budget.evaluations = budget;
  o.measure.maxSeconds = 0.05;
  o.measure.minSamples = 3;
  o.measure.maxSamples = 20;
  o.remeasureTop = 2;
  return o;
}

/// Never destroyed: a Runtime destroyed during static destruction would
/// tear down its JIT engines after LLVM's own statics are gone.
Runtime &runtime() {
  static Runtime *rt = new Runtime();
  return *rt;
}

TEST(Tuner, GemmOnCpuTunesStoresAndHitsTheCache) {
  Runtime &rt = runtime();
  auto prog = rt.loadFile(kernelsDir() + "/gemm.tile");
  ASSERT_TRUE(prog.ok()) << prog.status().toString();
  const KernelInfo *info = (*prog)->findKernel("gemm");
  ASSERT_NE(info, nullptr);
  // C[M, N] = A[A_rows, A_cols] @ B[B_rows, B_cols] (no transposes).
  auto args = generateArgs(*info,
                           {{"M", 96},
                            {"N", 80},
                            {"A_rows", 96},
                            {"A_cols", 64},
                            {"B_rows", 64},
                            {"B_cols", 80}},
                           "");
  ASSERT_TRUE(args.ok()) << args.status().toString();
  std::string dir = freshCacheDir("gemm");
  Tuner tuner(rt, *prog, "gemm", fastOptions(dir, 6));
  auto r = tuner.tune(args->args);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_FALSE(r->fromCache);
  EXPECT_EQ(r->evaluated, 6u);
  EXPECT_GT(r->bestStats.medianMs, 0);
  EXPECT_EQ(r->key.keyValues.at("M"), "96");
  EXPECT_EQ(r->key.keyValues.at("dtype:A"), "f32");
  ASSERT_EQ(r->best.size(), info->autotune->space.size());

  // A second tuner (as a second process would) finds the record.
  Tuner again(rt, *prog, "gemm", fastOptions(dir, 6));
  auto t0 = std::chrono::steady_clock::now();
  auto r2 = again.tune(args->args);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
  ASSERT_TRUE(r2.ok()) << r2.status().toString();
  EXPECT_TRUE(r2->fromCache);
  EXPECT_EQ(r2->best, r->best);
  std::printf("cache hit through Tuner::tune: %.3f ms\n", ms);

  // TunedKernel launches the stored configuration; after the first launch
  // the lookup is in process.
  TunedKernelOptions ko;
  ko.tune = fastOptions(dir, 6);
  ko.onMiss = MissPolicy::Default;
  auto tk = TunedKernel::create(rt, *prog, "gemm", ko);
  ASSERT_TRUE(tk.ok()) << tk.status().toString();
  auto how = (*tk)->resolve(args->args);
  ASSERT_TRUE(how.ok()) << how.status().toString();
  EXPECT_EQ(how->second, "cache");
  for (const auto &[name, value] : r->best)
    EXPECT_EQ(how->first.at(name).toString(), value) << name;
  ASSERT_TRUE((*tk)->launch(args->args).ok());
  const int n = 10000;
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i)
    ASSERT_TRUE((*tk)->resolve(args->args).ok());
  double us = std::chrono::duration<double, std::micro>(
                  std::chrono::steady_clock::now() - t0)
                  .count() /
              n;
  std::printf("in-process lookup after the first launch: %.2f us\n", us);
  EXPECT_LT(us, 50.0);
  std::filesystem::remove_all(dir);
}

// A configuration whose output differs from the default's is invalid
// (never the winner), with the reason kept.
TEST(Tuner, WrongAnswersInvalidateAConfiguration) {
  Runtime &rt = runtime();
  auto prog = rt.loadSource("scale.tile", R"(
@kernel(grid=(cdiv(N, BLOCK),))
@autotune(space=dict(BLOCK=[64, 128], SCALE=[1, 2]), key=["N"])
def scale(x: Tensor["N", f32], y: Tensor["N", f32], BLOCK: constexpr = 64,
          SCALE: constexpr = 1):
    i = tile.program_id(0) * BLOCK
    v = tile.load(x, offsets=(i,), shape=(BLOCK,))
    tile.store(y, v * SCALE, offsets=(i,))
)");
  ASSERT_TRUE(prog.ok()) << prog.status().toString();
  auto args = generateArgs(*(*prog)->findKernel("scale"), {{"N", 1000}}, "");
  ASSERT_TRUE(args.ok());
  std::string dir = freshCacheDir("wrong");
  TuneOptions o = fastOptions(dir, 4);
  o.strategy = "exhaustive";
  auto r = Tuner(rt, *prog, "scale", o).tune(args->args);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->evaluated, 4u);
  EXPECT_EQ(r->invalid, 2u);
  EXPECT_EQ(r->best.at("SCALE"), "1");
  int wrong = 0;
  for (const EvaluatedConfig &e : r->record.evaluated)
    if (e.config.at("SCALE") == "2") {
      EXPECT_FALSE(e.stats);
      EXPECT_NE(e.invalidReason.find("wrong result"), std::string::npos)
          << e.invalidReason;
      ++wrong;
    }
  EXPECT_EQ(wrong, 2);
  std::filesystem::remove_all(dir);
}

// Editing the space keeps the kernel's identity: the evaluations still
// inside the new space are reused, only the new configurations run.
TEST(Tuner, SpaceEditReusesStoredEvaluations) {
  Runtime &rt = runtime();
  auto source = [](const char *blocks) {
    return std::string("@kernel(grid=(cdiv(N, BLOCK),))\n@autotune(space=dict("
                       "BLOCK=") +
           blocks + R"(), key=["N"])
def copy(x: Tensor["N", f32], y: Tensor["N", f32], BLOCK: constexpr = 128):
    i = tile.program_id(0) * BLOCK
    tile.store(y, tile.load(x, offsets=(i,), shape=(BLOCK,)), offsets=(i,))
)";
  };
  auto v1 = rt.loadSource("copy.tile", source("[64, 128]"));
  auto v2 = rt.loadSource("copy.tile", source("[64, 128, 256]"));
  ASSERT_TRUE(v1.ok() && v2.ok());
  EXPECT_EQ(kernelIdentityHash(**v1, "copy"), kernelIdentityHash(**v2, "copy"));
  auto args = generateArgs(*(*v1)->findKernel("copy"), {{"N", 4096}}, "");
  ASSERT_TRUE(args.ok());
  std::string dir = freshCacheDir("edit");
  TuneOptions o = fastOptions(dir, 8);
  o.strategy = "exhaustive";
  auto r1 = Tuner(rt, *v1, "copy", o).tune(args->args);
  ASSERT_TRUE(r1.ok()) << r1.status().toString();
  EXPECT_EQ(r1->evaluated, 2u);
  auto r2 = Tuner(rt, *v2, "copy", o).tune(args->args, /*force=*/true);
  ASSERT_TRUE(r2.ok()) << r2.status().toString();
  EXPECT_EQ(r2->reused, 2u);
  EXPECT_EQ(r2->evaluated, 3u);
  EXPECT_EQ(r2->record.evaluated.size(), 3u);
  std::filesystem::remove_all(dir);
}

TEST(Tuner, MissPoliciesAndSimRefusal) {
  Runtime &rt = runtime();
  auto prog = rt.loadFile(kernelsDir() + "/vector_ops.tile");
  ASSERT_TRUE(prog.ok()) << prog.status().toString();
  const KernelInfo *info = (*prog)->findKernel("axpy");
  std::string dir = freshCacheDir("policy");
  auto tuned = generateArgs(*info, {{"N", 4096}}, "");
  auto other = generateArgs(*info, {{"N", 5000}}, "");
  ASSERT_TRUE(tuned.ok() && other.ok());
  TuneOptions o = fastOptions(dir, 3);
  ASSERT_TRUE(Tuner(rt, *prog, "axpy", o).tune(tuned->args).ok());

  for (auto [policy, expected] : {std::pair{MissPolicy::Nearest, "nearest"},
                                  std::pair{MissPolicy::Default, "default"}}) {
    TunedKernelOptions ko;
    ko.tune = o;
    ko.onMiss = policy;
    auto tk = TunedKernel::create(rt, *prog, "axpy", ko);
    ASSERT_TRUE(tk.ok());
    auto how = (*tk)->resolve(other->args);
    ASSERT_TRUE(how.ok()) << how.status().toString();
    EXPECT_EQ(how->second, expected);
    EXPECT_EQ((*tk)->resolve(tuned->args)->second, "cache");
  }
  TuneOptions s = o;
  s.device = DeviceKind::Sim;
  auto refused = Tuner(rt, *prog, "axpy", s).tune(tuned->args);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("refuses to tune"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

// A configuration that does not compile is invalid with the compiler's
// message as its reason, and the search goes on; on a GPU target a block
// of more than 1024 threads is ruled out before compiling.
TEST(Tuner, ConfigurationsThatDoNotCompileAreInvalidWithTheReason) {
  Runtime &rt = runtime();
  auto prog = rt.loadSource("bad.tile", R"(
@kernel(grid=(cdiv(N, 64),))
@autotune(space=dict(BLOCK=[64, 0, 32]), key=["N"])
def copy(x: Tensor["N", f32], y: Tensor["N", f32], BLOCK: constexpr = 64):
    i = tile.program_id(0) * 64
    v = tile.load(x, offsets=(i,), shape=(BLOCK,))
    tile.store(y, v, offsets=(i,), mask=tile.arange(0, BLOCK) < 64)
)");
  ASSERT_TRUE(prog.ok()) << prog.status().toString();
  auto args = generateArgs(*(*prog)->findKernel("copy"), {{"N", 640}}, "");
  ASSERT_TRUE(args.ok());
  std::string dir = freshCacheDir("prune");
  TuneOptions o = fastOptions(dir, 3);
  o.strategy = "exhaustive";
  auto r = Tuner(rt, *prog, "copy", o).tune(args->args);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->evaluated, 3u);
  EXPECT_GE(r->invalid, 1u);
  EXPECT_NE(r->best.at("BLOCK"), "0");
  bool found = false;
  for (const EvaluatedConfig &e : r->record.evaluated)
    if (e.config.at("BLOCK") == "0") {
      found = true;
      EXPECT_FALSE(e.stats);
      EXPECT_NE(e.invalidReason.find("non-positive dimension"),
                std::string::npos)
          << e.invalidReason;
    }
  EXPECT_TRUE(found);
  std::filesystem::remove_all(dir);
}

#ifdef TESSERA_TUNE_BINARY
// tessera-tune warmup: every entry tuned, then a second run answers every
// entry from the cache in well under a second each (what a resumed,
// interrupted warmup does with the entries it had finished).
TEST(Tuner, WarmupManifestTunesThenResumesFromTheCache) {
  std::string dir = freshCacheDir("warmup");
  std::string manifest = dir + "/manifest.json";
  {
    std::ofstream m(manifest);
    m << R"({"version": 1, "entries": [
      {"file": ")"
      << kernelsDir() << R"(/vector_ops.tile", "kernel": "axpy",
       "device": "cpu", "budget": 3,
       "shapes": [{"N": 4096}, {"N": 100000}]},
      {"file": ")"
      << kernelsDir() << R"(/stream.tile", "kernel": "triad",
       "device": "cpu", "budget": 3, "shapes": [{"N": 50000}]}]})";
  }
  std::string cmd = std::string(TESSERA_TUNE_BINARY) + " --cache-dir " +
                    dir + "/cache warmup " + manifest + " > " + dir +
                    "/out.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           t0)
                 .count();
  std::ifstream out(dir + "/out.txt");
  std::string text((std::istreambuf_iterator<char>(out)),
                   std::istreambuf_iterator<char>());
  size_t cached = 0;
  for (size_t p = text.find("(cached)"); p != std::string::npos;
       p = text.find("(cached)", p + 1))
    ++cached;
  EXPECT_EQ(cached, 3u) << text;
  std::printf("warmup of 3 cached entries: %.3f s (process included)\n", s);
  EXPECT_LT(s, 3.0);
  // A bad manifest is a clear error, not a crash.
  std::ofstream(dir + "/bad.json") << "{\"entries\": [{\"file\": 3}]}";
  std::string bad = std::string(TESSERA_TUNE_BINARY) + " --cache-dir " + dir +
                    "/cache warmup " + dir + "/bad.json > /dev/null 2>&1";
  int rc = std::system(bad.c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1) << rc;
  std::filesystem::remove_all(dir);
}

// tessera-tune warmup --bundle: an application that imports the bundle
// launches the tuned kernel with the tuned configuration and compiles
// nothing.
/// A manifest of vector_ops.axpy at N = 4096 on each of `devices`, warmed
/// up by tessera-tune into the cache under `dir` with `--bundle BUNDLE
/// <extra>`; returns the bundle's path ("" when the command failed).
std::string warmupBundle(const std::string &dir,
                         const std::vector<std::string> &devices,
                         const std::string &extra = "") {
  std::string manifest = dir + "/manifest.json";
  {
    std::ofstream m(manifest);
    m << R"({"version": 1, "entries": [)";
    for (size_t i = 0; i < devices.size(); ++i)
      m << (i ? "," : "") << R"({"file": ")" << kernelsDir()
        << R"(/vector_ops.tile", "kernel": "axpy", "device": ")" << devices[i]
        << R"(", "budget": 2, "shapes": [{"N": 4096}]})";
    m << "]}";
  }
  std::string bundle = dir + "/app.tsbundle";
  std::string cmd = std::string(TESSERA_TUNE_BINARY) + " --cache-dir " + dir +
                    "/cache warmup " + manifest + " --bundle " + bundle + " " +
                    extra + " > " + dir + "/out.txt 2>&1";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd;
  return rc == 0 ? bundle : "";
}

TEST(Tuner, WarmupBundleLaunchesWithNoCompile) {
  std::string dir = freshCacheDir("bundle");
  std::string bundle = warmupBundle(dir, {"cpu"});
  ASSERT_FALSE(bundle.empty());
  // Every load below is the bundle's, not the disk cache's.
  test::ScopedEnv noDiskCache("TESSERA_KERNEL_CACHE", "off");
  {
    Runtime rt;
    auto info = importBundle(rt, bundle, dir + "/deployed");
    ASSERT_TRUE(info.ok()) << info.status().toString();
    EXPECT_GE(info->kernels, 1u);
    auto program = rt.loadFile(kernelsDir() + "/vector_ops.tile");
    ASSERT_TRUE(program.ok()) << program.status().toString();
    TunedKernelOptions o;
    o.tune.cacheDir = dir + "/deployed";
    o.onMiss = MissPolicy::Default;
    auto tuned = TunedKernel::create(rt, *program, "axpy", o);
    ASSERT_TRUE(tuned.ok()) << tuned.status().toString();
    auto gen = generateArgs(*(*program)->findKernel("axpy"), {{"N", 4096}}, "");
    ASSERT_TRUE(gen.ok()) << gen.status().toString();
    auto resolved = (*tuned)->resolve(gen->args);
    ASSERT_TRUE(resolved.ok()) << resolved.status().toString();
    EXPECT_EQ(resolved->second, "cache");
    Status s = (*tuned)->launch(gen->args);
    EXPECT_TRUE(s.ok()) << s.toString();
    EXPECT_EQ(rt.cacheStats().compiles, 0u);
    EXPECT_GE(rt.cacheStats().bundleLoads, 1u);
  }
  std::filesystem::remove_all(dir);
}

// tessera-tune warmup --bundle --arch: cuda entries are compiled for the
// listed GPU architectures without a GPU (not tuned here when there is
// none), beside the cpu entries' code.
TEST(Tuner, WarmupBundleCompilesForListedGpuArchitectures) {
  std::string dir = freshCacheDir("bundle-gpus");
  std::string bundle =
      warmupBundle(dir, {"cuda", "cpu"}, "--arch sm_90a --arch sm_80");
  ASSERT_FALSE(bundle.empty());
  Runtime rt;
  bool gpu = rt.deviceStatus(DeviceKind::Cuda).ok();
  auto info = rt.loadBundle(bundle);
  ASSERT_TRUE(info.ok()) << info.status().toString();
  if (gpu)
    GTEST_SKIP() << "a GPU is here: its architecture decides what loads";
  EXPECT_EQ(info->kernels, 1u);
  ASSERT_EQ(info->skipped.size(), 2u);
  EXPECT_NE(info->skipped[0].find("cuda code for sm_80"), std::string::npos);
  EXPECT_NE(info->skipped[1].find("cuda code for sm_90a"), std::string::npos);
  std::filesystem::remove_all(dir);
}
#endif

} // namespace
