//===- Hash.h - Stable content hashes ---------------------------*- C++ -*-===//
//
// FNV-1a over bytes: stable across runs, processes and machines (unlike
// std::hash), for cache keys and file names.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SUPPORT_HASH_H
#define TESSERA_SUPPORT_HASH_H

#include <cstdint>
#include <string_view>

namespace tessera {

inline constexpr uint64_t kFnv1aOffset = 1469598103934665603ull;

/// 64-bit FNV-1a of `bytes`, continuing from `h` (chain calls to hash
/// several pieces).
constexpr uint64_t fnv1a(std::string_view bytes, uint64_t h = kFnv1aOffset) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

} // namespace tessera

#endif // TESSERA_SUPPORT_HASH_H
