//===- SemaTest.cpp - Type rules, the built-in table, MLIRGen -------------===//

#include "tessera/Driver/Driver.h"
#include "tessera/Sema/Builtins.h"
#include "tessera/Sema/TypeRules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

using namespace tessera;
using namespace tessera::sema;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

//===----------------------------------------------------------------------===//
// Type rules
//===----------------------------------------------------------------------===//

TEST(TypeRules, TypedOperandsPromoteAsTheReferenceSays) {
  EXPECT_EQ(promoteTyped(DType::F16, DType::F16), DType::F16);
  EXPECT_EQ(promoteTyped(DType::F16, DType::BF16), DType::F32);
  EXPECT_EQ(promoteTyped(DType::F16, DType::F32), DType::F32);
  EXPECT_EQ(promoteTyped(DType::I32, DType::F16), DType::F16);
  EXPECT_EQ(promoteTyped(DType::BF16, DType::I64), DType::BF16);
  EXPECT_EQ(promoteTyped(DType::Bool, DType::I8), DType::I8);
  EXPECT_EQ(promoteTyped(DType::I8, DType::I64), DType::I64);
  EXPECT_EQ(promoteTyped(DType::I32, DType::I8), DType::I32);
  EXPECT_EQ(promoteTyped(DType::F8E4M3, DType::F8E5M2), DType::F32);
  EXPECT_EQ(promoteTyped(DType::F8E4M3, DType::F16), DType::F16);
  EXPECT_EQ(promoteTyped(DType::BF16, DType::F8E5M2), DType::BF16);
}

TEST(TypeRules, ConstantsAreWeak) {
  ConstValue half = ConstValue::floating(0.5), two = ConstValue::integer(2),
             yes = ConstValue::boolean(true);
  EXPECT_EQ(weakJoin(half, DType::F16), DType::F16);
  EXPECT_EQ(weakJoin(half, DType::I32), DType::F32);
  EXPECT_EQ(weakJoin(two, DType::I8), DType::I8);
  EXPECT_EQ(weakJoin(two, DType::BF16), DType::BF16);
  EXPECT_EQ(weakJoin(two, DType::Bool), DType::I64);
  EXPECT_EQ(weakJoin(yes, DType::I32), DType::I32);
  EXPECT_EQ(constDType(half), DType::F32);
  EXPECT_EQ(constDType(two), DType::I64);
  EXPECT_EQ(constDType(yes), DType::Bool);
  EXPECT_TRUE(isFp8(DType::F8E5M2));
  EXPECT_FALSE(isFp8(DType::F16));
  EXPECT_LT(intRank(DType::I8), intRank(DType::I32));
  EXPECT_EQ(intRank(DType::F32), -1);
}

//===----------------------------------------------------------------------===//
// The table of built-ins
//===----------------------------------------------------------------------===//

TEST(Builtins, EveryEntryIsUniqueVisibleAndDescribed) {
  std::set<std::string_view> names;
  for (const BuiltinInfo &b : builtinTable()) {
    SCOPED_TRACE(std::string(b.name));
    EXPECT_TRUE(names.insert(b.name).second) << "listed twice";
    EXPECT_NE(b.scopes & (Tile | Bare | Method), 0u);
    // `tile.alloc_shared[dtype](n)` takes its dtype in brackets.
    std::string call(b.call);
    EXPECT_TRUE(call.find(std::string(b.name) + "(") != std::string::npos ||
                call.find(std::string(b.name) + "[") != std::string::npos)
        << call;
    EXPECT_FALSE(b.summary.empty());
    EXPECT_FALSE(builtinSectionTitle(b.section).empty());
  }
}

TEST(Builtins, LookupHonoursWhereANameIsVisible) {
  EXPECT_NE(findBuiltin("to", Method), nullptr);
  EXPECT_EQ(findBuiltin("to", Tile), nullptr);
  EXPECT_NE(findBuiltin("range", Bare), nullptr);
  EXPECT_EQ(findBuiltin("range", Tile), nullptr);
  EXPECT_NE(findBuiltin("static_range", Tile), nullptr);
  EXPECT_NE(findBuiltin("max", Bare), nullptr);
  EXPECT_NE(findBuiltin("max", Method), nullptr);
  EXPECT_EQ(findBuiltin("exp", Bare), nullptr);
  EXPECT_EQ(findBuiltin("no_such_builtin", Tile), nullptr);
}

