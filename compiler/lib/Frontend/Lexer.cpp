//===- Lexer.cpp - Tokens of the tile language ----------------------------===//

#include "tessera/Frontend/Lexer.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

using namespace tessera;

const char *tessera::tokKindName(TokKind kind) {
  switch (kind) {
  case TokKind::Eof: return "end of file";
  case TokKind::Newline: return "end of line";
  case TokKind::Indent: return "indent";
  case TokKind::Dedent: return "dedent";
  case TokKind::Identifier: return "identifier";
  case TokKind::Int: return "integer";
  case TokKind::Float: return "number";
  case TokKind::String: return "string";
  case TokKind::KwDef: return "'def'";
  case TokKind::KwIf: return "'if'";
  case TokKind::KwElif: return "'elif'";
  case TokKind::KwElse: return "'else'";
  case TokKind::KwFor: return "'for'";
  case TokKind::KwWhile: return "'while'";
  case TokKind::KwIn: return "'in'";
  case TokKind::KwReturn: return "'return'";
  case TokKind::KwPass: return "'pass'";
  case TokKind::KwBreak: return "'break'";
  case TokKind::KwContinue: return "'continue'";
  case TokKind::KwAnd: return "'and'";
  case TokKind::KwOr: return "'or'";
  case TokKind::KwNot: return "'not'";
  case TokKind::KwIs: return "'is'";
  case TokKind::KwTrue: return "'True'";
  case TokKind::KwFalse: return "'False'";
  case TokKind::KwNone: return "'None'";
  case TokKind::KwImport: return "'import'";
  case TokKind::KwFrom: return "'from'";
  case TokKind::KwAs: return "'as'";
  case TokKind::KwLambda: return "'lambda'";
  case TokKind::KwClass: return "'class'";
  case TokKind::KwWith: return "'with'";
  case TokKind::KwGlobal: return "'global'";
  case TokKind::KwYield: return "'yield'";
  case TokKind::KwAssert: return "'assert'";
  case TokKind::KwDel: return "'del'";
  case TokKind::KwTry: return "'try'";
  case TokKind::LParen: return "'('";
  case TokKind::RParen: return "')'";
  case TokKind::LBracket: return "'['";
  case TokKind::RBracket: return "']'";
  case TokKind::LBrace: return "'{'";
  case TokKind::RBrace: return "'}'";
  case TokKind::Comma: return "','";
  case TokKind::Colon: return "':'";
  case TokKind::Dot: return "'.'";
  case TokKind::Semicolon: return "';'";
  case TokKind::At: return "'@'";
  case TokKind::Arrow: return "'->'";
  case TokKind::Assign: return "'='";
  case TokKind::Plus: return "'+'";
  case TokKind::Minus: return "'-'";
  case TokKind::Star: return "'*'";
  case TokKind::Slash: return "'/'";
  case TokKind::DoubleSlash: return "'//'";
  case TokKind::Percent: return "'%'";
  case TokKind::DoubleStar: return "'**'";
  case TokKind::Amp: return "'&'";
  case TokKind::Pipe: return "'|'";
  case TokKind::Caret: return "'^'";
  case TokKind::Tilde: return "'~'";
  case TokKind::LShift: return "'<<'";
  case TokKind::RShift: return "'>>'";
  case TokKind::EqEq: return "'=='";
  case TokKind::NotEq: return "'!='";
  case TokKind::Less: return "'<'";
  case TokKind::LessEq: return "'<='";
  case TokKind::Greater: return "'>'";
  case TokKind::GreaterEq: return "'>='";
  case TokKind::PlusEq: return "'+='";
  case TokKind::MinusEq: return "'-='";
  case TokKind::StarEq: return "'*='";
  case TokKind::SlashEq: return "'/='";
  case TokKind::DoubleSlashEq: return "'//='";
  case TokKind::PercentEq: return "'%='";
  case TokKind::DoubleStarEq: return "'**='";
  case TokKind::AmpEq: return "'&='";
  case TokKind::PipeEq: return "'|='";
  case TokKind::CaretEq: return "'^='";
  case TokKind::LShiftEq: return "'<<='";
  case TokKind::RShiftEq: return "'>>='";
  case TokKind::AtEq: return "'@='";
  case TokKind::Error: return "invalid token";
  }
  return "token";
}

