//===- SpaceTest.cpp - Tests of autotuning search spaces ------------------===//

#include "tessera/autotune/Space.h"

#include <gtest/gtest.h>

#include <set>

using namespace tessera::autotune;

namespace {

Space threeParams(std::function<bool(const Config &)> valid = nullptr) {
  return Space({{"BLOCK_M", {32, 64, 128}, {}},
                {"num_warps", {2, 4}, {}},
                {"dtype", {0, 1, 2, 3}, {"f16", "bf16", "f32", "tf32"}}},
               std::move(valid));
}

TEST(AutotuneSpace, LinearisationRoundTrip) {
  Space s = threeParams();
  EXPECT_EQ(s.cartesianSize(), 24u);
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < s.cartesianSize(); ++i) {
    Config c = s.config(i);
    ASSERT_EQ(c.size(), 3u);
    EXPECT_EQ(s.index(c), i);
    seen.insert(i);
  }
  // The last parameter varies fastest.
  EXPECT_EQ(s.config(1), (Config{0, 0, 1}));
  EXPECT_EQ(s.config(4), (Config{0, 1, 0}));
  EXPECT_EQ(s.index({2, 1, 3}), 23u);
}

TEST(AutotuneSpace, Restrictions) {
  // BLOCK_M = 128 only with 4 warps.
  Space s = threeParams([](const Config &c) { return c[0] != 2 || c[1] == 1; });
  EXPECT_TRUE(s.isValid({0, 0, 0}));
  EXPECT_TRUE(s.isValid({2, 1, 3}));
  EXPECT_FALSE(s.isValid({2, 0, 3}));
  // Malformed configurations are invalid, not crashes.
  EXPECT_FALSE(s.isValid({0, 0}));
  EXPECT_FALSE(s.isValid({0, 0, 4}));
  EXPECT_FALSE(s.isValid({3, 0, 0}));
  const std::vector<Config> &valid = s.validConfigs();
  EXPECT_EQ(valid.size(), 20u);
  for (size_t i = 0; i < valid.size(); ++i) {
    EXPECT_TRUE(s.isValid(valid[i]));
    if (i) {
      EXPECT_LT(s.index(valid[i - 1]), s.index(valid[i]));
    }
  }
  // Cached: the same vector, also from a copy.
  Space copy = s;
  EXPECT_EQ(&copy.validConfigs(), &valid);
}

TEST(AutotuneSpace, Describe) {
  Space s = threeParams();
  EXPECT_EQ(s.describe({2, 1, 0}), "BLOCK_M=128,num_warps=4,dtype=f16");
  EXPECT_EQ(s.describe({0, 0, 3}), "BLOCK_M=32,num_warps=2,dtype=tf32");
  EXPECT_EQ(s.params()[0].labels[1], "64");
}

TEST(AutotuneSpace, EmptyAndSingleValue) {
  Space empty;
  EXPECT_EQ(empty.cartesianSize(), 1u);
  EXPECT_EQ(empty.validConfigs().size(), 1u);
  Space one({{"x", {7}, {}}});
  EXPECT_EQ(one.validConfigs().size(), 1u);
  EXPECT_EQ(one.describe({0}), "x=7");
}

} // namespace
