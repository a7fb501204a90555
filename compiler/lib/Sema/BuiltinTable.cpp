//===- BuiltinTable.cpp - The table of built-in functions -----------------===//

#include "tessera/Sema/Builtins.h"

namespace tessera::sema {

const std::vector<BuiltinInfo> &builtinTable() {
  static const std::vector<BuiltinInfo> table = {
#define TESSERA_BUILTIN(NAME, LOWERING, SCOPES, SECTION, CALL, SUMMARY)        \
  {#NAME, SCOPES, BuiltinSection::SECTION, CALL, SUMMARY},
#include "tessera/Sema/Builtins.def"
  };
  return table;
}

const BuiltinInfo *findBuiltin(std::string_view name, BuiltinScope scope) {
  for (const BuiltinInfo &b : builtinTable())
    if (b.name == name && (b.scopes & scope))
      return &b;
  return nullptr;
}

std::string_view builtinSectionTitle(BuiltinSection section) {
  switch (section) {
  case BuiltinSection::Coordinates:
    return "Program coordinates";
  case BuiltinSection::Threads:
    return "Thread-level (SIMT) programs";
  case BuiltinSection::Creation:
    return "Creating tiles";
  case BuiltinSection::Memory:
    return "Memory";
  case BuiltinSection::Atomics:
    return "Memory (atomics)";
  case BuiltinSection::Matrix:
    return "Matrix product";
  case BuiltinSection::Reduction:
    return "Reductions";
  case BuiltinSection::Math:
    return "Element-wise math";
  case BuiltinSection::Shape:
    return "Shape and type";
  case BuiltinSection::Control:
    return "Control flow";
  case BuiltinSection::Python:
    return "Python built-ins";
  }
  return "";
}

std::string builtinIndexMarkdown() {
  std::string out = "| Built-in | Visible as | Programs | Section | Summary |\n"
                    "|---|---|---|---|---|\n";
  for (const BuiltinInfo &b : builtinTable()) {
    std::string where;
    auto add = [&](const char *s) {
      where += where.empty() ? "" : ", ";
      where += s;
    };
    if (b.scopes & Tile)
      add("`tile.`");
    if (b.scopes & Bare)
      add("bare");
    if (b.scopes & Method)
      add("method");
    out += "| `";
    out += b.call;
    out += "` | " + where + " | ";
    out += (b.scopes & Thread)     ? "SIMT"
           : (b.scopes & TileOnly) ? "tile"
                                   : "both";
    out += " | ";
    out += builtinSectionTitle(b.section);
    out += " | ";
    out += b.summary;
    out += " |\n";
  }
  return out;
}

} // namespace tessera::sema
