//===- FormatTest.cpp - Tests of the output formatters --------------------===//

#include "tessera/bench/Format.h"

#include "BenchTestUtil.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tessera::bench;
using namespace tessera::bench::testing;

namespace {
RunResult sampleRun() {
  RunResult r;
  r.header.gitRevision = "abc123";
  r.header.commandLine = "tessera-bench run";
  CaseResult ok = passedCase("gemm f16 4096", spreadSamples(1.9, 0.001));
  ok.config = {{"BM", "128"}};
  ok.configSource = "tuned";
  ok.rooflineEfficiency = 0.0673;
  ok.compile.parse = 2;
  ok.compile.tuning = 1500;
  CaseResult::Baseline b;
  b.name = "cuBLAS";
  b.samples = {0.23, 0.23, 0.23};
  b.stats = computeStats(b.samples);
  b.speedup = 0.23 / 1.9;
  ok.baseline = b;
  CaseResult bad = failedCase("gemm fp8 4096", "max rel error 0.25 > 0.01");
  r.cases = {ok, bad};
  return r;
}

std::string lineWith(const std::string &text, const std::string &needle) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.find(needle) != std::string::npos)
      return line;
  return "";
}
} // namespace

TEST(Format, TableColumnsAndFailedRow) {
  RunResult run = sampleRun();
  std::string t = formatTable(run, false);
  for (const char *col : {"case", "device", "precision", "config", "median ms",
                          "±CI ms", "TFLOPS", "GB/s", "roofline", "baseline",
                          "speedup", "compile ms", "tune ms"})
    EXPECT_NE(t.find(col), std::string::npos) << col;
  std::string ok = lineWith(t, "gemm f16 4096");
  EXPECT_NE(ok.find("1.900"), std::string::npos) << ok;
  EXPECT_NE(ok.find("6.7%"), std::string::npos) << ok;
  EXPECT_NE(ok.find("cuBLAS 0.2300"), std::string::npos) << ok;
  EXPECT_NE(ok.find("0.12x"), std::string::npos) << ok;
  EXPECT_NE(ok.find("BM=128 (tuned)"), std::string::npos) << ok;
  std::string bad = lineWith(t, "gemm fp8 4096");
  EXPECT_NE(bad.find("FAILED: max rel error 0.25 > 0.01"), std::string::npos)
      << bad;
  EXPECT_NE(bad.find("max abs err 0.5"), std::string::npos) << bad;
  EXPECT_EQ(bad.find("TFLOPS"), std::string::npos);
  // Nothing follows the failure: no time, rate or speedup.
  EXPECT_EQ(bad.substr(bad.rfind(')') + 1), "") << bad;
  EXPECT_EQ(bad.find("1.900"), std::string::npos) << bad;
  EXPECT_EQ(t.find("\033["), std::string::npos);
  EXPECT_NE(formatTable(run, true).find("\033[31m"), std::string::npos);
}

TEST(Format, SimCountersTable) {
  RunResult run = sampleRun();
  EXPECT_EQ(formatTable(run, false).find("sim counters"), std::string::npos);
  EXPECT_EQ(formatMarkdown(run).find("sim counters"), std::string::npos);
  run.cases[0].counters = sampleCounters();
  std::string t = formatTable(run, false);
  std::string counters = t.substr(t.find("sim counters"));
  for (const char *col :
       {"global req", "coalesced", "moved / useful", "smem req",
        "wavefronts/req (ideal)", "barriers/block", "divergent / branches"})
    EXPECT_NE(counters.find(col), std::string::npos) << col;
  std::string row = lineWith(counters, "gemm f16 4096");
  for (const char *cell :
       {"75.0%", "16.0 KiB / 12.0 KiB", "2.00 (1.00)", "2.0 (max 2)", "1 / 40"})
    EXPECT_NE(row.find(cell), std::string::npos) << cell << " in " << row;
  // Only cases with counters have a row.
  EXPECT_EQ(lineWith(counters, "gemm fp8 4096"), "");
  std::string md = formatMarkdown(run);
  std::string mdRow =
      lineWith(md.substr(md.find("sim counters")), "gemm f16 4096");
  EXPECT_NE(mdRow.find("| 75.0% |"), std::string::npos) << mdRow;
}

TEST(Format, CsvHasNoSpeedForFailed) {
  std::string csv = formatCsv(sampleRun());
  std::string header = csv.substr(0, csv.find('\n'));
  for (const char *col : {"median_ms", "ci95_low_ms", "tflops", "gbs",
                          "roofline_efficiency", "speedup", "max_abs_error"})
    EXPECT_NE(header.find(col), std::string::npos) << col;
  std::string bad = lineWith(csv, "gemm fp8 4096");
  ASSERT_FALSE(bad.empty());
  // Fields: ... passed=false, failure, errors, then empty timing fields.
  EXPECT_NE(bad.find(",false,max rel error 0.25 > 0.01,0.5,0.25,"),
            std::string::npos)
      << bad;
  EXPECT_NE(bad.find(",,,,,,,,,,"), std::string::npos) << bad;
  int fields = 1, headerFields = 1;
  for (char c : bad)
    fields += c == ',';
  for (char c : header)
    headerFields += c == ',';
  EXPECT_EQ(fields, headerFields);
}

TEST(Format, CsvQuoting) {
  RunResult run = sampleRun();
  run.cases[1].failure = "a \"quoted\", text";
  std::string csv = formatCsv(run);
  EXPECT_NE(csv.find("\"a \"\"quoted\"\", text\""), std::string::npos);
}

TEST(Format, Markdown) {
  std::string md = formatMarkdown(sampleRun());
  EXPECT_NE(md.find("| case | device | precision |"), std::string::npos);
  EXPECT_NE(md.find("abc123"), std::string::npos);
  std::string bad = lineWith(md, "gemm fp8 4096");
  EXPECT_NE(bad.find("**FAILED**"), std::string::npos);
  EXPECT_EQ(bad.find("1.900"), std::string::npos);
  EXPECT_NE(lineWith(md, "gemm f16 4096").find("1.900"), std::string::npos);
}

TEST(Format, Comparison) {
  RunResult base = sampleRun();
  RunResult next = sampleRun();
  next.cases[0] = passedCase("gemm f16 4096", spreadSamples(2.5, 0.001));
  Comparison c = compare(base, next);
  std::string s = formatComparison(c, false);
  for (const char *col :
       {"case", "base ms", "new ms", "change", "noise", "verdict"})
    EXPECT_NE(s.find(col), std::string::npos) << col;
  EXPECT_NE(lineWith(s, "gemm f16 4096").find("slower"), std::string::npos);
  EXPECT_NE(lineWith(s, "gemm f16 4096").find("+31.6%"), std::string::npos);
  EXPECT_NE(lineWith(s, "gemm fp8 4096").find("FAILED"), std::string::npos);
  EXPECT_NE(s.find("REGRESSED"), std::string::npos);
}
