//===- Builtins.h - The table of built-in functions -------------*- C++ -*-===//
//
// What a kernel body can call, read from Builtins.def: where each name is
// visible and how the language reference describes it. The compiler's name
// lookup and lowering dispatch and the reference's index of built-ins come
// from the same table.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SEMA_BUILTINS_H
#define TESSERA_SEMA_BUILTINS_H

#include <string>
#include <string_view>
#include <vector>

namespace tessera::sema {

/// Where a built-in's name is visible (bit flags).
enum BuiltinScope : unsigned {
  /// `tile.NAME` (also `tl.NAME` and `tessera.tile.NAME`).
  Tile = 1,
  /// `NAME`, as Python's built-in functions.
  Bare = 2,
  /// `x.NAME(...)` on a tile or scalar.
  Method = 4,
  /// A thread-level built-in: a kernel body that calls one is a SIMT
  /// program (one program instance per GPU thread), and only SIMT programs
  /// may call it.
  Thread = 8,
  /// A whole-tile operation: not available in SIMT programs.
  TileOnly = 16,
};

/// The sections of docs/language.md that describe built-ins.
enum class BuiltinSection {
  Coordinates,
  Threads,
  Creation,
  Memory,
  Atomics,
  Matrix,
  Reduction,
  Math,
  Shape,
  Control,
  Python,
};

struct BuiltinInfo {
  std::string_view name;
  unsigned scopes;
  BuiltinSection section;
  /// The call form shown in the reference, e.g. "tile.sum(x, axis)".
  std::string_view call;
  std::string_view summary;
};

/// Every built-in, in the table's order.
const std::vector<BuiltinInfo> &builtinTable();

/// The built-in named `name` visible in `scope`, or null.
const BuiltinInfo *findBuiltin(std::string_view name, BuiltinScope scope);

/// The heading of docs/language.md that describes `section`.
std::string_view builtinSectionTitle(BuiltinSection section);

/// The reference's index of built-ins: a Markdown table with one row per
/// entry (call, where it is visible, section, summary).
std::string builtinIndexMarkdown();

} // namespace tessera::sema

#endif // TESSERA_SEMA_BUILTINS_H
