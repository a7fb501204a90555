//===- Parser.h - Tile language parser --------------------------*- C++ -*-===//

#ifndef TESSERA_FRONTEND_PARSER_H
#define TESSERA_FRONTEND_PARSER_H

#include "tessera/Frontend/AST.h"
#include "tessera/Frontend/Diagnostics.h"

#include <memory>

namespace tessera {

/// Parses file `fileId` of `sm`. Never fails outright: syntax errors are
/// reported to `diags` (with recovery at statement boundaries, so several
/// are reported per run) and the returned module holds what could be parsed.
/// Robust against any input: bounded recursion, no crash on garbage.
std::unique_ptr<ast::Module> parseModule(const SourceManager &sm,
                                         uint32_t fileId,
                                         DiagnosticEngine &diags);

} // namespace tessera

#endif // TESSERA_FRONTEND_PARSER_H
