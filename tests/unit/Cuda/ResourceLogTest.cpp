//===- ResourceLogTest.cpp - parseResourceLog on captured tool logs -------===//
//
// The samples were captured from CUDA 13.0 ptxas -v, nvJitLink -verbose and
// NVRTC -Xptxas=-v.
//
//===----------------------------------------------------------------------===//

#include "tessera/Target/CUDA/ResourceUsage.h"

#include <gtest/gtest.h>

using namespace tessera::cuda;

namespace {

// ptxas -v --gpu-name sm_80 on a saxpy kernel.
constexpr const char *kPtxasSaxpy =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'saxpy' for 'sm_80'\n"
    "ptxas info    : Function properties for saxpy\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers, 376 bytes cmem[0]\n"
    "ptxas info    : Compile time = 25.603 ms\n";

// ptxas -v --gpu-name sm_80 --maxrregcount 16 on a register-pressure kernel.
constexpr const char *kPtxasSpills =
    "ptxas warning : For profile sm_80 adjusting per thread register count of "
    "16 to lower bound of 24\n"
    "ptxas info    : Overriding maximum register limit 256 for 'pressure' "
    "with  24 of maxrregcount option\n"
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'pressure' for 'sm_80'\n"
    "ptxas info    : Function properties for pressure\n"
    "    304 bytes stack frame, 300 bytes spill stores, 300 bytes spill loads\n"
    "ptxas info    : Used 24 registers, used 0 barriers, 304 bytes cumulative "
    "stack size, 360 bytes cmem[0]\n"
    "ptxas info    : Compile time = 11.605 ms\n";

// nvJitLink -arch=sm_90a -verbose on a kernel with a local array, shared
// memory and a barrier: the ptxas section, then the link summary (which
// counts 1 KiB more shared memory: the system-reserved part).
constexpr const char *kNvJitLinkVerbose =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'spill' for 'sm_90a'\n"
    "ptxas info    : Function properties for spill\n"
    "ptxas         .     1024 bytes stack frame, 0 bytes spill stores, 0 "
    "bytes spill loads\n"
    "ptxas info    : Used 12 registers, used 1 barriers, 4096 bytes smem\n"
    "ptxas info    : Compile time = 11.960 ms\n"
    "info    : 0 bytes gmem\n"
    "info    : Function properties for 'spill':\n"
    "info    : used 12 registers, used 1 barriers, 1024 stack, 5120 bytes "
    "smem, 540 bytes cmem[0], 0 bytes lmem\n";

// NVRTC -arch=sm_90a -Xptxas=-v on a templated saxpy.
constexpr const char *kNvrtcLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z5saxpyIfEvT_PKS0_PS0_i' for "
    "'sm_90a'\n"
    "ptxas info    : Function properties for _Z5saxpyIfEvT_PKS0_PS0_i\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
    "spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 2.695 ms\n";

TEST(ResourceLog, PtxasEntryFunction) {
  auto fns = parseResourceLog(kPtxasSaxpy);
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].name, "saxpy");
  EXPECT_TRUE(fns[0].isEntry);
  EXPECT_EQ(fns[0].usage.registers, 10);
  EXPECT_EQ(fns[0].usage.barriers, 0);
  EXPECT_EQ(fns[0].usage.sharedBytes, 0);
  EXPECT_EQ(fns[0].usage.constantBytes, 376);
  EXPECT_EQ(fns[0].usage.localBytes, 0);
  EXPECT_EQ(fns[0].usage.spillStores, 0);
}

TEST(ResourceLog, PtxasSpillsAndCumulativeStack) {
  auto fns = parseResourceLog(kPtxasSpills);
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].name, "pressure");
  EXPECT_EQ(fns[0].usage.registers, 24);
  EXPECT_EQ(fns[0].usage.localBytes, 304);
  EXPECT_EQ(fns[0].usage.spillStores, 300);
  EXPECT_EQ(fns[0].usage.spillLoads, 300);
  EXPECT_EQ(fns[0].usage.constantBytes, 360);
}

