//===- BenchReportTest.cpp - tessera-bench report -------------------------===//
//
// Runs the report on synthetic result files (two suites, cases at three
// sizes, a baseline, resources and compile times, a FAILED case, two runs
// overlaid, a skipped case, an empty run) and checks the page and the
// markdown: plots embedded, every case listed, no speed for a FAILED case.
// Also the errors that write nothing: a truncated input, a wrong schema
// version, a missing interpreter.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "tessera/bench/Counting.h"
#include "tessera/bench/Result.h"
#include "tessera/bench/Roofline.h"
#include "tessera/bench/Stats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>

using namespace tessera;
using namespace tessera::bench;
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

std::string tempDir() {
  static std::string dir = [] {
    auto d = fs::temp_directory_path() /
             ("tessera-bench-report-test-" + std::to_string(getpid()));
    fs::create_directories(d);
    return d.string();
  }();
  return dir;
}

/// Removes the scratch directory when the tests are done.
class ScratchCleanup : public ::testing::Environment {
public:
  void TearDown() override { fs::remove_all(tempDir()); }
};
::testing::Environment *const kCleanup =
    ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// True when the directory does not exist or is empty.
bool nothingIn(const std::string &dir) {
  return !fs::exists(dir) || fs::is_empty(dir);
}

/// The HTML table row (`<tr ...>...</tr>`) that lists case `name` in run
/// `run` (the first column when several runs are overlaid).
std::string rowOf(const std::string &page, const std::string &name,
                  const std::string &run) {
  std::string cellText = ">" + name + "</td>";
  for (size_t at = page.find(cellText); at != std::string::npos;
       at = page.find(cellText, at + 1)) {
    size_t begin = page.rfind("<tr", at);
    size_t end = page.find("</tr>", at);
    std::string row = page.substr(begin, end - begin);
    if (row.find("data-col=\"run\"") == std::string::npos ||
        row.find(">" + run + "</td><td data-col=\"case\"") != std::string::npos)
      return row;
  }
  return "";
}

CaseResult passedCase(std::string suite, std::string kernel, std::string name,
                      std::string precision, Work work, double ms,
                      std::map<std::string, std::string> params) {
  CaseResult c;
  c.suite = std::move(suite);
  c.kernel = std::move(kernel);
  c.name = std::move(name);
  c.device = "NVIDIA H100 80GB HBM3";
  c.precision = std::move(precision);
  c.params = std::move(params);
  c.passed = true;
  c.samples = {ms * 1.01, ms * 0.99, ms, ms * 1.02, ms * 0.98};
  c.stats = computeStats(c.samples);
  c.stopReason = "converged";
  c.work = work;
  c.tflops = achievedTflops(work, c.stats.median);
  c.gbs = achievedGBs(work, c.stats.median);
  c.rooflineEfficiency = 0.5;
  c.compile.parse = 0.4;
  c.compile.sema = 0.3;
  c.compile.tilePasses = 2.5;
  c.compile.lowering = 6;
  c.compile.codegen = 20;
  c.compile.ptx = 8;
  c.compile.cubin = 30;
  return c;
}

