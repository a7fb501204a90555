//===- ReplayTest.cpp - Tests of the replay harness -----------------------===//
//
// Tiny Kernel Tuner cache files written to a temporary directory (plain and
// gzip), corrupt files, and the exact random-search expectation.
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/Replay.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

using namespace tessera;
using namespace tessera::autotune;
namespace fs = std::filesystem;

namespace {

// 3 x 2 x 2 = 12 configurations: 9 listed, 1 of them failed ("1,True,f32"),
// so 8 valid; 3 absent ("4,False,*" and "2,False,f32").
const char *kTinyCache = R"({
  "device_name": "Test GPU", "kernel_name": "tiny", "problem_size": [4],
  "tune_params_keys": ["block", "unroll", "dtype"],
  "tune_params": {"block": [1, 2, 4], "unroll": [true, false],
                  "dtype": ["f16", "f32"]},
  "objective": "time",
  "cache": {
    "1,True,f16": {"block": 1, "unroll": true, "dtype": "f16", "time": 4.0},
    "1,True,f32": {"block": 1, "unroll": true, "dtype": "f32",
                   "time": "CompilationFailedConfig"},
    "1,False,f16": {"block": 1, "unroll": false, "dtype": "f16", "time": 5.0},
    "1,False,f32": {"time": 6.0},
    "2,True,f16": {"block": 2, "unroll": true, "dtype": "f16", "time": 2.0},
    "2,True,f32": {"block": 2, "unroll": true, "dtype": "f32", "time": 3.0},
    "2,False,f16": {"block": 2, "unroll": false, "dtype": "f16", "time": 2.5},
    "4,True,f16": {"block": 4, "unroll": true, "dtype": "f16", "time": 1.5,
                   "times": [1.4, 1.6]},
    "4,True,f32": {"block": 4, "unroll": true, "dtype": "f32", "time": 8.0}
  }
})";

class ReplayFiles : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera-replay-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string writePlain(const std::string &name, const std::string &text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string writeGzip(const std::string &name, const std::string &text) {
    std::string path = (dir_ / name).string();
    gzFile f = gzopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, text.data(), unsigned(text.size())), int(text.size()));
    gzclose(f);
    return path;
  }
  fs::path dir_;
};

void checkTiny(const StatusOr<ReplaySpace> &r) {
  ASSERT_TRUE(r.ok()) << r.status().toString();
  const ReplaySpace &rs = *r;
  EXPECT_EQ(rs.kernelName, "tiny");
  EXPECT_EQ(rs.deviceName, "Test GPU");
  ASSERT_EQ(rs.space.numParams(), 3u);
  EXPECT_EQ(rs.space.params()[0].name, "block");
  EXPECT_EQ(rs.space.params()[1].labels[0], "True");
  EXPECT_EQ(rs.space.params()[1].values[0], 1.0);
  EXPECT_EQ(rs.space.params()[2].labels[1], "f32");
  EXPECT_EQ(rs.space.params()[2].values[1], 1.0);
  EXPECT_EQ(rs.space.cartesianSize(), 12u);
  EXPECT_EQ(rs.validCount(), 8u);
  EXPECT_EQ(rs.failedEntries, 1u);
  EXPECT_EQ(rs.optimum(), 1.5);
  EXPECT_EQ(rs.space.validConfigs().size(), 8u);
  // Failed (string time) and absent configurations are invalid.
  EXPECT_FALSE(rs.space.isValid({0, 0, 1}));
  EXPECT_FALSE(rs.space.isValid({2, 1, 0}));
  EXPECT_FALSE(rs.time({1, 1, 1}));
  EXPECT_EQ(rs.time({0, 1, 1}), 6.0); // From the key: no fields repeated.
  EXPECT_EQ(rs.time({2, 0, 0}), 1.5);
  EXPECT_EQ(rs.space.describe({2, 0, 0}), "block=4,unroll=True,dtype=f16");
}

TEST_F(ReplayFiles, LoadsPlainAndGzip) {
  checkTiny(loadKernelTunerCache(writePlain("tiny.json", kTinyCache)));
  checkTiny(loadKernelTunerCache(writeGzip("tiny.json.gz", kTinyCache)));
}

TEST_F(ReplayFiles, StrategiesOnlyProposeMeasuredConfigs) {
  StatusOr<ReplaySpace> r =
      loadKernelTunerCache(writeGzip("tiny.json.gz", kTinyCache));
  ASSERT_TRUE(r.ok());
  for (const std::string &name : strategyNames()) {
    StatusOr<StrategyScore> sc = evaluateStrategy(*r, name, {2, 8, 20}, 5);
    ASSERT_TRUE(sc.ok()) << name;
    // Every strategy exhausts the 8 valid configurations by budget 8.
    EXPECT_DOUBLE_EQ(sc->mean[1], 1.0) << name;
    EXPECT_DOUBLE_EQ(sc->mean[2], 1.0) << name;
    EXPECT_LE(sc->min[0], sc->mean[0]);
  }
  EXPECT_FALSE(evaluateStrategy(*r, "nope", {1}, 1).ok());
  EXPECT_FALSE(evaluateStrategy(*r, "random", {}, 1).ok());
  EXPECT_FALSE(evaluateStrategy(*r, "random", {0}, 1).ok());
  EXPECT_FALSE(evaluateStrategy(*r, "random", {1}, 0).ok());
}

