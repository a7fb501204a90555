//===- Parser.cpp - Tile language parser ----------------------------------===//
//
// Recursive descent over Python's grammar (the subset the tile language
// uses, plus enough of the rest to give a precise "not supported" error).
//
//===----------------------------------------------------------------------===//

#include "tessera/Frontend/Parser.h"
#include "tessera/Frontend/Lexer.h"

#include <cstdlib>

using namespace tessera;
using namespace tessera::ast;

namespace {

/// Deepest expression or statement nesting accepted; deeper input gets an
/// error instead of exhausting the stack.
constexpr int kMaxDepth = 200;

class Parser {
public:
  Parser(std::vector<Token> tokens, uint32_t fileId, DiagnosticEngine &diags)
      : toks_(std::move(tokens)), fileId_(fileId), diags_(diags) {}

  std::unique_ptr<Module> parseModule();

private:
  //===--- Token helpers -------------------------------------------------===//
  const Token &cur() const { return toks_[pos_]; }
  const Token &peekTok(size_t n = 1) const {
    return toks_[std::min(pos_ + n, toks_.size() - 1)];
  }
  bool at(TokKind k) const { return cur().kind == k; }
  void consume() {
    if (pos_ + 1 < toks_.size())
      ++pos_;
  }
  bool accept(TokKind k) {
    if (!at(k))
      return false;
    consume();
    return true;
  }
  std::string describe(const Token &t) const {
    switch (t.kind) {
    case TokKind::Identifier:
      return "identifier '" + t.text + "'";
    case TokKind::Int:
    case TokKind::Float:
      return "number '" + t.text + "'";
    case TokKind::String:
      return "string";
    default:
      return tokKindName(t.kind);
    }
  }
  /// Reports "expected X <context>, found Y" at the current token.
  void errorExpected(const std::string &what, const std::string &context = "") {
    if (at(TokKind::Error))
      return; // The lexer already reported this one.
    std::string msg = "expected " + what;
    if (!context.empty())
      msg += " " + context;
    msg += ", found " + describe(cur());
    diags_.error(cur().loc, msg);
  }
  bool expect(TokKind k, const std::string &context = "") {
    if (accept(k))
      return true;
    errorExpected(tokKindName(k), context);
    return false;
  }
  /// Skips to the start of the next statement (after NEWLINE) without
  /// crossing a DEDENT, so an error stays within its block.
  void recoverToNewline() {
    while (!at(TokKind::Eof) && !at(TokKind::Newline) && !at(TokKind::Dedent) &&
           !at(TokKind::Indent))
      consume();
    accept(TokKind::Newline);
    // A stray indented block after a broken header: skip it whole.
    if (at(TokKind::Indent)) {
      int level = 0;
      do {
        if (at(TokKind::Indent))
          ++level;
        else if (at(TokKind::Dedent))
          --level;
        consume();
      } while (level > 0 && !at(TokKind::Eof));
    }
  }

  struct DepthGuard {
    Parser &p;
    bool ok;
    explicit DepthGuard(Parser &p) : p(p), ok(++p.depth_ <= kMaxDepth) {
      if (!ok && !p.depthReported_) {
        p.diags_.error(p.cur().loc, "nesting too deep (limit " +
                                        std::to_string(kMaxDepth) + ")");
        p.depthReported_ = true;
      }
    }
    ~DepthGuard() { --p.depth_; }
  };

  /// Loops that nest the node they build (left-associative operator chains,
  /// `**`, call/attribute/subscript trailers) make the syntax tree one level
  /// deeper per iteration without recursing here; every later pass
  /// (constant evaluation, MLIRGen, printing) does recurse over it. Count
  /// those levels against the same limit, so the tree depth is bounded.
  struct ChainGuard {
    Parser &p;
    int added = 0;
    explicit ChainGuard(Parser &p) : p(p) {}
    ChainGuard(const ChainGuard &) = delete;
    bool next() {
      ++added;
      if (++p.depth_ <= kMaxDepth)
        return true;
      if (!p.depthReported_) {
        p.diags_.error(p.cur().loc, "nesting too deep (limit " +
                                        std::to_string(kMaxDepth) + ")");
        p.depthReported_ = true;
      }
      return false;
    }
    ~ChainGuard() { p.depth_ -= added; }
  };

  //===--- Statements ----------------------------------------------------===//
  void parseStatement(Block &out);
  bool parseSimpleStatements(Block &out);
  StmtPtr parseSmallStatement();
  Block parseSuite(const char *what);
  StmtPtr parseIf(bool isElif);
  StmtPtr parseFor();
  StmtPtr parseWhile();
  StmtPtr parseFunctionDef(std::vector<ExprPtr> decorators);
  StmtPtr parseImport();
  StmtPtr parseUnsupportedCompound(const char *what);