/// Two suites (gemm f16 at three sizes with cuBLAS and resources, one FAILED
/// and one skipped gemm; axpy at three sizes), speeds scaled by `speed`.
RunResult syntheticRun(const std::string &revision, double speed) {
  RunResult r;
  r.header.compilerVersion = "tessera 0.1.0";
  r.header.gitRevision = revision;
  r.header.commandLine = "tessera-bench run --suite gemm,vector_ops";
  r.header.startedAt = "2026-01-02T03:04:05Z";
  r.header.machine = {{"hostname", "testhost"},
                      {"cpu", "Test CPU"},
                      {"cores", "8"},
                      {"memory", "31.0 GiB"},
                      {"os", "Linux 6.1 x86_64"}};
  r.header.device = {{"kind", "cuda"},
                     {"name", "NVIDIA H100 80GB HBM3"},
                     {"arch", "sm_90a"},
                     {"peakSource", "H100 SXM5 80GB datasheet"}};
  r.header.peaks = {
      {"fp16_tflops", 989.4}, {"fp32_tflops", 67}, {"bandwidth_gbs", 3350}};
  for (int64_t n : {1024, 2048, 4096}) {
    Work w = gemmWork(n, n, n, 2, 4, false);
    double ms = 2.0 * n * n * n / 400e12 * 1e3 / speed;
    std::string s = std::to_string(n);
    CaseResult c =
        passedCase("gemm", "gemm", "gemm f16 " + s + "x" + s + "x" + s, "f16",
                   w, ms, {{"M", s}, {"N", s}, {"K", s}});
    c.computePath = "fp16";
    c.config = {{"BLOCK_M", "128"}, {"BLOCK_N", "256"}, {"STAGES", "4"}};
    c.configSource = "tuned";
    c.maxAbsError = 0.0625;
    c.maxRelError = 1.5e-3;
    c.resources = {
        {"registers", 168}, {"sharedBytes", 196608}, {"occupancy", 0.125}};
    CaseResult::Baseline b;
    b.name = "cuBLAS";
    b.samples = {ms * 1.1, ms * 1.12, ms * 1.09};
    b.stats = computeStats(b.samples);
    b.speedup = b.stats.median / c.stats.median;
    c.baseline = b;
    r.cases.push_back(c);
  }
  CaseResult failed;
  failed.suite = "gemm";
  failed.kernel = "gemm";
  failed.name = "gemm f16 8192x8192x8192 split_k";
  failed.device = "NVIDIA H100 80GB HBM3";
  failed.precision = "f16";
  failed.params = {{"M", "8192"}, {"split", "k"}};
  failed.passed = false;
  failed.failure = "validation: max rel error 0.5 > 0.01 at C[17][3]";
  failed.maxAbsError = 12;
  failed.maxRelError = 0.5;
  failed.work = gemmWork(8192, 8192, 8192, 2, 4, false);
  failed.compile.codegen = 25;
  r.cases.push_back(failed);
  CaseResult skipped;
  skipped.suite = "gemm";
  skipped.kernel = "gemm";
  skipped.name = "gemm fp8_e4m3 4096x4096x4096";
  skipped.device = "NVIDIA H100 80GB HBM3";
  skipped.precision = "fp8_e4m3";
  skipped.passed = false;
  skipped.skipped = true;
  skipped.failure = "fp8 GEMM not built for this device";
  r.cases.push_back(skipped);
  for (int64_t n : {1 << 16, 1 << 20, 1 << 24}) {
    Work w = vectorOpWork("axpy", n, 4);
    double ms = w.bytes / 2500e9 * 1e3 / speed + 0.004;
    CaseResult c = passedCase(
        "vector_ops", "axpy", "axpy n=" + std::to_string(n), "f32", w, ms,
        {{"N", std::to_string(n)}, {"pattern", "sequential"}});
    c.computePath = "fp32";
    c.configSource = "default";
    r.cases.push_back(c);
  }
  return r;
}

/// Skips the test when no interpreter with matplotlib can be found.
#define REQUIRE_MATPLOTLIB()                                                   \
  do {                                                                         \
    auto python = findReportPython("");                                        \
    if (!python.ok())                                                          \
      GTEST_SKIP() << python.status().message();                               \
  } while (0)

