//===- Diagnostics.h - Source files and diagnostics -------------*- C++ -*-===//
//
// Source text is registered with a SourceManager; locations are (file, line,
// column), 1-based. The DiagnosticEngine collects errors, warnings and notes
// and renders them as
//
//   file.tile:12:9: error: unknown builtin 'tile.lod'
//       x = tile.lod(ptr)
//           ^~~~~~~~
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_FRONTEND_DIAGNOSTICS_H
#define TESSERA_FRONTEND_DIAGNOSTICS_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

/// A position in a registered source file. `line == 0` means unknown.
struct SourceLoc {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  /// Length of the highlighted range in columns (0 or 1 draws a caret only).
  uint32_t length = 1;

  bool isValid() const { return line != 0; }
};

/// Owns the text of every source file a compilation reads.
class SourceManager {
public:
  /// Registers `text` under `name` and returns its file id. The text is copied.
  uint32_t addFile(std::string name, std::string text);
  std::string_view getName(uint32_t file) const;
  std::string_view getText(uint32_t file) const;
  /// The text of 1-based `line` without its newline ("" if out of range).
  std::string_view getLine(uint32_t file, uint32_t line) const;

private:
  struct File {
    std::string name;
    std::string text;
    std::vector<uint32_t> lineStarts;
  };
  std::vector<std::unique_ptr<File>> files_;
};

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity;
  SourceLoc loc;
  std::string message;
};

/// Collects diagnostics. Not thread-safe; one engine per compilation.
class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &sm) : sm_(sm) {}

  void error(SourceLoc loc, std::string message);
  void warning(SourceLoc loc, std::string message);
  void note(SourceLoc loc, std::string message);

  bool hasErrors() const { return errorCount_ != 0; }
  unsigned errorCount() const { return errorCount_; }
  /// True once `maxErrors` errors were reported; later errors are dropped
  /// and the parser should stop.
  bool tooManyErrors() const { return errorCount_ >= maxErrors_; }
  void setMaxErrors(unsigned n) { maxErrors_ = n; }

  const std::vector<Diagnostic> &diagnostics() const { return diags_; }

  /// Renders every diagnostic (with source line and caret) in order.
  std::string render() const;
  /// Renders one diagnostic.
  std::string render(const Diagnostic &d) const;

private:
  void report(Severity severity, SourceLoc loc, std::string message);

  const SourceManager &sm_;
  std::vector<Diagnostic> diags_;
  unsigned errorCount_ = 0;
  unsigned maxErrors_ = 50;
};

} // namespace tessera

#endif // TESSERA_FRONTEND_DIAGNOSTICS_H