/// The diagnostics of compiling `body` as the body of a one-tensor kernel
/// ("" when it compiles).
std::string compileBody(const std::string &body) {
  std::string src = "@kernel\ndef k(x: Tensor[\"N\", f32]):\n" + body;
  auto m = driver::SourceModule::parse("b.tile", src);
  if (!m.ok())
    return m.status().message();
  auto ir = driver::emit(**m, "k", {}, driver::EmitKind::Tile);
  return ir.ok() ? std::string() : ir.status().message();
}

// Every name of the table reaches its lowering in every scope it is listed
// for: a call without arguments compiles (`x.sum()`) or is the lowering's
// error, never an unknown name.
TEST(Builtins, EveryEntryReachesItsLowering) {
  for (const BuiltinInfo &b : builtinTable()) {
    std::string name(b.name);
    std::vector<std::string> calls;
    if (b.scopes & Tile)
      calls.push_back("tile." + name + "()");
    if (b.scopes & Bare)
      calls.push_back(name + "()");
    if (b.scopes & Method)
      calls.push_back("tile.zeros((4,), f32)." + name + "()");
    for (const std::string &call : calls) {
      SCOPED_TRACE(call);
      std::string diag = compileBody("    y = " + call + "\n");
      bool method = call.rfind("tile.zeros((4,), f32).", 0) == 0;
      // Built-ins without required arguments (tile.barrier(),
      // tile.thread_id(), print(*values), ...) compile.
      bool noArguments = std::string(b.call).find("()") != std::string::npos ||
                         std::string(b.call).find("(*") != std::string::npos ||
                         (b.scopes & Thread);
      if (!method && !noArguments) {
        EXPECT_THAT(diag, HasSubstr("error"));
      }
      EXPECT_THAT(diag, Not(HasSubstr("unknown builtin")));
      EXPECT_THAT(diag, Not(HasSubstr("undefined name")));
      EXPECT_THAT(diag, Not(HasSubstr("has no attribute")));
    }
  }
}

// A kernel is a SIMT program when its body, or a helper it calls, calls a
// thread-level built-in; tile.context() alone does not make one.
TEST(ProgramKind, ThreadLevelCallsMakeASimtProgram) {
  auto m = driver::SourceModule::parse("p.tile", R"(
def lane():
    return tile.lane_id()

@kernel(grid=(1,))
def through_helper(x: Tensor["N", f32]):
    x[0] = lane()

@kernel(grid=(1,))
def direct(x: Tensor["N", f32]):
    s = tile.alloc_shared[f32](4)

@kernel(grid=(1,))
def tiles(x: Tensor["N", f32]):
    ctx = tile.context()
    tile.store(x, tile.load(x, offsets=(0,), shape=(4,)), offsets=(0,))
)");
  ASSERT_TRUE(m.ok()) << m.status().toString();
  EXPECT_TRUE((*m)->findKernel("through_helper")->simt);
  EXPECT_TRUE((*m)->findKernel("direct")->simt);
  EXPECT_FALSE((*m)->findKernel("tiles")->simt);
  auto ir = driver::emit(**m, "through_helper", {}, driver::EmitKind::Tile);
  ASSERT_TRUE(ir.ok()) << ir.status().toString();
  EXPECT_THAT(*ir, HasSubstr("tile.simt"));
  EXPECT_THAT(*ir, HasSubstr("gpu.lane_id"));
}

TEST(Builtins, NamesOutsideTheirScopeAreErrors) {
  EXPECT_THAT(compileBody("    y = tile.range(4)\n"),
              HasSubstr("b.tile:3:14: error: unknown builtin 'tile.range'"));
  EXPECT_THAT(compileBody("    y = exp(1.0)\n"),
              HasSubstr("b.tile:3:9: error: undefined name 'exp'"));
  EXPECT_THAT(
      compileBody("    y = tile.zeros((4,), f32).exp()\n"),
      HasSubstr("error: f32 tile of shape (4,) has no attribute 'exp'"));
}

TEST(Builtins, ArgumentErrorsNameTheBuiltin) {
  EXPECT_THAT(compileBody("    y = tile.exp(1.0, 2.0)\n"),
              HasSubstr("error: exp() takes 1 positional argument (2 given)"));
  EXPECT_THAT(compileBody("    y = tile.where(True, 1.0, 2.0, c=3)\n"),
              HasSubstr("error: where() has no argument 'c'"));
  EXPECT_THAT(compileBody("    for i in range(4):\n        y = range(2)\n"),
              HasSubstr("error: range() can only be used as the iterable of "
                        "a for loop"));
}