  //===--- Expressions ---------------------------------------------------===//
  /// `a` or `a, b, ...` (a tuple without parentheses).
  ExprPtr parseTestList(bool allowTrailingComma = true);
  ExprPtr parseTest();
  ExprPtr parseOrTest();
  ExprPtr parseAndTest();
  ExprPtr parseNotTest();
  ExprPtr parseComparison();
  ExprPtr parseBitOr();
  ExprPtr parseBitXor();
  ExprPtr parseBitAnd();
  ExprPtr parseShift();
  ExprPtr parseArith();
  ExprPtr parseTerm();
  ExprPtr parseFactor();
  ExprPtr parsePower();
  ExprPtr parsePrimary();
  ExprPtr parseAtom();
  ExprPtr parseParenthesized();
  ExprPtr parseListDisplay();
  ExprPtr parseDictDisplay();
  ExprPtr parseSubscriptItem();
  bool parseCallArgs(std::vector<ExprPtr> &args, std::vector<Keyword> &kws);

  bool startsExpression() const {
    switch (cur().kind) {
    case TokKind::Identifier:
    case TokKind::Int:
    case TokKind::Float:
    case TokKind::String:
    case TokKind::KwTrue:
    case TokKind::KwFalse:
    case TokKind::KwNone:
    case TokKind::KwNot:
    case TokKind::KwLambda:
    case TokKind::LParen:
    case TokKind::LBracket:
    case TokKind::LBrace:
    case TokKind::Minus:
    case TokKind::Plus:
    case TokKind::Tilde:
      return true;
    default:
      return false;
    }
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  uint32_t fileId_;
  DiagnosticEngine &diags_;
  int depth_ = 0;
  bool depthReported_ = false;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

std::unique_ptr<Module> Parser::parseModule() {
  auto module = std::make_unique<Module>();
  module->fileId = fileId_;
  while (!at(TokKind::Eof) && !diags_.tooManyErrors()) {
    if (accept(TokKind::Newline))
      continue;
    if (at(TokKind::Indent)) {
      diags_.error(cur().loc, "unexpected indent");
      recoverToNewline();
      continue;
    }
    if (at(TokKind::Dedent)) {
      consume();
      continue;
    }
    parseStatement(module->body);
  }
  return module;
}

void Parser::parseStatement(Block &out) {
  DepthGuard guard(*this);
  if (!guard.ok) {
    recoverToNewline();
    return;
  }
  switch (cur().kind) {
  case TokKind::KwIf:
    if (auto s = parseIf(false))
      out.push_back(std::move(s));
    return;
  case TokKind::KwFor:
    if (auto s = parseFor())
      out.push_back(std::move(s));
    return;
  case TokKind::KwWhile:
    if (auto s = parseWhile())
      out.push_back(std::move(s));
    return;
  case TokKind::KwDef:
    if (auto s = parseFunctionDef({}))
      out.push_back(std::move(s));
    return;
  case TokKind::At: {
    std::vector<ExprPtr> decorators;
    while (at(TokKind::At)) {
      consume();
      ExprPtr d = parseTest();
      if (!d || !at(TokKind::Newline)) {
        if (d)
          errorExpected("end of line", "after decorator");
        recoverToNewline();
        continue;
      }
      consume();
      decorators.push_back(std::move(d));
    }
    if (!at(TokKind::KwDef)) {
      errorExpected("'def'", "after decorators");
      recoverToNewline();
      return;
    }
    if (auto s = parseFunctionDef(std::move(decorators)))
      out.push_back(std::move(s));
    return;
  }
  case TokKind::KwClass:
    out.push_back(parseUnsupportedCompound("class definitions"));
    return;
  case TokKind::KwWith:
    out.push_back(parseUnsupportedCompound("'with' statements"));
    return;
  case TokKind::KwTry:
    out.push_back(parseUnsupportedCompound("'try' statements"));
    return;
  case TokKind::KwElif:
  case TokKind::KwElse:
    diags_.error(cur().loc, std::string(tokKindName(cur().kind)) +
                                " without a matching 'if'");
    recoverToNewline();
    return;
  default:
    if (!parseSimpleStatements(out))
      recoverToNewline();
    return;
  }
}

bool Parser::parseSimpleStatements(Block &out) {
  while (true) {
    StmtPtr s = parseSmallStatement();
    if (!s)
      return false;
    out.push_back(std::move(s));
    if (accept(TokKind::Semicolon)) {
      if (at(TokKind::Newline) || at(TokKind::Eof))
        break;
      continue;
    }
    break;
  }
  if (at(TokKind::Eof))
    return true;
  if (!accept(TokKind::Newline)) {
    errorExpected("end of line", "after statement");
    return false;
  }
  return true;
}

StmtPtr Parser::parseSmallStatement() {
  SourceLoc loc = cur().loc;
  switch (cur().kind) {
  case TokKind::KwPass:
    consume();
    return std::make_unique<PassStmt>(loc);
  case TokKind::KwBreak:
    consume();
    return std::make_unique<BreakStmt>(loc);
  case TokKind::KwContinue:
    consume();
    return std::make_unique<ContinueStmt>(loc);
  case TokKind::KwReturn: {
    consume();
    ExprPtr value;
    if (!at(TokKind::Newline) && !at(TokKind::Semicolon) && !at(TokKind::Eof)) {
      value = parseTestList();
      if (!value)
        return nullptr;
    }
    return std::make_unique<ReturnStmt>(loc, std::move(value));
  }
  case TokKind::KwImport:
  case TokKind::KwFrom:
    return parseImport();
  case TokKind::KwGlobal:
  case TokKind::KwYield:
  case TokKind::KwAssert:
  case TokKind::KwDel:
  case TokKind::KwLambda: {
    std::string what = cur().text;
    diags_.error(loc, "'" + what + "' is not supported in the tile language");
    while (!at(TokKind::Newline) && !at(TokKind::Eof) && !at(TokKind::Semicolon))
      consume();
    return std::make_unique<UnsupportedStmt>(loc, what);
  }
  default:
    break;
  }

  if (!startsExpression()) {
    errorExpected("a statement");
    return nullptr;
  }
  ExprPtr first = parseTestList();
  if (!first)
    return nullptr;

  // Annotated assignment `x: T [= v]`.
  if (at(TokKind::Colon)) {
    consume();
    ExprPtr annotation = parseTest();
    if (!annotation)
      return nullptr;
    ExprPtr value;
    if (accept(TokKind::Assign)) {
      value = parseTestList();
      if (!value)
        return nullptr;
    }
    return std::make_unique<AnnAssignStmt>(loc, std::move(first),
                                           std::move(annotation),
                                           std::move(value));
  }

  // Augmented assignment.
  static const std::pair<TokKind, BinaryOp> augOps[] = {
      {TokKind::PlusEq, BinaryOp::Add},       {TokKind::MinusEq, BinaryOp::Sub},
      {TokKind::StarEq, BinaryOp::Mul},       {TokKind::SlashEq, BinaryOp::Div},
      {TokKind::DoubleSlashEq, BinaryOp::FloorDiv},
      {TokKind::PercentEq, BinaryOp::Mod},    {TokKind::DoubleStarEq, BinaryOp::Pow},
      {TokKind::AmpEq, BinaryOp::BitAnd},     {TokKind::PipeEq, BinaryOp::BitOr},
      {TokKind::CaretEq, BinaryOp::BitXor},   {TokKind::LShiftEq, BinaryOp::LShift},
      {TokKind::RShiftEq, BinaryOp::RShift},  {TokKind::AtEq, BinaryOp::MatMul},
  };
  for (auto [kind, op] : augOps) {
    if (at(kind)) {
      SourceLoc opLoc = cur().loc;
      consume();
      ExprPtr value = parseTestList();
      if (!value)
        return nullptr;
      if (!llvm::isa<NameExpr, SubscriptExpr, AttributeExpr>(first.get())) {
        diags_.error(first->loc(),
                     "illegal target for augmented assignment");
        return nullptr;
      }
      (void)opLoc;
      return std::make_unique<AugAssignStmt>(loc, std::move(first), op,
                                             std::move(value));
    }
  }

  // Plain (possibly chained) assignment.
  if (at(TokKind::Assign)) {
    std::vector<ExprPtr> targets;
    targets.push_back(std::move(first));
    ExprPtr value;
    while (accept(TokKind::Assign)) {
      if (!startsExpression()) {
        errorExpected("an expression", "after '='");
        return nullptr;
      }
      value = parseTestList();
      if (!value)
        return nullptr;
      if (at(TokKind::Assign))
        targets.push_back(std::move(value));
    }
    return std::make_unique<AssignStmt>(loc, std::move(targets),
                                        std::move(value));
  }
  return std::make_unique<ExprStmt>(loc, std::move(first));
}

Block Parser::parseSuite(const char *what) {
  Block body;
  if (!expect(TokKind::Colon, std::string("after ") + what)) {
    recoverToNewline();
    return body;
  }
  if (!at(TokKind::Newline)) {
    // Simple statements on the same line: `if x: pass`.
    if (!parseSimpleStatements(body))
      recoverToNewline();
    return body;
  }
  consume();
  if (!at(TokKind::Indent)) {
    errorExpected("an indented block", std::string("after ") + what);
    return body;
  }
  consume();
  while (!at(TokKind::Dedent) && !at(TokKind::Eof) && !diags_.tooManyErrors()) {
    if (accept(TokKind::Newline))
      continue;
    if (at(TokKind::Indent)) {
      diags_.error(cur().loc, "unexpected indent");
      recoverToNewline();
      continue;
    }
    size_t before = pos_;
    parseStatement(body);
    if (pos_ == before)
      consume(); // Guarantee progress on malformed input.
  }
  accept(TokKind::Dedent);
  return body;
}

StmtPtr Parser::parseIf(bool isElif) {
  SourceLoc loc = cur().loc;
  consume(); // 'if' / 'elif'
  ExprPtr cond = parseTest();
  if (!cond) {
    recoverToNewline();
    return nullptr;
  }
  Block body = parseSuite(isElif ? "'elif' condition" : "'if' condition");
  Block orelse;
  if (at(TokKind::KwElif)) {
    if (auto s = parseIf(true))
      orelse.push_back(std::move(s));
  } else if (at(TokKind::KwElse)) {
    consume();
    orelse = parseSuite("'else'");
  }
  return std::make_unique<IfStmt>(loc, std::move(cond), std::move(body),
                                  std::move(orelse), isElif);
}

StmtPtr Parser::parseFor() {
  SourceLoc loc = cur().loc;
  consume();
  // Target: a name or a tuple of names (parsed as a bit-or level expression
  // list so that `in` is not taken as a comparison).
  std::vector<ExprPtr> targets;
  do {
    ExprPtr t = parseBitOr();
    if (!t) {
      recoverToNewline();
      return nullptr;
    }
    targets.push_back(std::move(t));
  } while (accept(TokKind::Comma) && !at(TokKind::KwIn));
  ExprPtr target = targets.size() == 1
                       ? std::move(targets[0])
                       : std::make_unique<TupleExpr>(loc, std::move(targets));
  if (!expect(TokKind::KwIn, "in 'for' statement")) {
    recoverToNewline();
    return nullptr;
  }
  ExprPtr iter = parseTestList();
  if (!iter) {
    recoverToNewline();
    return nullptr;
  }
  Block body = parseSuite("'for' clause");
  Block orelse;
  if (at(TokKind::KwElse)) {
    consume();
    orelse = parseSuite("'else'");
  }
  return std::make_unique<ForStmt>(loc, std::move(target), std::move(iter),
                                   std::move(body), std::move(orelse));
}

StmtPtr Parser::parseWhile() {
  SourceLoc loc = cur().loc;
  consume();
  ExprPtr cond = parseTest();
  if (!cond) {
    recoverToNewline();
    return nullptr;
  }
  Block body = parseSuite("'while' condition");
  if (at(TokKind::KwElse)) {
    consume();
    (void)parseSuite("'else'");
  }
  return std::make_unique<WhileStmt>(loc, std::move(cond), std::move(body));
}

StmtPtr Parser::parseFunctionDef(std::vector<ExprPtr> decorators) {
  auto fn = std::make_unique<FunctionDef>(cur().loc);
  consume(); // 'def'
  fn->decorators = std::move(decorators);
  if (!at(TokKind::Identifier)) {
    errorExpected("function name", "after 'def'");
    recoverToNewline();
    return nullptr;
  }
  fn->name = cur().text;
  fn->nameLoc = cur().loc;
  consume();
  if (!expect(TokKind::LParen, "after function name")) {
    recoverToNewline();
    return nullptr;
  }
  bool seenDefault = false;
  while (!at(TokKind::RParen)) {
    if (at(TokKind::Star) || at(TokKind::DoubleStar)) {
      diags_.error(cur().loc, "variadic parameters (*args, **kwargs) are not "
                              "supported in the tile language");
      recoverToNewline();
      return nullptr;
    }
    if (!at(TokKind::Identifier)) {
      errorExpected("parameter name");
      recoverToNewline();
      return nullptr;
    }
    Param p;
    p.loc = cur().loc;
    p.name = cur().text;
    consume();
    if (accept(TokKind::Colon)) {
      p.annotation = parseTest();
      if (!p.annotation) {
        recoverToNewline();
        return nullptr;
      }
    }
    if (accept(TokKind::Assign)) {
      p.defaultValue = parseTest();
      if (!p.defaultValue) {
        recoverToNewline();
        return nullptr;
      }
      seenDefault = true;
    } else if (seenDefault) {
      diags_.error(p.loc, "parameter '" + p.name +
                              "' without a default follows a parameter with "
                              "a default");
    }
    for (const Param &q : fn->params)
      if (q.name == p.name)
        diags_.error(p.loc, "duplicate parameter '" + p.name + "'");
    fn->params.push_back(std::move(p));
    if (!accept(TokKind::Comma))
      break;
  }
  if (!expect(TokKind::RParen, "to close the parameter list")) {
    recoverToNewline();
    return nullptr;
  }
  if (accept(TokKind::Arrow)) {
    fn->returns = parseTest();
    if (!fn->returns) {
      recoverToNewline();
      return nullptr;
    }
  }
  fn->body = parseSuite("function signature");
  // Docstring: a leading string expression statement.
  if (!fn->body.empty())
    if (auto *es = llvm::dyn_cast<ExprStmt>(fn->body.front().get()))
      if (auto *str = llvm::dyn_cast<StrExpr>(es->value.get())) {
        fn->docstring = str->value;
        fn->body.erase(fn->body.begin());
      }
  return fn;
}

StmtPtr Parser::parseImport() {
  SourceLoc loc = cur().loc;
  auto dottedName = [&](std::string &out) {
    if (!at(TokKind::Identifier)) {
      errorExpected("module name");
      return false;
    }
    out = cur().text;
    consume();
    while (accept(TokKind::Dot)) {
      if (!at(TokKind::Identifier)) {
        errorExpected("name", "after '.'");
        return false;
      }
      out += "." + cur().text;
      consume();
    }
    return true;
  };
  std::string module;
  std::vector<std::string> names;
  if (accept(TokKind::KwImport)) {
    do {
      std::string name;
      if (!dottedName(name))
        return nullptr;
      if (accept(TokKind::KwAs)) {
        if (!at(TokKind::Identifier)) {
          errorExpected("name", "after 'as'");
          return nullptr;
        }
        consume();
      }
      names.push_back(name);
    } while (accept(TokKind::Comma));
    module = names.front();
  } else {
    consume(); // 'from'
    if (!dottedName(module))
      return nullptr;
    if (!expect(TokKind::KwImport, "in 'from' import"))
      return nullptr;
    bool paren = accept(TokKind::LParen);
    do {
      if (at(TokKind::Star)) {
        consume();
        names.push_back("*");
        continue;
      }
      if (!at(TokKind::Identifier)) {
        errorExpected("name to import");
        return nullptr;
      }
      names.push_back(cur().text);
      consume();
      if (accept(TokKind::KwAs)) {
        if (!at(TokKind::Identifier)) {
          errorExpected("name", "after 'as'");
          return nullptr;
        }
        consume();
      }
    } while (accept(TokKind::Comma) && !at(TokKind::RParen));
    if (paren && !expect(TokKind::RParen, "to close the import list"))
      return nullptr;
  }
  return std::make_unique<ImportStmt>(loc, std::move(module), std::move(names));
}

StmtPtr Parser::parseUnsupportedCompound(const char *what) {
  SourceLoc loc = cur().loc;
  diags_.error(loc, std::string(what) + " are not supported in the tile language");
  while (!at(TokKind::Colon) && !at(TokKind::Newline) && !at(TokKind::Eof))
    consume();
  if (at(TokKind::Colon)) {
    // Parse and drop the body so that later statements are still checked.
    DiagnosticEngine *saved = nullptr;
    (void)saved;
    Block ignored = parseSuite(what);
  } else {
    recoverToNewline();
  }
  return std::make_unique<UnsupportedStmt>(loc, what);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ExprPtr Parser::parseTestList(bool allowTrailingComma) {
  SourceLoc loc = cur().loc;
  ExprPtr first = parseTest();
  if (!first || !at(TokKind::Comma))
    return first;
  std::vector<ExprPtr> elts;
  elts.push_back(std::move(first));
  while (accept(TokKind::Comma)) {
    if (!startsExpression())
      break;
    ExprPtr e = parseTest();
    if (!e)
      return nullptr;
    elts.push_back(std::move(e));
  }
  (void)allowTrailingComma;
  return std::make_unique<TupleExpr>(loc, std::move(elts));
}

ExprPtr Parser::parseTest() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  if (at(TokKind::KwLambda)) {
    diags_.error(cur().loc, "lambda expressions are not supported in the tile "
                            "language");
    return nullptr;
  }
  SourceLoc loc = cur().loc;
  ExprPtr body = parseOrTest();
  if (!body || !at(TokKind::KwIf))
    return body;
  consume();
  ExprPtr cond = parseOrTest();
  if (!cond)
    return nullptr;
  if (!expect(TokKind::KwElse, "in conditional expression"))
    return nullptr;
  ExprPtr orelse = parseTest();
  if (!orelse)
    return nullptr;
  return std::make_unique<IfExpExpr>(loc, std::move(cond), std::move(body),
                                     std::move(orelse));
}

ExprPtr Parser::parseOrTest() {
  SourceLoc loc = cur().loc;
  ExprPtr first = parseAndTest();
  if (!first || !at(TokKind::KwOr))
    return first;
  std::vector<ExprPtr> values;
  values.push_back(std::move(first));
  while (accept(TokKind::KwOr)) {
    ExprPtr e = parseAndTest();
    if (!e)
      return nullptr;
    values.push_back(std::move(e));
  }
  return std::make_unique<BoolOpExpr>(loc, false, std::move(values));
}

ExprPtr Parser::parseAndTest() {
  SourceLoc loc = cur().loc;
  ExprPtr first = parseNotTest();
  if (!first || !at(TokKind::KwAnd))
    return first;
  std::vector<ExprPtr> values;
  values.push_back(std::move(first));
  while (accept(TokKind::KwAnd)) {
    ExprPtr e = parseNotTest();
    if (!e)
      return nullptr;
    values.push_back(std::move(e));
  }
  return std::make_unique<BoolOpExpr>(loc, true, std::move(values));
}

ExprPtr Parser::parseNotTest() {
  if (at(TokKind::KwNot)) {
    DepthGuard guard(*this);
    if (!guard.ok)
      return nullptr;
    SourceLoc loc = cur().loc;
    consume();
    ExprPtr operand = parseNotTest();
    if (!operand)
      return nullptr;
    return std::make_unique<UnaryExpr>(loc, UnaryOp::Not, std::move(operand));
  }
  return parseComparison();
}

ExprPtr Parser::parseComparison() {
  SourceLoc loc = cur().loc;
  ExprPtr first = parseBitOr();
  if (!first)
    return nullptr;
  std::vector<CmpOp> ops;
  std::vector<ExprPtr> operands;
  operands.push_back(std::move(first));
  while (true) {
    CmpOp op;
    switch (cur().kind) {
    case TokKind::EqEq: op = CmpOp::Eq; break;
    case TokKind::NotEq: op = CmpOp::Ne; break;
    case TokKind::Less: op = CmpOp::Lt; break;
    case TokKind::LessEq: op = CmpOp::Le; break;
    case TokKind::Greater: op = CmpOp::Gt; break;
    case TokKind::GreaterEq: op = CmpOp::Ge; break;
    case TokKind::KwIn: op = CmpOp::In; break;
    case TokKind::KwIs:
      op = peekTok().kind == TokKind::KwNot ? CmpOp::IsNot : CmpOp::Is;
      break;
    case TokKind::KwNot:
      if (peekTok().kind != TokKind::KwIn)
        goto done;
      op = CmpOp::NotIn;
      break;
    default:
      goto done;
    }
    consume();
    if (op == CmpOp::IsNot || op == CmpOp::NotIn)
      consume();
    {
      ExprPtr rhs = parseBitOr();
      if (!rhs)
        return nullptr;
      ops.push_back(op);
      operands.push_back(std::move(rhs));
    }
  }
done:
  if (ops.empty())
    return std::move(operands[0]);
  return std::make_unique<CompareExpr>(loc, std::move(ops), std::move(operands));
}

#define TESSERA_BINARY_LEVEL(Name, Next, ...)                                  \
  ExprPtr Parser::Name() {                                                     \
    ExprPtr lhs = Next();                                                      \
    if (!lhs)                                                                  \
      return nullptr;                                                          \
    static const std::pair<TokKind, BinaryOp> ops[] = {__VA_ARGS__};           \
    ChainGuard chain(*this);                                                   \
    while (true) {                                                             \
      bool matched = false;                                                    \
      for (auto [kind, op] : ops) {                                            \
        if (at(kind)) {                                                        \
          if (!chain.next())                                                   \
            return nullptr;                                                    \
          SourceLoc loc = cur().loc;                                           \
          consume();                                                           \
          ExprPtr rhs = Next();                                                \
          if (!rhs)                                                            \
            return nullptr;                                                    \
          lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs),          \
                                             std::move(rhs));                  \
          matched = true;                                                      \
          break;                                                               \
        }                                                                      \
      }                                                                        \
      if (!matched)                                                            \
        return lhs;                                                            \
    }                                                                          \
  }

TESSERA_BINARY_LEVEL(parseBitOr, parseBitXor, {TokKind::Pipe, BinaryOp::BitOr})
TESSERA_BINARY_LEVEL(parseBitXor, parseBitAnd, {TokKind::Caret, BinaryOp::BitXor})
TESSERA_BINARY_LEVEL(parseBitAnd, parseShift, {TokKind::Amp, BinaryOp::BitAnd})
TESSERA_BINARY_LEVEL(parseShift, parseArith, {TokKind::LShift, BinaryOp::LShift},
                     {TokKind::RShift, BinaryOp::RShift})
TESSERA_BINARY_LEVEL(parseArith, parseTerm, {TokKind::Plus, BinaryOp::Add},
                     {TokKind::Minus, BinaryOp::Sub})
TESSERA_BINARY_LEVEL(parseTerm, parseFactor, {TokKind::Star, BinaryOp::Mul},
                     {TokKind::Slash, BinaryOp::Div},
                     {TokKind::DoubleSlash, BinaryOp::FloorDiv},
                     {TokKind::Percent, BinaryOp::Mod},
                     {TokKind::At, BinaryOp::MatMul})
#undef TESSERA_BINARY_LEVEL

ExprPtr Parser::parseFactor() {
  UnaryOp op;
  switch (cur().kind) {
  case TokKind::Minus: op = UnaryOp::Neg; break;
  case TokKind::Plus: op = UnaryOp::Pos; break;
  case TokKind::Tilde: op = UnaryOp::Invert; break;
  default:
    return parsePower();
  }
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  SourceLoc loc = cur().loc;
  consume();
  ExprPtr operand = parseFactor();
  if (!operand)
    return nullptr;
  return std::make_unique<UnaryExpr>(loc, op, std::move(operand));
}

ExprPtr Parser::parsePower() {
  ExprPtr base = parsePrimary();
  if (!base || !at(TokKind::DoubleStar))
    return base;
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  SourceLoc loc = cur().loc;
  consume();
  ExprPtr exponent = parseFactor();
  if (!exponent)
    return nullptr;
  return std::make_unique<BinaryExpr>(loc, BinaryOp::Pow, std::move(base),
                                      std::move(exponent));
}

bool Parser::parseCallArgs(std::vector<ExprPtr> &args,
                           std::vector<Keyword> &kws) {
  while (!at(TokKind::RParen)) {
    if (at(TokKind::Star) || at(TokKind::DoubleStar)) {
      diags_.error(cur().loc, "argument unpacking (*args, **kwargs) is not "
                              "supported in the tile language");
      return false;
    }
    if (at(TokKind::Identifier) && peekTok().kind == TokKind::Assign) {
      Keyword kw;
      kw.loc = cur().loc;
      kw.name = cur().text;
      consume();
      consume();
      kw.value = parseTest();
      if (!kw.value)
        return false;
      for (const Keyword &k : kws)
        if (k.name == kw.name) {
          diags_.error(kw.loc, "keyword argument '" + kw.name + "' repeated");
          return false;
        }
      kws.push_back(std::move(kw));
    } else {
      if (!kws.empty()) {
        diags_.error(cur().loc,
                     "positional argument follows keyword argument");
        return false;
      }
      if (!startsExpression()) {
        errorExpected("an argument");
        return false;
      }
      ExprPtr e = parseTest();
      if (!e)
        return false;
      if (at(TokKind::KwFor)) {
        diags_.error(cur().loc, "generator expressions are not supported in "
                                "the tile language");
        return false;
      }
      args.push_back(std::move(e));
    }
    if (!accept(TokKind::Comma))
      break;
  }
  return expect(TokKind::RParen, "to close the argument list");
}

ExprPtr Parser::parseSubscriptItem() {
  SourceLoc loc = cur().loc;
  ExprPtr lower, upper, step;
  if (!at(TokKind::Colon)) {
    lower = parseTest();
    if (!lower)
      return nullptr;
    if (!at(TokKind::Colon))
      return lower;
  }
  consume(); // ':'
  if (!at(TokKind::Colon) && !at(TokKind::Comma) && !at(TokKind::RBracket)) {
    upper = parseTest();
    if (!upper)
      return nullptr;
  }
  if (accept(TokKind::Colon)) {
    if (!at(TokKind::Comma) && !at(TokKind::RBracket)) {
      step = parseTest();
      if (!step)
        return nullptr;
    }
  }
  return std::make_unique<SliceExpr>(loc, std::move(lower), std::move(upper),
                                     std::move(step));
}

ExprPtr Parser::parsePrimary() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  ExprPtr e = parseAtom();
  if (!e)
    return nullptr;
  ChainGuard chain(*this);
  while (true) {
    if (!at(TokKind::LParen) && !at(TokKind::LBracket) && !at(TokKind::Dot))
      return e;
    if (!chain.next())
      return nullptr;
    SourceLoc loc = cur().loc;
    if (accept(TokKind::LParen)) {
      std::vector<ExprPtr> args;
      std::vector<Keyword> kws;
      if (!parseCallArgs(args, kws))
        return nullptr;
      SourceLoc callLoc = e->loc();
      e = std::make_unique<CallExpr>(callLoc, std::move(e), std::move(args),
                                     std::move(kws));
      continue;
    }
    if (accept(TokKind::LBracket)) {
      std::vector<ExprPtr> indices;
      while (!at(TokKind::RBracket)) {
        ExprPtr item = parseSubscriptItem();
        if (!item)
          return nullptr;
        indices.push_back(std::move(item));
        if (!accept(TokKind::Comma))
          break;
      }
      if (!expect(TokKind::RBracket, "to close the subscript"))
        return nullptr;
      if (indices.empty()) {
        diags_.error(loc, "empty subscript");
        return nullptr;
      }
      SourceLoc subLoc = e->loc();
      e = std::make_unique<SubscriptExpr>(subLoc, std::move(e),
                                          std::move(indices));
      continue;
    }
    if (accept(TokKind::Dot)) {
      if (!at(TokKind::Identifier)) {
        errorExpected("attribute name", "after '.'");
        return nullptr;
      }
      SourceLoc nameLoc = cur().loc;
      std::string name = cur().text;
      consume();
      SourceLoc attrLoc = e->loc();
      // Extend the highlighted range to cover `base.name` on one line.
      if (attrLoc.line == nameLoc.line && nameLoc.col >= attrLoc.col)
        attrLoc.length = nameLoc.col - attrLoc.col + nameLoc.length;
      e = std::make_unique<AttributeExpr>(attrLoc, std::move(e), std::move(name),
                                          nameLoc);
      continue;
    }
    return e;
  }
}