TEST(BenchReport, WritesPageWithPlotsAndTables) {
  REQUIRE_MATPLOTLIB();
  std::string before = tempDir() + "/before.json";
  // A name a shell would split and expand: it must reach the script intact.
  std::string after = tempDir() + "/after run; $(false).json";
  ASSERT_TRUE(writeResultFile(before, syntheticRun("abc1234", 1.0)).ok());
  ASSERT_TRUE(writeResultFile(after, syntheticRun("def5678", 1.25)).ok());

  ReportOptions options;
  options.inputs = {before, after};
  options.outDir = tempDir() + "/out";
  ASSERT_EQ(runReport(options), 0);

  std::string page = readFile(options.outDir + "/index.html");
  ASSERT_FALSE(page.empty());
  EXPECT_THAT(page, HasSubstr("data:image/png;base64,"));
  EXPECT_THAT(page, Not(HasSubstr("src=\"http")));
  EXPECT_THAT(page, Not(HasSubstr("<link")));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  const char *const expected[] = {"gemm f16 1024x1024x1024",
                                  "gemm f16 4096x4096x4096",
                                  "gemm f16 8192x8192x8192 split_k",
                                  "axpy n=65536",
                                  "axpy n=16777216",
                                  "FAILED",
                                  "SKIPPED: fp8 GEMM not built for this device",
                                  "validation: max rel error 0.5 &gt; 0.01",
                                  "cuBLAS",
                                  "abc1234",
                                  "def5678",
                                  "NVIDIA H100 80GB HBM3",
                                  "sm_90a",
                                  "tessera-bench run --suite gemm,vector_ops",
                                  "2026-01-02T03:04:05Z",
                                  "tessera 0.1.0",
                                  "bandwidth 3350 GB/s",
                                  "fp16 989.4 TFLOPS",
                                  "BLOCK_M=128",
                                  "(tuned)",
                                  "192.0 KiB",
                                  "12.5%",
                                  "168"};
  for (const char *text : expected)
    EXPECT_THAT(page, HasSubstr(text));
  // One plot per suite for latency and throughput, a roofline per run and
  // the compile-time bars.
  size_t images = 0;
  for (size_t at = page.find("data:image/png;base64,"); at != std::string::npos;
       at = page.find("data:image/png;base64,", at + 1))
    ++images;
  EXPECT_EQ(images, 7u);
  for (const char *png :
       {"latency-gemm.png", "throughput-gemm.png", "latency-vector_ops.png",
        "throughput-vector_ops.png", "roofline-run1.png", "roofline-run2.png",
        "compile-time.png"})
    EXPECT_TRUE(fs::is_regular_file(options.outDir + "/" + png)) << png;

  // The FAILED and the skipped case: the reason, and a dash in every speed
  // column, in both runs.
  const std::pair<const char *, const char *> noSpeed[] = {
      {"gemm f16 8192x8192x8192 split_k", "FAILED: validation"},
      {"gemm fp8_e4m3 4096x4096x4096", "SKIPPED: fp8"}};
  for (const auto &[name, status] : noSpeed) {
    for (const char *run : {"1", "2"}) {
      std::string row = rowOf(page, name, run);
      ASSERT_FALSE(row.empty()) << name << ", run " << run;
      EXPECT_THAT(row, HasSubstr(status));
      for (const char *col : {"median", "ci", "samples", "tflops", "gbs",
                              "efficiency", "speedup"})
        EXPECT_THAT(row, HasSubstr(std::string("data-col=\"") + col +
                                   "\" class=\"na\">\u2013</td>"))
            << name << ": " << col;
      EXPECT_THAT(row, Not(HasSubstr("class=\"num faster\"")));
      EXPECT_THAT(row, Not(HasSubstr("\u00d7")));
    }
  }
  // A passed case shows its numbers.
  std::string row = rowOf(page, "gemm f16 4096x4096x4096", "1");
  EXPECT_THAT(row, HasSubstr("PASSED"));
  EXPECT_THAT(row, HasSubstr("data-col=\"median\" class=\"num\">"));
  EXPECT_THAT(row, HasSubstr("data-col=\"speedup\" class=\"num faster\">"));

  std::string md = readFile(options.outDir + "/report.md");
  EXPECT_THAT(md, HasSubstr("| case |"));
  EXPECT_THAT(md, HasSubstr("|---|"));
  EXPECT_THAT(md, HasSubstr("(latency-gemm.png)"));
  EXPECT_THAT(md, HasSubstr("gemm f16 8192x8192x8192 split\\_k"));
  EXPECT_THAT(md, HasSubstr("FAILED: validation"));
}

