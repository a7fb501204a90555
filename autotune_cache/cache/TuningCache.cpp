//===- TuningCache.cpp - Persistent autotuning results --------------------===//
//
// The file side of the tuning cache: one JSON file per kernel identity under
// `<root>/v<schemaVersion>/`, an in-memory copy per file refreshed when the
// file's identity (inode, size, mtime) changes, and stores that re-read,
// merge and atomically replace a file under an exclusive flock() on a
// separate `.lock` file. See README.md in this folder and
// docs/tuning-cache.md for the concurrency and fault model.
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/TuningCache.h"

#include "TuningCacheSchema.h"

#include "tessera/Support/Hash.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tessera;
using namespace tessera::autotune;
using namespace tessera::autotune::schema;
namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

namespace {

/// How often a held file is checked for changes on disk.
constexpr auto kRecheckInterval = std::chrono::milliseconds(100);

//===----------------------------------------------------------------------===//
// Small POSIX helpers
//===----------------------------------------------------------------------===//

/// Identifies one version of a file: a rename() produces a new inode, an
/// in-place edit a new size or mtime.
struct FileStamp {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtimeNs = 0;

  bool operator==(const FileStamp &) const = default;
};

FileStamp stampOf(const struct stat &st) {
  FileStamp s;
  s.exists = true;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.size = st.st_size;
  s.mtimeNs = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return s;
}

FileStamp statPath(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return FileStamp();
  return stampOf(st);
}

/// Reads a whole file. Returns 0 or an errno value (ENOENT: no file).
int readWholeFile(const std::string &path, std::string &out, FileStamp &stamp) {
  out.clear();
  stamp = FileStamp();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return err;
  }
  stamp = stampOf(st);
  out.reserve(size_t(std::max<off_t>(st.st_size, 0)));
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return err;
    }
    if (n == 0)
      break;
    out.append(buf, size_t(n));
  }
  ::close(fd);
  return 0;
}

std::string errnoText(int err) { return std::strerror(err); }

