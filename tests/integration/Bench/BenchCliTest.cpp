//===- BenchCliTest.cpp - tessera-bench end to end ------------------------===//
//
// Runs the real command: the vector_ops quick suite on cpu and on sim
// (every case must pass validation and the JSON must read back under the
// schema), and `compare` on an unchanged run, a noise-level change and an
// injected regression.
//
//===----------------------------------------------------------------------===//

#include "tessera/bench/Result.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace tessera;
using namespace tessera::bench;

namespace {

std::string tempDir() {
  static std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() /
             ("tessera-bench-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

/// Removes the scratch directory when the tests are done.
class ScratchCleanup : public ::testing::Environment {
public:
  void TearDown() override { std::filesystem::remove_all(tempDir()); }
};
::testing::Environment *const kCleanup =
    ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

/// Exit status of the shell command.
int run(const std::string &args) {
  std::string cmd = "TESSERA_CACHE_DIR=" + tempDir() + "/cache " +
                    TESSERA_BENCH_BINARY + " " + args + " > " + tempDir() +
                    "/out.txt 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

void expectAllPassed(const RunResult &r, const char *device) {
  EXPECT_EQ(r.header.device.at("kind"), device);
  EXPECT_FALSE(r.header.compilerVersion.empty());
  EXPECT_NE(r.header.commandLine.find("--suite vector_ops"), std::string::npos);
  ASSERT_EQ(r.cases.size(), 16u); // 7 ops x 2 sizes + 2 strided
  for (const CaseResult &c : r.cases) {
    EXPECT_TRUE(c.passed) << c.name << ": " << c.failure;
    EXPECT_FALSE(c.samples.empty()) << c.name;
    EXPECT_GT(c.stats.median, 0) << c.name;
    EXPECT_GT(c.work.bytes, 0) << c.name;
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
  ASSERT_TRUE(writeResultFile(tempDir() + "/noise.json", noise).isOk());
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
  ASSERT_TRUE(writeResultFile(tempDir() + "/tight.json", tight).isOk());
  ASSERT_TRUE(writeResultFile(tempDir() + "/slow.json", slow).isOk());
  EXPECT_EQ(
      run("compare " + tempDir() + "/tight.json " + tempDir() + "/slow.json"),
      1);
  EXPECT_EQ(
      run("compare " + tempDir() + "/tight.json " + tempDir() + "/tight.json"),
      0);
  // A bad file is an error (its own status), not a crash or a regression.
  EXPECT_EQ(run("compare " + base + " " + tempDir() + "/missing.json"), 2);
}

std::string outputText() {
  std::ifstream out(tempDir() + "/out.txt");
  return std::string((std::istreambuf_iterator<char>(out)),
                     std::istreambuf_iterator<char>());
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
    // attention: S,D,causal -- each in two precisions.
    EXPECT_EQ(perSuite["gemm"], 4);
    EXPECT_EQ(perSuite["layer_norm"], 2);
    EXPECT_EQ(perSuite["softmax"], 4);
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
  EXPECT_EQ(run("run --suite gemm --precision fp6 --device cpu"), 1);
  EXPECT_NE(outputText().find("fp6"), std::string::npos) << outputText();
  EXPECT_EQ(run("run --suite gemm --sizes \"M=64,N=x\" --device cpu"), 1);
  EXPECT_NE(outputText().find("N=x"), std::string::npos) << outputText();
  // Sizes no selected suite understands: nothing to run is an error.
  EXPECT_EQ(run("run --suite gemm --sizes \"Q=3\" --device cpu"), 1);
  EXPECT_NE(outputText().find("no case to run"), std::string::npos)
      << outputText();
}

// --counters: one counting launch per case on sim, its figures in the
// results; another device is refused before anything runs.
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
    for (const CaseCounters::Site &s : k.sites)
      EXPECT_EQ(s.location.rfind("softmax.tile:", 0), 0u) << s.location;
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
  std::ifstream out(tempDir() + "/out.txt");
  std::string text((std::istreambuf_iterator<char>(out)),
                   std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("(cached)"), std::string::npos) << text;
  EXPECT_EQ(run("tuner-eval " + tempDir() + "/no-such-space.json.gz"), 1);
}

} // namespace
