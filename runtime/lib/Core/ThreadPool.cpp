//===- ThreadPool.cpp - Workers for data-parallel kernel launches ---------===//

#include "Core/ThreadPool.h"

#include <algorithm>

namespace tessera {

namespace {
/// Set while a thread runs chunks of some pool's job; nested parallelFor
/// calls then run serially instead of deadlocking.
thread_local bool insideParallelFor = false;
/// Runs chunk `chunk` of a job of `n` items split into `grain`-sized chunks.
void runChunk(const ThreadPool::RangeFn &fn, int64_t chunk, int64_t n,
              int64_t grain) {
  int64_t begin = chunk * grain; // overflow-safe: chunk < ceil(n / grain)
  fn(begin, n - begin <= grain ? n : begin + grain);
}

/// Marks the calling thread as running chunks while alive.
struct InsideScope {
  bool was = insideParallelFor;
  InsideScope() { insideParallelFor = true; }
  ~InsideScope() { insideParallelFor = was; }
};
} // namespace

ThreadPool::ThreadPool(unsigned n) {
  if (n == 0)
    n = std::max(1u, std::thread::hardware_concurrency());
  numThreads = n;
  workers.reserve(n - 1);
  for (unsigned i = 1; i < n; ++i)
    workers.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &t : workers)
    t.join();
}

void ThreadPool::runChunks(const RangeFn &fn, int64_t n, int64_t grain,
                           int64_t numChunks) {
  InsideScope inside;
  for (;;) {
    int64_t chunk = nextChunk.fetch_add(1, std::memory_order_relaxed);
    if (chunk >= numChunks)
      break;
    runChunk(fn, chunk, n, grain);
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    const RangeFn *fn;
    int64_t n, grain, numChunks;
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
      fn = jobFn;
      n = jobSize;
      grain = jobGrain;
      numChunks = jobNumChunks;
    }
    runChunks(*fn, n, grain, numChunks);
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (++finishedWorkers == workers.size())
        done.notify_all();
    }
  }
}

void ThreadPool::parallelFor(int64_t n, int64_t grain, const RangeFn &fn) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  int64_t numChunks = n / grain + (n % grain != 0);
  if (workers.empty() || numChunks == 1 || insideParallelFor) {
    InsideScope inside;
    for (int64_t chunk = 0; chunk < numChunks; ++chunk)
      runChunk(fn, chunk, n, grain);
    return;
  }
  std::lock_guard<std::mutex> call(callMutex);
  {
    std::lock_guard<std::mutex> lock(mutex);
    jobFn = &fn;
    jobSize = n;
    jobGrain = grain;
    jobNumChunks = numChunks;
    nextChunk.store(0, std::memory_order_relaxed);
    finishedWorkers = 0;
    ++generation;
  }
  // The caller claims the first chunk before waking the workers, so it
  // always takes part (and a launch never waits on a wake-up alone).
  int64_t first = nextChunk.fetch_add(1, std::memory_order_relaxed);
  wake.notify_all();
  {
    InsideScope inside;
    runChunk(fn, first, n, grain);
  }
  runChunks(fn, n, grain, numChunks);
  // Every worker takes part in every job (late ones find no chunks left);
  // wait until all have left it, so `fn` stays alive while they run.
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return finishedWorkers == workers.size(); });
  jobFn = nullptr;
}

} // namespace tessera
