//===- ScorecardCliTest.cpp - tessera-bench sass end to end ---------------===//
//
// The scorecard of stream.triad on sm_90a: compiled and assembled for real
// (skipped without a PTX assembler), its disassembly read through a
// stand-in for nvdisasm (no CUDA disassembler is installed on every test
// machine), written in the bench schema and gated by `compare`.
//
//===----------------------------------------------------------------------===//

#include "tessera/bench/Result.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace tessera;
using namespace tessera::bench;

namespace {

std::string tempDir() {
  static std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() /
             ("tessera-sass-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

class ScratchCleanup : public ::testing::Environment {
public:
  void TearDown() override { std::filesystem::remove_all(tempDir()); }
};
::testing::Environment *const kCleanup =
    ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

/// Exit status of tessera-bench with `args`; its output goes to out.txt.
int bench(const std::string &args) {
  std::string cmd = std::string(TESSERA_BENCH_BINARY) + " " + args + " > " +
                    tempDir() + "/out.txt 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string output() {
  std::ifstream in(tempDir() + "/out.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kFake =
    std::string(TESSERA_SCORECARD_TEST_DATA) + "/fake-nvdisasm";

TEST(ScorecardCli, TriadScorecardInTheBenchSchema) {
  std::string json = tempDir() + "/triad.json";
  int rc = bench("sass --kernel triad --arch sm_90a --baseline none "
                 "--nvdisasm " +
                 kFake + " --out " + json);
  if (rc != 0 && output().find("no PTX assembler") != std::string::npos)
    GTEST_SKIP() << output();
  ASSERT_EQ(rc, 0) << output();
  EXPECT_NE(output().find("stream.triad fp32 on sm_90a"), std::string::npos)
      << output();
  auto run = readResultFile(json);
  ASSERT_TRUE(run.ok()) << run.status().toString();
  ASSERT_EQ(run->cases.size(), 1u);
  const CaseResult &c = run->cases[0];
  EXPECT_TRUE(c.passed);
  EXPECT_TRUE(c.samples.empty());
  ASSERT_TRUE(c.code.has_value());
  EXPECT_EQ(c.code->arch, "sm_90a");
  const auto &m = c.code->metrics;
  EXPECT_GT(m.at("registers"), 0);
  EXPECT_GT(m.at("occupancy"), 0);
  EXPECT_EQ(m.at("threadsPerBlock"), 128); // num_warps=4
  // The figures of the stand-in disassembly: a loop moving 48 bytes with
  // 128-bit accesses in 5 instructions.
  EXPECT_EQ(m.at("instructions"), 7);
  EXPECT_EQ(m.at("global.load.128"), 2);
  EXPECT_EQ(m.at("global.store.128"), 1);
  EXPECT_EQ(m.at("global.load.maxWidth"), 128);
  EXPECT_EQ(m.at("loop.instructions"), 5);
  EXPECT_DOUBLE_EQ(m.at("instrPerGlobalByte"), 7.0 / 48);
  EXPECT_EQ(c.code->baselineNote, "none asked for (--baseline none)");

  // The same scorecard is no regression; more registers is.
  EXPECT_EQ(bench("compare " + json + " " + json), 0) << output();
  RunResult worse = *run;
  worse.cases[0].code->metrics["registers"] *= 2;
  std::string worseJson = tempDir() + "/worse.json";
  ASSERT_TRUE(writeResultFile(worseJson, worse).isOk());
  EXPECT_EQ(bench("compare " + json + " " + worseJson), 1) << output();
  EXPECT_NE(output().find("worse"), std::string::npos) << output();
}

TEST(ScorecardCli, WithoutADisassemblerTheMixIsLeftOutWithTheReason) {
  int rc = bench("sass --kernel triad --arch sm_80 --baseline none "
                 "--nvdisasm /nonexistent/nvdisasm --format json");
  if (rc != 0 && output().find("no PTX assembler") != std::string::npos)
    GTEST_SKIP() << output();
  // The search goes on past a missing --nvdisasm: either another
  // disassembler is installed, or the case says why the mix is absent.
  ASSERT_EQ(rc, 0) << output();
  auto run = fromJson(output(), "stdout");
  ASSERT_TRUE(run.ok()) << run.status().toString() << "\n" << output();
  const CaseResult &c = run->cases.at(0);
  ASSERT_TRUE(c.code.has_value());
  EXPECT_GT(c.code->metrics.at("registers"), 0);
  if (!c.code->metrics.count("global.load.128")) {
    EXPECT_NE(c.resourcesNote.find("nvdisasm"), std::string::npos)
        << c.resourcesNote;
  }
}

TEST(ScorecardCli, BadOptionsAndMissingTriton) {
  EXPECT_EQ(bench("sass --arch sm_9x"), 2);
  EXPECT_NE(output().find("not a real GPU architecture"), std::string::npos)
      << output();
  EXPECT_EQ(bench("sass --kernel no_such_kernel"), 2);
  EXPECT_NE(output().find("no scorecard kernel"), std::string::npos)
      << output();
  EXPECT_EQ(bench("sass --kernel triad --baseline triton --triton-python "
                  "/nonexistent/python"),
            2);
  EXPECT_NE(output().find("no Triton environment at /nonexistent/python"),
            std::string::npos)
      << output();
}

} // namespace
