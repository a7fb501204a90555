//===- FrontendTest.cpp - Lexer, parser, declarations ---------------------===//

#include "tessera/Driver/Driver.h"
#include "tessera/Frontend/Lexer.h"
#include "tessera/Frontend/Parser.h"
#include "tessera/Sema/Signature.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace tessera;
using ::testing::HasSubstr;

namespace {

std::vector<TokKind> kinds(const std::string &text) {
  SourceManager sm;
  uint32_t id = sm.addFile("t.tile", text);
  DiagnosticEngine diags(sm);
  std::vector<TokKind> out;
  for (const Token &t : lex(sm.getText(id), id, diags))
    out.push_back(t.kind);
  EXPECT_FALSE(diags.hasErrors()) << diags.render();
  return out;
}

TEST(Lexer, IndentationBecomesIndentDedent) {
  auto k = kinds("if x:\n    y = 1\nz = 2\n");
  EXPECT_NE(std::find(k.begin(), k.end(), TokKind::Indent), k.end());
  EXPECT_NE(std::find(k.begin(), k.end(), TokKind::Dedent), k.end());
  EXPECT_EQ(k.back(), TokKind::Eof);
}

TEST(Lexer, NumbersAndStrings) {
  SourceManager sm;
  uint32_t id = sm.addFile("t.tile", "1.5e3 42 'a\\n' 0x10\n");
  DiagnosticEngine diags(sm);
  auto toks = lex(sm.getText(id), id, diags);
  ASSERT_FALSE(diags.hasErrors()) << diags.render();
  EXPECT_EQ(toks[0].kind, TokKind::Float);
  EXPECT_EQ(toks[1].kind, TokKind::Int);
  EXPECT_EQ(toks[2].kind, TokKind::String);
  EXPECT_EQ(toks[2].text, "a\n");
}

TEST(Lexer, ErrorsHaveLocations) {
  SourceManager sm;
  uint32_t id = sm.addFile("t.tile", "x = 'open\ny = $\n");
  DiagnosticEngine diags(sm);
  lex(sm.getText(id), id, diags);
  ASSERT_GE(diags.errorCount(), 2u);
  EXPECT_EQ(diags.diagnostics()[0].loc.line, 1u);
  EXPECT_EQ(diags.diagnostics()[1].loc.line, 2u);
}

TEST(Parser, ReportsSeveralErrorsAndRecovers) {
  SourceManager sm;
  uint32_t id = sm.addFile("p.tile", "y = 2 +\nz = )\nw = 3\nv = *\n");
  DiagnosticEngine diags(sm);
  auto m = parseModule(sm, id, diags);
  EXPECT_EQ(diags.errorCount(), 3u);
  std::string text = diags.render();
  EXPECT_THAT(text, HasSubstr("p.tile:4:5: error:"));
  EXPECT_THAT(text, HasSubstr("p.tile:1:"));
  EXPECT_THAT(text, HasSubstr("^"));
}

TEST(Parser, PrintsTheTree) {
  SourceManager sm;
  uint32_t id = sm.addFile("p.tile", "a = b[:, None] + f(c, k=1)\n");
  DiagnosticEngine diags(sm);
  auto m = parseModule(sm, id, diags);
  ASSERT_FALSE(diags.hasErrors()) << diags.render();
  std::string tree = ast::printModule(*m);
  EXPECT_THAT(tree, HasSubstr("f"));
  EXPECT_THAT(tree, HasSubstr("None"));
}

TEST(Signature, ReadsAutotuneAndParameters) {
  auto m = driver::SourceModule::parse("s.tile", R"(
@autotune(space=dict(BLOCK=[64, 128], num_warps=[4, 8]), key=["N"])
@kernel(grid=(cdiv(N, BLOCK),))
def k(x: Tensor["N", dtype], y: Tensor["N", 4, f16], alpha: float = 2.0,
      MODE: str = "axpy", BLOCK: constexpr = 64):
    pass
)");
  ASSERT_TRUE(m.ok()) << m.status().toString();
  const KernelInfo *k = (*m)->findKernel("k");
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->params.size(), 5u);
  EXPECT_EQ(k->params[0].kind, ParamKind::Tensor);
  EXPECT_EQ(k->params[0].dtype, "dtype");
  EXPECT_EQ(k->params[1].dims[1].fixed, 4);
  EXPECT_EQ(k->params[2].kind, ParamKind::Scalar);
  EXPECT_EQ(k->params[3].kind, ParamKind::Constexpr);
  ASSERT_TRUE(k->autotune.has_value());
  EXPECT_EQ(k->autotune->space.size(), 2u);
  EXPECT_EQ(k->autotune->key, std::vector<std::string>{"N"});
  auto grid = (*m)->evaluateGrid("k", {}, {{"N", 1000}});
  ASSERT_TRUE(grid.ok()) << grid.status().toString();
  EXPECT_EQ((*grid)[0], 16);
}

// Under index32 a grid axis may hold what the grid reaches at 31-bit shapes.
TEST(Signature, Index32GridBoundIsTheGridAtTheLargestShapes) {
  auto m = driver::SourceModule::parse("b.tile", R"(
@kernel(grid=(cdiv(N, BLOCK), M, 4))
def k(x: Tensor["M", "N", f32], BLOCK: constexpr = 1024):
    pass

@kernel(grid=(M * N,))
def wide(x: Tensor["M", "N", f32]):
    pass

@kernel
def nogrid(x: Tensor["N", f32]):
    pass
)");
  ASSERT_TRUE(m.ok()) << m.status().toString();
  using Bound = std::array<int64_t, 3>;
  constexpr int64_t kMax = driver::kNoGridBound;
  EXPECT_EQ((*m)->index32GridBound("k", {}), (Bound{1 << 21, kMax, 4}));
  Specialization s;
  s.constants["BLOCK"] = ConstValue::integer(4096);
  EXPECT_EQ((*m)->index32GridBound("k", s), (Bound{1 << 19, kMax, 4}));
  // Capped at what CUDA allows; no grid, no bound.
  EXPECT_EQ((*m)->index32GridBound("wide", {}), (Bound{kMax, kMax, kMax}));
  EXPECT_EQ((*m)->index32GridBound("nogrid", {}), (Bound{kMax, kMax, kMax}));
}

TEST(Signature, PackedDTypesAreTensorTypesOnly) {
  auto ok = driver::SourceModule::parse(
      "f.tile", "@kernel\ndef k(x: Tensor[\"N\", fp4]):\n    pass\n");
  EXPECT_TRUE(ok.ok()) << ok.status().toString();
  auto m = driver::SourceModule::parse(
      "f.tile", "@kernel\ndef k(x: fp6_e2m3):\n    pass\n");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("packed storage type"));
}

} // namespace