// Constexpr strings: startswith/endswith/split and int(str) fold at compile
// time (static_assert fails the compile when a fold is wrong).
TEST(Builtins, ConstexprStringMethodsFold) {
  EXPECT_EQ(compileBody("    p = 'strided_12'\n"
                        "    static_assert(p.startswith('strided'))\n"
                        "    static_assert(not p.endswith('1'))\n"
                        "    static_assert(int(p.split('_')[1]) == 12)\n"
                        "    static_assert(len(' a  b '.split()) == 2)\n"
                        "    static_assert(int(' +7 ') + int('-3') == 4)\n"),
            "");
  for (const char *bad : {"'1x'", "'+-1'", "''", "'99999999999999999999'"})
    EXPECT_THAT(compileBody(std::string("    y = int(") + bad + ")\n"),
                HasSubstr("invalid literal for int() with base 10"))
        << bad;
  EXPECT_THAT(compileBody("    y = 'a'.split('')\n"),
              HasSubstr("split() separator must be a non-empty"));
}

// docs/language.md carries the table's index between two markers; it is
// regenerated with `tessera-compile --list-builtins`.
TEST(Builtins, TheLanguageReferenceIndexesEveryBuiltin) {
  std::ifstream in(std::string(TESSERA_DOCS_DIR) + "/language.md");
  ASSERT_TRUE(in) << TESSERA_DOCS_DIR << "/language.md";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  const std::string begin = "<!-- builtin-index:begin -->\n",
                    end = "<!-- builtin-index:end -->";
  size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  std::string index = doc.substr(b + begin.size(), e - b - begin.size());
  EXPECT_EQ(index, builtinIndexMarkdown())
      << "docs/language.md's index of built-ins is out of date: replace it "
         "with the output of `tessera-compile --list-builtins`";
}

//===----------------------------------------------------------------------===//
// MLIRGen
//===----------------------------------------------------------------------===//

TEST(MLIRGen, ConstexprIfSelectsBodyAndTypesAreChecked) {
  auto m = driver::SourceModule::parse("g.tile", R"(
@kernel
def k(x: Tensor["N", f32], MODE: str = "a"):
    if MODE == "a":
        v = tile.load(x, offsets=(0,), shape=(16,))
        tile.store(x, v * 2.0, offsets=(0,))
    else:
        this_is_not_checked(1, 2)
)");
  ASSERT_TRUE(m.ok()) << m.status().toString();
  auto ir = driver::emit(**m, "k", {}, driver::EmitKind::Tile);
  ASSERT_TRUE(ir.ok()) << ir.status().toString();
  EXPECT_THAT(*ir, HasSubstr("tile.load"));
  EXPECT_THAT(*ir, HasSubstr("arith.mulf"));
  Specialization b;
  b.constants["MODE"] = ConstValue::string("b");
  auto bad = driver::emit(**m, "k", b, driver::EmitKind::Tile);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(
      bad.status().message(),
      HasSubstr("g.tile:8:9: error: undefined name 'this_is_not_checked'"));
}

TEST(MLIRGen, RuntimeLoopCarriesWidenedValues) {
  auto m = driver::SourceModule::parse("l.tile", R"(
@kernel
def k(x: Tensor["N", f32], out: Tensor[1, f32]):
    acc = 0
    for i in range(0, x.shape[0], 64):
        acc = acc + tile.sum(tile.load(x, offsets=(i,), shape=(64,)))
    tile.atomic_add(out, (0,), acc)
)");
  ASSERT_TRUE(m.ok()) << m.status().toString();
  auto ir = driver::emit(**m, "k", {}, driver::EmitKind::Tile);
  ASSERT_TRUE(ir.ok()) << ir.status().toString();
  EXPECT_THAT(*ir, HasSubstr("iter_args"));
  EXPECT_THAT(*ir, HasSubstr("-> (f32)"));
}

TEST(MLIRGen, MethodsAndPythonBuiltinsShareTheirLowerings) {
  std::string ok =
      compileBody(R"(    v = tile.load(x, offsets=(0,), shape=(16,))
    s = v.sum() + tile.sum(v, axis=0) + max(v.max(), 0.0) + abs(-1)
    tile.store(x, v.to(f32) * s, offsets=(0,))
)");
  EXPECT_EQ(ok, "");
}

} // namespace
