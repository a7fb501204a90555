//===- TuningCache.h - Persistent autotuning results ------------*- C++ -*-===//
//
// The persistent tuning cache: every tuning result the autotuner produced for
// a (kernel, compiler version, device, key values) combination, stored as
// versioned JSON files under one directory (schema: docs/tuning-cache.md).
// Many processes may read and store concurrently; stores are merged under a
// file lock and written atomically (temp file + rename). Plain C++: no LLVM,
// MLIR or JSON types. No exception escapes this API.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_AUTOTUNE_TUNINGCACHE_H
#define TESSERA_AUTOTUNE_TUNINGCACHE_H

#include "tessera/Support/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessera::autotune {

/// The device a record was tuned on.
struct DeviceId {
  std::string kind; ///< "cpu" or "cuda" (any non-empty string is accepted).
  std::string name; ///< e.g. "NVIDIA H100 80GB HBM3".
  std::string arch; ///< e.g. "sm_90".
  int smCount = 0;  ///< Streaming multiprocessors (cores on a CPU); >= 0.

  bool operator==(const DeviceId &) const = default;
};

/// Timing statistics of one measured configuration, in milliseconds.
struct TimingStats {
  double medianMs = 0, meanMs = 0, minMs = 0, stddevMs = 0;
  int64_t samples = 0;
  std::string method; ///< How it was measured, e.g. "cuda-events".

  bool operator==(const TimingStats &) const = default;
};

/// One configuration the tuner evaluated: either measured (`stats`) or
/// rejected (`invalidReason`, e.g. "exceeds shared memory"), never both.
struct EvaluatedConfig {
  std::map<std::string, std::string> config; ///< param -> value label.
  std::optional<TimingStats> stats;
  std::string invalidReason;
  /// When it was measured (ISO 8601 UTC, millisecond precision). Empty on
  /// store() means "the record's updatedAt". When two stores measured the
  /// same config, the later measuredAt wins (ties: the incoming one).
  std::string measuredAt;

  bool operator==(const EvaluatedConfig &) const = default;
};

/// What a record is keyed by.
struct RecordKey {
  std::string kernel;          ///< Kernel name.
  std::string kernelHash;      ///< Hash of the source without its autotune
                               ///< space (computed by the caller).
  std::string compilerVersion; ///< Tessera compiler version string.
  DeviceId device;
  /// Shape symbols, scalar values and tensor dtypes, e.g.
  /// {"M": "1024", "dtype:a": "f16"}.
  std::map<std::string, std::string> keyValues;

  bool operator==(const RecordKey &) const = default;
};

/// One tuning result.
struct TuningRecord {
  RecordKey key;
  /// The tuning space the record was last tuned with: param -> value labels.
  /// An empty space means "unconstrained" (every config is inside it).
  std::map<std::string, std::vector<std::string>> space;
  /// The best valid evaluated config inside `space` ({} when there is none)
  /// and its statistics. store() recomputes both from `evaluated`.
  std::map<std::string, std::string> best;
  TimingStats bestStats;
  /// Every evaluated configuration, including those outside `space` (kept
  /// so that a later edit of the space can reuse them).
  std::vector<EvaluatedConfig> evaluated;
  std::string strategy;     ///< Search strategy name.
  double tuningSeconds = 0; ///< Wall time of the tuning run (>= 0).
  std::string updatedAt;    ///< ISO 8601 UTC; store() fills it when empty.

  bool operator==(const TuningRecord &) const = default;
};

/// True when `config` lies inside `space`: it names exactly the parameters
/// of the space and each value is one of that parameter's labels. Every
/// config is inside an empty space.
bool configInSpace(
    const std::map<std::string, std::string> &config,
    const std::map<std::string, std::vector<std::string>> &space);

/// The persistent cache over one directory. Thread-safe; any number of
/// instances in any number of processes may share a directory.
class TuningCache {
public:
  ~TuningCache();
  TuningCache(const TuningCache &) = delete;
  TuningCache &operator=(const TuningCache &) = delete;

