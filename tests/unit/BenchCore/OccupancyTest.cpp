//===- OccupancyTest.cpp - Theoretical occupancy
//---------------------------===//

#include "tessera/bench/Occupancy.h"

#include <gtest/gtest.h>

using namespace tessera::bench;

TEST(Occupancy, RegisterLimited) {
  // sm_90: 128 registers x 32 lanes = 4096 per warp -> 16 warps -> four
  // 128-thread blocks, 16 of 64 warps.
  auto l = smLimits("sm_90a");
  ASSERT_TRUE(l);
  Occupancy o = occupancy(*l, 128, 128, 0);
  EXPECT_EQ(o.blocksPerSm, 4);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.25);
  EXPECT_EQ(o.limiter, "registers");
}

TEST(Occupancy, RegistersRoundUpToTheAllocationUnit) {
  // 33 registers -> 1056 per warp -> 1280 (256-register units): 51 warps,
  // twelve 4-warp blocks (48 warps of 64).
  auto l = smLimits("sm_90");
  Occupancy o = occupancy(*l, 128, 33, 0);
  EXPECT_EQ(o.blocksPerSm, 12);
  EXPECT_DOUBLE_EQ(o.occupancy, 48.0 / 64.0);
}

TEST(Occupancy, SharedMemoryLimitedWithTheReservedKiB) {
  // 100 KiB + 1 KiB reserved per block: two blocks fit in 228 KiB.
  auto l = smLimits("sm_90a");
  Occupancy o = occupancy(*l, 256, 32, 100 * 1024);
  EXPECT_EQ(o.blocksPerSm, 2);
  EXPECT_DOUBLE_EQ(o.occupancy, 16.0 / 64.0);
  EXPECT_EQ(o.limiter, "shared");
  // 227 KiB is the per-block maximum: one block.
  EXPECT_EQ(occupancy(*l, 256, 32, 227 * 1024).blocksPerSm, 1);
  // More than an SM holds: nothing fits.
  EXPECT_EQ(occupancy(*l, 256, 32, 229 * 1024).blocksPerSm, 0);
  EXPECT_DOUBLE_EQ(occupancy(*l, 256, 32, 229 * 1024).occupancy, 0.0);
}

TEST(Occupancy, ThreadAndBlockLimits) {
  auto a100 = smLimits("sm_80");
  Occupancy big = occupancy(*a100, 1024, 32, 0);
  EXPECT_EQ(big.blocksPerSm, 2);
  EXPECT_DOUBLE_EQ(big.occupancy, 1.0);
  EXPECT_EQ(big.limiter, "threads");
  // 32-thread blocks: the 32-block limit leaves half the warps empty.
  Occupancy tiny = occupancy(*a100, 32, 16, 0);
  EXPECT_EQ(tiny.blocksPerSm, 32);
  EXPECT_DOUBLE_EQ(tiny.occupancy, 0.5);
  EXPECT_EQ(tiny.limiter, "blocks");
  // sm_86 holds 1536 threads and 16 blocks.
  auto ga = smLimits("sm_86");
  EXPECT_DOUBLE_EQ(occupancy(*ga, 1024, 32, 0).occupancy, 1024.0 / 1536.0);
}

TEST(Occupancy, UnknownArchitecture) {
  EXPECT_FALSE(smLimits("sm_52"));
  EXPECT_FALSE(smLimits("gfx90a"));
}