ExprPtr Parser::parseAtom() {
  const Token &t = cur();
  SourceLoc loc = t.loc;
  switch (t.kind) {
  case TokKind::Identifier: {
    auto e = std::make_unique<NameExpr>(loc, t.text);
    consume();
    return e;
  }
  case TokKind::Int: {
    bool overflow = t.text == "overflow";
    int64_t v = overflow ? 0 : std::strtoll(t.text.c_str(), nullptr, 10);
    consume();
    return std::make_unique<IntExpr>(loc, v, overflow);
  }
  case TokKind::Float: {
    double v = std::strtod(t.text.c_str(), nullptr);
    consume();
    return std::make_unique<FloatExpr>(loc, v);
  }
  case TokKind::String: {
    std::string value = t.text;
    consume();
    while (at(TokKind::String)) { // Adjacent literals concatenate.
      value += cur().text;
      consume();
    }
    return std::make_unique<StrExpr>(loc, std::move(value));
  }
  case TokKind::KwTrue:
    consume();
    return std::make_unique<BoolExpr>(loc, true);
  case TokKind::KwFalse:
    consume();
    return std::make_unique<BoolExpr>(loc, false);
  case TokKind::KwNone:
    consume();
    return std::make_unique<NoneExpr>(loc);
  case TokKind::LParen:
    return parseParenthesized();
  case TokKind::LBracket:
    return parseListDisplay();
  case TokKind::LBrace:
    return parseDictDisplay();
  default:
    errorExpected("an expression");
    return nullptr;
  }
}