namespace {

const std::unordered_map<std::string_view, TokKind> &keywords() {
  static const std::unordered_map<std::string_view, TokKind> map = {
      {"def", TokKind::KwDef},         {"if", TokKind::KwIf},
      {"elif", TokKind::KwElif},       {"else", TokKind::KwElse},
      {"for", TokKind::KwFor},         {"while", TokKind::KwWhile},
      {"in", TokKind::KwIn},           {"return", TokKind::KwReturn},
      {"pass", TokKind::KwPass},       {"break", TokKind::KwBreak},
      {"continue", TokKind::KwContinue}, {"and", TokKind::KwAnd},
      {"or", TokKind::KwOr},           {"not", TokKind::KwNot},
      {"is", TokKind::KwIs},           {"True", TokKind::KwTrue},
      {"False", TokKind::KwFalse},     {"None", TokKind::KwNone},
      {"import", TokKind::KwImport},   {"from", TokKind::KwFrom},
      {"as", TokKind::KwAs},           {"lambda", TokKind::KwLambda},
      {"class", TokKind::KwClass},     {"with", TokKind::KwWith},
      {"global", TokKind::KwGlobal},   {"nonlocal", TokKind::KwGlobal},
      {"yield", TokKind::KwYield},     {"assert", TokKind::KwAssert},
      {"del", TokKind::KwDel},         {"try", TokKind::KwTry},
  };
  return map;
}

/// Operators, longest first so that maximal munch is a linear scan.
struct OpSpelling {
  std::string_view text;
  TokKind kind;
};
const OpSpelling kOps[] = {
    {"**=", TokKind::DoubleStarEq}, {"//=", TokKind::DoubleSlashEq},
    {"<<=", TokKind::LShiftEq},     {">>=", TokKind::RShiftEq},
    {"->", TokKind::Arrow},         {"**", TokKind::DoubleStar},
    {"//", TokKind::DoubleSlash},   {"<<", TokKind::LShift},
    {">>", TokKind::RShift},        {"==", TokKind::EqEq},
    {"!=", TokKind::NotEq},         {"<=", TokKind::LessEq},
    {">=", TokKind::GreaterEq},     {"+=", TokKind::PlusEq},
    {"-=", TokKind::MinusEq},       {"*=", TokKind::StarEq},
    {"/=", TokKind::SlashEq},       {"%=", TokKind::PercentEq},
    {"&=", TokKind::AmpEq},         {"|=", TokKind::PipeEq},
    {"^=", TokKind::CaretEq},       {"@=", TokKind::AtEq},
    {"(", TokKind::LParen},         {")", TokKind::RParen},
    {"[", TokKind::LBracket},       {"]", TokKind::RBracket},
    {"{", TokKind::LBrace},         {"}", TokKind::RBrace},
    {",", TokKind::Comma},          {":", TokKind::Colon},
    {".", TokKind::Dot},            {";", TokKind::Semicolon},
    {"@", TokKind::At},             {"=", TokKind::Assign},
    {"+", TokKind::Plus},           {"-", TokKind::Minus},
    {"*", TokKind::Star},           {"/", TokKind::Slash},
    {"%", TokKind::Percent},        {"&", TokKind::Amp},
    {"|", TokKind::Pipe},           {"^", TokKind::Caret},
    {"~", TokKind::Tilde},          {"<", TokKind::Less},
    {">", TokKind::Greater},
};

constexpr size_t kMaxIndentDepth = 100;

class Lexer {
public:
  Lexer(std::string_view text, uint32_t fileId, DiagnosticEngine &diags)
      : text_(text), fileId_(fileId), diags_(diags) {}

  std::vector<Token> run();

private:
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool atEnd() const { return pos_ >= text_.size(); }
  SourceLoc locAt(size_t pos, uint32_t length = 1) const {
    return SourceLoc{fileId_, line_, static_cast<uint32_t>(pos - lineStart_ + 1),
                     length};
  }
  void advanceNewline() {
    ++pos_;
    ++line_;
    lineStart_ = pos_;
  }
  void push(TokKind kind, size_t start, std::string text = {}) {
    Token tok;
    tok.kind = kind;
    tok.loc = locAt(start, static_cast<uint32_t>(std::max<size_t>(pos_ - start, 1)));
    tok.text = std::move(text);
    tokens_.push_back(std::move(tok));
  }
  void error(size_t pos, uint32_t length, std::string msg) {
    diags_.error(locAt(pos, length), std::move(msg));
  }

