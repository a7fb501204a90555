//===- Diagnostics.cpp - Source files and diagnostics ---------------------===//

#include "tessera/Frontend/Diagnostics.h"

#include <algorithm>

using namespace tessera;

uint32_t SourceManager::addFile(std::string name, std::string text) {
  auto file = std::make_unique<File>();
  file->name = std::move(name);
  file->text = std::move(text);
  file->lineStarts.push_back(0);
  for (uint32_t i = 0; i < file->text.size(); ++i)
    if (file->text[i] == '\n')
      file->lineStarts.push_back(i + 1);
  files_.push_back(std::move(file));
  return static_cast<uint32_t>(files_.size() - 1);
}

std::string_view SourceManager::getName(uint32_t file) const {
  return file < files_.size() ? std::string_view(files_[file]->name)
                              : std::string_view("<unknown>");
}

std::string_view SourceManager::getText(uint32_t file) const {
  return file < files_.size() ? std::string_view(files_[file]->text)
                              : std::string_view();
}

std::string_view SourceManager::getLine(uint32_t file, uint32_t line) const {
  if (file >= files_.size() || line == 0)
    return {};
  const File &f = *files_[file];
  if (line > f.lineStarts.size())
    return {};
  uint32_t begin = f.lineStarts[line - 1];
  uint32_t end = line < f.lineStarts.size() ? f.lineStarts[line] - 1
                                            : static_cast<uint32_t>(f.text.size());
  std::string_view text(f.text);
  std::string_view result = text.substr(begin, end - begin);
  if (!result.empty() && result.back() == '\r')
    result.remove_suffix(1);
  return result;
}

void DiagnosticEngine::report(Severity severity, SourceLoc loc,
                              std::string message) {
  if (severity == Severity::Error) {
    if (errorCount_ >= maxErrors_)
      return;
    ++errorCount_;
    if (errorCount_ == maxErrors_) {
      diags_.push_back({severity, loc, std::move(message)});
      diags_.push_back({Severity::Note, SourceLoc(),
                        "too many errors; stopping after " +
                            std::to_string(maxErrors_)});
      return;
    }
  } else if (errorCount_ >= maxErrors_) {
    return;
  }
  diags_.push_back({severity, loc, std::move(message)});
}

void DiagnosticEngine::error(SourceLoc loc, std::string message) {
  report(Severity::Error, loc, std::move(message));
}
void DiagnosticEngine::warning(SourceLoc loc, std::string message) {
  report(Severity::Warning, loc, std::move(message));
}
void DiagnosticEngine::note(SourceLoc loc, std::string message) {
  report(Severity::Note, loc, std::move(message));
}

namespace {
/// Control characters other than tab and newline as \xNN: rendered
/// diagnostics are text, and a raw NUL would cut them short wherever they
/// are handled as C strings.
std::string escapeControls(std::string_view text) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t' && c != '\n') {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}
} // namespace

std::string DiagnosticEngine::render(const Diagnostic &d) const {
  static const char *names[] = {"error", "warning", "note"};
  std::string out;
  if (d.loc.isValid()) {
    out += sm_.getName(d.loc.file);
    out += ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) +
           ": ";
  }
  out += names[static_cast<int>(d.severity)];
  out += ": ";
  out += escapeControls(d.message);
  out += "\n";
  if (!d.loc.isValid())
    return out;
  std::string_view line = sm_.getLine(d.loc.file, d.loc.line);
  if (line.empty() && d.loc.col > 1)
    return out;
  out += "    ";
  // The echoed line keeps one character per byte so that the caret stays
  // aligned: control characters other than tab become spaces.
  for (char c : line)
    out += (static_cast<unsigned char>(c) < 0x20 && c != '\t') ? ' ' : c;
  out += "\n    ";
  // Reproduce tabs so the caret lines up under the same column.
  uint32_t col = std::max<uint32_t>(d.loc.col, 1);
  for (uint32_t i = 0; i + 1 < col; ++i)
    out += (i < line.size() && line[i] == '\t') ? '\t' : ' ';
  out += '^';
  uint32_t avail = line.size() >= col ? static_cast<uint32_t>(line.size()) - col + 1 : 1;
  uint32_t len = std::min(std::max<uint32_t>(d.loc.length, 1), std::max<uint32_t>(avail, 1));
  for (uint32_t i = 1; i < len; ++i)
    out += '~';
  out += "\n";
  return out;
}

std::string DiagnosticEngine::render() const {
  std::string out;
  for (const Diagnostic &d : diags_)
    out += render(d);
  return out;
}
