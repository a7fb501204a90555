//===- Files.h - Files, temporary folders and executables -------*- C++ -*-===//
//
// The few file-system helpers the tools share: whole-file reads and
// writes with Status errors, a private temporary folder removed with
// everything in it, and the test for an executable file.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SUPPORT_FILES_H
#define TESSERA_SUPPORT_FILES_H

#include "tessera/Support/Status.h"

#include <initializer_list>
#include <string>
#include <string_view>

namespace tessera {

/// The bytes of `path`; INTERNAL naming the file and the reason otherwise.
StatusOr<std::string> readFile(const std::string &path);

/// Writes `contents` to `path` (created or truncated).
Status writeFile(const std::string &path, std::string_view contents);

/// Replaces `path` with a file of the concatenated `parts` so that a reader
/// (or a concurrent writer) sees the old file or the whole new one, never a
/// part: the bytes go to a private temporary file beside it (mode `mode`),
/// which is synced and renamed over `path`. UNAVAILABLE naming the file and
/// the reason when it cannot be written (nothing is left behind).
Status writeFileAtomically(const std::string &path,
                           std::initializer_list<std::string_view> parts,
                           unsigned mode = 0600);

/// Whether `path` is a regular file this process may execute.
bool isExecutable(const std::string &path);

/// A private folder under $TMPDIR (else /tmp), named `<prefix>-XXXXXX`,
/// removed with everything in it on destruction. Movable, not copyable.
class TempDir {
public:
  static StatusOr<TempDir> create(std::string_view prefix);
  TempDir(TempDir &&other) noexcept;
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  TempDir &operator=(TempDir &&) = delete;
  ~TempDir();
  const std::string &path() const { return dir; }
  /// `path()/name`.
  std::string file(std::string_view name) const;

private:
  explicit TempDir(std::string dir) : dir(std::move(dir)) {}
  std::string dir;
};

} // namespace tessera

#endif // TESSERA_SUPPORT_FILES_H
