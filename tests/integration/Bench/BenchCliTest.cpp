//===- BenchCliTest.cpp - tessera-bench end to end ------------------------===//
//
// Runs the real command: the vector_ops quick suite on cpu and on sim
// (every case must pass validation and the JSON must read back under the
// schema), `compare` on an unchanged run, a noise-level change and an
// injected regression, the `gpu` size set, `--configs all` and
// `--dry-run`, and checks that the former tessera-gpu-bench is no target of
// the build.
//
//===----------------------------------------------------------------------===//

#include "BenchCliUtil.h"

#include "tessera/bench/Result.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace tessera;
using namespace tessera::bench;
using namespace tessera::bench::testing;

namespace {

void expectAllPassed(const RunResult &r, const char *device) {
  EXPECT_EQ(r.header.device.at("kind"), device);
  EXPECT_FALSE(r.header.compilerVersion.empty());
  EXPECT_NE(r.header.commandLine.find("--suite vector_ops"), std::string::npos);
  // 7 ops x 2 sizes + 2 strided, and the seed's SIMT kernel beside the
  // 7 ops at the first size (cpu) or at both (sim).
  ASSERT_EQ(r.cases.size(), std::string(device) == "cpu" ? 23u : 30u);
  for (const CaseResult &c : r.cases) {
    EXPECT_TRUE(c.passed) << c.name << ": " << c.failure;
    EXPECT_FALSE(c.samples.empty()) << c.name;
    EXPECT_GT(c.stats.median, 0) << c.name;
    EXPECT_GT(c.work.bytes, 0) << c.name;
    // cpu: one launch per sample; sim (device-resident data, as cuda): a
    // batch sized from one launch.
    if (std::string(device) == "cpu") {
      EXPECT_EQ(c.launchesPerSample, 1) << c.name;
    }
    EXPECT_GE(c.launchesPerSample, 1) << c.name;
    EXPECT_LE(c.launchesPerSample, 10000) << c.name;
  }
}

TEST(BenchCli, VectorOpsQuickOnCpuAndSimValidates) {
  std::string cpu = tempDir() + "/cpu.json", sim = tempDir() + "/sim.json";
  ASSERT_EQ(run("run --suite vector_ops --sizes quick --device cpu "
                "--max-seconds 0.05 --out " +
                cpu),
            0);
  auto r = readResultFile(cpu);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  expectAllPassed(*r, "cpu");
  for (const CaseResult &c : r->cases) {
    ASSERT_TRUE(c.baseline) << c.name << ": cpu cases carry the C++ loop";
    EXPECT_GT(c.baseline->speedup, 0) << c.name;
  }
  ASSERT_EQ(
      run("run --suite vector_ops --sizes quick --device sim --out " + sim), 0);
  auto s = readResultFile(sim);
  ASSERT_TRUE(s.ok()) << s.status().toString();
  expectAllPassed(*s, "sim");
}

TEST(BenchCli, CompareFlagsAnInjectedRegressionOnly) {
  std::string base = tempDir() + "/base.json";
  ASSERT_EQ(run("run --suite vector_ops --sizes N=65536 --device cpu "
                "--max-seconds 0.02 --no-flush --gpu-arch none --out " +
                base),
            0);
  auto r = readResultFile(base);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  // The same results: nothing changed.
  EXPECT_EQ(run("compare " + base + " " + base), 0);
  // Every sample 0.1% slower: noise level, below the threshold.
  RunResult noise = *r;
  for (CaseResult &c : noise.cases) {
    for (double &x : c.samples)
      x *= 1.001;
    c.stats = computeStats(c.samples);
  }
  ASSERT_TRUE(writeResultFile(tempDir() + "/noise.json", noise).ok());
  EXPECT_EQ(run("compare " + base + " " + tempDir() + "/noise.json"), 0);
  // One case 3x slower, both runs with tight samples (a real run on a busy
  // machine can be noisier than 200%, which compare rightly calls noise):
  // a regression.
  RunResult tight = *r, slow = *r;
  double m = r->cases.front().stats.median;
  for (auto [run, factor] : {std::pair{&tight, 1.0}, std::pair{&slow, 3.0}}) {
    CaseResult &c = run->cases.front();
    for (size_t i = 0; i < c.samples.size(); ++i)
      c.samples[i] = factor * m * (1.0 + 1e-4 * double(i % 3));
    c.stats = computeStats(c.samples);
  }
  ASSERT_TRUE(writeResultFile(tempDir() + "/tight.json", tight).ok());
  ASSERT_TRUE(writeResultFile(tempDir() + "/slow.json", slow).ok());
  EXPECT_EQ(
      run("compare " + tempDir() + "/tight.json " + tempDir() + "/slow.json"),
      1);
  EXPECT_EQ(
      run("compare " + tempDir() + "/tight.json " + tempDir() + "/tight.json"),
      0);
  // A bad file is an error (its own status), not a crash or a regression.
  EXPECT_EQ(run("compare " + base + " " + tempDir() + "/missing.json"), 2);
}

// The compute suites at small explicit sizes, in two precisions, on cpu and
// sim: every case validates; each --sizes entry runs in the suites whose
// dimensions it names; cpu cases carry their baseline and the GPU
// artifacts (PTX/cubin time, registers, occupancy) for sm_90a.
TEST(BenchCli, DenseSuitesAtExplicitSizesValidate) {
  const std::string sizes =
      "\"M=64,N=48,K=40;M=33,N=17,K=70,transA=1;S=8,H=100;"
      "B=1,H=2,S=40,causal=1;S=64,D=64,causal=1\"";
  for (const char *device : {"cpu", "sim"}) {
    SCOPED_TRACE(device);
    std::string out = tempDir() + "/dense-" + device + ".json";
    ASSERT_EQ(run(std::string("run --suite gemm,layer_norm,softmax,attention "
                              "--precision fp32,fp16 --max-seconds 0.02 "
                              "--sizes ") +
                  sizes + " --device " + device + " --out " + out),
              0)
        << outputText();
    auto r = readResultFile(out);
    ASSERT_TRUE(r.ok()) << r.status().toString();
    std::map<std::string, int> perSuite;
    for (const CaseResult &c : r->cases) {
      ++perSuite[c.suite];
      EXPECT_TRUE(c.passed) << c.name << ": " << c.failure;
      EXPECT_TRUE(c.precision == "fp32" || c.precision == "fp16") << c.name;
      EXPECT_GT(c.work.flops, 0) << c.name;
      if (std::string(device) == "cpu") {
        EXPECT_TRUE(c.baseline) << c.name;
        EXPECT_EQ(c.resourcesArch, "sm_90a") << c.name << c.resourcesNote;
        EXPECT_GT(
            c.resources.count("registers") ? c.resources.at("registers") : 0, 0)
            << c.name;
        EXPECT_GT(
            c.resources.count("occupancy") ? c.resources.at("occupancy") : 0, 0)
            << c.name;
        EXPECT_GT(c.compile.ptx, 0) << c.name;
        EXPECT_GT(c.compile.cubin, 0) << c.name;
      }
    }
    // gemm: 2 entries; layer_norm: S,H; softmax: S,H and B,H,S,causal;
    // attention: S,D,causal -- each in two precisions; layer_norm and
    // softmax also with the seed's SIMT kernels.
    EXPECT_EQ(perSuite["gemm"], 4);
    EXPECT_EQ(perSuite["layer_norm"], 4);
    EXPECT_EQ(perSuite["softmax"], 8);
    EXPECT_EQ(perSuite["attention"], 2);
  }
}

TEST(BenchCli, AllReduceIsSkippedNotFailedWithoutGpus) {
  std::string out = tempDir() + "/allreduce.json";
  ASSERT_EQ(run("run --suite all_reduce --device cpu --out " + out), 0)
      << outputText();
  auto r = readResultFile(out);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  ASSERT_FALSE(r->cases.empty());
  for (const CaseResult &c : r->cases) {
    EXPECT_TRUE(c.skipped) << c.name;
    EXPECT_FALSE(c.passed) << c.name;
    EXPECT_NE(c.failure.find("GPU"), std::string::npos) << c.failure;
  }
  EXPECT_NE(outputText().find("SKIPPED"), std::string::npos);
}

// `report` is reached through tessera-bench (its own tests are in
// BenchReportTest): a page from a real run, exit 2 for an unreadable input.
TEST(BenchCli, ReportSubcommand) {
  std::string json = tempDir() + "/for-report.json";
  ASSERT_EQ(run("run --suite vector_ops --sizes N=4096 --device cpu "
                "--max-seconds 0.01 --gpu-arch none --out " +
                json),
            0)
      << outputText();
  std::string dir = tempDir() + "/report";
  ASSERT_EQ(run("report " + json + " --out " + dir), 0) << outputText();
  EXPECT_TRUE(std::filesystem::exists(dir + "/index.html"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.md"));
  EXPECT_EQ(run("report " + tempDir() + "/missing.json --out " + dir + "2"), 2);
  EXPECT_FALSE(std::filesystem::exists(dir + "2/index.html"));
}

TEST(BenchCli, BadRunOptionsAreClearErrors) {
  EXPECT_EQ(run("run --suite gemm --precision fp12 --device cpu"), 1);
  EXPECT_NE(outputText().find("fp12"), std::string::npos) << outputText();
  EXPECT_EQ(run("run --suite gemm --sizes \"M=64,N=x\" --device cpu"), 1);
  EXPECT_NE(outputText().find("N=x"), std::string::npos) << outputText();
  // Sizes no selected suite understands: nothing to run is an error.
  EXPECT_EQ(run("run --suite gemm --sizes \"Q=3\" --device cpu"), 1);
  EXPECT_NE(outputText().find("no case to run"), std::string::npos)
      << outputText();
}

// --counters: one counting launch per case on sim, its figures in the
// results; another device is refused before anything runs.
// seed 002's fp6 and fp4 GEMM policies run and validate on cpu and sim.
TEST(BenchCli, PackedGemmPrecisions) {
  for (const char *device : {"cpu", "sim"}) {
    std::string out = tempDir() + "/packed_" + device + ".json";
    ASSERT_EQ(run(std::string("run --suite gemm --sizes \"M=40,N=24,K=72\" "
                              "--precision \"fp6@accum(fp32),fp6_e2m3,"
                              "fp4@accum(fp32)\" --device ") +
                  device + " --max-seconds 0.01 --out " + out),
              0)
        << outputText();
    auto r = readResultFile(out);
    ASSERT_TRUE(r.ok()) << r.status().toString();
    std::set<std::string> precisions;
    for (const CaseResult &c : r->cases) {
      EXPECT_TRUE(c.passed) << device << " " << c.name << ": " << c.failure;
      precisions.insert(c.precision);
    }
    EXPECT_EQ(precisions, (std::set<std::string>{"fp6_e3m2@accum(fp32)",
                                                 "fp6_e2m3@accum(fp32)",
                                                 "fp4_e2m1@accum(fp32)"}))
        << device;
  }
}

TEST(BenchCli, CountersOnSim) {
  std::string out = tempDir() + "/counters.json";
  ASSERT_EQ(run("run --suite softmax --sizes \"Sq=4,Sk=64\" --precision fp32 "
                "--device sim --gpu-arch none --counters --out " +
                out),
            0)
      << outputText();
  EXPECT_NE(outputText().find("sim counters"), std::string::npos)
      << outputText();
  auto r = readResultFile(out);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  ASSERT_FALSE(r->cases.empty());
  for (const CaseResult &c : r->cases) {
    ASSERT_TRUE(c.passed) << c.name << ": " << c.failure;
    ASSERT_TRUE(c.counters) << c.name;
    const CaseCounters &k = *c.counters;
    EXPECT_GT(k.globalRequests, 0) << c.name;
    EXPECT_GT(k.coalescingEfficiency, 0) << c.name;
    EXPECT_LE(k.coalescingEfficiency, 1) << c.name;
    EXPECT_GE(k.globalBytesMoved, k.globalUsefulBytes) << c.name;
    EXPECT_GT(k.barriersPerBlock, 0) << c.name;
    EXPECT_FALSE(k.sites.empty()) << c.name;
    // The tile kernel's sites, or the seed SIMT kernel's.
    for (const CaseCounters::Site &s : k.sites)
      EXPECT_TRUE(s.location.rfind("softmax.tile:", 0) == 0 ||
                  s.location.rfind("softmax_safe.tile:", 0) == 0)
          << s.location;
  }
  EXPECT_EQ(run("run --suite softmax --sizes \"Sq=4,Sk=64\" --device cpu "
                "--counters"),
            1);
  EXPECT_NE(outputText().find("--counters needs --device sim"),
            std::string::npos)
      << outputText();
}

// warmup and tuner-eval are the autotuner's, reached through tessera-bench.
TEST(BenchCli, WarmupAndTunerEvalSubcommands) {
  std::string manifest = tempDir() + "/manifest.json";
  std::ofstream(manifest) << R"({"version": 1, "entries": [{"file": ")"
                          << TESSERA_KERNELS_DIR
                          << R"(/vector_ops.tile", "kernel": "axpy",
      "budget": 2, "shapes": [{"N": 1000}]}]})";
  std::string cache = " --cache-dir " + tempDir() + "/tuning ";
  ASSERT_EQ(run("warmup" + cache + manifest), 0);
  ASSERT_EQ(run("warmup" + cache + manifest), 0);
  std::string text = outputText();
  EXPECT_NE(text.find("(cached)"), std::string::npos) << text;
  EXPECT_EQ(run("tuner-eval " + tempDir() + "/no-such-space.json.gz"), 1);
}