TEST(ResourceLog, NvJitLinkPrefersPtxasFigures) {
  auto fns = parseResourceLog(kNvJitLinkVerbose);
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].name, "spill");
  EXPECT_TRUE(fns[0].isEntry);
  EXPECT_EQ(fns[0].usage.registers, 12);
  EXPECT_EQ(fns[0].usage.barriers, 1);
  EXPECT_EQ(fns[0].usage.sharedBytes, 4096);
  EXPECT_EQ(fns[0].usage.localBytes, 1024);
}

TEST(ResourceLog, LinkSummaryAloneIsUsed) {
  constexpr const char *kSummaryOnly =
      "info    : 0 bytes gmem\n"
      "info    : Function properties for 'k':\n"
      "info    : used 40 registers, used 2 barriers, 64 stack, 8192 bytes "
      "smem, 540 bytes cmem[0], 16 bytes lmem\n";
  auto fns = parseResourceLog(kSummaryOnly);
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].name, "k");
  EXPECT_EQ(fns[0].usage.registers, 40);
  EXPECT_EQ(fns[0].usage.barriers, 2);
  EXPECT_EQ(fns[0].usage.sharedBytes, 8192);
  EXPECT_EQ(fns[0].usage.localBytes, 64 + 16);
}

TEST(ResourceLog, NvrtcMangledName) {
  auto fns = parseResourceLog(kNvrtcLog);
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].name, "_Z5saxpyIfEvT_PKS0_PS0_i");
  EXPECT_EQ(fns[0].usage.registers, 10);
}

TEST(ResourceLog, SeveralFunctionsSummarizedOverEntries) {
  std::string log =
      "ptxas info    : Function properties for helper\n"
      "    48 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'a' for 'sm_80'\n"
      "ptxas info    : Function properties for a\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes smem, "
      "360 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'b' for 'sm_80'\n"
      "ptxas info    : Function properties for b\n"
      "    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 64 registers, used 0 barriers, 360 bytes cmem[0]\n";
  auto fns = parseResourceLog(log);
  ASSERT_EQ(fns.size(), 3u);
  EXPECT_EQ(fns[0].name, "helper");
  EXPECT_FALSE(fns[0].isEntry);
  EXPECT_EQ(fns[0].usage.spillStores, 8);
  ResourceUsage total = summarizeResourceUsage(fns, log);
  EXPECT_EQ(total.registers, 64);
  EXPECT_EQ(total.sharedBytes, 1024);
  EXPECT_EQ(total.localBytes, 16);
  EXPECT_EQ(total.barriers, 1);
  EXPECT_EQ(total.spillStores, 0) << "non-entry helpers are not summed in";
  EXPECT_EQ(total.rawLog, log);
}

TEST(ResourceLog, GarbageAndEmptyLogsYieldNothing) {
  EXPECT_TRUE(parseResourceLog("").empty());
  EXPECT_TRUE(parseResourceLog("ptxas fatal   : Unresolved extern\n").empty());
  EXPECT_TRUE(parseResourceLog("Used 12 registers\n").empty())
      << "figures before any function belong to nobody";
  // Huge numbers saturate instead of overflowing.
  auto fns = parseResourceLog("Function properties for f\n"
                              "99999999999999999999999 bytes stack frame\n");
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_GT(fns[0].usage.localBytes, 0);
}

TEST(ResourceLog, CrLfAndUnquotedNames) {
  auto fns = parseResourceLog(
      "ptxas info    : Compiling entry function k2 for sm_90a\r\n"
      "ptxas info    : Used 7 registers, 128 bytes smem\r\n");
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].name, "k2");
  EXPECT_EQ(fns[0].usage.registers, 7);
  EXPECT_EQ(fns[0].usage.sharedBytes, 128);
}

} // namespace
