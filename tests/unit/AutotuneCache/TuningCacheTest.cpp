//===- TuningCacheTest.cpp - Semantics of the persistent tuning cache -----===//
//
// Schema round trip, default directory, nearest-key lookup, merge rules,
// space edits, store-side validation, change detection across instances,
// lookup latency, and export/import.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

using namespace tessera;
using namespace tessera::autotune;
using namespace tessera::autotune::test;

namespace {

std::vector<TuningRecord> sorted(std::vector<TuningRecord> recs) {
  std::sort(recs.begin(), recs.end(),
            [](const TuningRecord &a, const TuningRecord &b) {
              return std::tie(a.key.kernel, a.key.keyValues) <
                     std::tie(b.key.kernel, b.key.keyValues);
            });
  return recs;
}

TEST(TuningCache, RoundTripThroughAFreshInstance) {
  TempDir dir;
  TuningRecord rec =
      makeRecord(makeKey("matmul", 1024),
                 {measured("64", "64", 2.5, "2025-01-02T03:04:05.000Z"),
                  measured("128", "64", 1.75, "2025-01-02T03:04:06.000Z"),
                  rejected("128", "128", "exceeds shared memory",
                           "2025-01-02T03:04:07.000Z")},
                 "2025-01-02T03:04:08.123Z");
  rec.strategy = "random-search";
  rec.tuningSeconds = 12.5;
  {
    auto cache = openCache(dir.path());
    ASSERT_TRUE(cache);
    Status st = cache->store(rec);
    ASSERT_TRUE(st.ok()) << st.toString();
    EXPECT_EQ(cache->lookup(rec.key), rec);
  }
  auto fresh = openCache(dir.path());
  ASSERT_TRUE(fresh);
  std::optional<TuningRecord> got = fresh->lookup(rec.key);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, rec);
  EXPECT_EQ(got->best,
            (std::map<std::string, std::string>{{"BM", "128"}, {"BN", "64"}}));
  EXPECT_TRUE(fresh->warnings().empty());

  // The file is a versioned document under v1/.
  std::string path = fresh->filePathFor("matmul", "hash-of-matmul");
  EXPECT_NE(path.find("/v1/"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(readFile(path), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["format"], "tessera-tuning-cache");
  EXPECT_EQ(j["schemaVersion"], 1);
  EXPECT_EQ(j["records"].size(), 1u);

  // Other key values, compiler versions and devices miss.
  RecordKey other = rec.key;
  other.keyValues["M"] = "2048";
  EXPECT_FALSE(fresh->lookup(other));
  other = rec.key;
  other.compilerVersion = "0.2.0";
  EXPECT_FALSE(fresh->lookup(other));
  other = rec.key;
  other.device.smCount = 114;
  EXPECT_FALSE(fresh->lookup(other));
}

TEST(TuningCache, StoreStampsMissingTimes) {
  TempDir dir;
  auto cache = openCache(dir.path());
  ASSERT_TRUE(cache);
  TuningRecord rec = makeRecord(makeKey("k", 64), {measured("64", "64", 1)});
  ASSERT_TRUE(cache->store(rec).ok());
  std::optional<TuningRecord> got = cache->lookup(rec.key);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->updatedAt.size(), 24u) << got->updatedAt; // ms, UTC.
  EXPECT_EQ(got->updatedAt.back(), 'Z');
  ASSERT_EQ(got->evaluated.size(), 1u);
  EXPECT_EQ(got->evaluated[0].measuredAt, got->updatedAt);
}

TEST(TuningCache, DefaultDirectoryFollowsTesseraCacheDir) {
  TempDir dir;
  const char *old = std::getenv("TESSERA_CACHE_DIR");
  std::string saved = old ? old : "";
  ::setenv("TESSERA_CACHE_DIR", dir.path().c_str(), 1);
  auto cache = openCache("");
  if (old)
    ::setenv("TESSERA_CACHE_DIR", saved.c_str(), 1);
  else
    ::unsetenv("TESSERA_CACHE_DIR");
  ASSERT_TRUE(cache);
  EXPECT_EQ(cache->directory(), dir.path() + "/tuning");
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() + "/tuning/v1"));
}

