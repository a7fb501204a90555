//===- ThreadPoolTest.cpp - Tests for the runtime thread pool -------------===//

#include "Core/ThreadPool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace tessera;

namespace {

/// Runs one parallelFor and checks that every index of [0, n) is covered
/// exactly once by well-formed chunks of at most `grain` items.
void checkCoverage(ThreadPool &pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(size_t(std::max<int64_t>(n, 0)));
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> badChunks{0};
  int64_t effectiveGrain = std::max<int64_t>(grain, 1);
  pool.parallelFor(n, grain, [&](int64_t begin, int64_t end) {
    calls.fetch_add(1);
    if (begin < 0 || end > n || begin >= end || end - begin > effectiveGrain) {
      badChunks.fetch_add(1);
      return;
    }
    for (int64_t i = begin; i < end; ++i)
      hits[size_t(i)].fetch_add(1, std::memory_order_relaxed);
  });
  SCOPED_TRACE(testing::Message() << "threads=" << pool.size() << " n=" << n
                                  << " grain=" << grain);
  EXPECT_EQ(badChunks.load(), 0);
  int64_t expectedCalls =
      n <= 0 ? 0 : (n + effectiveGrain - 1) / effectiveGrain;
  EXPECT_EQ(calls.load(), expectedCalls);
  int64_t wrong = 0;
  for (const std::atomic<int> &h : hits)
    wrong += h.load() != 1;
  EXPECT_EQ(wrong, 0);
}

TEST(ThreadPool, SizeCountsTheCallingThread) {
  EXPECT_EQ(ThreadPool(1).size(), 1u);
  EXPECT_EQ(ThreadPool(2).size(), 2u);
  EXPECT_EQ(ThreadPool(5).size(), 5u);
}

TEST(ThreadPool, SizeZeroMeansHardwareConcurrency) {
  unsigned expected = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(ThreadPool(0).size(), expected);
  EXPECT_EQ(ThreadPool().size(), expected);
}

TEST(ThreadPool, CoversEveryIndexOnceForManyShapes) {
  for (unsigned threads : {1u, 2u, 3u, 4u, 8u}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 3, 7, 8, 9, 64, 1000, 4097})
      for (int64_t grain : {1, 2, 3, 8, 16, 1000, 5000})
        checkCoverage(pool, n, grain);
  }
}

TEST(ThreadPool, NonPositiveNNeverCallsFn) {
  ThreadPool pool(4);
  for (int64_t n : {int64_t(0), int64_t(-1), std::numeric_limits<int64_t>::min()})
    pool.parallelFor(n, 1, [&](int64_t, int64_t) { ADD_FAILURE() << n; });
}

TEST(ThreadPool, GrainBelowOneCountsAsOne) {
  ThreadPool pool(3);
  checkCoverage(pool, 50, 0);
  checkCoverage(pool, 50, -7);
}

TEST(ThreadPool, HugeRangesDoNotOverflow) {
  ThreadPool pool(3);
  const int64_t n = std::numeric_limits<int64_t>::max();
  const int64_t grain = n / 4; // Five chunks, the last one short.
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  pool.parallelFor(n, grain, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    chunks.emplace_back(begin, end);
  });
  std::sort(chunks.begin(), chunks.end());
  ASSERT_EQ(chunks.size(), 5u);
  int64_t next = 0;
  for (auto [begin, end] : chunks) {
    EXPECT_EQ(begin, next);
    EXPECT_GT(end, begin);
    EXPECT_LE(end - begin, grain);
    next = end;
  }
  EXPECT_EQ(next, n);
}

TEST(ThreadPool, RunsChunksOnSeveralThreads) {
  ThreadPool pool(2);
  // Each chunk waits until the other one has started; only two threads
  // running at once can finish. The deadline turns a hang into a failure.
  std::atomic<int> started{0};
  std::atomic<bool> timedOut{false};
  std::mutex mutex;
  std::set<std::thread::id> ids;
  pool.parallelFor(2, 1, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    }
    started.fetch_add(1);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (started.load() < 2) {
      if (std::chrono::steady_clock::now() > deadline) {
        timedOut = true;
        return;
      }
      std::this_thread::yield();
    }
  });
  EXPECT_FALSE(timedOut.load());
  EXPECT_EQ(ids.size(), 2u);
}

