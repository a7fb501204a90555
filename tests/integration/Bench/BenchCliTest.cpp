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
  ASSERT_EQ(run("run --suite vector_ops --sizes quick --device cpu "
                "--max-seconds 0.02 --no-flush --out " +
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