/// The lines `run ... --dry-run` printed ("suite\tname").
std::vector<std::string> dryRunLines() {
  std::vector<std::string> lines;
  std::istringstream in(outputText());
  for (std::string line; std::getline(in, line);)
    if (line.find('\t') != std::string::npos)
      lines.push_back(line);
  return lines;
}

// `--sizes gpu` is the set of cases recorded on GPUs (docs/bench.md): GEMM
// squares at 1024/2048/4096 in every precision, STREAM copy and triad on
// 2^26 floats, softmax and layer norm 4096x4096 in fp32/fp16, attention
// Z=4, H=16, S=2048, D=64 in fp16/bf16; the other suites have no case in it.
TEST(BenchCli, GpuSizeSetIsTheRecordedCases) {
  ASSERT_EQ(run("run --sizes gpu --device cpu --dry-run"), 0) << outputText();
  std::vector<std::string> lines = dryRunLines();
  std::vector<std::string> expected;
  for (const char *p : {"fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"})
    for (const char *n : {"1024x1024x1024", "2048x2048x2048", "4096x4096x4096"})
      expected.push_back(std::string("gemm\tgemm ") + p + " " + n);
  for (const char *p : {"fp32", "fp16"})
    expected.push_back(std::string("layer_norm\tlayer_norm ") + p +
                       " 1x4096x4096");
  for (const char *p : {"fp32", "fp16"})
    expected.push_back(std::string("softmax\tsoftmax ") + p + " 1x1x4096x4096");
  expected.push_back("memory_bandwidth\tcopy 256 MiB sequential");
  expected.push_back("memory_bandwidth\ttriad 256 MiB sequential");
  for (const char *p : {"fp16", "bf16"})
    expected.push_back(std::string("attention\tattention ") + p +
                       " 4x16x2048x64");
  EXPECT_EQ(lines, expected);
  // --precision narrows it as for the other sets.
  ASSERT_EQ(run("run --suite gemm,attention --sizes gpu --precision bf16 "
                "--device cpu --dry-run"),
            0);
  EXPECT_EQ(dryRunLines(),
            (std::vector<std::string>{"gemm\tgemm bf16 1024x1024x1024",
                                      "gemm\tgemm bf16 2048x2048x2048",
                                      "gemm\tgemm bf16 4096x4096x4096",
                                      "attention\tattention bf16 "
                                      "4x16x2048x64"}));
}

