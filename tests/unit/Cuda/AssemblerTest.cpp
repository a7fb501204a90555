//===- AssemblerTest.cpp - PTX to cubin with nvJitLink and ptxas ----------===//

#include "tessera/Target/CUDA/Assembler.h"
#include "ScopedEnv.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

using namespace tessera;
using namespace tessera::cuda;

namespace {

constexpr const char *kSaxpyPtx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry saxpy(.param .u64 x, .param .u64 y, .param .f32 a,
                      .param .u32 n)
{
  .reg .pred p;
  .reg .b32 r<6>;
  .reg .f32 f<4>;
  .reg .b64 rd<8>;
  ld.param.u64 rd1, [x];
  ld.param.u64 rd2, [y];
  ld.param.f32 f1, [a];
  ld.param.u32 r1, [n];
  mov.u32 r2, %ctaid.x;
  mov.u32 r3, %ntid.x;
  mov.u32 r4, %tid.x;
  mad.lo.s32 r5, r2, r3, r4;
  setp.ge.u32 p, r5, r1;
  @p bra DONE;
  cvta.to.global.u64 rd3, rd1;
  cvta.to.global.u64 rd4, rd2;
  mul.wide.u32 rd5, r5, 4;
  add.s64 rd6, rd3, rd5;
  add.s64 rd7, rd4, rd5;
  ld.global.f32 f2, [rd6];
  ld.global.f32 f3, [rd7];
  fma.rn.f32 f3, f1, f2, f3;
  st.global.f32 [rd7], f3;
DONE:
  ret;
}
)";

// A 1 KiB local array indexed by a run-time value lives in local memory
// (stack frame); the kernel also uses 4 KiB of shared memory and a barrier.
constexpr const char *kLocalArrayPtx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry localArray(.param .u64 out, .param .u32 idx)
{
  .local .align 4 .b8 buf[1024];
  .shared .align 4 .b8 tile[4096];
  .reg .b32 r<4>;
  .reg .b64 rd<6>;
  .reg .f32 f<2>;
  ld.param.u64 rd1, [out];
  ld.param.u32 r1, [idx];
  mov.u32 r2, %tid.x;
  cvt.u64.u32 rd2, r2;
  shl.b64 rd2, rd2, 2;
  mov.u64 rd3, buf;
  cvta.local.u64 rd3, rd3;
  and.b64 rd2, rd2, 1020;
  add.s64 rd4, rd3, rd2;
  cvt.rn.f32.u32 f1, r2;
  st.f32 [rd4], f1;
  mov.u32 r3, tile;
  st.shared.f32 [r3], f1;
  bar.sync 0;
  and.b32 r1, r1, 255;
  mul.wide.u32 rd5, r1, 4;
  add.s64 rd5, rd3, rd5;
  ld.f32 f1, [rd5];
  cvta.to.global.u64 rd1, rd1;
  st.global.f32 [rd1], f1;
  ret;
}
)";

constexpr const char *kInvalidPtx =
    ".version 8.0\n.target sm_80\n"
    ".address_size 64\n"
    ".visible .entry bad() { foo.bar r1; ret; }\n";

/// 64 volatile loads kept live until 64 volatile stores: with a register
/// cap this must spill.
std::string registerPressurePtx() {
  std::string ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\n"
                    ".visible .entry pressure(.param .u64 p)\n{\n"
                    "  .reg .f32 f<64>;\n  .reg .b64 rd<2>;\n"
                    "  ld.param.u64 rd0, [p];\n"
                    "  cvta.to.global.u64 rd1, rd0;\n";
  for (int i = 0; i < 64; ++i)
    ptx += "  ld.volatile.global.f32 f" + std::to_string(i) + ", [rd1+" +
           std::to_string(4 * i) + "];\n";
  for (int i = 0; i < 64; ++i)
    ptx += "  st.volatile.global.f32 [rd1+" + std::to_string(4 * (63 - i)) +
           "], f" + std::to_string(i) + ";\n";
  ptx += "  ret;\n}\n";
  return ptx;
}

bool isElf(const std::string &bytes) {
  return bytes.size() > 4 && bytes.compare(0, 4,
                                           "\x7f"
                                           "ELF") == 0;
}

