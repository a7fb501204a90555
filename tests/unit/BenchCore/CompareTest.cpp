//===- CompareTest.cpp - Tests of the noise-aware comparison --------------===//

#include "tessera/bench/Compare.h"

#include "BenchTestUtil.h"

#include <gtest/gtest.h>

using namespace tessera;
using namespace tessera::bench;
using namespace tessera::bench::testing;
using V = CaseChange::Verdict;

namespace {
RunResult runOf(std::vector<CaseResult> cases) {
  RunResult r;
  r.cases = std::move(cases);
  return r;
}

const CaseChange &find(const Comparison &c, const std::string &name) {
  for (const CaseChange &ch : c.cases)
    if (ch.name == name)
      return ch;
  ADD_FAILURE() << "no case " << name;
  static CaseChange none;
  return none;
}
} // namespace

TEST(Compare, NoiseLevelChangeIsSameEvenAboveThreshold) {
  // +8% with about 16% sample spread in both runs.
  RunResult base = runOf({passedCase("g", spreadSamples(1.0, 0.2))});
  RunResult next = runOf({passedCase("g", spreadSamples(1.08, 0.2))});
  Comparison c = compare(base, next, 0.05);
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_NEAR(c.cases[0].change, 0.08, 1e-12);
  EXPECT_GT(c.cases[0].noise, 0.15);
  EXPECT_EQ(c.cases[0].verdict, V::Same);
  EXPECT_FALSE(c.regressed);

  // The same +8% with tight samples is a regression.
  RunResult tightBase = runOf({passedCase("g", spreadSamples(1.0, 0.002))});
  RunResult tightNext = runOf({passedCase("g", spreadSamples(1.08, 0.002))});
  Comparison t = compare(tightBase, tightNext, 0.05);
  EXPECT_EQ(t.cases[0].verdict, V::Slower);
  EXPECT_TRUE(t.regressed);
}

TEST(Compare, NoisyInOneRunIsEnough) {
  // Noise of either run masks the change.
  RunResult base = runOf({passedCase("g", spreadSamples(1.0, 0.002))});
  RunResult next = runOf({passedCase("g", spreadSamples(1.1, 0.3))});
  Comparison c = compare(base, next, 0.05);
  EXPECT_EQ(c.cases[0].verdict, V::Same);
  EXPECT_NEAR(c.cases[0].noise, c.cases[0].newNoise, 1e-15);
}

TEST(Compare, ClearSlowdownAndSpeedup) {
  RunResult base = runOf({passedCase("slow", spreadSamples(1.0, 0.002)),
                          passedCase("fast", spreadSamples(2.0, 0.002)),
                          passedCase("small", spreadSamples(3.0, 0.002))});
  RunResult next = runOf({passedCase("slow", spreadSamples(1.2, 0.002)),
                          passedCase("fast", spreadSamples(1.5, 0.002)),
                          passedCase("small", spreadSamples(3.09, 0.002))});
  Comparison c = compare(base, next, 0.05);
  EXPECT_EQ(find(c, "slow").verdict, V::Slower);
  EXPECT_NEAR(find(c, "slow").change, 0.2, 1e-12);
  EXPECT_EQ(find(c, "fast").verdict, V::Faster);
  EXPECT_NEAR(find(c, "fast").change, -0.25, 1e-12);
  // +3% is below the threshold even though it is far above the noise.
  EXPECT_EQ(find(c, "small").verdict, V::Same);
  EXPECT_TRUE(c.regressed);

  // Only faster: no regression.
  RunResult fasterOnly = runOf({passedCase("fast", spreadSamples(1.5, 0.002))});
  EXPECT_FALSE(compare(base, fasterOnly, 0.05).regressed);
}

TEST(Compare, PassToFailedRegresses) {
  RunResult base = runOf({passedCase("g", spreadSamples(1.0, 0.002))});
  RunResult next = runOf({failedCase("g", "max rel error 0.25 > 0.01")});
  Comparison c = compare(base, next);
  EXPECT_EQ(c.cases[0].verdict, V::Failed);
  EXPECT_EQ(c.cases[0].detail, "max rel error 0.25 > 0.01");
  EXPECT_TRUE(c.regressed);

  // Failed in both: reported, but not a new regression. Failed -> passed is
  // "fixed".
  EXPECT_FALSE(compare(next, next).regressed);
  Comparison fixed = compare(next, base);
  EXPECT_EQ(fixed.cases[0].verdict, V::Fixed);
  EXPECT_FALSE(fixed.regressed);
}

TEST(Compare, SkippedIsNeverARegression) {
  CaseResult skipped = failedCase("g", "1 GPU(s) found");
  skipped.skipped = true;
  RunResult base = runOf({passedCase("g", spreadSamples(1.0, 0.002))});
  RunResult next = runOf({skipped});
  Comparison c = compare(base, next);
  EXPECT_EQ(c.cases[0].verdict, V::Missing);
  EXPECT_EQ(c.cases[0].detail, "skipped: 1 GPU(s) found");
  EXPECT_FALSE(c.regressed);
  Comparison back = compare(next, base);
  EXPECT_EQ(back.cases[0].verdict, V::New);
  EXPECT_FALSE(back.regressed);
}

