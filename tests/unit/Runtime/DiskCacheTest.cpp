//===- DiskCacheTest.cpp - The on-disk artifact cache ---------------------===//

#include "Cache/DiskCache.h"
#include "Cache/KernelArtifact.h"

#include "tessera/Support/Files.h"
#include "tessera/runtime/Device.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <vector>

using namespace tessera;
namespace fs = std::filesystem;

namespace {

struct Fixture {
  StatusOr<TempDir> dir = TempDir::create("diskcache");
  const TempDir &tmp = *dir;
  std::unique_ptr<DiskCache> open(uint64_t maxBytes = uint64_t(1) << 30) {
    auto c = DiskCache::open({tmp.file("kernels"), maxBytes});
    EXPECT_TRUE(c.ok()) << c.status().toString();
    return std::move(*c);
  }
};

std::string bytesOf(const std::string &path) {
  auto b = readFile(path);
  EXPECT_TRUE(b.ok()) << b.status().toString();
  return b.ok() ? *b : "";
}

TEST(DiskCache, StoresAndReturnsPayloadsInAPrivateDirectory) {
  Fixture f;
  auto cache = f.open();
  EXPECT_FALSE(cache->get("k1"));
  ASSERT_TRUE(cache->put("k1", std::string("cubin\0bytes", 11)).ok());
  auto got = cache->get("k1");
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, std::string("cubin\0bytes", 11));
  // Another process opening the same directory sees it.
  EXPECT_EQ(f.open()->get("k1"), got);
  EXPECT_EQ(cache->stats().hits, 1u);
  EXPECT_EQ(cache->stats().misses, 1u);
  struct stat st {};
  ASSERT_EQ(::stat(cache->directory().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

// Damaged files are never returned: each is a miss and is removed.
TEST(DiskCache, CorruptTruncatedAndForeignFilesAreMisses) {
  Fixture f;
  auto cache = f.open();
  const std::string payload(1000, 'x');
  std::string path = cache->pathOf("key");
  auto damage = [&](auto edit) {
    ASSERT_TRUE(cache->put("key", payload).ok());
    std::string b = bytesOf(path);
    edit(b);
    ASSERT_TRUE(writeFile(path, b).ok());
    EXPECT_FALSE(cache->get("key"));
    EXPECT_FALSE(fs::exists(path));
  };
  damage([](std::string &b) { b[b.size() - 10] ^= 1; });         // payload bit
  damage([](std::string &b) { b.resize(b.size() / 2); });        // truncated
  damage([](std::string &b) { b[0] = 'X'; });                    // magic
  damage([](std::string &b) { b = "not a cache file at all"; }); // foreign
  EXPECT_EQ(cache->stats().rejected, 4u);
  // A sound file that holds another key (a name collision) is a miss too,
  // and stays for its own key.
  ASSERT_TRUE(cache->put("other", "theirs").ok());
  fs::copy_file(cache->pathOf("other"), path,
                fs::copy_options::overwrite_existing);
  EXPECT_FALSE(cache->get("key"));
  EXPECT_TRUE(fs::exists(path));
  // A good write replaces whatever was there.
  ASSERT_TRUE(cache->put("key", payload).ok());
  EXPECT_EQ(cache->get("key"), payload);
}

// Writers racing on the same keys leave whole files: every read returns one
// writer's payload entirely, never a mixture or a partial file.
TEST(DiskCache, ConcurrentWritersLeaveWholeFiles) {
  Fixture f;
  auto cache = f.open();
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        std::string key = "k" + std::to_string(i % 5);
        std::string payload(4096 + 97 * t, char('a' + t));
        if (!cache->put(key, payload).ok())
          ++bad;
        if (auto got = cache->get(key)) {
          char c = (*got)[0];
          if (got->size() != 4096 + 97 * size_t(c - 'a') ||
              got->find_first_not_of(c) != std::string::npos)
            ++bad;
        }
      }
    });
  for (auto &th : threads)
    th.join();
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(cache->stats().rejected, 0u);
  // No temporary files are left behind.
  for (auto &e : fs::directory_iterator(cache->directory()))
    EXPECT_EQ(e.path().extension(), ".bin") << e.path();
}