TEST(BenchReport, SkippedAndEmptyRuns) {
  REQUIRE_MATPLOTLIB();
  ReportOptions options;
  options.inputs = {std::string(TESSERA_REPORT_TEST_DATA) +
                    "/report-skipped.json"};
  options.outDir = tempDir() + "/skipped";
  ASSERT_EQ(runReport(options), 0);
  std::string page = readFile(options.outDir + "/index.html");
  EXPECT_THAT(page, HasSubstr("SKIPPED: fp8 needs sm_89 or newer"));
  EXPECT_THAT(page, HasSubstr("SKIPPED: needs two GPUs, found 1"));
  EXPECT_THAT(page, HasSubstr("attention f16 b1 h2 s128 d64"));
  EXPECT_THAT(page, HasSubstr("1 passed, 0 failed, 2 skipped"));
  EXPECT_THAT(
      page, HasSubstr("sm_90a: the GPU compile failed for this configuration"));
  std::string row = rowOf(page, "attention fp8_e4m3 b1 h2 s128 d64", "1");
  EXPECT_THAT(row, HasSubstr("data-col=\"median\" class=\"na\">"));

  RunResult empty = syntheticRun("abc1234", 1.0);
  empty.cases.clear();
  std::string emptyFile = tempDir() + "/empty.json";
  ASSERT_TRUE(writeResultFile(emptyFile, empty).ok());
  options.inputs = {emptyFile};
  options.outDir = tempDir() + "/empty";
  ASSERT_EQ(runReport(options), 0);
  page = readFile(options.outDir + "/index.html");
  EXPECT_THAT(page, HasSubstr("hold no cases"));
  EXPECT_THAT(page, Not(HasSubstr("data:image/png")));
  EXPECT_TRUE(fs::is_regular_file(options.outDir + "/report.md"));
}

TEST(BenchReport, ScriptFailureReturnsOne) {
  REQUIRE_MATPLOTLIB();
  std::string good = tempDir() + "/good-for-failure.json";
  ASSERT_TRUE(writeResultFile(good, syntheticRun("abc1234", 1.0)).ok());
  std::string script = tempDir() + "/failing_report.py";
  std::ofstream(script) << "import sys\n"
                           "sys.stderr.write('report script broke\\n')\n"
                           "sys.exit(3)\n";
  ASSERT_EQ(setenv("TESSERA_REPORT_SCRIPT", script.c_str(), 1), 0);
  ReportOptions options;
  options.inputs = {good};
  options.outDir = tempDir() + "/failing";
  ::testing::internal::CaptureStderr();
  int rc = runReport(options);
  std::string err = ::testing::internal::GetCapturedStderr();
  unsetenv("TESSERA_REPORT_SCRIPT");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(err, HasSubstr("report script broke"));
  EXPECT_THAT(err, HasSubstr("exit status 3"));
}

TEST(BenchReport, CorruptInputWritesNothing) {
  std::string good = tempDir() + "/good.json";
  ASSERT_TRUE(writeResultFile(good, syntheticRun("abc1234", 1.0)).ok());
  std::string text = readFile(good);
  std::string truncated = tempDir() + "/truncated.json";
  std::ofstream(truncated) << text.substr(0, text.size() / 2);

  ReportOptions options;
  options.inputs = {good, truncated};
  options.outDir = tempDir() + "/corrupt";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(runReport(options), 2);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("truncated.json"));
  EXPECT_TRUE(nothingIn(options.outDir));

  std::string v2 = tempDir() + "/v2.json";
  std::string v2Text = text;
  v2Text.replace(v2Text.find("\"schemaVersion\": 1"), 18,
                 "\"schemaVersion\": 2");
  std::ofstream(v2) << v2Text;
  options.inputs = {v2};
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(runReport(options), 2);
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("v2.json"));
  EXPECT_TRUE(nothingIn(options.outDir));

  options.inputs = {tempDir() + "/does-not-exist.json"};
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(runReport(options), 2);
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("does-not-exist.json"));
  EXPECT_TRUE(nothingIn(options.outDir));
}

TEST(BenchReport, MissingInterpreterWritesNothing) {
  std::string good = tempDir() + "/good-for-python.json";
  ASSERT_TRUE(writeResultFile(good, syntheticRun("abc1234", 1.0)).ok());
  ReportOptions options;
  options.inputs = {good};
  options.outDir = tempDir() + "/nopython";
  options.python = "/nonexistent/python";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(runReport(options), 2);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("/nonexistent/python"));
  EXPECT_THAT(err, HasSubstr("python3-matplotlib"));
  EXPECT_TRUE(nothingIn(options.outDir));
}

} // namespace