  bool handleLineStart();
  void lexNumber();
  void lexString(size_t start, bool raw);
  void lexIdentifierOrString();

  std::string_view text_;
  uint32_t fileId_;
  DiagnosticEngine &diags_;
  std::vector<Token> tokens_;
  std::vector<uint32_t> indents_{0};
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t lineStart_ = 0;
  std::vector<Token> bracketOpen_; // the open brackets, innermost last
  bool nextLineStartsDefinition() const;
  bool lineHasTokens_ = false;
};

bool Lexer::nextLineStartsDefinition() const {
  size_t p = pos_ + 1;
  if (p >= text_.size())
    return false;
  if (text_[p] == '@')
    return true;
  auto startsWord = [&](std::string_view w) {
    if (text_.substr(p, w.size()) != w)
      return false;
    size_t e = p + w.size();
    return e >= text_.size() ||
           !(std::isalnum(static_cast<unsigned char>(text_[e])) ||
             text_[e] == '_');
  };
  return startsWord("def") || startsWord("class");
}

/// At the start of a physical line outside brackets: measures indentation,
/// skips blank/comment lines and emits INDENT/DEDENT. Returns false at EOF.
bool Lexer::handleLineStart() {
  while (true) {
    uint32_t width = 0;
    size_t start = pos_;
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\f')) {
      if (peek() == '\t')
        width = (width / 8 + 1) * 8;
      else if (peek() == ' ')
        ++width;
      ++pos_;
    }
    if (atEnd())
      return false;
    char c = peek();
    if (c == '#') {
      while (!atEnd() && peek() != '\n')
        ++pos_;
    }
    if (!atEnd() && peek() == '\r' && peek(1) == '\n')
      ++pos_;
    if (atEnd())
      return false;
    if (peek() == '\n') {
      advanceNewline();
      continue;
    }
    if (width > indents_.back()) {
      if (indents_.size() >= kMaxIndentDepth) {
        error(start, 1, "too many levels of indentation");
      } else {
        indents_.push_back(width);
        push(TokKind::Indent, start);
      }
    } else {
      while (width < indents_.back()) {
        indents_.pop_back();
        push(TokKind::Dedent, pos_);
      }
      if (width != indents_.back())
        error(pos_, 1, "unindent does not match any outer indentation level");
    }
    return true;
  }
}

void Lexer::lexNumber() {
  size_t start = pos_;
  std::string digits;
  auto isDigitOf = [](char c, int base) {
    if (base == 16)
      return std::isxdigit(static_cast<unsigned char>(c)) != 0;
    if (base == 8)
      return c >= '0' && c <= '7';
    if (base == 2)
      return c == '0' || c == '1';
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  };
  // Prefixed integers.
  if (peek() == '0' && std::strchr("xXoObB", peek(1)) && peek(1) != '\0') {
    char p = static_cast<char>(std::tolower(peek(1)));
    int base = p == 'x' ? 16 : p == 'o' ? 8 : 2;
    pos_ += 2;
    while (!atEnd() && (isDigitOf(peek(), base) || peek() == '_')) {
      if (peek() != '_')
        digits += peek();
      ++pos_;
    }
    if (digits.empty()) {
      error(start, static_cast<uint32_t>(pos_ - start), "invalid integer literal");
      push(TokKind::Error, start);
      return;
    }
    errno = 0;
    unsigned long long v = std::strtoull(digits.c_str(), nullptr, base);
    bool overflow = errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX);
    push(TokKind::Int, start, overflow ? std::string("overflow") : std::to_string(v));
    return;
  }
  bool isFloat = false;
  while (!atEnd() && (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '_')) {
    if (peek() != '_')
      digits += peek();
    ++pos_;
  }
  if (peek() == '.' && !(std::isalpha(static_cast<unsigned char>(peek(1))) || peek(1) == '_')) {
    isFloat = true;
    digits += '.';
    ++pos_;
    while (!atEnd() && (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '_')) {
      if (peek() != '_')
        digits += peek();
      ++pos_;
    }
  }
  if ((peek() == 'e' || peek() == 'E') &&
      (std::isdigit(static_cast<unsigned char>(peek(1))) ||
       ((peek(1) == '+' || peek(1) == '-') &&
        std::isdigit(static_cast<unsigned char>(peek(2)))))) {
    isFloat = true;
    digits += 'e';
    ++pos_;
    if (peek() == '+' || peek() == '-')
      digits += text_[pos_++];
    while (!atEnd() && std::isdigit(static_cast<unsigned char>(peek())))
      digits += text_[pos_++];
  }
  if (std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_') {
    size_t bad = pos_;
    while (!atEnd() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_'))
      ++pos_;
    error(start, static_cast<uint32_t>(pos_ - start),
          "invalid numeric literal '" + std::string(text_.substr(start, pos_ - start)) + "'");
    (void)bad;
    push(TokKind::Error, start);
    return;
  }
  if (isFloat) {
    push(TokKind::Float, start, digits);
    return;
  }
  // Decimal integer: detect overflow without strtoll's locale quirks.
  bool overflow = false;
  unsigned long long v = 0;
  for (char c : digits) {
    unsigned d = static_cast<unsigned>(c - '0');
    if (v > (static_cast<unsigned long long>(INT64_MAX) - d) / 10) {
      overflow = true;
      break;
    }
    v = v * 10 + d;
  }
  if (digits.size() > 1 && digits[0] == '0' && v != 0 && !overflow) {
    error(start, static_cast<uint32_t>(pos_ - start),
          "leading zeros in a decimal integer literal are not permitted; use "
          "an 0o prefix for octal");
    push(TokKind::Error, start);
    return;
  }
  push(TokKind::Int, start, overflow ? std::string("overflow") : std::to_string(v));
}

