//===- Lexer.h - Tokens of the tile language --------------------*- C++ -*-===//
//
// The tile language uses Python's lexical structure: significant
// indentation (INDENT/DEDENT tokens), NEWLINE at the end of logical lines,
// implicit line joining inside brackets, `\` continuation, `#` comments and
// single/double/triple-quoted strings.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_FRONTEND_LEXER_H
#define TESSERA_FRONTEND_LEXER_H

#include "tessera/Frontend/Diagnostics.h"

#include <string>
#include <string_view>
#include <vector>

namespace tessera {

enum class TokKind {
  Eof,
  Newline,
  Indent,
  Dedent,
  Identifier,
  Int,
  Float,
  String,
  // Keywords.
  KwDef,
  KwIf,
  KwElif,
  KwElse,
  KwFor,
  KwWhile,
  KwIn,
  KwReturn,
  KwPass,
  KwBreak,
  KwContinue,
  KwAnd,
  KwOr,
  KwNot,
  KwIs,
  KwTrue,
  KwFalse,
  KwNone,
  KwImport,
  KwFrom,
  KwAs,
  KwLambda,
  KwClass,
  KwWith,
  KwGlobal,
  KwYield,
  KwAssert,
  KwDel,
  KwTry,
  // Punctuation and operators.
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Dot,
  Semicolon,
  At,
  Arrow,
  Assign,
  Plus,
  Minus,
  Star,
  Slash,
  DoubleSlash,
  Percent,
  DoubleStar,
  Amp,
  Pipe,
  Caret,
  Tilde,
  LShift,
  RShift,
  EqEq,
  NotEq,
  Less,
  LessEq,
  Greater,
  GreaterEq,
  PlusEq,
  MinusEq,
  StarEq,
  SlashEq,
  DoubleSlashEq,
  PercentEq,
  DoubleStarEq,
  AmpEq,
  PipeEq,
  CaretEq,
  LShiftEq,
  RShiftEq,
  AtEq,
  Error,
};

/// Printable spelling of a token kind, e.g. "'('" or "identifier".
const char *tokKindName(TokKind kind);

struct Token {
  TokKind kind = TokKind::Eof;
  SourceLoc loc;
  /// Identifier name, number spelling or decoded string contents.
  std::string text;
};

/// Turns a whole source file into tokens. Lexical errors are reported to
/// `diags` and produce an Error token; lexing continues after them.
std::vector<Token> lex(std::string_view text, uint32_t fileId,
                       DiagnosticEngine &diags);

} // namespace tessera

#endif // TESSERA_FRONTEND_LEXER_H
