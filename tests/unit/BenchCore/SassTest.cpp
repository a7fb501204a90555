//===- SassTest.cpp - Parsing and counting disassembled SASS --------------===//

#include "tessera/bench/Sass.h"

#include <gtest/gtest.h>

using namespace tessera;
using namespace tessera::bench;

namespace {

// A K loop as nvdisasm prints it (labels, label branch targets): a copy
// loop nested in the main loop, tensor-core work, two barriers.
constexpr const char *kNvdisasm = R"(
	.section	.text.k,"ax",@progbits
k:
.text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;
.L_x_0:
        /*0020*/                   LDGSTS.E.BYPASS.LTC128B.128 [R9], desc[UR4][R2.64] ;
.L_x_1:
        /*0030*/                   STS.U16 [R3], R5 ;
        /*0040*/              @!P0 BRA `(.L_x_1) ;
        /*0050*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0060*/                   LDSM.16.M88.4 R8, [R10] ;
        /*0070*/                   HMMA.16816.F32 R12, R8, R14, R12 ;
        /*0080*/                   HMMA.16816.F32 R16, R8, R18, R16 ;
        /*0090*/                   LDS.64 R20, [R11] ;
        /*00a0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*00b0*/               @P1 BRA `(.L_x_0) ;
        /*00c0*/                   SHFL.BFLY PT, R3, R2, 0x1, 0x1f ;
        /*00d0*/                   STG.E.64 desc[UR4][R6.64], R12 ;
        /*00e0*/                   EXIT ;
.L_x_2:
        /*00f0*/                   BRA `(.L_x_2);
        /*0100*/                   NOP;
)";

// The same code as cuobjdump -sass prints it (absolute branch targets and
// encodings).
constexpr const char *kCuobjdump = R"(
	code for sm_90a
		Function : k
	.headerflags	@"EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                    /* 0x00000a00ff017b82 */
                                                                             /* 0x000fe20000000800 */
        /*0010*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ; /* 0x0 */
        /*0020*/                   LDGSTS.E.BYPASS.LTC128B.128 [R9], desc[UR4][R2.64] ; /* 0x0 */
        /*0030*/                   STS.U16 [R3], R5 ;                        /* 0x0 */
        /*0040*/              @!P0 BRA 0x30 ;                                /* 0x0 */
        /*0050*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;             /* 0x0 */
        /*0060*/                   LDSM.16.M88.4 R8, [R10] ;                 /* 0x0 */
        /*0070*/                   HMMA.16816.F32 R12, R8, R14, R12 ;        /* 0x0 */
        /*0080*/                   HMMA.16816.F32 R16, R8, R18, R16 ;        /* 0x0 */
        /*0090*/                   LDS.64 R20, [R11] ;                       /* 0x0 */
        /*00a0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;             /* 0x0 */
        /*00b0*/               @P1 BRA 0x20 ;                                /* 0x0 */
        /*00c0*/                   SHFL.BFLY PT, R3, R2, 0x1, 0x1f ;         /* 0x0 */
        /*00d0*/                   STG.E.64 desc[UR4][R6.64], R12 ;          /* 0x0 */
        /*00e0*/                   EXIT ;                                    /* 0x0 */
        /*00f0*/                   BRA 0xf0;                                 /* 0x0 */
        /*0100*/                   NOP;                                      /* 0x0 */
)";

TEST(Sass, ParsesBothDisassemblers) {
  for (const char *text : {kNvdisasm, kCuobjdump}) {
    auto fns = parseSass(text);
    ASSERT_TRUE(fns.ok()) << fns.status().message();
    ASSERT_EQ(fns->size(), 1u);
    const SassFunction &fn = (*fns)[0];
    EXPECT_EQ(fn.name, "k");
    ASSERT_EQ(fn.instructions.size(), 17u);
    EXPECT_EQ(fn.instructions[1].opcode, "LDG.E.128.CONSTANT");
    EXPECT_EQ(fn.instructions[4].predicate, "@!P0");
    ASSERT_TRUE(fn.instructions[4].target.has_value());
    EXPECT_EQ(*fn.instructions[4].target, 0x30u);
    EXPECT_EQ(*fn.instructions[11].target, 0x20u);
  }
}

TEST(Sass, RejectsTextWithoutInstructions) {
  auto fns = parseSass("no code here\n");
  ASSERT_FALSE(fns.ok());
  EXPECT_EQ(fns.status().code(), StatusCode::kInvalidArgument);
}

TEST(Sass, ClassifiesByOpcodeAndWidth) {
  auto cls = [](const char *opcode) {
    return classify(SassInstruction{0, "", opcode, "", std::nullopt});
  };
  EXPECT_EQ(cls("LDG.E.128.CONSTANT").counters[0], "global.load.128");
  EXPECT_EQ(cls("LDG.E.U16").counters[0], "global.load.16");
  EXPECT_EQ(cls("STG.E").counters[0], "global.store.32");
  EXPECT_TRUE(cls("STG.E").global);
  EXPECT_EQ(cls("LDS.U.64").counters[0], "shared.load.64");
  EXPECT_FALSE(cls("LDS.U.64").global);
  EXPECT_EQ(cls("LDGSTS.E.BYPASS.LTC128B.128").counters[0], "ldgsts.128");
  EXPECT_EQ(cls("UTMALDG.2D").counters[0], "tma");
  EXPECT_EQ(cls("HGMMA.64x128x16.F32").counters,
            (std::vector<std::string>{"hgmma", "mma"}));
  EXPECT_EQ(cls("HMMA.16816.F32.BF16").counters,
            (std::vector<std::string>{"hmma", "mma"}));
  EXPECT_EQ(cls("BAR.SYNC.DEFER_BLOCKING").counters[0], "bar");
  EXPECT_EQ(cls("CALL.REL.NOINC").counters[0], "call");
  EXPECT_TRUE(cls("IMAD.MOV.U32").counters.empty());
}

TEST(Sass, FindsNestedLoopsAndIgnoresTheExitTrap) {
  auto fns = parseSass(kNvdisasm);
  ASSERT_TRUE(fns.ok());
  std::vector<SassLoop> loops = findLoops((*fns)[0]);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0].begin, 3u); // the copy loop
  EXPECT_EQ(loops[0].end, 4u);
  EXPECT_TRUE(loops[0].innermost);
  EXPECT_EQ(loops[1].begin, 2u); // the K loop
  EXPECT_EQ(loops[1].end, 11u);
  EXPECT_FALSE(loops[1].innermost);
}

TEST(Sass, CountsTheKernelAndItsMainLoop) {
  for (const char *text : {kNvdisasm, kCuobjdump}) {
    auto fns = parseSass(text);
    ASSERT_TRUE(fns.ok());
    std::map<std::string, double> m = analyzeSass((*fns)[0]);
    EXPECT_EQ(m["instructions"], 16); // the NOP is not counted
    EXPECT_EQ(m["global.load.128"], 1);
    EXPECT_EQ(m["global.store.64"], 1);
    EXPECT_EQ(m["ldgsts.128"], 1);
    EXPECT_EQ(m["shared.store.16"], 1);
    EXPECT_EQ(m["shared.load.64"], 1);
    EXPECT_EQ(m["globalBytes"], 16 + 16 + 8);
    EXPECT_EQ(m["hmma"], 2);
    EXPECT_EQ(m["bar"], 2);
    EXPECT_EQ(m["shfl"], 1);
    EXPECT_EQ(m["loops"], 2);
    // The K loop holds the tensor-core work; the copy loop holds none.
    EXPECT_EQ(m["loop.instructions"], 10);
    EXPECT_EQ(m["loop.mma"], 2);
    EXPECT_EQ(m["loop.bar"], 2);
    EXPECT_EQ(m["barriersPerIteration"], 2);
    EXPECT_DOUBLE_EQ(m["instrPerMma"], 5.0);
    EXPECT_DOUBLE_EQ(m["instrPerGlobalByte"], 16.0 / 40);
  }
}

TEST(Sass, TensorCopiesLeaveInstructionsPerByteUndefined) {
  constexpr const char *text = R"(
		Function : tma
        /*0000*/                   UTMALDG.2D [UR8], [UR4] ;
        /*0010*/                   LDG.E.64 R2, desc[UR4][R4.64] ;
        /*0020*/                   STG.E.64 desc[UR4][R6.64], R2 ;
        /*0030*/                   EXIT ;
)";
  auto fns = parseSass(text);
  ASSERT_TRUE(fns.ok());
  std::map<std::string, double> m = analyzeSass((*fns)[0]);
  EXPECT_EQ(m["tma"], 1);
  EXPECT_EQ(m["globalBytes"], 16);
  // The TMA copy's bytes are not in the code: no ratio.
  EXPECT_EQ(m.count("instrPerGlobalByte"), 0u);
}

TEST(Sass, MemoryBoundMainLoopIsTheInnermostWithGlobalAccesses) {
  constexpr const char *text = R"(
		Function : rows
        /*0000*/                   MOV R0, RZ ;
        /*0010*/                   LDG.E.64 R2, desc[UR4][R4.64] ;
        /*0020*/                   FADD R0, R0, R2 ;
        /*0030*/               @P0 BRA 0x10 ;
        /*0040*/                   FMUL R0, R0, R0 ;
        /*0050*/               @P1 BRA 0x40 ;
        /*0060*/                   EXIT ;
)";
  auto fns = parseSass(text);
  ASSERT_TRUE(fns.ok());
  std::map<std::string, double> m = analyzeSass((*fns)[0]);
  EXPECT_EQ(m["loops"], 2);
  EXPECT_EQ(m["loop.instructions"], 3);
  EXPECT_EQ(m["loop.global.load.64"], 1);
  EXPECT_EQ(m.count("instrPerMma"), 0u);
}

} // namespace