  /// Opens (creating) the cache directory: `dir`, or when empty
  /// `$TESSERA_CACHE_DIR/tuning`, else `~/.cache/tessera/tuning`. Fails only
  /// when the directory cannot be created or used; bad files inside it
  /// produce warnings when they are read.
  static StatusOr<std::unique_ptr<TuningCache>> open(std::string dir = "");

  /// The cache root (records live in `<directory>/v1/`).
  const std::string &directory() const;

  /// Exact lookup. The file of a kernel identity is read once and held in
  /// memory; it is re-read only when it changed on disk (checked at most
  /// every ~100 ms, or after reload()).
  /// Returns a copy of the record: its cost grows with the number of
  /// evaluated configs (a 48-config record is ~300 allocations).
  std::optional<TuningRecord> lookup(const RecordKey &key);

  /// The same lookup without the copy: an immutable snapshot shared with
  /// the cache (stays valid after later stores and reloads). The hot path
  /// for dispatch; null when there is no record.
  std::shared_ptr<const TuningRecord> lookupShared(const RecordKey &key);

  /// Same kernel identity, compiler version and device and the same set of
  /// key names, different key values: the record whose key values are
  /// nearest. Numeric values: |log2 a - log2 b| summed over keys (|a - b|
  /// when either is <= 0); non-numeric values must match exactly. An exact
  /// match has distance 0. nullopt if none.
  std::optional<TuningRecord> nearest(const RecordKey &key);

  /// Stores (merges) a record under an exclusive lock: re-reads the file,
  /// unions the evaluated lists by config (the later measurement of the
  /// same config wins), takes space/strategy/tuningSeconds from `record`,
  /// recomputes best within the space, and replaces the file atomically.
  /// Other records in the file are untouched. Fails (nothing written) on an
  /// invalid record, an I/O error, or when the file on disk has an unknown
  /// schema version.
  Status store(const TuningRecord &record);

  /// Every valid record in the cache (for listing / export).
  std::vector<TuningRecord> records();

  /// Writes every record (or those of one kernel name) to one JSON file
  /// (same schema as the cache files, without the file-level kernel).
  Status exportTo(const std::string &path, const std::string &kernel = "");
  /// The text exportTo() writes.
  StatusOr<std::string> exportText(const std::string &kernel = "");

  /// Merges a file written by exportTo(), a cache file, or every file of
  /// another cache directory into this cache. Records are validated (invalid
  /// ones are skipped with a warning); for a config measured on both sides
  /// the later measurement wins; space/strategy/tuningSeconds come from the
  /// record with the later updatedAt. A corrupt or unknown-version file is
  /// an error (for a directory: a warning, the file is skipped). Returns how
  /// many records were merged.
  StatusOr<size_t> importFrom(const std::string &path);
  /// importFrom() of the text of such a file; `origin` names it in errors
  /// and warnings.
  StatusOr<size_t> importText(const std::string &text,
                              const std::string &origin);

  /// Forgets the in-memory copies: the next lookup re-reads from disk.
  void reload();

  /// Warnings collected so far (corrupt files moved aside, unknown versions
  /// ignored, invalid records skipped).
  std::vector<std::string> warnings() const;

  /// The file that holds the records of `kernel`/`kernelHash` (whether or
  /// not it exists). For tools and tests.
  std::string filePathFor(const std::string &kernel,
                          const std::string &kernelHash) const;

  /// The schema version this build reads and writes.
  static constexpr int kSchemaVersion = 1;

  /// Test-only: when set to a number of milliseconds, store() sleeps that
  /// long after writing and fsyncing its temp file and before renaming it
  /// over the cache file (the kill-during-write test).
  static constexpr const char *kTestPauseEnv =
      "TESSERA_TUNING_CACHE_TEST_PAUSE_MS";

  struct Impl;

private:
  explicit TuningCache(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace tessera::autotune

#endif // TESSERA_AUTOTUNE_TUNINGCACHE_H