/// A copy of kernels_dsl/ in the scratch directory whose gemm has the
/// autotune space BLOCK_M, BLOCK_N in {64, 256}, BLOCK_K in {32, 128}, 4
/// warps, 2 stages: 8 points, of which 6 satisfy the restriction
/// BLOCK_M * BLOCK_N <= 4096 * num_warps.
std::string smallSpaceKernels() {
  std::string dir = tempDir() + "/kernels";
  std::filesystem::create_directories(dir);
  std::filesystem::copy(TESSERA_KERNELS_DIR, dir,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::overwrite_existing);
  std::ifstream in(dir + "/gemm.tile");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const std::string space = "space=dict(BLOCK_M=[64, 128, 256],\n"
                            "                     BLOCK_N=[64, 128, 256],\n"
                            "                     BLOCK_K=[32, 64, 128],\n"
                            "                     num_warps=[4, 8, 16],\n"
                            "                     num_stages=[3, 2, 4],\n"
                            "                     persistent=[False, True],\n"
                            "                     program_group=[0, 8],\n"
                            "                     warp_specialize=[False, True]),";
  size_t at = text.find(space);
  EXPECT_NE(at, std::string::npos) << "gemm.tile's autotune space changed";
  if (at != std::string::npos)
    text.replace(at, space.size(),
                 "space=dict(BLOCK_M=[64, 256], BLOCK_N=[64, 256], "
                 "BLOCK_K=[32, 128], num_warps=[4], num_stages=[2]),");
  std::ofstream(dir + "/gemm.tile") << text;
  return dir;
}