void fsyncDirectoryOf(const std::string &path) {
  std::string dir = fs::path(path).parent_path().string();
  if (dir.empty())
    dir = ".";
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

/// Writes `content` to a fresh temp file next to `path`, fsyncs it, and
/// renames it over `path`. Honours the test-only pause hook.
Status writeAtomically(const std::string &path, const std::string &content) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp =
      formatString("%s.tmp.%ld.%llu", path.c_str(), long(::getpid()),
                   (unsigned long long)counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return unavailable("cannot create '%s': %s", tmp.c_str(),
                       errnoText(errno).c_str());
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      return makeStatus(err == ENOSPC ? StatusCode::kResourceExhausted
                                      : StatusCode::kUnavailable,
                        "cannot write '%s': %s", tmp.c_str(),
                        errnoText(err).c_str());
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return unavailable("cannot flush '%s': %s", tmp.c_str(),
                       errnoText(err).c_str());
  }
  // Test-only hook (docs/tuning-cache.md): pause between the fsynced temp
  // file and the rename so that a test can kill the writer here.
  if (const char *pause = std::getenv(TuningCache::kTestPauseEnv)) {
    long ms = std::strtol(pause, nullptr, 10);
    if (ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return unavailable("cannot rename '%s' to '%s': %s", tmp.c_str(),
                       path.c_str(), errnoText(err).c_str());
  }
  fsyncDirectoryOf(path);
  return okStatus();
}

/// An exclusive flock() on `<file>.lock`, released on destruction (and by
/// the kernel when the process dies).
class FileLock {
public:
  FileLock() = default;
  FileLock(FileLock &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileLock &operator=(FileLock &&) = delete;
  ~FileLock() {
    if (fd_ >= 0)
      ::close(fd_); // Closing the descriptor releases the lock.
  }

  static StatusOr<FileLock> acquire(const std::string &lockPath) {
    FileLock lock;
    lock.fd_ = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock.fd_ < 0)
      return unavailable("cannot open lock file '%s': %s", lockPath.c_str(),
                         errnoText(errno).c_str());
    while (::flock(lock.fd_, LOCK_EX) != 0) {
      if (errno != EINTR)
        return unavailable("cannot lock '%s': %s", lockPath.c_str(),
                           errnoText(errno).c_str());
    }
    return lock;
  }

private:
  int fd_ = -1;
};

/// Deletes `<path>.tmp.*`. Only called while holding the file's lock: every
/// writer holds it while its temp file exists, so any such file left is
/// from a writer that died.
void removeStaleTemps(const std::string &path) {
  fs::path p(path);
  std::string dir = p.parent_path().string();
  std::string prefix = p.filename().string() + ".tmp.";
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return;
  while (struct dirent *ent = ::readdir(d)) {
    if (std::strncmp(ent->d_name, prefix.c_str(), prefix.size()) == 0)
      ::unlink((dir + "/" + ent->d_name).c_str());
  }
  ::closedir(d);
}

/// The `.json` files of a directory, sorted.
std::vector<std::string> jsonFilesIn(const std::string &dir) {
  std::vector<std::string> out;
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return out;
  while (struct dirent *ent = ::readdir(d)) {
    std::string name = ent->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0 &&
        name[0] != '.')
      out.push_back(dir + "/" + name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

/// Parses a whole string as a finite number.
std::optional<double> parseNumber(const std::string &s) {
  if (s.empty() || std::isspace((unsigned char)s[0]))
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
    return std::nullopt;
  return v;
}

/// Distance between the key values of two records with the same key names;
/// nullopt when a non-numeric value differs.
std::optional<double> keyDistance(const std::map<std::string, std::string> &a,
                                  const std::map<std::string, std::string> &b) {
  if (a.size() != b.size())
    return std::nullopt;
  double total = 0;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first)
      return std::nullopt;
    if (ia->second == ib->second)
      continue;
    std::optional<double> x = parseNumber(ia->second);
    std::optional<double> y = parseNumber(ib->second);
    if (!x || !y)
      return std::nullopt;
    if (*x > 0 && *y > 0)
      total += std::fabs(std::log2(*x) - std::log2(*y));
    else
      total += std::fabs(*x - *y);
  }
  return total;
}

/// A hash of every field of a key, computed without allocating.
size_t hashKey(const RecordKey &k) {
  std::hash<std::string_view> h;
  size_t seed = 0;
  auto mix = [&](size_t v) {
    seed ^= v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
  };
  mix(h(k.kernel));
  mix(h(k.kernelHash));
  mix(h(k.compilerVersion));
  mix(h(k.device.kind));
  mix(h(k.device.name));
  mix(h(k.device.arch));
  mix(size_t(k.device.smCount));
  for (const auto &[name, value] : k.keyValues) {
    mix(h(name));
    mix(h(value));
  }
  return seed;
}

/// The in-memory copy of one cache file. Records are immutable once
/// loaded, so lookupShared() can hand them out without copying.
struct FileEntry {
  bool loaded = false;
  FileStamp stamp;
  SteadyClock::time_point lastCheck;
  std::vector<std::shared_ptr<const TuningRecord>> records;
  std::unordered_multimap<size_t, size_t> index; ///< hashKey -> record

  void setRecords(std::vector<TuningRecord> recs) {
    records.clear();
    records.reserve(recs.size());
    index.clear();
    for (TuningRecord &r : recs) {
      index.emplace(hashKey(r.key), records.size());
      records.push_back(std::make_shared<const TuningRecord>(std::move(r)));
    }
  }

  const std::shared_ptr<const TuningRecord> *find(const RecordKey &key) const {
    auto [begin, end] = index.equal_range(hashKey(key));
    for (auto it = begin; it != end; ++it)
      if (records[it->second]->key == key)
        return &records[it->second];
    return nullptr;
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// TuningCache::Impl
//===----------------------------------------------------------------------===//

struct TuningCache::Impl {
  std::string root;    ///< The cache directory.
  std::string dataDir; ///< root/v<kSchemaVersion>.

  mutable std::mutex mutex; ///< Guards everything below.
  std::unordered_map<std::string, FileEntry> files; ///< By path.
  std::vector<std::string> warnings;
  /// The kernel identity of the last lookup and its file (a memo that
  /// keeps repeated lookups free of string building).
  std::string lastKernel, lastKernelHash;
  FileEntry *lastEntry = nullptr;
  std::string lastPath;

  /// The fresh entry of a kernel identity. Called with `mutex` held.
  FileEntry &entryFor(const std::string &kernel,
                      const std::string &kernelHash) {
    if (!lastEntry || kernel != lastKernel || kernelHash != lastKernelHash) {
      lastPath = pathFor(kernel, kernelHash);
      lastEntry = &files[lastPath];
      lastKernel = kernel;
      lastKernelHash = kernelHash;
    }
    return fresh(lastPath);
  }

  void warn(std::string msg) {
    std::lock_guard<std::mutex> guard(mutex);
    warnings.push_back(std::move(msg));
  }

  /// Moves a corrupt file aside. The caller holds the file's lock.
  void moveAside(const std::string &path, const std::string &why,
                 std::vector<std::string> &warns) {
    std::string stamp = nowIso8601();
    stamp.erase(std::remove_if(stamp.begin(), stamp.end(),
                               [](char c) { return c == '-' || c == ':'; }),
                stamp.end());
    std::string aside = formatString("%s.corrupt-%s-%ld", path.c_str(),
                                     stamp.c_str(), long(::getpid()));
    if (::rename(path.c_str(), aside.c_str()) == 0)
      warns.push_back(formatString("%s: %s; moved aside to %s", path.c_str(),
                                   why.c_str(), aside.c_str()));
    else
      warns.push_back(formatString("%s: %s; could not move it aside (%s), "
                                   "ignoring it",
                                   path.c_str(), why.c_str(),
                                   errnoText(errno).c_str()));
  }

  /// (Re)loads `entry` from `path`. Called with `mutex` held; warnings go
  /// straight into `warnings`.
  void load(const std::string &path, FileEntry &entry) {
    entry.loaded = true;
    entry.lastCheck = SteadyClock::now();
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::string text;
      FileStamp stamp;
      int err = readWholeFile(path, text, stamp);
      if (err == ENOENT) {
        entry.stamp = FileStamp();
        entry.setRecords({});
        return;
      }
      if (err != 0) {
        entry.stamp = statPath(path);
        entry.setRecords({});
        warnings.push_back(formatString("%s: cannot read (%s); ignored",
                                        path.c_str(), errnoText(err).c_str()));
        return;
      }
      ParsedDocument doc = parseDocument(text);
      if (doc.state == ParsedDocument::State::kOk) {
        for (const std::string &w : doc.recordWarnings)
          warnings.push_back(path + ": " + w);
        entry.stamp = stamp;
        entry.setRecords(std::move(doc.records));
        return;
      }
      if (doc.state == ParsedDocument::State::kUnknownVersion) {
        warnings.push_back(
            formatString("%s: unknown %s; ignored (and never overwritten)",
                         path.c_str(), doc.error.c_str()));
        entry.stamp = stamp;
        entry.setRecords({});
        return;
      }
      // Corrupt: move it aside, but only under the file's lock and only if
      // it is still the same file (a writer may have replaced it since).
      StatusOr<FileLock> lock = FileLock::acquire(path + ".lock");
      if (!lock.ok()) {
        warnings.push_back(formatString("%s: %s; ignored (%s)", path.c_str(),
                                        doc.error.c_str(),
                                        lock.status().message().c_str()));
        entry.stamp = stamp;
        entry.setRecords({});
        return;
      }
      if (statPath(path) == stamp) {
        moveAside(path, doc.error, warnings);
        entry.stamp = statPath(path);
        entry.setRecords({});
        return;
      }
      // Replaced meanwhile: read the new file once more.
    }
    entry.stamp = statPath(path);
    entry.setRecords({});
  }

  /// The entry for `path`, refreshed when due. Called with `mutex` held.
  FileEntry &fresh(const std::string &path) {
    FileEntry &entry = files[path];
    if (!entry.loaded) {
      load(path, entry);
      return entry;
    }
    auto now = SteadyClock::now();
    if (now - entry.lastCheck < kRecheckInterval)
      return entry;
    entry.lastCheck = now;
    if (!(statPath(path) == entry.stamp))
      load(path, entry);
    return entry;
  }

  /// Merges `incoming` (all of one kernel identity, already validated and
  /// normalized) into the file at `path` under its lock.
  Status merge(const std::string &path, const std::string &kernel,
               const std::string &kernelHash,
               const std::vector<TuningRecord> &incoming, MergeMode mode) {
    std::vector<std::string> warns;
    std::vector<TuningRecord> records;
    FileStamp written;
    Status result = mergeLocked(path, kernel, kernelHash, incoming, mode, warns,
                                records, written);
    // The file lock is released: never wait for it while holding `mutex`
    // (load() takes them in the other order). If another writer replaced the
    // file meanwhile, the stamp differs and the next check reloads it.
    std::lock_guard<std::mutex> guard(mutex);
    for (std::string &w : warns)
      warnings.push_back(std::move(w));
    if (result.ok()) {
      FileEntry &entry = files[path];
      entry.loaded = true;
      entry.stamp = written;
      entry.lastCheck = SteadyClock::now();
      entry.setRecords(std::move(records));
    }
    return result;
  }

  Status mergeLocked(const std::string &path, const std::string &kernel,
                     const std::string &kernelHash,
                     const std::vector<TuningRecord> &incoming, MergeMode mode,
                     std::vector<std::string> &warns,
                     std::vector<TuningRecord> &records, FileStamp &written) {
    TESSERA_ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(path + ".lock"));
    removeStaleTemps(path);

    std::string text;
    FileStamp stamp;
    int err = readWholeFile(path, text, stamp);
    if (err != 0 && err != ENOENT)
      return unavailable("cannot read '%s': %s", path.c_str(),
                         errnoText(err).c_str());
    if (err == 0) {
      ParsedDocument doc = parseDocument(text);
      switch (doc.state) {
      case ParsedDocument::State::kOk:
        for (const std::string &w : doc.recordWarnings)
          warns.push_back(path + ": " + w + " (dropped by this store)");
        records = std::move(doc.records);
        break;
      case ParsedDocument::State::kUnknownVersion:
        warns.push_back(formatString("%s: unknown %s; not overwritten",
                                     path.c_str(), doc.error.c_str()));
        return failedPrecondition(
            "'%s' has an unknown %s; refusing to overwrite it", path.c_str(),
            doc.error.c_str());
      case ParsedDocument::State::kCorrupt:
        moveAside(path, doc.error, warns);
        break;
      }
    }

    std::unordered_map<std::string, size_t> index;
    for (size_t i = 0; i < records.size(); ++i)
      index.emplace(canonicalKey(records[i].key), i);
    for (const TuningRecord &rec : incoming) {
      auto [it, inserted] =
          index.emplace(canonicalKey(rec.key), records.size());
      if (inserted) {
        records.push_back(rec);
        recomputeBest(records.back());
      } else {
        mergeRecord(records[it->second], rec, mode);
      }
    }

    std::vector<const TuningRecord *> ptrs;
    ptrs.reserve(records.size());
    for (const TuningRecord &r : records)
      ptrs.push_back(&r);
    TESSERA_RETURN_IF_ERROR(
        writeAtomically(path, serializeDocument(ptrs, kernel, kernelHash)));

    // Still under the file lock: this stamp is the file just written.
    written = statPath(path);
    return okStatus();
  }

  std::string pathFor(const std::string &kernel,
                      const std::string &kernelHash) const {
    std::string safe;
    for (char c : kernel.substr(0, 64))
      safe +=
          (std::isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.')
              ? c
              : '_';
    if (safe.empty() || safe[0] == '.')
      safe.insert(0, "k");
    uint64_t h = fnv1a(kernelHash, fnv1a(kernel + std::string(1, '\0')));
    return formatString("%s/%s-%016llx.json", dataDir.c_str(), safe.c_str(),
                        (unsigned long long)h);
  }
};

//===----------------------------------------------------------------------===//
// TuningCache
//===----------------------------------------------------------------------===//

TuningCache::TuningCache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TuningCache::~TuningCache() = default;

namespace {
/// $HOME, else the user's home directory from the password database ("" if
/// neither is known).
std::string homeDirectory() {
  const char *home = std::getenv("HOME");
  if (home && *home)
    return home;
  struct passwd pw, *result = nullptr;
  char buf[4096];
  if (::getpwuid_r(::getuid(), &pw, buf, sizeof(buf), &result) == 0 && result &&
      result->pw_dir)
    return result->pw_dir;
  return "";
}
} // namespace

StatusOr<std::unique_ptr<TuningCache>> TuningCache::open(std::string dir) {
  try {
    // `~` and `~/...` (an @autotune(cache="~/...") argument) are the home
    // directory, as a shell would read them.
    if (dir == "~" || dir.rfind("~/", 0) == 0) {
      std::string homeDir = homeDirectory();
      if (homeDir.empty())
        return failedPrecondition("cannot expand '%s': HOME is not set",
                                  dir.c_str());
      dir = homeDir + dir.substr(1);
    }
    if (dir.empty()) {
      const char *env = std::getenv("TESSERA_CACHE_DIR");
      if (env && *env) {
        dir = std::string(env) + "/tuning";
      } else {
        std::string homeDir = homeDirectory();
        if (homeDir.empty())
          return failedPrecondition("no cache directory: neither "
                                    "TESSERA_CACHE_DIR nor HOME is set");
        dir = homeDir + "/.cache/tessera/tuning";
      }
    }
    while (dir.size() > 1 && dir.back() == '/')
      dir.pop_back();
    auto impl = std::make_unique<Impl>();
    impl->root = dir;
    impl->dataDir = formatString("%s/v%d", dir.c_str(), kSchemaVersion);
    std::error_code ec;
    fs::create_directories(impl->dataDir, ec);
    if (!fs::is_directory(impl->dataDir))
      return unavailable("cannot create the tuning cache directory '%s': %s",
                         impl->dataDir.c_str(),
                         ec ? ec.message().c_str() : "not a directory");
    return std::unique_ptr<TuningCache>(new TuningCache(std::move(impl)));
  } catch (const std::exception &e) {
    return internalError("TuningCache::open: %s", e.what());
  }
}

const std::string &TuningCache::directory() const { return impl_->root; }

std::string TuningCache::filePathFor(const std::string &kernel,
                                     const std::string &kernelHash) const {
  return impl_->pathFor(kernel, kernelHash);
}

std::optional<TuningRecord> TuningCache::lookup(const RecordKey &key) {
  try {
    if (std::shared_ptr<const TuningRecord> rec = lookupShared(key))
      return *rec;
    return std::nullopt;
  } catch (const std::exception &e) {
    impl_->warn(std::string("lookup failed: ") + e.what());
    return std::nullopt;
  }
}

std::shared_ptr<const TuningRecord>
TuningCache::lookupShared(const RecordKey &key) {
  try {
    std::lock_guard<std::mutex> guard(impl_->mutex);
    FileEntry &entry = impl_->entryFor(key.kernel, key.kernelHash);
    const std::shared_ptr<const TuningRecord> *rec = entry.find(key);
    return rec ? *rec : nullptr;
  } catch (...) {
    // Only std::bad_alloc can get here; warn() would throw it again.
    return nullptr;
  }
}

std::optional<TuningRecord> TuningCache::nearest(const RecordKey &key) {
  try {
    std::lock_guard<std::mutex> guard(impl_->mutex);
    FileEntry &entry = impl_->entryFor(key.kernel, key.kernelHash);
    const TuningRecord *best = nullptr;
    double bestDistance = 0;
    for (const std::shared_ptr<const TuningRecord> &ptr : entry.records) {
      const TuningRecord &rec = *ptr;
      const RecordKey &k = rec.key;
      if (k.kernel != key.kernel || k.kernelHash != key.kernelHash ||
          k.compilerVersion != key.compilerVersion || !(k.device == key.device))
        continue;
      std::optional<double> d = keyDistance(k.keyValues, key.keyValues);
      if (d && (!best || *d < bestDistance)) {
        best = &rec;
        bestDistance = *d;
      }
    }
    if (!best)
      return std::nullopt;
    return *best;
  } catch (const std::exception &e) {
    impl_->warn(std::string("nearest failed: ") + e.what());
    return std::nullopt;
  }
}

Status TuningCache::store(const TuningRecord &record) {
  try {
    TuningRecord rec = record;
    std::string now = nowIso8601();
    if (rec.updatedAt.empty())
      rec.updatedAt = now;
    std::string invalid = validateRecord(rec, /*allowEmptyTimes=*/true);
    if (!invalid.empty())
      return invalidArgument("invalid tuning record for '%s': %s",
                             rec.key.kernel.c_str(), invalid.c_str());
    rec.updatedAt = *normalizeTimestamp(rec.updatedAt);
    for (EvaluatedConfig &e : rec.evaluated)
      e.measuredAt = e.measuredAt.empty() ? rec.updatedAt
                                          : *normalizeTimestamp(e.measuredAt);
    normalizeEvaluated(rec);
    recomputeBest(rec);
    return impl_->merge(impl_->pathFor(rec.key.kernel, rec.key.kernelHash),
                        rec.key.kernel, rec.key.kernelHash, {rec},
                        MergeMode::kStore);
  } catch (const std::exception &e) {
    return internalError("TuningCache::store: %s", e.what());
  }
}

std::vector<TuningRecord> TuningCache::records() {
  try {
    std::vector<TuningRecord> out;
    std::vector<std::string> paths = jsonFilesIn(impl_->dataDir);
    std::lock_guard<std::mutex> guard(impl_->mutex);
    for (const std::string &path : paths) {
      FileEntry &entry = impl_->fresh(path);
      for (const std::shared_ptr<const TuningRecord> &rec : entry.records)
        out.push_back(*rec);
    }
    return out;
  } catch (const std::exception &e) {
    impl_->warn(std::string("records failed: ") + e.what());
    return {};
  }
}

StatusOr<std::string> TuningCache::exportText(const std::string &kernel) {
  try {
    std::vector<TuningRecord> all = records();
    std::vector<const TuningRecord *> ptrs;
    for (const TuningRecord &r : all)
      if (kernel.empty() || r.key.kernel == kernel)
        ptrs.push_back(&r);
    return serializeDocument(ptrs, "", "");
  } catch (const std::exception &e) {
    return internalError("TuningCache::exportText: %s", e.what());
  }
}

Status TuningCache::exportTo(const std::string &path,
                             const std::string &kernel) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, exportText(kernel));
  return writeAtomically(path, text).withContext("exporting the tuning cache");
}

