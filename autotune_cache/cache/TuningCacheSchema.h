//===- TuningCacheSchema.h - JSON schema of the tuning cache ----*- C++ -*-===//
//
// Private to TesseraAutotuneCache: conversion between TuningRecord and the
// versioned JSON documents of docs/tuning-cache.md, record validation, the
// merge rules and ISO 8601 timestamps. Nothing here throws.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_AUTOTUNE_CACHE_TUNINGCACHESCHEMA_H
#define TESSERA_AUTOTUNE_CACHE_TUNINGCACHESCHEMA_H

#include "tessera/autotune/TuningCache.h"

#include <optional>
#include <string>
#include <vector>

namespace tessera::autotune::schema {

/// The value of the "format" field of every document.
inline constexpr const char *kFormatName = "tessera-tuning-cache";

/// The current time as ISO 8601 UTC with milliseconds,
/// "2025-01-31T12:34:56.789Z".
std::string nowIso8601();

/// Parses an ISO 8601 UTC timestamp "YYYY-MM-DDTHH:MM:SS[.f+]Z" and returns
/// it in the canonical millisecond form (so that canonical timestamps
/// compare correctly as strings); nullopt when malformed.
std::optional<std::string> normalizeTimestamp(const std::string &text);

/// "" when the record is valid, otherwise the reason. Checks identities,
/// the space, every timing statistic (finite, >= 0, samples >= 1, min <=
/// median/mean), evaluated entries (exactly one of stats / invalidReason),
/// timestamps (canonical form unless `allowEmptyTimes`), and that best lies
/// in the space and has valid statistics.
std::string validateRecord(const TuningRecord &record, bool allowEmptyTimes);

/// A length-prefixed, unambiguous string for everything in a RecordKey.
std::string canonicalKey(const RecordKey &key);
/// The same for a config (param -> value label).
std::string canonicalConfig(const std::map<std::string, std::string> &config);

/// Sets best/bestStats to the valid evaluation inside the space with the
/// smallest median (ties: smaller min, then earlier in the list); {} and
/// zero statistics when there is none.
void recomputeBest(TuningRecord &record);

/// Removes later duplicates of a config from `record.evaluated` keeping,
/// per config, the entry with the latest measuredAt (ties: the later one in
/// the list), and adds `best` as an evaluation when it is missing there.
void normalizeEvaluated(TuningRecord &record);

enum class MergeMode {
  /// store(): space, strategy and tuningSeconds come from the incoming
  /// record.
  kStore,
  /// importFrom(): they come from the record with the later updatedAt
  /// (ties: the incoming one).
  kImport,
};

/// Merges `incoming` into `existing` (same key): union of evaluated configs
/// (later measuredAt wins, ties: incoming), updatedAt = the later one, best
/// recomputed.
void mergeRecord(TuningRecord &existing, const TuningRecord &incoming,
                 MergeMode mode);

/// What a document parsed into.
struct ParsedDocument {
  enum class State {
    kOk,             ///< A current-version document (records may be empty).
    kCorrupt,        ///< Not JSON, truncated, or not a tuning-cache document.
    kUnknownVersion, ///< A tuning-cache document of another schemaVersion.
  };
  State state = State::kCorrupt;
  std::string error;                 ///< Why kCorrupt / kUnknownVersion.
  int64_t version = 0;               ///< The schemaVersion found.
  std::string kernel, kernelHash;    ///< File-level identity (cache files).
  std::vector<TuningRecord> records; ///< The valid records.
  std::vector<std::string> recordWarnings; ///< One per skipped record.
};

/// Parses a document; never throws, never recurses deeper than a fixed
/// nesting limit.
ParsedDocument parseDocument(const std::string &text);

/// Serializes records as a document. With a non-empty `kernel` the
/// document is a cache file of that kernel identity, otherwise an export.
std::string serializeDocument(const std::vector<const TuningRecord *> &records,
                              const std::string &kernel,
                              const std::string &kernelHash);

} // namespace tessera::autotune::schema

#endif // TESSERA_AUTOTUNE_CACHE_TUNINGCACHESCHEMA_H
