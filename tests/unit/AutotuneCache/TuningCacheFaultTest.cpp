//===- TuningCacheFaultTest.cpp - Concurrency and faults of the cache -----===//
//
// Many writer processes at once, a writer killed between its temp file and
// the rename, and damaged files: garbage, truncated, an unknown schema
// version, records with invalid fields, absurd nesting.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace tessera;
using namespace tessera::autotune;
using namespace tessera::autotune::test;

namespace {

std::string dataDir(const TuningCache &cache) {
  return cache.directory() + "/v1";
}

TEST(TuningCacheFaults, ManyProcessesStoringAtOnceLoseNothing) {
  constexpr int kProcs = 8, kPerProc = 20;
  TempDir dir;
  ASSERT_TRUE(openCache(dir.path())); // Creates the directory.
  std::vector<pid_t> children;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failures = 0;
      auto opened = TuningCache::open(dir.path());
      if (!opened.ok())
        ::_exit(100);
      TuningCache &cache = **opened;
      for (int i = 0; i < kPerProc; ++i) {
        // Two kernels, so two files are contended at once.
        std::string kernel = i % 2 ? "softmax" : "matmul";
        TuningRecord rec = makeRecord(
            makeKey(kernel, 1000 * p + i),
            {measured("64", "64", 1 + i), measured("128", "64", 2 + p)});
        failures += !cache.store(rec).ok();
      }
      ::_exit(failures);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }

  auto cache = openCache(dir.path());
  EXPECT_EQ(cache->records().size(), size_t(kProcs * kPerProc));
  for (int p = 0; p < kProcs; ++p)
    for (int i = 0; i < kPerProc; ++i) {
      std::string kernel = i % 2 ? "softmax" : "matmul";
      std::optional<TuningRecord> got =
          cache->lookup(makeKey(kernel, 1000 * p + i));
      ASSERT_TRUE(got) << kernel << " p=" << p << " i=" << i;
      EXPECT_EQ(got->evaluated.size(), 2u);
    }
  for (const char *kernel : {"matmul", "softmax"}) {
    nlohmann::json j = nlohmann::json::parse(
        readFile(cache->filePathFor(kernel, std::string("hash-of-") + kernel)),
        nullptr, false);
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["records"].size(), size_t(kProcs * kPerProc / 2));
  }
  EXPECT_EQ(countFiles(dataDir(*cache), ".tmp."), 0);
  EXPECT_TRUE(cache->warnings().empty());
}

TEST(TuningCacheFaults, WriterKilledBeforeRenameLeavesTheOldFile) {
  TempDir dir;
  auto cache = openCache(dir.path());
  TuningRecord before = makeRecord(makeKey("mm", 1), {measured("64", "64", 1)});
  ASSERT_TRUE(cache->store(before).ok());
  std::string path = cache->filePathFor("mm", "hash-of-mm");
  std::string oldText = readFile(path);

  TuningRecord lost = makeRecord(makeKey("mm", 2), {measured("64", "64", 2)});
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv(TuningCache::kTestPauseEnv, "10000", 1);
    auto child = TuningCache::open(dir.path());
    if (child.ok())
      (void)(*child)->store(lost);
    ::_exit(0);
  }
  // Wait until the child's temp file exists (it is then paused), kill it.
  bool paused = false;
  for (int i = 0; i < 500 && !paused; ++i) {
    paused = countFiles(dataDir(*cache), ".tmp.") > 0;
    if (!paused)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(paused) << "the writer never reached its pause";
  EXPECT_TRUE(WIFSIGNALED(status));

  // The old content, untouched; the stale temp file is ignored.
  EXPECT_EQ(readFile(path), oldText);
  EXPECT_EQ(countFiles(dataDir(*cache), ".tmp."), 1);
  auto fresh = openCache(dir.path());
  std::optional<TuningRecord> kept = fresh->lookup(before.key);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->evaluated, before.evaluated.size() == 1
                                 ? cache->lookup(before.key)->evaluated
                                 : kept->evaluated);
  EXPECT_FALSE(fresh->lookup(lost.key));
  EXPECT_EQ(fresh->records().size(), 1u);
  EXPECT_TRUE(fresh->warnings().empty());

  // A later store works and removes the stale temp file.
  TuningRecord after = makeRecord(makeKey("mm", 3), {measured("64", "64", 3)});
  ASSERT_TRUE(fresh->store(after).ok());
  EXPECT_EQ(countFiles(dataDir(*cache), ".tmp."), 0);
  auto again = openCache(dir.path());
  EXPECT_TRUE(again->lookup(before.key));
  EXPECT_TRUE(again->lookup(after.key));
  EXPECT_FALSE(again->lookup(lost.key));
}

