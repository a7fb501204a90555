//===- DiskCache.cpp - Compiled artifacts kept on disk --------------------===//

#include "Cache/DiskCache.h"

#include "tessera/Support/Files.h"

#include "tessera/Support/Hash.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tessera;
namespace fs = std::filesystem;

namespace {

/// File layout: magic, then three little-endian u64 (key length, payload
/// length, payload hash), the key, the payload.
constexpr std::string_view kMagic = "TESSERA-KERNEL-CACHE-1\n";
constexpr size_t kHeaderBytes = kMagic.size() + 3 * sizeof(uint64_t);

void putU64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(char(v >> (8 * i) & 0xff));
}
uint64_t getU64(const char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(uint8_t(p[i])) << (8 * i);
  return v;
}

/// The whole of `path`, or nothing when it cannot be read.
std::optional<std::string> slurp(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      ::close(fd);
      if (n < 0)
        return std::nullopt;
      return out;
    }
    out.append(buf, size_t(n));
  }
}

} // namespace

std::string DiskCache::defaultDirectory() {
  if (const char *env = std::getenv("TESSERA_CACHE_DIR"); env && *env)
    return std::string(env) + "/kernels";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/tessera/kernels";
  return "";
}

StatusOr<std::unique_ptr<DiskCache>> DiskCache::open(Options options) {
  std::string dir =
      options.directory.empty() ? defaultDirectory() : options.directory;
  if (dir.empty())
    return failedPrecondition("no kernel cache directory: neither "
                              "TESSERA_CACHE_DIR nor HOME is set");
  std::error_code ec;
  bool created = fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    return unavailable("cannot create the kernel cache directory '%s': %s",
                       dir.c_str(),
                       ec ? ec.message().c_str() : "not a directory");
  // The cache holds code this process will run: private to its owner.
  if (created)
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  return std::unique_ptr<DiskCache>(new DiskCache(dir, options.maxBytes));
}

std::string DiskCache::pathOf(std::string_view key) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.bin",
                (unsigned long long)fnv1a(key));
  return directory_ + "/" + name;
}

std::optional<std::string> DiskCache::get(std::string_view key) {
  std::string path = pathOf(key);
  std::optional<std::string> bytes = slurp(path);
  if (!bytes) {
    ++misses_;
    return std::nullopt;
  }
  auto reject = [&](bool damaged) -> std::optional<std::string> {
    ++rejected_;
    ++misses_;
    // A damaged file is removed (the next write replaces it anyway); one
    // that holds another key is left to that key.
    if (damaged)
      ::unlink(path.c_str());
    return std::nullopt;
  };
  const std::string &b = *bytes;
  if (b.size() < kHeaderBytes || b.compare(0, kMagic.size(), kMagic) != 0)
    return reject(true);
  const char *p = b.data() + kMagic.size();
  uint64_t keyLen = getU64(p), payloadLen = getU64(p + 8),
           hash = getU64(p + 16);
  if (keyLen > b.size() || payloadLen > b.size() ||
      kHeaderBytes + keyLen + payloadLen != b.size())
    return reject(true);
  std::string_view storedKey(b.data() + kHeaderBytes, keyLen);
  std::string_view payload(b.data() + kHeaderBytes + keyLen, payloadLen);
  if (fnv1a(payload) != hash)
    return reject(true);
  if (storedKey != key)
    return reject(false);
  // Recently used: the eviction order.
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  ++hits_;
  return std::string(payload);
}

Status DiskCache::put(std::string_view key, std::string_view payload) {
  std::string path = pathOf(key);
  std::string header(kMagic);
  putU64(header, key.size());
  putU64(header, payload.size());
  putU64(header, fnv1a(payload));
  Status s = writeFileAtomically(path, {header, key, payload});
  if (!s.ok())
    return Status(s.code(), "kernel cache: " + s.message());
  ++writes_;
  evict(path);
  return okStatus();
}

void DiskCache::evict(const std::string &keep) {
  struct Entry {
    std::string path;
    uint64_t bytes;
    fs::file_time_type time;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(directory_, ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path &p = it->path();
    if (p.extension() != ".bin")
      continue;
    std::error_code e1, e2;
    uint64_t bytes = it->file_size(e1);
    fs::file_time_type time = it->last_write_time(e2);
    if (e1 || e2)
      continue;
    total += bytes;
    entries.push_back({p.string(), bytes, time});
  }
  if (total <= maxBytes_)
    return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.time < b.time; });
  for (const Entry &e : entries) {
    if (total <= maxBytes_)
      break;
    if (e.path == keep)
      continue;
    if (::unlink(e.path.c_str()) == 0) {
      total -= e.bytes;
      ++evictions_;
    }
  }
}

DiskCache::Stats DiskCache::stats() const {
  return {hits_.load(), misses_.load(), rejected_.load(), writes_.load(),
          evictions_.load()};
}