ExprPtr Parser::parseParenthesized() {
  SourceLoc loc = cur().loc;
  consume(); // '('
  if (accept(TokKind::RParen))
    return std::make_unique<TupleExpr>(loc, std::vector<ExprPtr>{});
  ExprPtr first = parseTest();
  if (!first)
    return nullptr;
  if (at(TokKind::KwFor)) {
    diags_.error(cur().loc,
                 "generator expressions are not supported in the tile language");
    return nullptr;
  }
  if (accept(TokKind::RParen))
    return first;
  std::vector<ExprPtr> elts;
  elts.push_back(std::move(first));
  while (accept(TokKind::Comma)) {
    if (at(TokKind::RParen))
      break;
    ExprPtr e = parseTest();
    if (!e)
      return nullptr;
    elts.push_back(std::move(e));
  }
  if (!expect(TokKind::RParen, "to close the parenthesis"))
    return nullptr;
  return std::make_unique<TupleExpr>(loc, std::move(elts));
}

ExprPtr Parser::parseListDisplay() {
  SourceLoc loc = cur().loc;
  consume(); // '['
  std::vector<ExprPtr> elts;
  while (!at(TokKind::RBracket)) {
    ExprPtr e = parseTest();
    if (!e)
      return nullptr;
    if (at(TokKind::KwFor)) {
      diags_.error(cur().loc,
                   "list comprehensions are not supported in the tile language");
      return nullptr;
    }
    elts.push_back(std::move(e));
    if (!accept(TokKind::Comma))
      break;
  }
  if (!expect(TokKind::RBracket, "to close the list"))
    return nullptr;
  return std::make_unique<ListExpr>(loc, std::move(elts));
}

ExprPtr Parser::parseDictDisplay() {
  SourceLoc loc = cur().loc;
  consume(); // '{'
  std::vector<ExprPtr> keys, values;
  while (!at(TokKind::RBrace)) {
    ExprPtr k = parseTest();
    if (!k)
      return nullptr;
    if (!expect(TokKind::Colon, "in dictionary display"))
      return nullptr;
    ExprPtr v = parseTest();
    if (!v)
      return nullptr;
    keys.push_back(std::move(k));
    values.push_back(std::move(v));
    if (!accept(TokKind::Comma))
      break;
  }
  if (!expect(TokKind::RBrace, "to close the dictionary"))
    return nullptr;
  return std::make_unique<DictExpr>(loc, std::move(keys), std::move(values));
}

} // namespace

std::unique_ptr<Module> tessera::parseModule(const SourceManager &sm,
                                             uint32_t fileId,
                                             DiagnosticEngine &diags) {
  std::vector<Token> tokens = lex(sm.getText(fileId), fileId, diags);
  Parser parser(std::move(tokens), fileId, diags);
  return parser.parseModule();
}
