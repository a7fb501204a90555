//===- ScorecardCliTest.cpp - tessera-bench sass end to end ---------------===//
//
// The scorecard of stream.triad on sm_90a: compiled and assembled for real
// (skipped without a PTX assembler), its disassembly read through a
// stand-in for nvdisasm (no CUDA disassembler is installed on every test
// machine), written in the bench schema and gated by `compare`.
//
//===----------------------------------------------------------------------===//

#include "BenchCliUtil.h"

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
using namespace tessera::bench::testing;

namespace {

const std::string kFake =
    std::string(TESSERA_SCORECARD_TEST_DATA) + "/fake-nvdisasm";

TEST(ScorecardCli, TriadScorecardInTheBenchSchema) {
  std::string json = tempDir() + "/triad.json";
  int rc = run("sass --kernel triad --arch sm_90a --baseline none "
               "--nvdisasm " +
               kFake + " --out " + json);
  if (rc != 0 && outputText().find("no PTX assembler") != std::string::npos)
    GTEST_SKIP() << outputText();
  ASSERT_EQ(rc, 0) << outputText();
  EXPECT_NE(outputText().find("stream.triad fp32 on sm_90a"), std::string::npos)
      << outputText();
  auto result = readResultFile(json);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ(result->cases.size(), 1u);
  const CaseResult &c = result->cases[0];
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
  EXPECT_EQ(run("compare " + json + " " + json), 0) << outputText();
  RunResult worse = *result;
  worse.cases[0].code->metrics["registers"] *= 2;
  std::string worseJson = tempDir() + "/worse.json";
  ASSERT_TRUE(writeResultFile(worseJson, worse).ok());
  EXPECT_EQ(run("compare " + json + " " + worseJson), 1) << outputText();
  EXPECT_NE(outputText().find("worse"), std::string::npos) << outputText();
}

TEST(ScorecardCli, WithoutADisassemblerTheMixIsLeftOutWithTheReason) {
  int rc = run("sass --kernel triad --arch sm_80 --baseline none "
               "--format json");
  if (rc != 0 && outputText().find("no PTX assembler") != std::string::npos)
    GTEST_SKIP() << outputText();
  // Either a disassembler is installed here, or the case says why the mix
  // is absent.
  ASSERT_EQ(rc, 0) << outputText();
  auto result = fromJson(outputText(), "stdout");
  ASSERT_TRUE(result.ok()) << result.status().toString() << "\n"
                           << outputText();
  const CaseResult &c = result->cases.at(0);
  ASSERT_TRUE(c.code.has_value());
  EXPECT_GT(c.code->metrics.at("registers"), 0);
  if (!c.code->metrics.count("global.load.128")) {
    EXPECT_NE(c.resourcesNote.find("nvdisasm"), std::string::npos)
        << c.resourcesNote;
  }
}

TEST(ScorecardCli, SoftmaxAlsoAtTheBaselinesConfiguration) {
  int rc = run("sass --kernel softmax --arch sm_90a --baseline none "
               "--nvdisasm " +
               kFake + " --format json");
  if (rc != 0 && outputText().find("no PTX assembler") != std::string::npos)
    GTEST_SKIP() << outputText();
  ASSERT_EQ(rc, 0) << outputText();
  auto result = fromJson(outputText(), "stdout");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  // fp32 and fp16 at the default configuration and at BLOCK_SIZE=4096.
  ASSERT_EQ(result->cases.size(), 4u);
  int atBaseline = 0;
  for (const CaseResult &c : result->cases) {
    EXPECT_TRUE(c.passed) << c.name << ": " << c.failure;
    if (c.configSource != "baseline") {
      EXPECT_EQ(c.config.at("BLOCK_SIZE"), "1024") << c.name;
      continue;
    }
    ++atBaseline;
    EXPECT_NE(c.name.find("[BLOCK_SIZE=4096]"), std::string::npos) << c.name;
    EXPECT_EQ(c.config.at("BLOCK_SIZE"), "4096") << c.name;
  }
  EXPECT_EQ(atBaseline, 2);
}

TEST(ScorecardCli, BadOptionsAndMissingTriton) {
  EXPECT_EQ(run("sass --arch sm_9x"), 2);
  EXPECT_NE(outputText().find("not a real GPU architecture"), std::string::npos)
      << outputText();
  EXPECT_EQ(run("sass --kernel triad --nvdisasm /nonexistent/nvdisasm"), 2);
  EXPECT_NE(outputText().find("is not an executable file"), std::string::npos)
      << outputText();
  EXPECT_EQ(run("sass --kernel no_such_kernel"), 2);
  EXPECT_NE(outputText().find("no scorecard kernel"), std::string::npos)
      << outputText();
  EXPECT_EQ(run("sass --kernel triad --baseline triton --triton-python "
                "/nonexistent/python"),
            2);
  EXPECT_NE(outputText().find("no Triton environment at /nonexistent/python"),
            std::string::npos)
      << outputText();
}

} // namespace
