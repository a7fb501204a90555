//===- DiskCache.h - Compiled artifacts kept on disk ------------*- C++ -*-===//
//
// A directory of files, one per key, each holding the key and a payload
// with its length and content hash. A file whose magic, key, length or
// hash does not check out (truncated, corrupt, written by something else,
// or another key's after a name collision) is never returned: it is a
// miss, and a damaged file is removed. Writes go to a private temporary
// file that is renamed into place, so readers and concurrent writers see
// a whole file or none. The directory is created 0700; a read refreshes
// the file's time, and a write that takes the directory over its size
// bound removes the least recently used files first. Thread-safe; several
// processes may share a directory. Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_CACHE_DISKCACHE_H
#define TESSERA_RUNTIME_CACHE_DISKCACHE_H

#include "tessera/Support/Status.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

class DiskCache {
public:
  struct Options {
    /// Empty: defaultDirectory().
    std::string directory;
    /// The bound on the files' total size, in bytes.
    uint64_t maxBytes = uint64_t(2) << 30;
  };
  /// $TESSERA_CACHE_DIR/kernels, else $HOME/.cache/tessera/kernels (empty
  /// when neither variable is set).
  static std::string defaultDirectory();
  /// Opens (creating it 0700 when missing) the cache directory.
  static StatusOr<std::unique_ptr<DiskCache>> open(Options options);

  /// The payload stored under `key`, or nothing (a miss).
  std::optional<std::string> get(std::string_view key);
  /// Stores `payload` under `key` (replacing what was there), then keeps the
  /// directory within its bound.
  Status put(std::string_view key, std::string_view payload);

  struct Stats {
    uint64_t hits = 0, misses = 0, rejected = 0, writes = 0, evictions = 0;
  };
  Stats stats() const;
  const std::string &directory() const { return directory_; }
  /// The file that holds `key`.
  std::string pathOf(std::string_view key) const;

private:
  DiskCache(std::string directory, uint64_t maxBytes)
      : directory_(std::move(directory)), maxBytes_(maxBytes) {}
  /// Removes the least recently used files while the total is over the
  /// bound, never `keep`.
  void evict(const std::string &keep);

  std::string directory_;
  uint64_t maxBytes_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, rejected_{0}, writes_{0},
      evictions_{0};
};

} // namespace tessera

#endif // TESSERA_RUNTIME_CACHE_DISKCACHE_H
