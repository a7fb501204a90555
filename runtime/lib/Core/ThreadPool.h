//===- ThreadPool.h - Workers for data-parallel kernel launches -*- C++ -*-===//
//
// A fixed-size pool of worker threads that runs the program instances of a
// CPU kernel launch in parallel. Dispatch is tuned for many small launches:
// no allocation per call and an atomic chunk counter; workers sleep on a
// condition variable between launches.
// Internal to the runtime; plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_CORE_THREADPOOL_H
#define TESSERA_RUNTIME_CORE_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera {

/// Fixed-size pool of worker threads for data-parallel loops over program
/// instances.
class ThreadPool {
public:
  /// Body of a parallel loop: processes the items [begin, end).
  using RangeFn = std::function<void(int64_t begin, int64_t end)>;

  /// Creates a pool of `numThreads` threads; 0 means
  /// std::thread::hardware_concurrency() (at least 1). The thread calling
  /// parallelFor counts as one of them, so a pool of size 1 starts no worker
  /// threads.
  explicit ThreadPool(unsigned numThreads = 0);

  /// Stops and joins the workers. No parallelFor may be running.
  ~ThreadPool();

  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  /// Number of threads that run chunks, the calling thread included.
  unsigned size() const { return numThreads; }

  /// Runs fn(begin, end) on disjoint chunks covering [0, n), each of at most
  /// `grain` items (a grain below 1 counts as 1), and returns when all are
  /// done; the caller runs chunks too. Thread-safe: concurrent calls from
  /// different threads are serialised. A call made from inside fn (on any
  /// pool) runs its chunks serially on the calling thread instead of
  /// deadlocking. n <= 0 returns immediately without calling fn.
  void parallelFor(int64_t n, int64_t grain, const RangeFn &fn);

private:
  /// Body of each worker thread: wait for a job generation, run chunks.
  void workerLoop();
  /// Claims chunks of the current job until none are left.
  void runChunks(const RangeFn &fn, int64_t n, int64_t grain,
                 int64_t numChunks);

  unsigned numThreads;
  std::vector<std::thread> workers;
  /// Serialises concurrent parallelFor callers (one job at a time).
  std::mutex callMutex;

  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable done;
  // The current job; guarded by `mutex`.
  const RangeFn *jobFn = nullptr;
  int64_t jobSize = 0;
  int64_t jobGrain = 1;
  int64_t jobNumChunks = 0;
  uint64_t generation = 0;
  size_t finishedWorkers = 0;
  bool stopping = false;
  /// Index of the next unclaimed chunk.
  std::atomic<int64_t> nextChunk{0};
};

} // namespace tessera

#endif // TESSERA_RUNTIME_CORE_THREADPOOL_H