// `cache="~/..."` in @autotune is under the home directory, not a folder
// named `~` in the working directory.
TEST(TuningCache, TildeIsTheHomeDirectory) {
  TempDir dir;
  const char *old = std::getenv("HOME");
  std::string saved = old ? old : "";
  ::setenv("HOME", dir.path().c_str(), 1);
  auto cache = openCache("~/tuned/layernorm");
  if (old)
    ::setenv("HOME", saved.c_str(), 1);
  else
    ::unsetenv("HOME");
  ASSERT_TRUE(cache);
  EXPECT_EQ(cache->directory(), dir.path() + "/tuned/layernorm");
  EXPECT_TRUE(
      std::filesystem::is_directory(dir.path() + "/tuned/layernorm/v1"));
  EXPECT_FALSE(std::filesystem::exists("~/tuned"));
}

TEST(TuningCache, OpenFailsOnAnUnusableDirectory) {
  TempDir dir;
  writeFile(dir.sub("file"), "x");
  auto cache = TuningCache::open(dir.sub("file") + "/cache");
  EXPECT_FALSE(cache.ok());
}

TEST(TuningCache, NearestKeyValues) {
  TempDir dir;
  auto cache = openCache(dir.path());
  ASSERT_TRUE(cache);
  TuningRecord small =
      makeRecord(makeKey("mm", 1024), {measured("64", "64", 1)});
  TuningRecord large =
      makeRecord(makeKey("mm", 8192), {measured("128", "128", 9)});
  TuningRecord f32 =
      makeRecord(makeKey("mm", 2048, "f32"), {measured("64", "128", 3)});
  for (const TuningRecord *r : {&small, &large, &f32})
    ASSERT_TRUE(cache->store(*r).ok());

  // log2 distance: 2048 is 1 from 1024, 2 from 8192.
  std::optional<TuningRecord> got = cache->nearest(makeKey("mm", 2048));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->key.keyValues.at("M"), "1024");
  got = cache->nearest(makeKey("mm", 4096));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->key.keyValues.at("M"), "8192");
  // Exact matches have distance 0; dtypes must match exactly.
  got = cache->nearest(makeKey("mm", 8192));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->key.keyValues.at("M"), "8192");
  got = cache->nearest(makeKey("mm", 100000, "f32"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->key.keyValues.at("dtype:a"), "f32");
  EXPECT_FALSE(cache->nearest(makeKey("mm", 1024, "bf16")));
  // Other devices, compilers, kernels or key names never match.
  RecordKey key = makeKey("mm", 2048);
  key.device.arch = "sm_80";
  EXPECT_FALSE(cache->nearest(key));
  key = makeKey("mm", 2048);
  key.compilerVersion = "9";
  EXPECT_FALSE(cache->nearest(key));
  key = makeKey("mm", 2048);
  key.keyValues["K"] = "64";
  EXPECT_FALSE(cache->nearest(key));
  EXPECT_FALSE(cache->nearest(makeKey("other", 2048)));
}

TEST(TuningCache, MergeUnionsEvaluationsAndRecomputesBest) {
  TempDir dir;
  auto cache = openCache(dir.path());
  ASSERT_TRUE(cache);
  RecordKey key = makeKey("mm", 1024);
  TuningRecord bystander =
      makeRecord(makeKey("mm", 4096), {measured("64", "64", 7)},
                 "2025-01-01T00:00:00.000Z");
  ASSERT_TRUE(cache->store(bystander).ok());
  ASSERT_TRUE(cache
                  ->store(makeRecord(
                      key,
                      {measured("64", "64", 5, "2025-01-01T00:00:01.000Z"),
                       measured("64", "128", 3, "2025-01-01T00:00:01.000Z")},
                      "2025-01-01T00:00:01.000Z"))
                  .ok());
  // A second run: re-measures 64x128 (slower now), adds 128x64, and carries
  // a stale copy of 64x64 that must not override the stored one.
  TuningRecord second =
      makeRecord(key,
                 {measured("64", "128", 6, "2025-01-01T00:00:02.000Z"),
                  measured("128", "64", 4, "2025-01-01T00:00:02.000Z"),
                  measured("64", "64", 99, "2024-12-31T00:00:00.000Z"),
                  rejected("128", "128", "too many registers",
                           "2025-01-01T00:00:02.000Z")},
                 "2025-01-01T00:00:02.000Z");
  second.strategy = "bayes";
  ASSERT_TRUE(cache->store(second).ok());

  auto fresh = openCache(dir.path());
  std::optional<TuningRecord> got = fresh->lookup(key);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->evaluated.size(), 4u);
  std::map<std::string, double> medians;
  for (const EvaluatedConfig &e : got->evaluated)
    if (e.stats)
      medians[e.config.at("BM") + "x" + e.config.at("BN")] = e.stats->medianMs;
  EXPECT_EQ(medians["64x64"], 5);
  EXPECT_EQ(medians["64x128"], 6);
  EXPECT_EQ(medians["128x64"], 4);
  EXPECT_EQ(got->best,
            (std::map<std::string, std::string>{{"BM", "128"}, {"BN", "64"}}));
  EXPECT_EQ(got->bestStats.medianMs, 4);
  EXPECT_EQ(got->strategy, "bayes");
  EXPECT_EQ(got->updatedAt, "2025-01-01T00:00:02.000Z");
  // The other record of the file is untouched.
  EXPECT_EQ(fresh->lookup(bystander.key), bystander);
}

