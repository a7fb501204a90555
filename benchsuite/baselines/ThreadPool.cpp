//===- ThreadPool.cpp - Persistent fork-join pool for baselines -----------===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <algorithm>
#include <chrono>

#include <sched.h>

using namespace tessera::bench;

namespace {

/// How long a parked thread (worker or caller) busy-waits before it sleeps in
/// the kernel. Long enough to cover the gap between back-to-back benchmark
/// iterations, short enough not to steal a shared core for long.
constexpr auto kSpinTime = std::chrono::microseconds(50);

/// Set on pool workers and on a caller while it is inside run(), so that a
/// nested run() executes serially instead of deadlocking.
thread_local bool tlsInsidePool = false;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/// Spins until `done()` holds or kSpinTime elapses; returns whether it held.
template <typename Pred> bool spinUntil(Pred done) {
  auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (done())
        return true;
      cpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return done();
  }
}

} // namespace

int tessera::bench::hardwareThreads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int count = CPU_COUNT(&set);
    if (count > 0)
      return count;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

int tessera::bench::resolveThreads(int requested) {
  return requested <= 0 ? hardwareThreads() : requested;
}

std::pair<int64_t, int64_t> tessera::bench::splitRange(int64_t n, int parts,
                                                       int index,
                                                       int64_t align) {
  if (parts <= 1)
    return {0, n};
  align = std::max<int64_t>(align, 1);
  auto boundary = [&](int i) -> int64_t {
    if (i <= 0)
      return 0;
    if (i >= parts)
      return n;
    // Proportional split, rounded to the nearest multiple of `align`.
    int64_t raw = static_cast<int64_t>(
        (static_cast<__int128>(n) * i + parts / 2) / parts);
    int64_t rounded = (raw + align / 2) / align * align;
    return std::min(rounded, n);
  };
  return {boundary(index), boundary(index + 1)};
}

struct ThreadPool::Worker {
  alignas(64) std::atomic<uint32_t> ticket{0};
  std::atomic<bool> sleeping{false};
  std::thread thread;
};

ThreadPool::ThreadPool() = default;

ThreadPool::~ThreadPool() {
  stopping.store(true, std::memory_order_seq_cst);
  for (auto &w : workers) {
    w->ticket.fetch_add(1, std::memory_order_seq_cst);
    w->ticket.notify_one();
  }
  for (auto &w : workers)
    if (w->thread.joinable())
      w->thread.join();
}

ThreadPool &ThreadPool::global() {
  // Leaked on purpose: workers must outlive every static object that might
  // still run a parallel loop during program exit.
  static ThreadPool *pool = new ThreadPool();
  return *pool;
}

int ThreadPool::numWorkers() const {
  // Only grows under runMutex; a racy read is fine for reporting.
  return static_cast<int>(workers.size());
}

void ThreadPool::ensureWorkers(int count) {
  while (static_cast<int>(workers.size()) < count) {
    int index = static_cast<int>(workers.size());
    workers.push_back(std::make_unique<Worker>());
    Worker *w = workers.back().get();
    w->thread = std::thread([this, w, index] { workerLoop(*w, index); });
  }
}

void ThreadPool::workerLoop(Worker &self, int index) {
  tlsInsidePool = true;
  uint32_t seen = 0;
  for (;;) {
    auto posted = [&] {
      return self.ticket.load(std::memory_order_acquire) != seen;
    };
    if (!spinUntil(posted)) {
      self.sleeping.store(true, std::memory_order_seq_cst);
      self.ticket.wait(seen, std::memory_order_seq_cst);
      self.sleeping.store(false, std::memory_order_relaxed);
    }
    seen = self.ticket.load(std::memory_order_acquire);
    if (stopping.load(std::memory_order_acquire))
      return;

    jobCall(jobCtx, index + 1, jobThreads);

    if (pending.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        callerSleeping.load(std::memory_order_seq_cst))
      pending.notify_one();
  }
}

void ThreadPool::runImpl(int numThreads, Trampoline call, void *ctx) {
  if (numThreads <= 1 || tlsInsidePool) {
    for (int tid = 0; tid < numThreads; ++tid)
      call(ctx, tid, numThreads);
    return;
  }

  std::lock_guard<std::mutex> lock(runMutex);
  tlsInsidePool = true;
  ensureWorkers(numThreads - 1);

  jobCall = call;
  jobCtx = ctx;
  jobThreads = numThreads;
  pending.store(numThreads - 1, std::memory_order_relaxed);
  for (int i = 0; i < numThreads - 1; ++i) {
    Worker &w = *workers[i];
    w.ticket.fetch_add(1, std::memory_order_seq_cst);
    if (w.sleeping.load(std::memory_order_seq_cst))
      w.ticket.notify_one();
  }

  call(ctx, 0, numThreads);

  auto finished = [&] {
    return pending.load(std::memory_order_acquire) == 0;
  };
  if (!spinUntil(finished)) {
    callerSleeping.store(true, std::memory_order_seq_cst);
    for (int left; (left = pending.load(std::memory_order_seq_cst)) != 0;)
      pending.wait(left, std::memory_order_seq_cst);
    callerSleeping.store(false, std::memory_order_relaxed);
  }
  tlsInsidePool = false;
}