namespace {
/// Merges imported records into `impl`'s cache: one locked merge per
/// destination file. Returns how many were merged.
StatusOr<size_t> mergeImported(TuningCache::Impl &impl,
                               std::vector<TuningRecord> incoming) {
  std::map<std::string, std::vector<TuningRecord>> byFile;
  for (TuningRecord &r : incoming)
    byFile[impl.pathFor(r.key.kernel, r.key.kernelHash)].push_back(
        std::move(r));
  size_t merged = 0;
  for (auto &[file, recs] : byFile) {
    TESSERA_RETURN_IF_ERROR(impl.merge(file, recs.front().key.kernel,
                                       recs.front().key.kernelHash, recs,
                                       MergeMode::kImport));
    merged += recs.size();
  }
  return merged;
}
} // namespace

StatusOr<size_t> TuningCache::importText(const std::string &text,
                                         const std::string &origin) {
  try {
    ParsedDocument doc = parseDocument(text);
    if (doc.state == ParsedDocument::State::kCorrupt)
      return dataLoss("cannot import '%s': %s", origin.c_str(),
                      doc.error.c_str());
    if (doc.state == ParsedDocument::State::kUnknownVersion)
      return failedPrecondition("cannot import '%s': %s", origin.c_str(),
                                doc.error.c_str());
    for (const std::string &w : doc.recordWarnings)
      impl_->warn("import: " + origin + ": " + w);
    return mergeImported(*impl_, std::move(doc.records));
  } catch (const std::exception &e) {
    return internalError("TuningCache::importText: %s", e.what());
  }
}