TEST(TuningCacheFaults, GarbageFileIsMovedAsideAndRebuilt) {
  TempDir dir;
  auto cache = openCache(dir.path());
  std::string path = cache->filePathFor("mm", "hash-of-mm");
  std::string garbage;
  for (int i = 0; i < 4096; ++i)
    garbage += char((i * 7919) & 0xff);
  writeFile(path, garbage);

  EXPECT_FALSE(cache->lookup(makeKey("mm", 1)));
  EXPECT_TRUE(anyWarningContains(*cache, "moved aside"));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(countFiles(dataDir(*cache), ".corrupt-"), 1);

  TuningRecord rec = makeRecord(makeKey("mm", 1), {measured("64", "64", 1)});
  ASSERT_TRUE(cache->store(rec).ok());
  EXPECT_TRUE(openCache(dir.path())->lookup(rec.key));
}

TEST(TuningCacheFaults, GarbageFoundByStoreIsMovedAside) {
  TempDir dir;
  auto cache = openCache(dir.path());
  std::string path = cache->filePathFor("mm", "hash-of-mm");
  writeFile(path, "{\"format\": \"tessera-tuning-cache\", \"schemaVer");
  TuningRecord rec = makeRecord(makeKey("mm", 1), {measured("64", "64", 1)});
  ASSERT_TRUE(cache->store(rec).ok());
  EXPECT_TRUE(anyWarningContains(*cache, "moved aside"));
  EXPECT_EQ(countFiles(dataDir(*cache), ".corrupt-"), 1);
  EXPECT_TRUE(openCache(dir.path())->lookup(rec.key));
}

TEST(TuningCacheFaults, TruncatedFileIsMovedAsideAndRebuilt) {
  TempDir dir;
  std::string path;
  TuningRecord a = makeRecord(makeKey("mm", 1), {measured("64", "64", 1)});
  TuningRecord b = makeRecord(makeKey("mm", 2), {measured("64", "64", 2)});
  {
    auto cache = openCache(dir.path());
    ASSERT_TRUE(cache->store(a).ok());
    ASSERT_TRUE(cache->store(b).ok());
    path = cache->filePathFor("mm", "hash-of-mm");
  }
  std::string text = readFile(path);
  writeFile(path, text.substr(0, text.size() / 2));

  auto cache = openCache(dir.path());
  EXPECT_FALSE(cache->lookup(a.key));
  EXPECT_TRUE(anyWarningContains(*cache, "moved aside"));
  EXPECT_EQ(countFiles(dataDir(*cache), ".corrupt-"), 1);
  ASSERT_TRUE(cache->store(b).ok());
  auto fresh = openCache(dir.path());
  EXPECT_TRUE(fresh->lookup(b.key));
  EXPECT_FALSE(fresh->lookup(a.key));
}

TEST(TuningCacheFaults, UnknownSchemaVersionIsIgnoredAndNeverOverwritten) {
  TempDir dir;
  auto cache = openCache(dir.path());
  std::string path = cache->filePathFor("mm", "hash-of-mm");
  std::string future = R"({"format": "tessera-tuning-cache", "schemaVersion": 2,
  "kernel": "mm", "kernelHash": "hash-of-mm", "records": [{"shiny": "new"}]})";
  writeFile(path, future);

  EXPECT_FALSE(cache->lookup(makeKey("mm", 1)));
  EXPECT_TRUE(anyWarningContains(*cache, "unknown schemaVersion 2"));
  TuningRecord rec = makeRecord(makeKey("mm", 1), {measured("64", "64", 1)});
  Status st = cache->store(rec);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.toString();
  EXPECT_EQ(readFile(path), future);
  EXPECT_EQ(countFiles(dataDir(*cache), ".corrupt-"), 0);
  // Other kernels are unaffected.
  EXPECT_TRUE(
      cache->store(makeRecord(makeKey("other", 1), {measured("64", "64", 1)}))
          .ok());
  EXPECT_EQ(cache->records().size(), 1u);

  // A different version folder is never read.
  std::filesystem::create_directories(dir.path() + "/v2");
  writeFile(dir.path() + "/v2/x.json", "garbage");
  EXPECT_EQ(openCache(dir.path())->records().size(), 1u);
}