TEST(TuningCache, BestIsAddedToEvaluatedWhenMissing) {
  TempDir dir;
  auto cache = openCache(dir.path());
  TuningRecord rec = makeRecord(makeKey("mm", 1), {});
  rec.best = {{"BM", "64"}, {"BN", "128"}};
  rec.bestStats = stats(2);
  ASSERT_TRUE(cache->store(rec).ok());
  std::optional<TuningRecord> got = cache->lookup(rec.key);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->evaluated.size(), 1u);
  EXPECT_EQ(got->evaluated[0].config, rec.best);
  EXPECT_EQ(got->best, rec.best);
}

TEST(TuningCache, SpaceEditKeepsOldEvaluationsButPicksBestInside) {
  TempDir dir;
  auto cache = openCache(dir.path());
  RecordKey key = makeKey("mm", 1024);
  ASSERT_TRUE(cache
                  ->store(makeRecord(
                      key, {measured("64", "64", 1), measured("128", "64", 3)}))
                  .ok());
  // The space drops BM=64 and adds BM=256; the new run measures only 256.
  TuningRecord edited;
  edited.key = key;
  edited.space = {{"BM", {"128", "256"}}, {"BN", {"64", "128"}}};
  edited.evaluated = {measured("256", "64", 4)};
  edited.strategy = "exhaustive";
  ASSERT_TRUE(cache->store(edited).ok());

  auto fresh = openCache(dir.path());
  std::optional<TuningRecord> got = fresh->lookup(key);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->space, edited.space);
  EXPECT_EQ(got->evaluated.size(), 3u); // 64x64 kept, though outside.
  EXPECT_EQ(got->best,
            (std::map<std::string, std::string>{{"BM", "128"}, {"BN", "64"}}));
  EXPECT_EQ(got->bestStats.medianMs, 3);
  int inside = 0;
  for (const EvaluatedConfig &e : got->evaluated)
    inside += configInSpace(e.config, got->space);
  EXPECT_EQ(inside, 2);
}