void Lexer::lexString(size_t start, bool raw) {
  char quote = peek();
  bool triple = peek(1) == quote && peek(2) == quote;
  pos_ += triple ? 3 : 1;
  std::string value;
  uint32_t startLine = line_;
  size_t startLineStart = lineStart_;
  while (true) {
    if (atEnd()) {
      SourceLoc loc{fileId_, startLine,
                    static_cast<uint32_t>(start - startLineStart + 1), 1};
      diags_.error(loc, "unterminated string literal");
      Token tok;
      tok.kind = TokKind::Error;
      tok.loc = loc;
      tokens_.push_back(tok);
      return;
    }
    char c = peek();
    if (c == quote) {
      if (!triple) {
        ++pos_;
        break;
      }
      if (peek(1) == quote && peek(2) == quote) {
        pos_ += 3;
        break;
      }
    }
    if (c == '\n') {
      if (!triple) {
        SourceLoc loc{fileId_, startLine,
                      static_cast<uint32_t>(start - startLineStart + 1), 1};
        diags_.error(loc, "unterminated string literal");
        Token tok;
        tok.kind = TokKind::Error;
        tok.loc = loc;
        tokens_.push_back(tok);
        return;
      }
      value += '\n';
      advanceNewline();
      continue;
    }
    if (c == '\\' && !raw) {
      char e = peek(1);
      pos_ += 2;
      switch (e) {
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case 'r': value += '\r'; break;
      case '0': value += '\0'; break;
      case '\\': value += '\\'; break;
      case '\'': value += '\''; break;
      case '"': value += '"'; break;
      case '\n':
        --pos_;
        advanceNewline();
        break;
      case '\0':
        --pos_;
        break;
      default:
        value += '\\';
        value += e;
      }
      continue;
    }
    if (c == '\\' && raw && peek(1) != '\0') {
      value += c;
      value += peek(1);
      if (peek(1) == '\n') {
        ++pos_;
        advanceNewline();
      } else {
        pos_ += 2;
      }
      continue;
    }
    value += c;
    ++pos_;
  }
  Token tok;
  tok.kind = TokKind::String;
  tok.loc = SourceLoc{fileId_, startLine,
                      static_cast<uint32_t>(start - startLineStart + 1),
                      startLine == line_ ? static_cast<uint32_t>(pos_ - start) : 1};
  tok.text = std::move(value);
  tokens_.push_back(std::move(tok));
}

