//===- SamplerTest.cpp - Tests of the stopping rule -----------------------===//

#include "tessera/bench/Sampler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace tessera;
using namespace tessera::bench;

TEST(Sampler, ConstantTimerConvergesAtMinSamples) {
  SamplerOptions o;
  o.warmup = 3;
  o.minSamples = 7;
  int calls = 0;
  StatusOr<SampleRun> run = sample(o, [&]() -> StatusOr<double> {
    ++calls;
    return 1.25;
  });
  ASSERT_TRUE(run.ok()) << run.status().toString();
  EXPECT_EQ(run->stopReason, "converged");
  EXPECT_EQ(run->samples.size(), 7u);
  EXPECT_EQ(calls, 3 + 7); // the warm-up calls are not samples
  for (double s : run->samples)
    EXPECT_EQ(s, 1.25);
}

TEST(Sampler, NoisyTimerRunsToMaxSamples) {
  SamplerOptions o;
  o.maxSamples = 50;
  o.maxSeconds = 60;
  int i = 0;
  StatusOr<SampleRun> run =
      sample(o, [&]() -> StatusOr<double> { return (i++ % 2) ? 1.0 : 2.0; });
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->stopReason, "max-samples");
  EXPECT_EQ(run->samples.size(), 50u);
}

TEST(Sampler, SlowTimerStopsAtTimeCap) {
  SamplerOptions o;
  o.warmup = 0;
  o.minSamples = 1000;
  o.maxSamples = 1000;
  o.maxSeconds = 0.05;
  StatusOr<SampleRun> run = sample(o, [&]() -> StatusOr<double> {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return 10.0;
  });
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->stopReason, "time-cap");
  EXPECT_GE(run->samples.size(), 1u);
  EXPECT_LE(run->samples.size(), 6u);
}

TEST(Sampler, ErroringTimerReturnsItsStatus) {
  SamplerOptions o;
  o.warmup = 1;
  int calls = 0;
  StatusOr<SampleRun> run = sample(o, [&]() -> StatusOr<double> {
    if (++calls == 4)
      return unavailable("launch failed");
    return 1.0 + calls;
  });
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(run.status().message().find("launch failed"), std::string::npos);
  EXPECT_NE(run.status().message().find("sample 3"), std::string::npos);

  // An error during warm-up as well.
  StatusOr<SampleRun> warm =
      sample(o, [&]() -> StatusOr<double> { return internalError("boom"); });
  ASSERT_FALSE(warm.ok());
  EXPECT_EQ(warm.status().code(), StatusCode::kInternal);
}

TEST(Sampler, FlushBeforeEveryCall) {
  SamplerOptions o;
  o.warmup = 2;
  o.minSamples = 5;
  o.maxSamples = 9;
  std::vector<char> log;
  int i = 0;
  StatusOr<SampleRun> run = sample(
      o,
      [&]() -> StatusOr<double> {
        log.push_back('t');
        return (i++ % 2) ? 1.0 : 3.0;
      },
      [&] { log.push_back('f'); });
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->samples.size(), 9u);
  ASSERT_EQ(log.size(), 2u * (2 + 9));
  for (size_t k = 0; k < log.size(); k += 2) {
    EXPECT_EQ(log[k], 'f');
    EXPECT_EQ(log[k + 1], 't');
  }
}

TEST(Sampler, RejectsBadOptionsAndSamples) {
  auto one = []() -> StatusOr<double> { return 1.0; };
  SamplerOptions o;
  o.minSamples = 0;
  EXPECT_EQ(sample(o, one).status().code(), StatusCode::kInvalidArgument);
  o = {};
  o.maxSamples = 2;
  EXPECT_EQ(sample(o, one).status().code(), StatusCode::kInvalidArgument);
  o = {};
  o.maxSeconds = 0;
  EXPECT_EQ(sample(o, one).status().code(), StatusCode::kInvalidArgument);
  o = {};
  EXPECT_EQ(
      sample(o, []() -> StatusOr<double> { return -1.0; }).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(sample(o, {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(Sampler, CpuCacheFlusher) {
  CpuCacheFlusher small(1 << 20);
  EXPECT_EQ(small.bytes(), size_t(1) << 20);
  small.flush();
  small.flush();
  CpuCacheFlusher flusher;
  size_t llc = cpuLastLevelCacheBytes();
  if (llc)
    EXPECT_GT(flusher.bytes(), llc);
  else
    EXPECT_EQ(flusher.bytes(), size_t(64) << 20);
}