TEST(TuningCacheFaults, InvalidRecordsAreSkippedOthersKept) {
  TempDir dir;
  auto cache = openCache(dir.path());
  TuningRecord good = makeRecord(makeKey("mm", 1), {measured("64", "64", 1)},
                                 "2025-01-01T00:00:00.000Z");
  ASSERT_TRUE(cache->store(good).ok());
  std::string path = cache->filePathFor("mm", "hash-of-mm");
  nlohmann::json doc = nlohmann::json::parse(readFile(path));
  nlohmann::json valid = doc["records"][0];

  auto variant = [&](int m, auto &&edit) {
    nlohmann::json r = valid;
    r["key"]["keyValues"]["M"] = std::to_string(m);
    edit(r);
    doc["records"].push_back(r);
  };
  variant(2, [](nlohmann::json &r) {
    r["evaluated"][0]["stats"]["medianMs"] = -3.0;
  });
  variant(3, [](nlohmann::json &r) { r["best"]["BM"] = "4096"; });
  variant(4, [](nlohmann::json &r) { r["key"]["device"]["smCount"] = "many"; });
  variant(5, [](nlohmann::json &r) { r["bestStats"]["minMs"] = nullptr; });
  variant(6, [](nlohmann::json &r) { r["evaluated"] = "everything"; });
  variant(7, [](nlohmann::json &r) { r["updatedAt"] = "last tuesday"; });
  variant(8, [](nlohmann::json &r) { r.erase("space"); });
  variant(9, [](nlohmann::json &r) { r["key"]["kernelHash"] = "other"; });
  variant(10, [](nlohmann::json &r) { r = 42; });
  variant(11, [](nlohmann::json &r) { r["tuningSeconds"] = 1.5; }); // valid
  writeFile(path, doc.dump(2));

  auto fresh = openCache(dir.path());
  EXPECT_EQ(fresh->lookup(good.key), good);
  for (int m = 2; m <= 10; ++m)
    EXPECT_FALSE(fresh->lookup(makeKey("mm", m))) << "M=" << m;
  EXPECT_TRUE(fresh->lookup(makeKey("mm", 11)));
  EXPECT_EQ(fresh->warnings().size(), 9u);
  for (const std::string &w : fresh->warnings())
    EXPECT_NE(w.find("skipped"), std::string::npos) << w;
  EXPECT_EQ(fresh->records().size(), 2u);
}

TEST(TuningCacheFaults, DeeplyNestedAndOddFilesDoNotCrash) {
  TempDir dir;
  auto cache = openCache(dir.path());
  std::string path = cache->filePathFor("mm", "hash-of-mm");
  writeFile(path, std::string(200000, '[') + std::string(200000, ']'));
  EXPECT_FALSE(cache->lookup(makeKey("mm", 1)));
  EXPECT_TRUE(anyWarningContains(*cache, "moved aside"));

  for (const char *text : {"", "null", "[]", "42", "\"str\"", "{}",
                           R"({"format":"tessera-tuning-cache"})",
                           R"({"format":"tessera-tuning-cache",
                               "schemaVersion":1,"records":{}})",
                           R"({"format":"tessera-tuning-cache",
                               "schemaVersion":"1","records":[]})"}) {
    writeFile(path, text);
    cache->reload();
    EXPECT_FALSE(cache->lookup(makeKey("mm", 1))) << text;
    EXPECT_FALSE(std::filesystem::exists(path)) << text;
  }
  // An empty records list is a valid file.
  writeFile(path, R"({"format":"tessera-tuning-cache","schemaVersion":1,
                      "records":[]})");
  cache->reload();
  size_t warningsBefore = cache->warnings().size();
  EXPECT_FALSE(cache->lookup(makeKey("mm", 1)));
  EXPECT_EQ(cache->warnings().size(), warningsBefore);
  EXPECT_TRUE(std::filesystem::exists(path));
}

} // namespace
