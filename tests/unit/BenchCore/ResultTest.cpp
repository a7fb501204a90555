//===- ResultTest.cpp - Tests of the JSON schema and result files ---------===//

#include "tessera/bench/Result.h"

#include "BenchTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tessera;
using namespace tessera::bench;
using namespace tessera::bench::testing;

namespace {
RunResult fullRun() {
  RunResult r;
  r.header.compilerVersion = "tessera 0.3.0";
  r.header.gitRevision = "0123456789abcdef";
  r.header.commandLine = "tessera-bench run --suite gemm --json out.json";
  r.header.startedAt = "2026-11-22T10:31:07Z";
  r.header.machine = machineDescription();
  r.header.device = {{"kind", "cuda"},
                     {"name", "NVIDIA H100 80GB HBM3"},
                     {"arch", "sm_90a"},
                     {"clockMHz", "1980"}};
  r.header.peaks = {{"fp16_tflops", 1070.5}, {"bandwidth_gbs", 3350}};

  CaseResult ok = passedCase("gemm f16 4096x4096x4096",
                             {1.91, 1.9, 1.905, 1.9000000000000001, 1.0 / 3});
  ok.params = {{"M", "4096"}, {"N", "4096"}, {"K", "4096"}};
  ok.config = {{"BM", "128"}, {"BN", "128"}, {"BK", "32"}};
  ok.configSource = "cache";
  ok.maxAbsError = 1.5e-3;
  ok.maxRelError = 2.25e-4;
  ok.rooflineEfficiency = 0.0673;
  ok.computePath = "fp16";
  ok.launchesPerSample = 37;
  ok.compile = {1, 2, 3, 4, 5, 6, 7, 8000};
  CaseResult::Baseline b;
  b.name = "cuBLAS";
  b.samples = {0.23, 0.231, 0.229};
  b.stats = computeStats(b.samples);
  b.speedup = b.stats.median / ok.stats.median;
  b.launchesPerSample = 12;
  ok.baseline = b;
  ok.resources = {
      {"registers", 224}, {"sharedBytes", 98304}, {"occupancy", 0.125}};
  ok.counters = sampleCounters();

  CaseResult bad = failedCase("gemm fp8 4096", "max rel error 0.25 > 0.01");
  CaseResult::Baseline bb;
  bb.name = "cuBLAS";
  bb.samples = {0.5};
  bb.stats = computeStats(bb.samples);
  bad.baseline = bb;
  bad.compile.parse = 1.5;
  ok.resourcesArch = "sm_90a";
  bad.resourcesNote = "sm_90a: needs 300000 bytes of shared memory";
  CaseResult skipped = failedCase("all_reduce fp32 1 MiB", "1 GPU(s) found");
  skipped.skipped = true;
  r.cases = {ok, bad, skipped};
  return r;
}

std::string tempPath(const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tessera-benchcore-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}
} // namespace

TEST(Result, JsonRoundTrip) {
  RunResult run = fullRun();
  ASSERT_TRUE(validate(run).ok()) << validate(run).toString();
  std::string text = toJson(run);
  StatusOr<RunResult> back = fromJson(text, "mem");
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_EQ(*back, run);
  EXPECT_EQ(toJson(*back), text);
}