// Over its bound the cache removes the least recently used files; a read
// counts as a use.
TEST(DiskCache, EvictsTheLeastRecentlyUsedOverItsBound) {
  Fixture f;
  const std::string payload(1000, 'p');
  auto cache = f.open(3500); // three entries fit (about 1.05 KB each)
  auto age = [&](const std::string &key, int seconds) {
    fs::last_write_time(cache->pathOf(key), fs::file_time_type::clock::now() -
                                                std::chrono::seconds(seconds));
  };
  ASSERT_TRUE(cache->put("a", payload).ok());
  age("a", 30);
  ASSERT_TRUE(cache->put("b", payload).ok());
  age("b", 20);
  ASSERT_TRUE(cache->put("c", payload).ok());
  age("c", 10);
  ASSERT_TRUE(cache->get("a")); // a is now the most recent
  ASSERT_TRUE(cache->put("d", payload).ok());
  EXPECT_FALSE(fs::exists(cache->pathOf("b")));
  EXPECT_TRUE(cache->get("a"));
  EXPECT_TRUE(cache->get("c"));
  EXPECT_TRUE(cache->get("d"));
  EXPECT_EQ(cache->stats().evictions, 1u);
}

TEST(DiskCache, DirectoryThatCannotBeMadeIsUnavailable) {
  Fixture f;
  ASSERT_TRUE(writeFile(f.tmp.file("plain"), "a file").ok());
  auto c = DiskCache::open({f.tmp.file("plain") + "/kernels", 1 << 20});
  EXPECT_EQ(c.status().code(), StatusCode::kUnavailable);
}

// A compiled kernel's image and launch facts survive packing; anything
// else is refused.
TEST(KernelArtifact, PacksAndUnpacks) {
  KernelArtifact a;
  a.image = std::string("\x7f"
                        "ELF\0cubin",
                        10);
  a.blockSize = 384;
  a.tileSharedBytes = 163840;
  a.staticSharedBytes = 64;
  a.tensorMaps = {{3, 1, {64, 128}, 128}, {4, 2, {1, 64, 64}, 64}};
  a.schedule = {true, true, 8};
  std::string packed = a.pack();
  auto b = KernelArtifact::unpack(packed);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->image, a.image);
  EXPECT_EQ(b->blockSize, 384);
  EXPECT_EQ(b->tileSharedBytes, 163840);
  EXPECT_EQ(b->staticSharedBytes, 64);
  ASSERT_EQ(b->tensorMaps.size(), 2u);
  EXPECT_EQ(b->tensorMaps[1].arg, 4);
  EXPECT_EQ(b->tensorMaps[1].param, 2);
  EXPECT_EQ(b->tensorMaps[1].box, (std::vector<int64_t>{1, 64, 64}));
  EXPECT_EQ(b->tensorMaps[1].swizzle, 64);
  EXPECT_TRUE(b->schedule.logicalGrid && b->schedule.persistent);
  EXPECT_EQ(b->schedule.group, 8);
  EXPECT_FALSE(KernelArtifact::unpack(""));
  EXPECT_FALSE(KernelArtifact::unpack("12\n{\"version\":1}"));
  EXPECT_FALSE(KernelArtifact::unpack(packed.substr(0, 20)));
  std::string otherVersion = packed;
  otherVersion.replace(otherVersion.find("\"version\":1"), 11, "\"version\":9");
  EXPECT_FALSE(KernelArtifact::unpack(otherVersion));
}

// The key names everything the code depends on: this build (or, for
// bundles, the version only), the device and its architecture, the
// source, the kernel and the specialisation.
TEST(KernelArtifact, KeysTellApartWhatTheCodeDependsOn) {
  Specialization s;
  s.constants["BLOCK_M"] = 128;
  std::string k = kernelArtifactKey("cuda", "sm_90a", 42, "gemm", s, true);
  EXPECT_NE(k.find(compilerVersion()), std::string::npos);
  EXPECT_NE(k.find(buildIdentity()), std::string::npos);
  EXPECT_FALSE(buildIdentity().empty());
  EXPECT_EQ(k, kernelArtifactKey("cuda", "sm_90a", 42, "gemm", s, true));
  EXPECT_NE(k, kernelArtifactKey("cuda", "sm_80", 42, "gemm", s, true));
  EXPECT_NE(k, kernelArtifactKey("cuda", "sm_90a", 43, "gemm", s, true));
  EXPECT_NE(k, kernelArtifactKey("cuda", "sm_90a", 42, "attention", s, true));
  Specialization t = s;
  t.unitStrideTensors = {"A"};
  EXPECT_NE(k, kernelArtifactKey("cuda", "sm_90a", 42, "gemm", t, true));
  std::string anyBuild =
      kernelArtifactKey("cuda", "sm_90a", 42, "gemm", s, false);
  EXPECT_NE(k, anyBuild);
  EXPECT_EQ(anyBuild.find(buildIdentity()), std::string::npos);
  EXPECT_NE(anyBuild.find(compilerVersion()), std::string::npos);
}

} // namespace