class AssemblerTest : public ::testing::TestWithParam<
                          std::tuple<AssemblerBackend, const char *>> {
protected:
  void SetUp() override {
    Status available = assemblerAvailable(backend());
    if (!available.ok())
      GTEST_SKIP() << available.message();
  }
  AssemblerBackend backend() const { return std::get<0>(GetParam()); }
  const char *arch() const { return std::get<1>(GetParam()); }
  AssembleOptions options() const {
    AssembleOptions opts;
    opts.backend = backend();
    return opts;
  }
};

TEST_P(AssemblerTest, SaxpyAssemblesWithoutSpills) {
  auto result = assemblePtx(kSaxpyPtx, arch(), options());
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_TRUE(isElf(result->cubin));
  EXPECT_EQ(result->backend, backend());
  EXPECT_GT(result->usage.registers, 0) << result->usage.rawLog;
  EXPECT_EQ(result->usage.spillStores, 0);
  EXPECT_EQ(result->usage.spillLoads, 0);
  EXPECT_EQ(result->usage.localBytes, 0);
  ASSERT_EQ(result->functions.size(), 1u) << result->usage.rawLog;
  EXPECT_EQ(result->functions[0].name, "saxpy");
  EXPECT_GT(result->seconds, 0.0);
}

TEST_P(AssemblerTest, LocalArrayReportsStackSharedAndBarrier) {
  auto result = assemblePtx(kLocalArrayPtx, arch(), options());
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_TRUE(isElf(result->cubin));
  EXPECT_GE(result->usage.localBytes, 1024) << result->usage.rawLog;
  EXPECT_EQ(result->usage.sharedBytes, 4096) << result->usage.rawLog;
  EXPECT_EQ(result->usage.barriers, 1) << result->usage.rawLog;
}

TEST_P(AssemblerTest, RegisterCapForcesSpills) {
  AssembleOptions opts = options();
  opts.maxRegisters = 24;
  auto result = assemblePtx(registerPressurePtx(), arch(), opts);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_LE(result->usage.registers, 24);
  EXPECT_GT(result->usage.spillStores, 0) << result->usage.rawLog;
  EXPECT_GT(result->usage.spillLoads, 0);
  EXPECT_GT(result->usage.localBytes, 0);
}

TEST_P(AssemblerTest, InvalidPtxReturnsTheErrorLog) {
  auto result = assemblePtx(kInvalidPtx, arch(), options());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("error"), std::string::npos)
      << result.status().message();
  EXPECT_NE(result.status().message().find("foo"), std::string::npos)
      << result.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Backends, AssemblerTest,
    ::testing::Combine(::testing::Values(AssemblerBackend::kNvJitLink,
                                         AssemblerBackend::kPtxas),
                       ::testing::Values("sm_80", "sm_90a")),
    [](const auto &info) {
      return std::string(assemblerBackendName(std::get<0>(info.param))) + "_" +
             std::get<1>(info.param);
    });

TEST(Assembler, RejectsVirtualOrMalformedArch) {
  for (const char *arch : {"compute_90", "sm_", "sm_9x", "90a", "sm_90ab"}) {
    auto result = assemblePtx(kSaxpyPtx, arch);
    ASSERT_FALSE(result.ok()) << arch;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << arch;
  }
  EXPECT_TRUE(checkRealArch("sm_100f").ok());
}

TEST(Assembler, AutoUsesAnAvailableBackend) {
  Status available = assemblerAvailable(AssemblerBackend::kAuto);
  if (!available.ok())
    GTEST_SKIP() << available.message();
  auto result = assemblePtx(kSaxpyPtx, "sm_90a");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_NE(result->backend, AssemblerBackend::kAuto);
}

TEST(Assembler, AutoPrefersWholeProgramPtxas) {
  if (!findPtxas().ok())
    GTEST_SKIP() << findPtxas().status().message();
  auto result = assemblePtx(kSaxpyPtx, "sm_90a");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_EQ(result->backend, AssemblerBackend::kPtxas);
  EXPECT_TRUE(result->wholeProgram);
  auto linked = assemblePtx(kSaxpyPtx, "sm_90a",
                            {.backend = AssemblerBackend::kNvJitLink});
  if (linked.ok()) {
    EXPECT_FALSE(linked->wholeProgram);
  }
}

TEST(Assembler, MissingPtxasOverrideIsUnavailable) {
  auto result = [] {
    test::ScopedEnv missing("TESSERA_PTXAS", "/nonexistent/ptxas");
    return assemblePtx(kSaxpyPtx, "sm_80",
                       {.backend = AssemblerBackend::kPtxas});
  }();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(result.status().message().find("/nonexistent/ptxas"),
            std::string::npos);
}

} // namespace
