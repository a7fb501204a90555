//===- ThreadsTest.cpp - One Runtime used by many threads at once ---------===//
//
// Part of RuntimeApiTest, and alone in RuntimeTsanTest, where the runtime's
// and the simulator's code is built with ThreadSanitizer: a data race in
// them fails the test.
//
//===----------------------------------------------------------------------===//

#include "ScaleKernel.h"
#include "tessera/tessera.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using namespace tessera;

namespace {

// One Runtime shared by 16 threads that compile (some the same
// specialisation, some their own) and launch at once, synchronously and on
// streams of their own, on cpu and sim. Every result must be right and the
// compile cache must hold each specialisation once.
TEST(Runtime, SixteenThreadsCompileAndLaunchAtOnce) {
  Runtime rt(RuntimeOptions{2});
  auto prog = rt.loadSource("threads.tile", test::kScaleKernel);
  ASSERT_TRUE(prog.ok());
  constexpr int kThreads = 16;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      DeviceKind dev = t % 2 ? DeviceKind::Sim : DeviceKind::Cpu;
      // Four specialisations per device, each compiled by two threads.
      int64_t block = int64_t(32) << (t / 2 % 4);
      auto k =
          rt.compile(**prog, "scale", {.constants = {{"BLOCK", block}}}, dev);
      if (!k.ok()) {
        failures[t] = k.status().toString();
        return;
      }
      auto stream = rt.createStream(dev);
      if (!stream.ok()) {
        failures[t] = stream.status().toString();
        return;
      }
      const int64_t n = 100 + t;
      for (int round = 0; round < 4; ++round) {
        std::vector<float> x(n, float(t)), y(n, -1.0f);
        LaunchOptions opts;
        if (round % 2)
          opts.stream = *stream;
        Status s =
            (*k)->launch({TensorView::contiguous(x.data(), DType::F32, {n}),
                          TensorView::contiguous(y.data(), DType::F32, {n}),
                          double(round + 1)},
                         opts);
        if (s.ok())
          s = stream->synchronize();
        if (!s.ok()) {
          failures[t] = s.toString();
          return;
        }
        for (float v : y)
          if (v != float(t) * float(round + 1)) {
            failures[t] = "wrong result in round " + std::to_string(round);
            return;
          }
      }
    });
  for (std::thread &th : threads)
    th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], "") << "thread " << t;
  CompileCacheStats stats = rt.cacheStats();
  EXPECT_EQ(stats.entries, 8u);
  EXPECT_EQ(stats.hits + stats.misses, uint64_t(kThreads));
}

} // namespace
