//===- TestUtil.h - Helpers for the tuning cache tests ----------*- C++ -*-===//
//
// A self-deleting temporary directory and builders for keys and records.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_AUTOTUNECACHE_TESTUTIL_H
#define TESSERA_TESTS_AUTOTUNECACHE_TESTUTIL_H

#include "tessera/autotune/TuningCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tessera::autotune::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") +
                       "/tessera-tuning-cache-test-XXXXXX";
    char *made = ::mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string &path() const { return path_; }
  std::string sub(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

inline std::unique_ptr<TuningCache> openCache(const std::string &dir) {
  auto cache = TuningCache::open(dir);
  EXPECT_TRUE(cache.ok()) << cache.status().toString();
  return cache.ok() ? std::move(cache).value() : nullptr;
}

inline DeviceId h100() { return DeviceId{"cuda", "NVIDIA H100", "sm_90", 132}; }

inline RecordKey makeKey(const std::string &kernel, int64_t m,
                         const std::string &dtype = "f16") {
  RecordKey key;
  key.kernel = kernel;
  key.kernelHash = "hash-of-" + kernel;
  key.compilerVersion = "0.1.0";
  key.device = h100();
  key.keyValues = {{"M", std::to_string(m)}, {"N", "1024"}, {"dtype:a", dtype}};
  return key;
}

inline TimingStats stats(double median, int64_t samples = 10) {
  return TimingStats{median,        median * 1.05, median * 0.9,
                     median * 0.02, samples,       "cuda-events"};
}

inline EvaluatedConfig measured(std::string bm, std::string bn, double median,
                                std::string at = "") {
  return EvaluatedConfig{{{"BM", bm}, {"BN", bn}}, stats(median), "", at};
}

inline EvaluatedConfig rejected(std::string bm, std::string bn, std::string why,
                                std::string at = "") {
  return EvaluatedConfig{{{"BM", bm}, {"BN", bn}}, std::nullopt, why, at};
}

/// A record over BM x BN in {64,128} x {64,128} with the given evaluations;
/// best is filled in as store() would compute it.
inline TuningRecord makeRecord(const RecordKey &key,
                               std::vector<EvaluatedConfig> evaluated,
                               const std::string &updatedAt = "") {
  TuningRecord rec;
  rec.key = key;
  rec.space = {{"BM", {"64", "128"}}, {"BN", {"64", "128"}}};
  rec.evaluated = std::move(evaluated);
  rec.strategy = "exhaustive";
  rec.tuningSeconds = 1.25;
  rec.updatedAt = updatedAt;
  // As store() does: an evaluation without a time was measured at
  // updatedAt.
  if (!updatedAt.empty())
    for (EvaluatedConfig &e : rec.evaluated)
      if (e.measuredAt.empty())
        e.measuredAt = updatedAt;
  const EvaluatedConfig *best = nullptr;
  for (const EvaluatedConfig &e : rec.evaluated)
    if (e.stats && configInSpace(e.config, rec.space) &&
        (!best || e.stats->medianMs < best->stats->medianMs))
      best = &e;
  if (best) {
    rec.best = best->config;
    rec.bestStats = *best->stats;
  }
  return rec;
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

/// Files in `dir` whose name contains `part`.
inline int countFiles(const std::string &dir, const std::string &part) {
  int n = 0;
  std::error_code ec;
  for (const auto &ent : std::filesystem::directory_iterator(dir, ec))
    if (ent.path().filename().string().find(part) != std::string::npos)
      ++n;
  return n;
}

inline bool anyWarningContains(const TuningCache &cache,
                               const std::string &text) {
  for (const std::string &w : cache.warnings())
    if (w.find(text) != std::string::npos)
      return true;
  return false;
}

} // namespace tessera::autotune::test

#endif // TESSERA_TESTS_AUTOTUNECACHE_TESTUTIL_H
