//===- ThreadPool.h - Persistent fork-join pool for baselines ---*- C++ -*-===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A small persistent fork-join thread pool used by the C++ baselines and the
/// CPU peak micro-benchmarks. Workers are started once and parked between
/// jobs (a short spin, then a futex wait through std::atomic::wait), so that
/// dispatching a parallel loop costs microseconds rather than the tens of
/// microseconds that creating and joining std::threads costs.
///
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCHSUITE_BASELINES_THREADPOOL_H
#define TESSERA_BENCHSUITE_BASELINES_THREADPOOL_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessera::bench {

/// Returns the number of hardware threads the process may use (at least 1).
int hardwareThreads();

/// Maps a requested thread count to the count actually used: values <= 0 mean
/// "all hardware threads"; positive values are returned unchanged.
int resolveThreads(int requested);

/// A persistent fork-join pool. `run(n, fn)` calls `fn(tid, n)` once for each
/// `tid` in [0, n): tid 0 on the calling thread, the others on pool workers,
/// and returns when all calls have finished. Calls to `run` from different
/// threads are serialised; a nested call from inside a job runs serially on
/// the calling thread. The pool grows on demand and never shrinks.
class ThreadPool {
public:
  /// Creates an empty pool; workers are started by the first `run` that
  /// needs them.
  ThreadPool();
  /// Stops and joins all workers.
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  /// The process-wide pool shared by all baselines.
  static ThreadPool &global();

  /// Runs `fn(tid, numThreads)` for every tid in [0, numThreads) and waits
  /// for all of them. `numThreads` is passed through resolveThreads().
  template <typename Fn> void run(int numThreads, Fn &&fn) {
    using FnT = std::remove_reference_t<Fn>;
    runImpl(
        resolveThreads(numThreads),
        [](void *ctx, int tid, int n) { (*static_cast<FnT *>(ctx))(tid, n); },
        const_cast<void *>(static_cast<const void *>(&fn)));
  }

  /// Number of worker threads started so far (the caller is not counted).
  int numWorkers() const;

private:
  using Trampoline = void (*)(void *, int, int);
  struct Worker;

  void runImpl(int numThreads, Trampoline call, void *ctx);
  void ensureWorkers(int count);
  void workerLoop(Worker &self, int index);

  std::mutex runMutex;
  std::vector<std::unique_ptr<Worker>> workers;

  // Current job, published by bumping `generation`.
  Trampoline jobCall = nullptr;
  void *jobCtx = nullptr;
  int jobThreads = 0;

  alignas(64) std::atomic<uint32_t> generation{0};
  std::atomic<int> sleepingWorkers{0};
  alignas(64) std::atomic<int> pending{0};
  std::atomic<bool> callerSleeping{false};
  std::atomic<bool> stopping{false};
};

/// Splits [0, n) into `parts` contiguous ranges whose interior boundaries are
/// multiples of `align` (so that two threads never write the same cache line
/// when `align` covers a line). Returns the half-open range of part `index`.
std::pair<int64_t, int64_t> splitRange(int64_t n, int parts, int index,
                                       int64_t align = 16);

} // namespace tessera::bench

#endif // TESSERA_BENCHSUITE_BASELINES_THREADPOOL_H