TEST(TuningCache, StoreRejectsInvalidRecords) {
  TempDir dir;
  auto cache = openCache(dir.path());
  TuningRecord good = makeRecord(makeKey("mm", 1), {measured("64", "64", 1)});

  TuningRecord bad = good;
  bad.evaluated[0].stats->medianMs = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(cache->store(bad).code(), StatusCode::kInvalidArgument);
  bad = good;
  bad.evaluated[0].stats->minMs = -1;
  EXPECT_EQ(cache->store(bad).code(), StatusCode::kInvalidArgument);
  bad = good;
  bad.best = {{"BM", "32"}, {"BN", "64"}};
  EXPECT_EQ(cache->store(bad).code(), StatusCode::kInvalidArgument);
  bad = good;
  bad.key.kernelHash = "";
  EXPECT_EQ(cache->store(bad).code(), StatusCode::kInvalidArgument);
  bad = good;
  bad.evaluated.push_back(
      EvaluatedConfig{{{"BM", "128"}}, std::nullopt, "", ""});
  EXPECT_EQ(cache->store(bad).code(), StatusCode::kInvalidArgument);
  bad = good;
  bad.updatedAt = "yesterday";
  EXPECT_EQ(cache->store(bad).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(cache->lookup(good.key));
  EXPECT_TRUE(cache->store(good).ok());
}

TEST(TuningCache, SeesStoresOfOtherInstances) {
  TempDir dir;
  auto reader = openCache(dir.path());
  auto writer = openCache(dir.path());
  TuningRecord rec = makeRecord(makeKey("mm", 1), {measured("64", "64", 1)});
  EXPECT_FALSE(reader->lookup(rec.key));
  ASSERT_TRUE(writer->store(rec).ok());
  reader->reload();
  EXPECT_TRUE(reader->lookup(rec.key));

  TuningRecord rec2 = makeRecord(makeKey("mm", 2), {measured("64", "64", 1)});
  ASSERT_TRUE(writer->store(rec2).ok());
  // Without reload(): visible once the ~100 ms re-check interval passed.
  bool seen = false;
  for (int i = 0; i < 50 && !seen; ++i) {
    seen = reader->lookup(rec2.key).has_value();
    if (!seen)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(seen);
}

TEST(TuningCache, RepeatedLookupLatency) {
  TempDir dir;
  auto cache = openCache(dir.path());
  // A realistic record: 4 parameters, 48 evaluated configs.
  TuningRecord rec;
  rec.key = makeKey("mm", 4096);
  rec.space = {{"BM", {"32", "64", "128", "256"}},
               {"BN", {"32", "64", "128", "256"}},
               {"BK", {"32", "64", "128"}},
               {"STAGES", {"2", "3", "4", "5"}}};
  int n = 0;
  for (const std::string &bm : rec.space["BM"])
    for (const std::string &bn : rec.space["BN"])
      for (const std::string &bk : rec.space["BK"])
        if (n++ < 48)
          rec.evaluated.push_back(EvaluatedConfig{
              {{"BM", bm}, {"BN", bn}, {"BK", bk}, {"STAGES", "3"}},
              stats(1 + n * 0.01),
              "",
              ""});
  rec.strategy = "exhaustive";
  ASSERT_TRUE(cache->store(rec).ok());
  // Other records in the same file.
  for (int m = 4; m <= 32; ++m)
    ASSERT_TRUE(
        cache
            ->store(makeRecord(makeKey("mm", m), {measured("64", "64", 1),
                                                  measured("128", "64", 2)}))
            .ok());
  cache->reload();
  ASSERT_TRUE(cache->lookup(rec.key)); // Warm-up: loads the file.

  // Average microseconds of one call of `fn` over 10,000 calls.
  constexpr int kLookups = 10000;
  auto timeIt = [&](const char *what, auto &&fn) {
    size_t found = 0;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kLookups; ++i)
      found += fn();
    auto elapsed = std::chrono::steady_clock::now() - start;
    double us =
        std::chrono::duration<double, std::micro>(elapsed).count() / kLookups;
    std::printf("[ measured ] %s: %.3f us average over %d lookups\n", what, us,
                kLookups);
    return std::make_pair(us, found);
  };

  // The zero-copy hot path.
  auto [sharedUs, sharedFound] = timeIt("lookupShared, 48-config record", [&] {
    return cache->lookupShared(rec.key) != nullptr;
  });
  EXPECT_EQ(sharedFound, size_t(kLookups));
  EXPECT_LE(sharedUs, 50.0);

  // lookup() copies the record: a small record (2 configs).
  RecordKey small = makeKey("mm", 7);
  auto [smallUs, smallFound] = timeIt("lookup, 2-config record", [&] {
    return cache->lookup(small).has_value();
  });
  EXPECT_EQ(smallFound, size_t(kLookups));
  EXPECT_LE(smallUs, 50.0);

  // ... and the big one: the copy dominates (printed; the bound only
  // catches a lookup that re-reads the file).
  auto [bigUs, bigFound] = timeIt("lookup, 48-config record", [&] {
    return cache->lookup(rec.key).has_value();
  });
  EXPECT_EQ(bigFound, size_t(kLookups));
  EXPECT_LE(bigUs, 500.0);

  // A miss (same file).
  auto [missUs, missFound] = timeIt("lookup miss", [&] {
    return cache->lookup(makeKey("mm", 3)).has_value();
  });
  EXPECT_EQ(missFound, 0u);
  EXPECT_LE(missUs, 50.0);
}

TEST(TuningCache, ExportThenImportIntoAnEmptyCache) {
  TempDir src, dst, out;
  auto cache = openCache(src.path());
  std::vector<TuningRecord> stored = {
      makeRecord(makeKey("mm", 1024), {measured("64", "64", 1)},
                 "2025-02-01T00:00:00.000Z"),
      makeRecord(makeKey("mm", 2048),
                 {measured("64", "64", 2, "2025-02-01T00:00:00.000Z"),
                  rejected("128", "128", "smem", "2025-02-01T00:00:00.000Z")},
                 "2025-02-01T00:00:00.000Z"),
      makeRecord(makeKey("softmax", 512), {measured("128", "64", 0.5)},
                 "2025-02-01T00:00:00.000Z"),
  };
  for (const TuningRecord &r : stored)
    ASSERT_TRUE(cache->store(r).ok());
  std::string exported = out.sub("all.json");
  ASSERT_TRUE(cache->exportTo(exported).ok());

  auto target = openCache(dst.path());
  StatusOr<size_t> n = target->importFrom(exported);
  ASSERT_TRUE(n.ok()) << n.status().toString();
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(sorted(openCache(dst.path())->records()), sorted(cache->records()));
  // Importing again changes nothing.
  ASSERT_TRUE(target->importFrom(exported).ok());
  EXPECT_EQ(sorted(target->records()), sorted(cache->records()));

  // One kernel only.
  std::string mmOnly = out.sub("mm.json");
  ASSERT_TRUE(cache->exportTo(mmOnly, "mm").ok());
  TempDir dst2;
  auto target2 = openCache(dst2.path());
  n = target2->importFrom(mmOnly);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2u);
  for (const TuningRecord &r : target2->records())
    EXPECT_EQ(r.key.kernel, "mm");

  // Another cache directory.
  TempDir dst3;
  auto target3 = openCache(dst3.path());
  n = target3->importFrom(src.path());
  ASSERT_TRUE(n.ok()) << n.status().toString();
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(sorted(target3->records()), sorted(cache->records()));
}