StatusOr<size_t> TuningCache::importFrom(const std::string &path) {
  try {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      std::string text;
      FileStamp stamp;
      int err = readWholeFile(path, text, stamp);
      if (err == ENOENT)
        return notFound("cannot import '%s': no such file", path.c_str());
      if (err != 0)
        return unavailable("cannot import '%s': %s", path.c_str(),
                           errnoText(err).c_str());
      return importText(text, path);
    }
    std::vector<TuningRecord> incoming;
    std::string dir = path;
    std::string versioned =
        formatString("%s/v%d", path.c_str(), kSchemaVersion);
    if (fs::is_directory(versioned, ec))
      dir = versioned;
    for (const std::string &file : jsonFilesIn(dir)) {
      std::string text;
      FileStamp stamp;
      int err = readWholeFile(file, text, stamp);
      if (err != 0) {
        impl_->warn(formatString("import: cannot read %s (%s); skipped",
                                 file.c_str(), errnoText(err).c_str()));
        continue;
      }
      ParsedDocument doc = parseDocument(text);
      if (doc.state != ParsedDocument::State::kOk) {
        impl_->warn(formatString("import: %s: %s; skipped", file.c_str(),
                                 doc.error.c_str()));
        continue;
      }
      for (const std::string &w : doc.recordWarnings)
        impl_->warn("import: " + file + ": " + w);
      for (TuningRecord &r : doc.records)
        incoming.push_back(std::move(r));
    }
    return mergeImported(*impl_, std::move(incoming));
  } catch (const std::exception &e) {
    return internalError("TuningCache::importFrom: %s", e.what());
  }
}

void TuningCache::reload() {
  std::lock_guard<std::mutex> guard(impl_->mutex);
  impl_->files.clear();
  impl_->lastEntry = nullptr;
}

std::vector<std::string> TuningCache::warnings() const {
  std::lock_guard<std::mutex> guard(impl_->mutex);
  return impl_->warnings;
}