TEST(Compare, MissingAndNewCases) {
  RunResult base = runOf({passedCase("a", spreadSamples(1.0, 0.002)),
                          passedCase("gone", spreadSamples(1.0, 0.002))});
  RunResult next = runOf({passedCase("a", spreadSamples(1.0, 0.002)),
                          passedCase("added", spreadSamples(1.0, 0.002))});
  Comparison c = compare(base, next);
  ASSERT_EQ(c.cases.size(), 3u);
  EXPECT_EQ(find(c, "a").verdict, V::Same);
  EXPECT_EQ(find(c, "gone").verdict, V::Missing);
  EXPECT_EQ(find(c, "added").verdict, V::New);
  EXPECT_FALSE(c.regressed);
}

TEST(Compare, MatchesOnDeviceAndPrecision) {
  CaseResult f16 = passedCase("g", spreadSamples(1.0, 0.002));
  CaseResult bf16 = f16;
  bf16.precision = "bf16";
  CaseResult bf16Slow = passedCase("g", spreadSamples(2.0, 0.002));
  bf16Slow.precision = "bf16";
  Comparison c = compare(runOf({f16, bf16}), runOf({f16, bf16Slow}));
  ASSERT_EQ(c.cases.size(), 2u);
  EXPECT_EQ(c.cases[0].verdict, V::Same);
  EXPECT_EQ(c.cases[1].verdict, V::Slower);
  EXPECT_NE(c.cases[1].name.find("bf16"), std::string::npos);
  EXPECT_TRUE(c.regressed);
}

TEST(Compare, RelativeNoise) {
  SampleStats s = computeStats(spreadSamples(1.0, 0.2));
  EXPECT_NEAR(relativeNoise(s), s.rsd, 1e-15); // n = 30: rsd > CI half-width
  std::vector<double> few = {1.0, 1.2};
  SampleStats f = computeStats(few);
  EXPECT_NEAR(relativeNoise(f), f.ci95HalfWidth() / f.mean, 1e-15);
  EXPECT_EQ(relativeNoise(computeStats(std::vector<double>{1.0})), 0);
}

TEST(Compare, ParseThreshold) {
  EXPECT_DOUBLE_EQ(*parseThreshold("5%"), 0.05);
  EXPECT_DOUBLE_EQ(*parseThreshold("0.1"), 0.1);
  EXPECT_DOUBLE_EQ(*parseThreshold("2.5%"), 0.025);
  EXPECT_FALSE(parseThreshold("abc").ok());
  EXPECT_FALSE(parseThreshold("-5%").ok());
  EXPECT_FALSE(parseThreshold("%").ok());
  EXPECT_FALSE(parseThreshold("").ok());
}

namespace {
CaseResult codeCase(std::map<std::string, double> metrics) {
  CaseResult c;
  c.suite = "sass";
  c.name = "softmax fp32 sm_90a";
  c.device = "sm_90a";
  c.precision = "fp32";
  c.passed = true;
  c.code = CodeShape{};
  c.code->arch = "sm_90a";
  c.code->metrics = std::move(metrics);
  return c;
}
} // namespace

TEST(Compare, CodeShapeRegressionIsGated) {
  RunResult base =
      runOf({codeCase({{"registers", 40}, {"instructions", 600}})});
  // More registers beyond the threshold: worse, a regression.
  Comparison worse = compare(
      base, runOf({codeCase({{"registers", 72}, {"instructions", 600}})}));
  EXPECT_TRUE(worse.regressed);
  EXPECT_EQ(find(worse, "softmax fp32 sm_90a").verdict, V::Worse);
  EXPECT_NE(
      find(worse, "softmax fp32 sm_90a").detail.find("registers 40 -> 72"),
      std::string::npos);
  // Spills appearing from none is worse whatever the threshold.
  Comparison spills = compare(
      base,
      runOf({codeCase(
          {{"registers", 40}, {"instructions", 600}, {"spillBytes", 8}})}),
      10.0);
  EXPECT_TRUE(spills.regressed);
  // Fewer instructions: better; within the threshold: same.
  Comparison better = compare(
      base, runOf({codeCase({{"registers", 40}, {"instructions", 300}})}));
  EXPECT_FALSE(better.regressed);
  EXPECT_EQ(find(better, "softmax fp32 sm_90a").verdict, V::Better);
  Comparison same = compare(
      base, runOf({codeCase({{"registers", 41}, {"instructions", 610}})}));
  EXPECT_EQ(find(same, "softmax fp32 sm_90a").verdict, V::Same);
  // Ungated figures (the mix) do not decide.
  Comparison mix = compare(
      base, runOf({codeCase(
                {{"registers", 40}, {"instructions", 600}, {"shfl", 90}})}));
  EXPECT_EQ(find(mix, "softmax fp32 sm_90a").verdict, V::Same);
  // Less occupancy is worse.
  Comparison occ = compare(runOf({codeCase({{"occupancy", 0.5}})}),
                           runOf({codeCase({{"occupancy", 0.25}})}));
  EXPECT_TRUE(occ.regressed);
}