TEST(Result, FileRoundTrip) {
  RunResult run = fullRun();
  std::string path = tempPath("run.json");
  ASSERT_TRUE(writeResultFile(path, run).ok());
  StatusOr<RunResult> back = readResultFile(path);
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_EQ(*back, run);
  // No temporary left behind.
  int files = 0;
  for (auto &e : std::filesystem::directory_iterator(
           std::filesystem::path(path).parent_path()))
    files += e.path().filename().string().starts_with("run.json");
  EXPECT_EQ(files, 1);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(Result, FailedCaseHasNoSpeedFields) {
  std::string text = toJson(fullRun());
  size_t failed = text.find("\"passed\": false");
  ASSERT_NE(failed, std::string::npos);
  std::string tail = text.substr(failed);
  for (const char *key :
       {"\"tflops\"", "\"gbs\"", "\"samplesMs\": [\n        0.5",
        "\"stats\": {\n        \"ci", "\"speedup\"", "\"rooflineEfficiency\""})
    EXPECT_EQ(tail.find(key), std::string::npos) << key;
}

TEST(Result, WrongSchemaVersion) {
  std::string text = replaced(toJson(fullRun()), "\"schemaVersion\": 1",
                              "\"schemaVersion\": 2");
  StatusOr<RunResult> r = fromJson(text, "v2.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("schemaVersion 2"), std::string::npos);
  EXPECT_NE(r.status().message().find("v2.json"), std::string::npos);
}

TEST(Result, MissingFieldAndWrongType) {
  std::string text = toJson(fullRun());
  StatusOr<RunResult> missing =
      fromJson(replaced(text, "\"precision\": \"f16\",", ""), "m.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cases[0]"), std::string::npos);
  EXPECT_NE(missing.status().message().find("precision"), std::string::npos);

  StatusOr<RunResult> noHeader =
      fromJson(replaced(text, "\"gitRevision\"", "\"gitRev\""), "h.json");
  ASSERT_FALSE(noHeader.ok());
  EXPECT_NE(noHeader.status().message().find("gitRevision"), std::string::npos);

  StatusOr<RunResult> wrongType = fromJson(
      replaced(text, "\"passed\": true", "\"passed\": \"yes\""), "t.json");
  ASSERT_FALSE(wrongType.ok());
  EXPECT_NE(wrongType.status().message().find("passed"), std::string::npos);

  StatusOr<RunResult> badSample = fromJson(
      replaced(text, "\"samplesMs\": [", "\"samplesMs\": [\"x\","), "s.json");
  ASSERT_FALSE(badSample.ok());
  EXPECT_NE(badSample.status().message().find("samplesMs[0]"),
            std::string::npos);
}

TEST(Result, FailedCaseWithSpeedIsAnError) {
  std::string text = toJson(fullRun());
  StatusOr<RunResult> r =
      fromJson(replaced(text, "\"passed\": false,",
                        "\"passed\": false, \"tflops\": 12.5,"),
               "f.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("tflops"), std::string::npos);

  // And in memory: writeResultFile refuses it.
  RunResult run = fullRun();
  run.cases[1].tflops = 12.5;
  EXPECT_FALSE(validate(run).ok());
  std::string path = tempPath("bad.json");
  EXPECT_FALSE(writeResultFile(path, run).ok());
  EXPECT_FALSE(std::filesystem::exists(path));
  run = fullRun();
  run.cases[1].failure.clear();
  EXPECT_FALSE(validate(run).ok());
  run = fullRun();
  run.cases[0].samples.pop_back(); // count no longer matches
  EXPECT_FALSE(validate(run).ok());
  // A sample is the time of at least one launch.
  run = fullRun();
  run.cases[0].launchesPerSample = 0;
  EXPECT_FALSE(validate(run).ok());
  run = fullRun();
  run.cases[0].baseline->launchesPerSample = -2;
  EXPECT_FALSE(validate(run).ok());
  EXPECT_FALSE(fromJson(replaced(toJson(fullRun()), "\"launchesPerSample\": 37",
                                 "\"launchesPerSample\": 0"),
                        "l.json")
                   .ok());
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(Result, TruncatedAndMissingFiles) {
  std::string text = toJson(fullRun());
  StatusOr<RunResult> r = fromJson(text.substr(0, text.size() / 2), "cut.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("cut.json"), std::string::npos);

  std::string path = tempPath("truncated.json");
  {
    std::ofstream out(path);
    out << text.substr(0, 100);
  }
  EXPECT_EQ(readResultFile(path).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(readResultFile(path + ".nope").status().code(),
            StatusCode::kNotFound);
  EXPECT_FALSE(fromJson("[]", "arr").ok());
  EXPECT_FALSE(fromJson("", "empty").ok());
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(Result, MachineDescriptionAndTimestamp) {
  auto m = machineDescription();
  EXPECT_TRUE(m.contains("hostname"));
  EXPECT_TRUE(m.contains("cores"));
  EXPECT_TRUE(m.contains("os"));
  std::string t = isoTimestampUtc();
  ASSERT_EQ(t.size(), 20u);
  EXPECT_EQ(t[4], '-');
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t.back(), 'Z');
}

TEST(Result, CountersAreOptionalAndChecked) {
  RunResult run = fullRun();
  std::string text = toJson(run);
  EXPECT_NE(text.find("\"counters\""), std::string::npos);
  EXPECT_NE(text.find("\"coalescingEfficiency\": 0.75"), std::string::npos);
  EXPECT_NE(text.find("\"location\": \"softmax.tile:52:10\""),
            std::string::npos);
  // Cases without counters have no such field.
  run.cases[0].counters.reset();
  EXPECT_EQ(toJson(run).find("\"counters\""), std::string::npos);
  // A counter of the wrong type is reported with its path.
  auto bad = fromJson(
      replaced(text, "\"globalSectors\": 512", "\"globalSectors\": \"512\""),
      "c.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                "cases[0].counters.globalSectors: expected an integer"),
            std::string::npos)
      << bad.status().toString();
  RunResult nan = fullRun();
  nan.cases[0].counters->coalescingEfficiency = std::nan("");
  EXPECT_FALSE(validate(nan).ok());
}

TEST(Result, SkippedCaseRoundTripsAndCarriesNoSpeed) {
  RunResult run = fullRun();
  StatusOr<RunResult> back = fromJson(toJson(run), "mem");
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_TRUE(back->cases[2].skipped);
  EXPECT_FALSE(back->cases[0].skipped);
  // A skipped case that claims to have passed is refused.
  run.cases[0].skipped = true;
  EXPECT_FALSE(validate(run).ok());
}

namespace {
CaseResult scorecardCase() {
  CaseResult c;
  c.suite = "sass";
  c.kernel = "softmax";
  c.name = "softmax fp32 sm_90a";
  c.device = "sm_90a";
  c.precision = "fp32";
  c.passed = true;
  CodeShape code;
  code.arch = "sm_90a";
  code.function = "softmax";
  code.assembler = "ptxas";
  code.metrics = {{"registers", 40}, {"instructions", 612}, {"bar", 8}};
  code.baselineName = "Triton 3.5.1";
  code.baseline = {{"registers", 32}, {"instructions", 150}};
  code.baselineConfig = {{"BLOCK_SIZE", "4096"}};
  c.code = code;
  return c;
}
} // namespace

TEST(Result, ScorecardCaseRoundTripsWithoutSamples) {
  RunResult run;
  run.cases.push_back(scorecardCase());
  ASSERT_TRUE(validate(run).ok()) << validate(run).toString();
  StatusOr<RunResult> back = fromJson(toJson(run), "mem");
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_EQ(*back, run);
  // A scorecard case reports no speed.
  run.cases[0].samples = {1.0};
  run.cases[0].stats.count = 1;
  EXPECT_FALSE(validate(run).ok());
  // Without the code shape, a passed case still needs samples.
  run = RunResult{};
  run.cases.push_back(scorecardCase());
  run.cases[0].code.reset();
  EXPECT_FALSE(validate(run).ok());
}