TEST(ThreadPool, CallerParticipates) {
  ThreadPool pool(4);
  std::atomic<bool> callerRan{false};
  std::thread::id caller = std::this_thread::get_id();
  // Enough chunks that the caller always gets some before they run out.
  pool.parallelFor(10000, 1, [&](int64_t, int64_t) {
    if (std::this_thread::get_id() == caller)
      callerRan = true;
  });
  EXPECT_TRUE(callerRan.load());
}

TEST(ThreadPool, NestedCallsRunSeriallyOnTheCallingThread) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> hits(16 * 100);
  std::atomic<int> foreignThread{0};
  std::atomic<int> oversized{0};
  pool.parallelFor(16, 1, [&](int64_t outerBegin, int64_t outerEnd) {
    std::thread::id self = std::this_thread::get_id();
    for (int64_t outer = outerBegin; outer < outerEnd; ++outer) {
      pool.parallelFor(100, 7, [&](int64_t begin, int64_t end) {
        if (std::this_thread::get_id() != self)
          foreignThread.fetch_add(1);
        if (end - begin > 7)
          oversized.fetch_add(1);
        for (int64_t i = begin; i < end; ++i)
          hits[size_t(outer * 100 + i)].fetch_add(1);
      });
    }
  });
  EXPECT_EQ(foreignThread.load(), 0);
  EXPECT_EQ(oversized.load(), 0);
  for (const std::atomic<int> &h : hits)
    ASSERT_EQ(h.load(), 1);
}

TEST(ThreadPool, NestedCallOnAnotherPoolRunsSerially) {
  ThreadPool outerPool(3);
  ThreadPool innerPool(3);
  std::atomic<int64_t> sum{0};
  outerPool.parallelFor(8, 1, [&](int64_t, int64_t) {
    innerPool.parallelFor(10, 3, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        sum.fetch_add(i);
    });
  });
  EXPECT_EQ(sum.load(), 8 * 45);
}

TEST(ThreadPool, ConcurrentCallersAllComplete) {
  ThreadPool pool(3);
  constexpr int kCallers = 4;
  constexpr int kCallsEach = 200;
  std::atomic<int64_t> failures{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int k = 0; k < kCallsEach; ++k) {
        int64_t n = 1 + (c * 131 + k * 17) % 300;
        int64_t grain = 1 + (c + k) % 9;
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        pool.parallelFor(n, grain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            hits[size_t(i)].fetch_add(1, std::memory_order_relaxed);
        });
        for (const std::atomic<int> &h : hits)
          if (h.load() != 1)
            failures.fetch_add(1);
      }
    });
  }
  for (std::thread &t : callers)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ThreadPool, ManySmallLaunchesStayCorrect) {
  // Stresses the open/close handshake with late-waking workers.
  ThreadPool pool(4);
  int64_t total = 0;
  for (int k = 0; k < 20000; ++k) {
    std::atomic<int64_t> sum{0};
    int64_t n = 1 + k % 5;
    pool.parallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        sum.fetch_add(i + 1, std::memory_order_relaxed);
    });
    ASSERT_EQ(sum.load(), n * (n + 1) / 2) << "launch " << k;
    total += sum.load();
  }
  EXPECT_GT(total, 0);
}

TEST(ThreadPool, WritesOfWorkersAreVisibleAfterReturn) {
  ThreadPool pool(4);
  std::vector<int64_t> out(100000);
  for (int round = 0; round < 20; ++round) {
    pool.parallelFor(int64_t(out.size()), 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        out[size_t(i)] = i * round; // Plain stores: the pool synchronises.
    });
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_EQ(out[i], int64_t(i) * round);
  }
}

TEST(ThreadPool, CreateAndDestroyRepeatedly) {
  for (int k = 0; k < 50; ++k) {
    ThreadPool pool(1 + k % 4);
    if (k % 2)
      checkCoverage(pool, 33, 4);
  }
}

} // namespace