TEST_F(ReplayFiles, BadFilesAreStatusErrors) {
  EXPECT_EQ(
      loadKernelTunerCache((dir_ / "missing.json.gz").string()).status().code(),
      StatusCode::kNotFound);
  EXPECT_FALSE(
      loadKernelTunerCache(writePlain("garbage.json", "{\"cache\": [1,")).ok());
  EXPECT_FALSE(loadKernelTunerCache(writePlain("empty.json", "")).ok());
  EXPECT_FALSE(loadKernelTunerCache(writePlain("array.json", "[1, 2]")).ok());
  EXPECT_FALSE(
      loadKernelTunerCache(writePlain("noparams.json", R"({"cache": {}})"))
          .ok());
  // A value missing from tune_params.
  std::string bad = kTinyCache;
  bad.replace(bad.find("\"block\": 4, \"unroll\": true, \"dtype\": \"f32\""),
              11, "\"block\": 9,");
  EXPECT_FALSE(loadKernelTunerCache(writePlain("badvalue.json", bad)).ok());
  // Wrong types.
  EXPECT_FALSE(
      loadKernelTunerCache(
          writePlain("types.json", R"({"tune_params": {"a": 3}, "cache": {}})"))
          .ok());
  // No numeric time at all.
  EXPECT_FALSE(
      loadKernelTunerCache(
          writePlain("notimes.json",
                     R"({"tune_params": {"a": [1]}, "cache": {"1": {"a": 1,
                        "time": "InvalidConfig"}}})"))
          .ok());
  // A truncated gzip stream, and bytes that are neither gzip nor JSON.
  std::string gz = writeGzip("full.json.gz", kTinyCache);
  std::string bytes;
  {
    std::ifstream in(gz, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  StatusOr<ReplaySpace> trunc = loadKernelTunerCache(
      writePlain("trunc.json.gz", bytes.substr(0, bytes.size() / 2)));
  EXPECT_FALSE(trunc.ok());
  std::string corrupt = bytes;
  for (size_t i = 20; i < corrupt.size() - 10; i += 7)
    corrupt[i] = char(corrupt[i] ^ 0x5a);
  EXPECT_FALSE(
      loadKernelTunerCache(writePlain("corrupt.json.gz", corrupt)).ok());
  EXPECT_FALSE(
      loadKernelTunerCache(
          writePlain("binary.json", std::string("\x01\x02\xff\x00zz", 6)))
          .ok());
}

/// Brute force: the mean of min/best over every subset of size b.
double bruteForce(const std::vector<double> &t, int b) {
  int n = int(t.size());
  double opt = *std::min_element(t.begin(), t.end());
  double sum = 0;
  int count = 0;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != b)
      continue;
    double best = INFINITY;
    for (int i = 0; i < n; ++i)
      if (mask & (1u << i))
        best = std::min(best, t[i]);
    sum += opt / best;
    ++count;
  }
  return sum / count;
}

TEST(RandomSearchExpectation, MatchesBruteForceExactly) {
  std::vector<double> t = {3.0, 1.5, 7.0, 1.5, 2.25, 9.0, 4.0, 5.5, 2.0, 6.0};
  for (int b = 1; b <= int(t.size()); ++b)
    EXPECT_NEAR(randomSearchExpectation(t, b), bruteForce(t, b), 1e-12)
        << "budget " << b;
  EXPECT_EQ(randomSearchExpectation(t, 100), 1.0);
  EXPECT_EQ(randomSearchExpectation(t, 0), 0.0);
  EXPECT_EQ(randomSearchExpectation({}, 3), 0.0);
}

TEST(RandomSearchExpectation, MatchesMonteCarlo) {
  std::mt19937_64 gen(42);
  std::lognormal_distribution<double> dist(0.0, 0.7);
  std::vector<double> t(5000);
  for (double &v : t)
    v = dist(gen);
  double opt = *std::min_element(t.begin(), t.end());
  const int b = 30, trials = 4000;
  double sum = 0;
  std::vector<size_t> idx(t.size());
  for (size_t i = 0; i < idx.size(); ++i)
    idx[i] = i;
  for (int k = 0; k < trials; ++k) {
    double best = INFINITY;
    for (int j = 0; j < b; ++j) {
      size_t r = j + gen() % (idx.size() - j);
      std::swap(idx[j], idx[r]);
      best = std::min(best, t[idx[j]]);
    }
    sum += opt / best;
  }
  EXPECT_NEAR(randomSearchExpectation(t, b), sum / trials, 0.01);
}

} // namespace