void Lexer::lexIdentifierOrString() {
  size_t start = pos_;
  while (!atEnd() && (std::isalnum(static_cast<unsigned char>(peek())) ||
                      peek() == '_' || static_cast<unsigned char>(peek()) >= 0x80))
    ++pos_;
  std::string_view word = text_.substr(start, pos_ - start);
  // String prefixes: r"", b"", f"" (rejected), and combinations.
  if ((peek() == '"' || peek() == '\'') && word.size() <= 2) {
    std::string lower;
    for (char c : word)
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "r" || lower == "b" || lower == "br" || lower == "rb" ||
        lower == "u") {
      lexString(start, lower.find('r') != std::string::npos);
      return;
    }
    if (lower == "f" || lower == "fr" || lower == "rf") {
      error(start, static_cast<uint32_t>(word.size()),
            "f-strings are not supported in the tile language");
      lexString(start, lower.find('r') != std::string::npos);
      return;
    }
  }
  for (unsigned char c : word) {
    if (c >= 0x80) {
      error(start, static_cast<uint32_t>(word.size()),
            "non-ASCII identifiers are not supported");
      push(TokKind::Error, start);
      return;
    }
  }
  auto it = keywords().find(word);
  if (it != keywords().end())
    push(it->second, start, std::string(word));
  else
    push(TokKind::Identifier, start, std::string(word));
}

std::vector<Token> Lexer::run() {
  bool atLineStart = true;
  while (true) {
    if (diags_.tooManyErrors())
      break;
    if (atLineStart && bracketOpen_.empty()) {
      if (!handleLineStart())
        break;
      atLineStart = false;
    }
    if (atEnd())
      break;
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
      ++pos_;
      continue;
    }
    if (c == '#') {
      while (!atEnd() && peek() != '\n')
        ++pos_;
      continue;
    }
    if (c == '\\') {
      size_t p = pos_ + 1;
      if (p < text_.size() && text_[p] == '\r')
        ++p;
      if (p < text_.size() && text_[p] == '\n') {
        pos_ = p;
        advanceNewline();
        continue;
      }
      error(pos_, 1, "unexpected character after line continuation character");
      push(TokKind::Error, pos_++);
      continue;
    }
    if (c == '\n') {
      // An unclosed bracket would swallow the rest of the file into one
      // logical line and every later error with it. A definition or
      // decorator at column 1 cannot continue a bracketed expression (in
      // practice), so the lexer closes the logical line there; the parser
      // reports the missing bracket.
      if (!bracketOpen_.empty() && nextLineStartsDefinition()) {
        const Token &open = bracketOpen_.back();
        diags_.error(open.loc, std::string(tokKindName(open.kind)) +
                                   " was never closed");
        Token err = open;
        err.kind = TokKind::Error;
        tokens_.push_back(err);
        bracketOpen_.clear();
      }
      if (bracketOpen_.empty()) {
        if (lineHasTokens_)
          push(TokKind::Newline, pos_);
        lineHasTokens_ = false;
        atLineStart = true;
      }
      advanceNewline();
      continue;
    }
    lineHasTokens_ = true;
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1))))) {
      lexNumber();
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
        static_cast<unsigned char>(c) >= 0x80) {
      lexIdentifierOrString();
      continue;
    }
    if (c == '"' || c == '\'') {
      lexString(pos_, false);
      continue;
    }
    bool matched = false;
    for (const OpSpelling &op : kOps) {
      size_t len = op.text.size();
      if (op.text[0] == c && text_.compare(pos_, len, op.text) == 0) {
        size_t start = pos_;
        pos_ += len;
        push(op.kind, start);
        if (op.kind == TokKind::LParen || op.kind == TokKind::LBracket ||
            op.kind == TokKind::LBrace)
          bracketOpen_.push_back(tokens_.back());
        else if ((op.kind == TokKind::RParen || op.kind == TokKind::RBracket ||
                  op.kind == TokKind::RBrace) &&
                 !bracketOpen_.empty())
          bracketOpen_.pop_back();
        matched = true;
        break;
      }
    }
    if (matched)
      continue;
    std::string shown = c >= 32 && c < 127 ? std::string(1, c) : "\\x" + [&] {
      static const char *hex = "0123456789abcdef";
      unsigned char u = static_cast<unsigned char>(c);
      return std::string{hex[u >> 4], hex[u & 15]};
    }();
    error(pos_, 1, "unexpected character '" + shown + "'");
    push(TokKind::Error, pos_);
    ++pos_;
  }
  if (lineHasTokens_)
    push(TokKind::Newline, pos_);
  while (indents_.size() > 1) {
    indents_.pop_back();
    push(TokKind::Dedent, pos_);
  }
  push(TokKind::Eof, pos_);
  return std::move(tokens_);
}

} // namespace

std::vector<Token> tessera::lex(std::string_view text, uint32_t fileId,
                                DiagnosticEngine &diags) {
  return Lexer(text, fileId, diags).run();
}