TEST(TuningCache, ImportMergesByMeasurementTime) {
  TempDir src, dst, out;
  RecordKey key = makeKey("mm", 1024);
  auto a = openCache(src.path());
  ASSERT_TRUE(
      a->store(
           makeRecord(key,
                      {measured("64", "64", 1, "2025-03-01T00:00:00.000Z"),
                       measured("64", "128", 5, "2025-03-01T00:00:00.000Z")},
                      "2025-03-01T00:00:00.000Z"))
          .ok());
  ASSERT_TRUE(a->exportTo(out.sub("a.json")).ok());
  auto b = openCache(dst.path());
  TuningRecord newer =
      makeRecord(key, {measured("64", "64", 2, "2025-04-01T00:00:00.000Z")},
                 "2025-04-01T00:00:00.000Z");
  newer.strategy = "newer";
  ASSERT_TRUE(b->store(newer).ok());
  ASSERT_TRUE(b->importFrom(out.sub("a.json")).ok());
  std::optional<TuningRecord> got = b->lookup(key);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->evaluated.size(), 2u);
  EXPECT_EQ(got->evaluated[0].stats->medianMs, 2); // The newer measurement.
  EXPECT_EQ(got->strategy, "newer");
  EXPECT_EQ(got->best.at("BN"), "64");
}

TEST(TuningCache, ImportErrors) {
  TempDir dir, files;
  auto cache = openCache(dir.path());
  writeFile(files.sub("garbage.json"), "\x01\x02not json at all\xff");
  StatusOr<size_t> n = cache->importFrom(files.sub("garbage.json"));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kDataLoss);

  writeFile(files.sub("trunc.json"),
            "{\"format\":\"tessera-tuning-cache\",\"schemaVersion\":1,"
            "\"records\":[{\"key\":");
  n = cache->importFrom(files.sub("trunc.json"));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kDataLoss);

  writeFile(files.sub("future.json"),
            "{\"format\":\"tessera-tuning-cache\",\"schemaVersion\":7,"
            "\"records\":[]}");
  n = cache->importFrom(files.sub("future.json"));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kFailedPrecondition);

  n = cache->importFrom(files.sub("missing.json"));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(cache->records().empty());
}

} // namespace