// `--configs all` runs every point of the autotune space that satisfies the
// kernel's restrictions, one case each, compiled with that point; a point
// whose tiles do not fit the device's shared memory (sim: sm_90a) is
// SKIPPED, not FAILED.
TEST(BenchCli, ConfigsAllRunsEveryPointOfTheSpace) {
  // The real gemm space: 3 x 3 x 3 x 3 x 3 x 2 x 2 x 2 points, of which 23
  // (BLOCK_M, BLOCK_N, num_warps) triples satisfy BLOCK_M * BLOCK_N <= 4096
  // * num_warps, times 3 BLOCK_K, 3 stages, 4 program schedules and 2
  // warp specialisations.
  ASSERT_EQ(run("run --suite gemm --sizes M=64,N=64,K=64 --precision fp32 "
                "--configs all --device cpu --dry-run"),
            0);
  std::vector<std::string> lines = dryRunLines();
  EXPECT_EQ(lines.size(), 1656u);
  auto listed = [&](const std::string &config) {
    return std::count(lines.begin(), lines.end(),
                      "gemm\tgemm fp32 64x64x64 [" + config + "]");
  };
  EXPECT_EQ(listed("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4,"
                   "num_stages=2,persistent=False,program_group=0,"
                   "warp_specialize=False"),
            1);
  EXPECT_EQ(listed("BLOCK_M=256,BLOCK_N=256,BLOCK_K=128,num_warps=16,"
                   "num_stages=4,persistent=True,program_group=8,"
                   "warp_specialize=True"),
            1);
  EXPECT_EQ(listed("BLOCK_M=256,BLOCK_N=256,BLOCK_K=32,num_warps=8,"
                   "num_stages=2,persistent=False,program_group=0,"
                   "warp_specialize=False"),
            0); // 65536 > 4096 * 8
  // Without it, one case.
  ASSERT_EQ(run("run --suite gemm --sizes M=64,N=64,K=64 --precision fp32 "
                "--device cpu --dry-run"),
            0);
  EXPECT_EQ(dryRunLines(),
            (std::vector<std::string>{"gemm\tgemm fp32 64x64x64"}));

  std::string kernels = smallSpaceKernels();
  for (const char *device : {"cpu", "sim"}) {
    SCOPED_TRACE(device);
    std::string out = tempDir() + "/configs-" + device + ".json";
    ASSERT_EQ(run("--kernels " + kernels +
                  " run --suite gemm --sizes M=64,N=48,K=40 --precision "
                  "fp32 --configs all --gpu-arch none --max-seconds 0.02 "
                  "--device " +
                  device + " --out " + out),
              0)
        << outputText();
    auto r = readResultFile(out);
    ASSERT_TRUE(r.ok()) << r.status().toString();
    ASSERT_EQ(r->cases.size(), 6u);
    int skipped = 0;
    for (const CaseResult &c : r->cases) {
      EXPECT_EQ(c.configSource, "space") << c.name;
      // The name's point is the configuration compiled.
      std::string point = "[BLOCK_M=" + c.config.at("BLOCK_M") +
                          ",BLOCK_N=" + c.config.at("BLOCK_N") +
                          ",BLOCK_K=" + c.config.at("BLOCK_K") +
                          ",num_warps=4,num_stages=2]";
      EXPECT_NE(c.name.find(point), std::string::npos) << c.name;
      EXPECT_FALSE(c.config.at("BLOCK_M") == "256" &&
                   c.config.at("BLOCK_N") == "256")
          << c.name;
      if (c.skipped) {
        ++skipped;
        EXPECT_NE(c.failure.find("does not fit"), std::string::npos)
            << c.failure;
        EXPECT_EQ(c.config.at("BLOCK_K"), "128") << c.name;
      } else {
        EXPECT_TRUE(c.passed) << c.name << ": " << c.failure;
      }
    }
    // BLOCK_K = 128 with a 256-wide BLOCK_M or BLOCK_N: f32 tiles of 2
    // stages need 384 KiB of shared memory, more than sm_90a has; the cpu
    // has no such limit.
    EXPECT_EQ(skipped, std::string(device) == "sim" ? 2 : 0);
  }
  EXPECT_NE(run("run --configs some --device cpu --dry-run"), 0);
  EXPECT_NE(outputText().find("--configs"), std::string::npos) << outputText();
}

// Without a GPU the cuda device is a clean error naming the reason (with a
// GPU this test has nothing to check).
TEST(BenchCli, CudaWithoutAGpuIsAClearError) {
  int rc = run("run --device cuda --sizes gpu --dry-run");
  std::string text = outputText();
  if (text.find("UNAVAILABLE") == std::string::npos && rc == 0)
    GTEST_SKIP() << "a cuda device is present";
  EXPECT_EQ(rc, 1) << text;
  EXPECT_NE(text.find("'cuda' device is unavailable"), std::string::npos)
      << text;
}

// One benchmark driver: the former tessera-gpu-bench is no target of the
// build (its cases are tessera-bench's `--sizes gpu`).
TEST(BenchCli, TesseraGpuBenchIsGone) {
  EXPECT_EQ(TESSERA_GPU_BENCH_TARGET_EXISTS, 0);
}

} // namespace
