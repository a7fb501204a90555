//===- OccupancyTest.cpp - Theoretical occupancy -------------------------===//

#include "tessera/Target/CUDA/Occupancy.h"

#include <gtest/gtest.h>

using namespace tessera::cuda;

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

TEST(Occupancy, RegisterCapForOneMoreBlock) {
  auto a100 = smLimits("sm_80");
  ASSERT_TRUE(a100);
  // 128 threads at 56 registers: 1792 per warp, 36 warps, 9 blocks. Ten
  // blocks leave 1638 registers per warp, 1536 in whole units: 48.
  auto cap = registerCapForOneMoreBlock(*a100, 128, 56, 0);
  ASSERT_TRUE(cap);
  EXPECT_EQ(*cap, 48);
  EXPECT_EQ(occupancy(*a100, 128, *cap, 0).blocksPerSm,
            occupancy(*a100, 128, 56, 0).blocksPerSm + 1);
  // 64 registers on sm_90a: 8 blocks of 4 warps; 9 need 56.
  auto h100 = smLimits("sm_90a");
  ASSERT_TRUE(h100);
  EXPECT_EQ(registerCapForOneMoreBlock(*h100, 128, 63, 0), 56);
}

TEST(Occupancy, NoRegisterCapWhenSomethingElseLimits) {
  auto l = smLimits("sm_90a");
  ASSERT_TRUE(l);
  // 32 registers: the 2048-thread limit binds first.
  EXPECT_FALSE(registerCapForOneMoreBlock(*l, 128, 32, 0));
  // Shared memory allows one 150 KiB block, whatever the registers.
  EXPECT_FALSE(registerCapForOneMoreBlock(*l, 128, 200, 150 * 1024));
  // Registers bind (two blocks at 200), but shared memory stops a third.
  EXPECT_FALSE(registerCapForOneMoreBlock(*l, 128, 200, 100 * 1024));
  // The same without the shared memory: three blocks at 168 registers.
  EXPECT_EQ(registerCapForOneMoreBlock(*l, 128, 200, 0), 168);
}
