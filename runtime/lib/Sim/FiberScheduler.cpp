//===- FiberScheduler.cpp - GPU threads as fibers -------------------------===//

#include "Sim/FiberScheduler.h"

#include "tessera/Support/DType.h"

#include <sys/mman.h>
#include <ucontext.h>

// AddressSanitizer must be told about stack switches, or it reports false
// stack-buffer problems on the fibers' stacks.
#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_ASAN_FIBERS 1
#endif
#endif
#ifdef TESSERA_ASAN_FIBERS
#include <sanitizer/common_interface_defs.h>
#endif
// ThreadSanitizer must be told too: each fiber is a context of its own,
// and a switch orders what the two sides did (the threads of a block run
// one at a time on one OS thread).
#if defined(__SANITIZE_THREAD__)
#define TESSERA_TSAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TESSERA_TSAN_FIBERS 1
#endif
#endif
#ifdef TESSERA_TSAN_FIBERS
#include <sanitizer/tsan_interface.h>
#endif

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>

namespace tessera::sim {
namespace {

constexpr size_t kStackBytes = 64 * 1024;

enum class FiberState { Runnable, AtBarrier, AtWarpSync, AtMbarrier, Done };
enum class Collective { Shuffle, LdMatrix, Mma, Wgmma };
constexpr int64_t kWarpgroupSize = 128;
constexpr int64_t kWarpSize = 32;

struct Scheduler;

struct Fiber {
#ifdef TESSERA_TSAN_FIBERS
  Fiber() : tsanFiber(__tsan_create_fiber(0)) {}
  ~Fiber() { __tsan_destroy_fiber(tsanFiber); }
  void *tsanFiber;
#endif
  ucontext_t ctx;
  void *stack = nullptr;
  void *fakeStack = nullptr; // ASan bookkeeping of the suspended fiber
  int64_t tid = 0;
  int64_t barrierSite = -1;
  // The barrier waited at: 0 threads for the whole block's (gpu.barrier),
  // otherwise the named barrier `barrierId` of `barrierCount` threads.
  int64_t barrierId = 0, barrierCount = 0;
  // The pending warp collective: its kind, value in, parameters, result
  // out. For ldmatrix/mma the operands are addresses (of the lane's row in
  // shared memory, of its fragments on its own stack).
  Collective syncKind = Collective::Shuffle;
  int64_t syncSite = -1, syncValue = 0, syncOffset = 0, syncWidth = 32,
          syncMode = 0, syncResult = 0;
  int64_t syncPtr[4] = {0, 0, 0, 0};
  // cp.async copies issued and not yet waited for, and the number of them
  // in each committed group (oldest first). The copies happen at the wait.
  struct AsyncCopy {
    int64_t dst, src, bytes, srcBytes;
  };
  std::vector<AsyncCopy> asyncCopies;
  std::vector<size_t> asyncGroups;
  size_t asyncCommitted = 0; ///< copies in asyncGroups (the oldest ones)
  // wgmma: a fence since the accumulators were last handed to other code
  // (kernel start or a wait) and products issued and not committed. The
  // sim computes each product when the warpgroup issues it.
  bool wgmmaFenced = false;
  int64_t wgmmaUncommitted = 0;
  // The warpgroup's number of its latest product this thread issued, the
  // latest of each committed group not waited for (oldest first; one
  // entry per group), and the latest it has waited for.
  int64_t wgmmaLatest = 0, wgmmaRetired = 0;
  std::vector<int64_t> wgmmaGroupEnds;
  /// Per accumulator chain, the latest product on it this thread issued.
  std::vector<int64_t> wgmmaChainLatest;
  // mbarrier: the barrier and phase parity this thread waits for (state
  // AtMbarrier), and per barrier the latest phase it has waited for.
  int64_t mbarrierWait = -1, mbarrierParity = 0, mbarrierSite = -1;
  std::vector<int64_t> mbarrierConsumed;
  Scheduler *sched = nullptr;
  FiberState state = FiberState::Runnable;
  std::vector<int64_t> slots;
  std::vector<void *> args;
};

/// Shadow state of one byte of shared memory in the current epoch (bytes,
/// not words: neighbouring f16/i8 elements belong to different threads).
struct ShadowWord {
  uint32_t epoch = 0;
  int32_t writer = -1;
  int32_t reader = -1;
  bool manyReaders = false;
};

struct Scheduler {
  ucontext_t main;
#ifdef TESSERA_TSAN_FIBERS
  void *tsanMain = __tsan_get_current_fiber();
#endif
  void *fakeStack = nullptr;        // ASan: the scheduler's while suspended
  const void *mainBottom = nullptr; // ASan: the scheduler's stack
  size_t mainSize = 0;
  const BlockLaunch *launch = nullptr;
  /// Set when the launch counts (BlockLaunch::counts).
  BlockCounters *counters = nullptr;
  uint32_t epoch = 1; ///< barrier generation, unique on this OS thread
  std::vector<ShadowWord> *shadowPtr = nullptr;
  /// The block's threads (tid order).
  std::vector<std::unique_ptr<Fiber>> *fibers = nullptr;
  /// wgmma reads its operands until its warpgroup waits for it: per shared
  /// byte, (product << 8) | (warpgroup + 1) of the last product that read
  /// it, 0 for none; per warpgroup, products issued (numbered from 1) and
  /// the latest one every thread of it has waited for.
  std::vector<uint64_t> wgmmaReads;
  std::vector<int64_t> wgmmaIssued, wgmmaRetired;
  /// The block's mbarriers: arrivals per phase (`count`), those the
  /// current phase still waits for, transaction bytes it still expects,
  /// and the number of completed phases. Groups are numbered by the site
  /// that creates them, so every thread of the block sees the same ones.
  struct Mbarrier {
    bool initialised = false;
    int64_t count = 0, pending = 0, tx = 0, phase = 0;
  };
  std::vector<Mbarrier> mbarriers;
  /// Per shared byte a TMA copy wrote: ((mbarrier + 1) << 32) | the phase
  /// its bytes complete, 0 for none; readers must have waited for it.
  std::vector<uint64_t> tmaWrites;
  std::vector<std::pair<int64_t, int64_t>> mbarrierGroups; ///< (site, first)
  /// Named barriers' arrivals without a wait (bar.arrive) in their
  /// current phase, and the thread count they gave.
  struct NamedArrivals {
    int64_t count = 0, arrived = 0;
  };
  std::map<int64_t, NamedArrivals> namedArrivals;
  bool failed = false;
  Status error = okStatus();

  std::string where() const {
    return "kernel '" + launch->kernel + "', block (" +
           std::to_string(launch->block[0]) + ", " +
           std::to_string(launch->block[1]) + ", " +
           std::to_string(launch->block[2]) + ")";
  }
  std::string site(int64_t id) const {
    if (launch->sites && id >= 0 && size_t(id) < launch->sites->size())
      return (*launch->sites)[size_t(id)];
    return "access #" + std::to_string(id);
  }
  void fail(StatusCode code, std::string message) {
    if (failed)
      return;
    failed = true;
    error = Status(code, std::move(message));
  }
};

/// The fiber a kernel's context argument names.
Fiber *fiberOf(int64_t context) {
  return reinterpret_cast<Fiber *>(static_cast<uintptr_t>(context));
}

/// Stacks are reused across blocks on the same OS thread.
struct StackPool {
  std::vector<char *> stacks;
  ~StackPool() {
    for (char *s : stacks)
      munmap(s, kStackBytes);
  }
  char *get(size_t i) {
    while (stacks.size() <= i) {
      void *p = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED)
        return nullptr;
      stacks.push_back(static_cast<char *>(p));
    }
    return stacks[i];
  }
};

thread_local StackPool tlsStacks;
/// Shadow memory and epoch counter, reused by every block on this OS thread
/// (epochs never repeat, so stale entries need no clearing).
thread_local std::vector<ShadowWord> tlsShadow;
thread_local uint32_t tlsEpoch = 0;

/// Fiber -> scheduler (the fiber is suspended, or ends when `dying`).
void switchToScheduler(Fiber *f, bool dying) {
#ifdef TESSERA_ASAN_FIBERS
  __sanitizer_start_switch_fiber(dying ? nullptr : &f->fakeStack,
                                 f->sched->mainBottom, f->sched->mainSize);
#endif
#ifdef TESSERA_TSAN_FIBERS
  __tsan_switch_to_fiber(f->sched->tsanMain, 0);
  // The fiber must not run on (returning through its frames would pop
  // them from the scheduler's TSan stack): straight to the scheduler.
  if (dying)
    setcontext(&f->sched->main);
#endif
  if (dying)
    return; // returning from the fiber's function resumes uc_link
  swapcontext(&f->ctx, &f->sched->main);
#ifdef TESSERA_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(f->fakeStack, nullptr, nullptr);
#endif
}

/// Performs the thread's first `count` pending async copies (bytes past
/// `srcBytes` are zero-filled, as cp.async's src-size does).
void completeAsyncCopies(Fiber *f, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const Fiber::AsyncCopy &c = f->asyncCopies[i];
    if (!c.dst || !c.src)
      continue; // reported out of bounds when issued
    auto *dst = reinterpret_cast<unsigned char *>(uintptr_t(c.dst));
    auto *src = reinterpret_cast<const unsigned char *>(uintptr_t(c.src));
    int64_t n = std::min(c.srcBytes, c.bytes);
    std::memcpy(dst, src, size_t(std::max<int64_t>(n, 0)));
    if (n < c.bytes)
      std::memset(dst + std::max<int64_t>(n, 0), 0,
                  size_t(c.bytes - std::max<int64_t>(n, 0)));
  }
  f->asyncCopies.erase(f->asyncCopies.begin(),
                       f->asyncCopies.begin() + ptrdiff_t(count));
}

void fiberMain(unsigned hi, unsigned lo) {
  auto *f = reinterpret_cast<Fiber *>((uintptr_t(hi) << 32) | uintptr_t(lo));
#ifdef TESSERA_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(nullptr, &f->sched->mainBottom,
                                  &f->sched->mainSize);
#endif
  f->sched->launch->entry(f->args.data());
  // Copies never waited for still land (as they would on a GPU), after
  // every read the thread made.
  completeAsyncCopies(f, f->asyncCopies.size());
  f->asyncGroups.clear();
  f->asyncCommitted = 0;
  // Products never committed and waited for leave the accumulators
  // undefined on a GPU: whatever the thread stored of them is wrong there.
  if (f->wgmmaUncommitted || !f->wgmmaGroupEnds.empty()) {
    Scheduler &s = *f->sched;
    s.fail(StatusCode::kFailedPrecondition,
           "sim: thread " + std::to_string(f->tid) + " of " + s.where() +
               " ends with wgmma.mma_async products not waited for (" +
               std::to_string(f->wgmmaUncommitted) + " uncommitted, " +
               std::to_string(f->wgmmaGroupEnds.size()) +
               " committed groups pending): wgmma.commit_group and "
               "wgmma.wait_group 0 must precede any use of the accumulators");
  }
  f->state = FiberState::Done;
  switchToScheduler(f, /*dying=*/true);
  // Returning resumes uc_link (the scheduler).
}

} // namespace

extern "C" void tessera_sim_barrier(int64_t context, int64_t site) {
  Fiber *f = fiberOf(context);
  f->state = FiberState::AtBarrier;
  f->barrierSite = site;
  f->barrierId = 0;
  f->barrierCount = 0;
  switchToScheduler(f, /*dying=*/false);
}

extern "C" void tessera_sim_named_barrier(int64_t context, int64_t id,
                                          int64_t count, int64_t site) {
  if (count <= 0) {
    tessera_sim_barrier(context, site);
    return;
  }
  Fiber *f = fiberOf(context);
  f->state = FiberState::AtBarrier;
  f->barrierSite = site;
  f->barrierId = id;
  f->barrierCount = count;
  switchToScheduler(f, /*dying=*/false);
}

extern "C" void tessera_sim_named_barrier_arrive(int64_t context, int64_t id,
                                                 int64_t count, int64_t site) {
  Fiber *f = fiberOf(context);
  Scheduler &s = *f->sched;
  auto where = [&] {
    return " in " + s.where() + ", thread " + std::to_string(f->tid) + ": " +
           s.site(site);
  };
  if (id < 1 || id > 15 || count <= 0 || count % kWarpSize) {
    s.fail(StatusCode::kFailedPrecondition,
           "sim: bar.arrive on barrier " + std::to_string(id) + " for " +
               std::to_string(count) +
               " threads (the sim supports barriers 1-15 and whole warps)" +
               where());
    return;
  }
  Scheduler::NamedArrivals &a = s.namedArrivals[id];
  if (a.arrived > 0 && a.count != count) {
    s.fail(StatusCode::kFailedPrecondition,
           "sim: bar.arrive on barrier " + std::to_string(id) + " for " +
               std::to_string(count) + " threads while its phase counts " +
               std::to_string(a.count) + where());
    return;
  }
  a.count = count;
  if (++a.arrived < count)
    return;
  // Arrivals alone complete the phase when nobody waits there (a GPU
  // releases nobody); with waiters the scheduler finds too many threads.
  for (auto &other : *s.fibers)
    if (other->state == FiberState::AtBarrier && other->barrierCount > 0 &&
        other->barrierId == id)
      return;
  a.arrived = 0;
}

namespace {

/// Barrier `id` of the block, or null (the launch failed, naming `op`).
Scheduler::Mbarrier *mbarrier(Fiber *f, int64_t id, int64_t site,
                              const char *op, bool initialised = true) {
  Scheduler &s = *f->sched;
  if (id < 0 || size_t(id) >= s.mbarriers.size()) {
    s.fail(StatusCode::kFailedPrecondition,
           std::string("sim: ") + op + " on mbarrier " + std::to_string(id) +
               ", outside its group, in " + s.where() + ", thread " +
               std::to_string(f->tid) + ": " + s.site(site));
    return nullptr;
  }
  Scheduler::Mbarrier &b = s.mbarriers[size_t(id)];
  if (initialised && !b.initialised) {
    s.fail(StatusCode::kFailedPrecondition,
           std::string("sim: ") + op + " on mbarrier " + std::to_string(id) +
               " before mbarrier.init in " + s.where() + ", thread " +
               std::to_string(f->tid) + ": " + s.site(site));
    return nullptr;
  }
  return &b;
}

/// Ends the current phase of `b` once every arrival and every transaction
/// byte it waits for is in.
void completePhaseIfDone(Scheduler::Mbarrier &b) {
  if (b.pending == 0 && b.tx == 0) {
    ++b.phase;
    b.pending = b.count;
  }
}

/// Whether a wait for the phase of parity `parity` is over: the current
/// phase has the other parity (a freshly initialised barrier counts its
/// phase "-1", of parity 1, as complete).
bool mbarrierPasses(const Scheduler::Mbarrier &b, int64_t parity) {
  return (b.phase & 1) != (parity & 1);
}

/// A wait of `f` on barrier `id` that is over: the phase it waited for is
/// the latest completed one of its parity, which must be one the thread
/// has not waited for yet (a ring whose phase bit does not flip when it
/// wraps waits for the same phase again and reads a stale slot).
void consumeMbarrierPhase(Fiber *f, int64_t id, int64_t site) {
  Scheduler &s = *f->sched;
  const int64_t phase = s.mbarriers[size_t(id)].phase - 1;
  std::vector<int64_t> &seen = f->mbarrierConsumed;
  if (seen.size() <= size_t(id))
    seen.resize(size_t(id) + 1, -2);
  if (phase <= seen[size_t(id)])
    s.fail(StatusCode::kFailedPrecondition,
           "sim: thread " + std::to_string(f->tid) + " waits on mbarrier " +
               std::to_string(id) + " for phase parity " +
               std::to_string((phase + 2) % 2) + ", which passes on phase " +
               std::to_string(phase) +
               ", one it has already waited for (the phase bit must flip "
               "each time a ring of barriers wraps) in " +
               s.where() + ": " + s.site(site));
  seen[size_t(id)] = phase;
}

} // namespace

extern "C" int64_t tessera_sim_mbarrier_create(int64_t context, int64_t n,
                                               int64_t site) {
  Scheduler &s = *fiberOf(context)->sched;
  for (auto [groupSite, first] : s.mbarrierGroups)
    if (groupSite == site)
      return first;
  int64_t first = int64_t(s.mbarriers.size());
  s.mbarriers.resize(size_t(first + std::max<int64_t>(n, 0)));
  s.mbarrierGroups.push_back({site, first});
  return first;
}

extern "C" void tessera_sim_mbarrier_init(int64_t context, int64_t id,
                                          int64_t count, int64_t predicate,
                                          int64_t site) {
  Fiber *f = fiberOf(context);
  if (!predicate)
    return;
  Scheduler::Mbarrier *b =
      mbarrier(f, id, site, "mbarrier.init", /*initialised=*/false);
  if (!b)
    return;
  if (count < 1) {
    Scheduler &s = *f->sched;
    s.fail(StatusCode::kFailedPrecondition,
           "sim: mbarrier.init with count " + std::to_string(count) +
               " (at least 1) in " + s.where() + ": " + s.site(site));
    return;
  }
  *b = {true, count, count, 0, 0};
}

extern "C" int64_t tessera_sim_mbarrier_arrive(int64_t context, int64_t id,
                                               int64_t tx, int64_t predicate,
                                               int64_t site) {
  Fiber *f = fiberOf(context);
  if (!predicate)
    return -1;
  Scheduler::Mbarrier *b = mbarrier(f, id, site, "mbarrier.arrive");
  if (!b)
    return -1;
  const int64_t token = b->phase;
  b->tx += tx;
  if (--b->pending < 0) {
    Scheduler &s = *f->sched;
    s.fail(StatusCode::kFailedPrecondition,
           "sim: thread " + std::to_string(f->tid) + " arrives on mbarrier " +
               std::to_string(id) + " past its count of " +
               std::to_string(b->count) + " in " + s.where() + ": " +
               s.site(site));
    return token;
  }
  const int64_t phase = b->phase;
  completePhaseIfDone(*b);
  // A phase that several threads' arrivals complete (consumers releasing a
  // ring slot to its producer) orders their accesses before those of the
  // threads that wait for it: for the race checker, whose epochs are the
  // block's, a new epoch.
  if (b->phase != phase && b->count > 1)
    f->sched->epoch = ++tlsEpoch;
  return token;
}

extern "C" int64_t tessera_sim_mbarrier_test_wait(int64_t context, int64_t id,
                                                  int64_t token, int64_t site) {
  Scheduler::Mbarrier *b =
      mbarrier(fiberOf(context), id, site, "mbarrier.test.wait");
  return !b || token < 0 || b->phase > token;
}

extern "C" void tessera_sim_mbarrier_wait_parity(int64_t context, int64_t id,
                                                 int64_t parity, int64_t site) {
  Fiber *f = fiberOf(context);
  Scheduler::Mbarrier *b = mbarrier(f, id, site, "mbarrier.try_wait.parity");
  if (!b)
    return;
  if (!mbarrierPasses(*b, parity)) {
    // Parked until the phase completes; the scheduler reports a wait that
    // never ends as a deadlock.
    f->state = FiberState::AtMbarrier;
    f->mbarrierWait = id;
    f->mbarrierParity = parity;
    f->mbarrierSite = site;
    switchToScheduler(f, /*dying=*/false);
    f->mbarrierWait = -1;
  }
  consumeMbarrierPhase(f, id, site);
}

namespace {

/// Whether `f` has waited on mbarrier `id` for phase `phase` (or a later
/// one).
bool waitedFor(const Fiber *f, int64_t id, int64_t phase) {
  const std::vector<int64_t> &seen = f->mbarrierConsumed;
  return size_t(id) < seen.size() && seen[size_t(id)] >= phase;
}

/// Fails the launch when `f` reads shared byte `off`, which a TMA copy
/// wrote, before waiting for the mbarrier phase that copy completes.
bool checkTmaRead(Fiber *f, int64_t off, int64_t site) {
  Scheduler &s = *f->sched;
  if (s.tmaWrites.empty() || size_t(off) >= s.tmaWrites.size())
    return true;
  uint64_t w = s.tmaWrites[size_t(off)];
  if (!w)
    return true;
  int64_t id = int64_t(w >> 32) - 1, phase = int64_t(w & 0xffffffffu);
  if (waitedFor(f, id, phase))
    return true;
  s.fail(StatusCode::kFailedPrecondition,
         "sim: thread " + std::to_string(f->tid) +
             " reads shared byte offset " + std::to_string(off) +
             " that a TMA copy writes before waiting on mbarrier " +
             std::to_string(id) + " for the phase that copy completes (phase " +
             std::to_string(phase) + ", parity " + std::to_string(phase % 2) +
             ") in " + s.where() + ": " + s.site(site));
  return false;
}

} // namespace

extern "C" void tessera_sim_tma_load(int64_t context, int64_t map, int64_t id,
                                     int64_t dst, int64_t c0, int64_t c1,
                                     int64_t c2, int64_t c3, int64_t c4,
                                     int64_t predicate, int64_t site) {
  Fiber *f = fiberOf(context);
  Scheduler &s = *f->sched;
  if (!predicate || s.failed)
    return;
  Scheduler::Mbarrier *b = mbarrier(f, id, site, "cp.async.bulk.tensor");
  if (!b)
    return;
  const BlockLaunch &l = *s.launch;
  auto fail = [&](const std::string &what) {
    s.fail(StatusCode::kFailedPrecondition,
           "sim: cp.async.bulk.tensor " + what + " in " + s.where() +
               ", thread " + std::to_string(f->tid) + ": " + s.site(site));
  };
  const auto *m = reinterpret_cast<const SimTensorMap *>(map);
  if (!m || m->rank < 1 || m->rank > 5 || m->elementBytes < 1 ||
      (m->swizzle != 0 && m->swizzle != 32 && m->swizzle != 64 &&
       m->swizzle != 128))
    return fail("with an invalid tensor map");
  const int64_t rank = m->rank, eb = m->elementBytes;
  const int64_t rowBytes = m->box[0] * eb;
  if (m->swizzle && rowBytes > m->swizzle)
    return fail("with a box row of " + std::to_string(rowBytes) +
                " bytes, wider than its " + std::to_string(m->swizzle) +
                "-byte swizzle");
  int64_t rows = 1;
  for (int64_t d = 1; d < rank; ++d)
    rows *= m->box[d];
  const int64_t total = rowBytes * rows;
  const int64_t off = dst - int64_t(reinterpret_cast<uintptr_t>(l.arena));
  if (!l.arena || off < 0 || off + total > l.arenaBytes)
    return fail("to shared offset " + std::to_string(off) + " (" +
                std::to_string(total) + " bytes), outside the " +
                std::to_string(l.arenaBytes) + "-byte arena");
  if (off % 128)
    return fail("to shared offset " + std::to_string(off) +
                ", not 128-byte aligned");
  const int64_t coord[5] = {c0, c1, c2, c3, c4};
  auto swizzled = [&](int64_t a) {
    return m->swizzle ? a ^ (((a >> 7) & (m->swizzle / 16 - 1)) << 4) : a;
  };
  // What the destination held: wgmma operands not yet retired and other
  // threads' accesses in this barrier epoch make the copy a race; the
  // copy itself is no thread's access afterwards (readers are ordered by
  // the mbarrier, see checkTmaRead).
  auto *base =
      static_cast<unsigned char *>(const_cast<unsigned char *>(l.arena));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x = 0; x < rowBytes; x += 16) {
      int64_t a = swizzled(off + r * rowBytes + x);
      tessera_sim_access(context, int64_t(uintptr_t(base + a)),
                         std::min<int64_t>(16, rowBytes - x), 1, site);
      if (s.failed)
        return;
      for (int64_t w = a; w < a + std::min<int64_t>(16, rowBytes - x); ++w)
        if (size_t(w) < s.shadowPtr->size())
          (*s.shadowPtr)[size_t(w)].writer = -1;
    }
  if (s.tmaWrites.empty())
    s.tmaWrites.assign(size_t(l.arenaBytes), 0);
  const uint64_t mark = (uint64_t(id + 1) << 32) | uint64_t(b->phase);
  int64_t idx[5] = {0, 0, 0, 0, 0};
  // The global traffic: the distinct sectors of each row's elements inside
  // the tensor (a box row is one run along the innermost dimension), and
  // their bytes.
  GlobalCost traffic;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t lastSector = -1;
    // The row's coordinates along dimensions 1 and up.
    for (int64_t d = 1, q = r; d < rank; ++d) {
      idx[d] = q % m->box[d];
      q /= m->box[d];
    }
    for (int64_t i = 0; i < m->box[0]; ++i) {
      idx[0] = i;
      bool inside = true;
      int64_t src = m->base;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t g = coord[d] + idx[d];
        inside &= g >= 0 && g < m->dims[d];
        src += g * m->strides[d];
      }
      int64_t a = swizzled(off + r * rowBytes + i * eb);
      if (inside) {
        std::memcpy(base + a, reinterpret_cast<const void *>(src), size_t(eb));
        traffic.usefulBytes += eb;
        for (int64_t sector = src / kSectorBytes;
             sector <= (src + eb - 1) / kSectorBytes; ++sector)
          if (sector != lastSector) {
            ++traffic.sectors;
            lastSector = sector;
          }
      } else
        std::memset(base + a, 0, size_t(eb));
      for (int64_t w = a; w < a + eb; ++w)
        s.tmaWrites[size_t(w)] = mark;
    }
  }
  if (s.counters) {
    traffic.idealSectors =
        (traffic.usefulBytes + kSectorBytes - 1) / kSectorBytes;
    s.counters->bulk(site, AccessKind::Load, total, traffic);
  }
  b->tx -= total;
  completePhaseIfDone(*b);
}

extern "C" void tessera_sim_fault(int64_t context, int64_t site,
                                  int64_t reason) {
  Fiber *f = fiberOf(context);
  Scheduler &s = *f->sched;
  s.fail(
      StatusCode::kFailedPrecondition,
      std::string("sim: ") +
          (reason == 1 ? "misaligned vector access" : "out-of-bounds access") +
          " in " + s.where() + ", thread " + std::to_string(f->tid) + ": " +
          s.site(site));
}

extern "C" void tessera_sim_access(int64_t context, int64_t address,
                                   int64_t bytes, int64_t kind, int64_t site) {
  Fiber *f = fiberOf(context);
  Scheduler &s = *f->sched;
  const BlockLaunch &l = *s.launch;
  if (s.failed || kind == 2 || !l.arena)
    return;
  int64_t base = static_cast<int64_t>(reinterpret_cast<uintptr_t>(l.arena));
  int64_t off = address - base;
  if (off < 0 || off >= l.arenaBytes)
    return; // global memory: blocks may share it; not checked here
  const int32_t tid = static_cast<int32_t>(f->tid);
  if (kind == 1 && !s.wgmmaReads.empty())
    for (int64_t w = off; w < off + bytes && w < l.arenaBytes; ++w) {
      uint64_t r = s.wgmmaReads[size_t(w)];
      if (!r)
        continue;
      int64_t group = int64_t(r & 0xff) - 1, product = int64_t(r >> 8);
      if (s.wgmmaRetired[size_t(group)] >= product) {
        s.wgmmaReads[size_t(w)] = 0;
        continue;
      }
      return s.fail(
          StatusCode::kFailedPrecondition,
          "sim: thread " + std::to_string(tid) + " writes shared byte offset " +
              std::to_string(w) + " while a wgmma.mma_async of warpgroup " +
              std::to_string(group) +
              " may still read it (its group is not complete: no "
              "wgmma.wait_group of every thread of the warpgroup has retired "
              "it) in " +
              s.where() + " (" + s.site(site) + ")");
    }
  if (!s.tmaWrites.empty())
    for (int64_t w = off; w < off + bytes && w < l.arenaBytes; ++w) {
      if (kind == 1)
        s.tmaWrites[size_t(w)] = 0;
      else if (!checkTmaRead(f, w, site))
        return;
    }
  for (int64_t w = off; w < off + bytes; ++w) {
    if (size_t(w) >= s.shadowPtr->size())
      break;
    ShadowWord &sh = (*s.shadowPtr)[size_t(w)];
    if (sh.epoch != s.epoch)
      sh = ShadowWord{s.epoch, -1, -1, false};
    auto race = [&](const char *what, const char *otherDid, int32_t other) {
      s.fail(
          StatusCode::kFailedPrecondition,
          "sim: shared-memory race in " + s.where() + ": thread " +
              std::to_string(tid) + " " + what + " shared byte offset " +
              std::to_string(w) + " that thread " +
              (other >= 0 ? std::to_string(other) : std::string("(several)")) +
              " " + otherDid + " in the same barrier epoch (" + s.site(site) +
              ")");
    };
    if (kind == 1) {
      if (sh.writer >= 0 && sh.writer != tid)
        return race("writes", "wrote", sh.writer);
      if (sh.manyReaders)
        return race("writes", "read", -1);
      if (sh.reader >= 0 && sh.reader != tid)
        return race("writes", "read", sh.reader);
      sh.writer = tid;
    } else {
      if (sh.writer >= 0 && sh.writer != tid)
        return race("reads", "wrote", sh.writer);
      if (sh.reader < 0)
        sh.reader = tid;
      else if (sh.reader != tid)
        sh.manyReaders = true;
    }
  }
}

extern "C" void tessera_sim_access_counted(int64_t context, int64_t address,
                                           int64_t bytes, int64_t kind,
                                           int64_t site) {
  Fiber *f = fiberOf(context);
  tessera_sim_access(context, address, bytes, kind, site);
  BlockCounters *counters = f->sched->counters;
  if (!counters)
    return;
  // Shared when in the arena, not counted at all in the thread's own stack
  // (local memory), global otherwise.
  const BlockLaunch &l = *f->sched->launch;
  auto a = static_cast<uintptr_t>(address);
  auto arena = reinterpret_cast<uintptr_t>(l.arena);
  auto stack = reinterpret_cast<uintptr_t>(f->stack);
  Space space = Space::Global;
  if (l.arena && a >= arena && a < arena + uintptr_t(l.arenaBytes))
    space = Space::Shared;
  else if (a >= stack && a < stack + kStackBytes)
    return;
  AccessKind k = kind == 1   ? AccessKind::Store
                 : kind == 2 ? AccessKind::Atomic
                             : AccessKind::Load;
  counters->access(f->tid, site, space, k, address, bytes);
}

extern "C" void tessera_sim_branch(int64_t context, int64_t site,
                                   int64_t taken) {
  Fiber *f = fiberOf(context);
  if (BlockCounters *c = f->sched->counters)
    c->branch(f->tid, site, taken != 0);
}

extern "C" int64_t tessera_sim_shuffle(int64_t context, int64_t value,
                                       int64_t offset, int64_t width,
                                       int64_t mode, int64_t site) {
  Fiber *f = fiberOf(context);
  f->state = FiberState::AtWarpSync;
  // Every collective names its kind: a warp that issued an ldmatrix or an
  // mma.sync before would otherwise have its shuffles run as that.
  f->syncKind = Collective::Shuffle;
  f->syncSite = site;
  f->syncValue = value;
  f->syncOffset = offset;
  f->syncWidth = width;
  f->syncMode = mode;
  switchToScheduler(f, /*dying=*/false);
  return f->syncResult;
}

extern "C" void tessera_sim_cp_async(int64_t context, int64_t dst, int64_t src,
                                     int64_t bytes, int64_t srcBytes,
                                     int64_t site) {
  Fiber *f = fiberOf(context);
  // cp.async needs both addresses aligned to the copy size (a GPU raises a
  // misaligned-address error).
  if (bytes > 0 && (dst % bytes != 0 || src % bytes != 0)) {
    Scheduler &s = *f->sched;
    s.fail(StatusCode::kFailedPrecondition,
           "sim: misaligned cp.async of " + std::to_string(bytes) +
               " bytes in " + s.where() + ", thread " + std::to_string(f->tid) +
               ": " + s.site(site));
    return;
  }
  f->asyncCopies.push_back({dst, src, bytes, srcBytes});
}

extern "C" void tessera_sim_cp_async_commit(int64_t context) {
  Fiber *f = fiberOf(context);
  f->asyncGroups.push_back(f->asyncCopies.size() - f->asyncCommitted);
  f->asyncCommitted = f->asyncCopies.size();
}

extern "C" void tessera_sim_cp_async_wait(int64_t context, int64_t pending) {
  Fiber *f = fiberOf(context);
  // cp.async.wait_group N: all but the N most recent committed groups are
  // complete.
  size_t keep = size_t(std::max<int64_t>(pending, 0));
  size_t groups = f->asyncGroups.size();
  if (groups <= keep)
    return;
  size_t done = groups - keep, copies = 0;
  for (size_t g = 0; g < done; ++g)
    copies += f->asyncGroups[g];
  completeAsyncCopies(f, copies);
  f->asyncCommitted -= copies;
  f->asyncGroups.erase(f->asyncGroups.begin(),
                       f->asyncGroups.begin() + ptrdiff_t(done));
}

namespace {

/// Parks `f` at a warp or warpgroup collective of `kind` issued at `site`,
/// with its mode and pointer operands, until the scheduler runs it.
void parkAtCollective(Fiber *f, Collective kind, int64_t site, int64_t mode,
                      std::initializer_list<int64_t> ptrs) {
  f->state = FiberState::AtWarpSync;
  f->syncKind = kind;
  f->syncSite = site;
  f->syncMode = mode;
  std::copy(ptrs.begin(), ptrs.end(), f->syncPtr);
  switchToScheduler(f, /*dying=*/false);
}

} // namespace

extern "C" void tessera_sim_ldmatrix(int64_t context, int64_t address,
                                     int64_t tiles, int64_t transpose,
                                     int64_t out, int64_t site) {
  Fiber *f = fiberOf(context);
  f->syncValue = address;
  f->syncWidth = tiles;
  parkAtCollective(f, Collective::LdMatrix, site, transpose, {out});
}

extern "C" void tessera_sim_mma(int64_t context, int64_t kind, int64_t a,
                                int64_t b, int64_t c, int64_t d, int64_t site) {
  parkAtCollective(fiberOf(context), Collective::Mma, site, kind, {a, b, c, d});
}

extern "C" void tessera_sim_wgmma(int64_t context, int64_t config,
                                  int64_t descA, int64_t descB, int64_t acc,
                                  int64_t site) {
  Fiber *f = fiberOf(context);
  if (!f->wgmmaFenced) {
    Scheduler &s = *f->sched;
    s.fail(StatusCode::kFailedPrecondition,
           "sim: wgmma.mma_async without a wgmma.fence since its "
           "accumulators were last accessible to other instructions (kernel "
           "start or a wgmma.wait_group) in " +
               s.where() + ", thread " + std::to_string(f->tid) + ": " +
               s.site(site));
  }
  ++f->wgmmaUncommitted;
  parkAtCollective(f, Collective::Wgmma, site, config, {descA, descB, acc});
}

extern "C" void tessera_sim_wgmma_read(int64_t context, int64_t chain,
                                       int64_t site) {
  Fiber *f = fiberOf(context);
  const std::vector<int64_t> &latest = f->wgmmaChainLatest;
  if (chain < 0 || size_t(chain) >= latest.size() ||
      latest[size_t(chain)] <= f->wgmmaRetired)
    return;
  Scheduler &s = *f->sched;
  s.fail(StatusCode::kFailedPrecondition,
         "sim: thread " + std::to_string(f->tid) +
             " reads the accumulators of wgmma.mma_async product " +
             std::to_string(latest[size_t(chain)]) + " of warpgroup " +
             std::to_string(f->tid / kWarpgroupSize) +
             " before a wgmma.wait_group retires it (they are undefined "
             "until then) in " +
             s.where() + ": " + s.site(site));
}

extern "C" void tessera_sim_wgmma_fence(int64_t context) {
  fiberOf(context)->wgmmaFenced = true;
}

extern "C" void tessera_sim_wgmma_commit(int64_t context) {
  Fiber *f = fiberOf(context);
  if (f->wgmmaUncommitted)
    f->wgmmaGroupEnds.push_back(f->wgmmaLatest);
  f->wgmmaUncommitted = 0;
}

extern "C" void tessera_sim_wgmma_wait(int64_t context, int64_t pending) {
  Fiber *f = fiberOf(context);
  size_t keep = size_t(std::max<int64_t>(pending, 0));
  if (f->wgmmaGroupEnds.size() > keep) {
    size_t done = f->wgmmaGroupEnds.size() - keep;
    f->wgmmaRetired = f->wgmmaGroupEnds[done - 1];
    f->wgmmaGroupEnds.erase(f->wgmmaGroupEnds.begin(),
                            f->wgmmaGroupEnds.begin() + ptrdiff_t(done));
    // The warpgroup's operands are released once every thread of it has
    // waited.
    Scheduler &s = *f->sched;
    size_t g = size_t(f->tid / kWarpgroupSize);
    if (g < s.wgmmaRetired.size()) {
      int64_t retired = f->wgmmaRetired;
      size_t first = g * kWarpgroupSize;
      for (size_t t = first;
           t < std::min(s.fibers->size(), first + kWarpgroupSize); ++t)
        retired = std::min(retired, (*s.fibers)[t]->wgmmaRetired);
      s.wgmmaRetired[g] = retired;
    }
  }
  // The accumulators of the completed groups are the thread's registers
  // again: the next product on them needs a fence.
  f->wgmmaFenced = false;
}

namespace {

template <typename T> T *at(int64_t address) {
  return reinterpret_cast<T *>(static_cast<uintptr_t>(address));
}

/// ldmatrix.sync.aligned.m8n8.xN[.trans].b16 over one warp (PTX ISA,
/// "Warp-level matrix load instruction: ldmatrix"): lanes 8i..8i+7 hold
/// the row addresses of 8x8 matrix i (16 bytes per row); lane l receives
/// from each matrix the 32-bit pair at row l/4, 16-bit columns 2(l%4) and
/// 2(l%4)+1 -- or, transposed, the elements (2(l%4), l/4) and
/// (2(l%4)+1, l/4).
void runLdMatrix(Fiber *const *lanes, int64_t count) {
  const int64_t tiles = lanes[0]->syncWidth;
  const bool trans = lanes[0]->syncMode != 0;
  for (int64_t l = 0; l < count; ++l) {
    auto *out = at<uint16_t>(lanes[l]->syncPtr[0]);
    for (int64_t i = 0; i < tiles; ++i)
      for (int64_t e = 0; e < 2; ++e) {
        int64_t row = trans ? 2 * (l % 4) + e : l / 4;
        int64_t col = trans ? l / 4 : 2 * (l % 4) + e;
        // A row reported out of bounds has address 0 and reads as zeros.
        const uint16_t *src = at<uint16_t>(lanes[8 * i + row]->syncValue);
        out[2 * i + e] = src ? src[col] : 0;
      }
  }
}

/// The element formats of the simulated mma.sync variants (the kind the
/// sim lowering passes).
enum MmaKind : int64_t {
  kMmaF16 = 0,
  kMmaBF16 = 1,
  kMmaTF32 = 2,
  kMmaE4M3 = 3,
  kMmaE5M2 = 4
};

/// `x` rounded to tf32 (10 mantissa bits) to nearest, ties away from zero,
/// as `cvt.rna.tf32.f32` does before the GPU's tf32 mma.sync; infinities
/// and NaNs pass unchanged.
float roundToTF32(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u)
    bits = (bits + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}

/// mma.sync.aligned.m16n8kK.row.col.f32.T.T.f32 over one warp, for the
/// floating-point forms whose 32-bit registers each hold `w` elements of T
/// (K = 8w: tf32 w = 1, f16/bf16 w = 2, e4m3/e5m2 w = 4). The fragment
/// layouts of the PTX ISA ("Matrix Fragments for mma.m16n8k8/k16/k32"),
/// with g = lane/4 and t = lane%4, register r and element e in it:
///   A (16xK), r = 0..3:  (g + 8 (r%2), (r/2) K/2 + w t + e)
///   B (Kx8),  r = 0..1:  (r K/2 + w t + e, g)
///   C, D (16x8 f32), element i = 0..3: (g + 8 (i/2), 2t + i%2)
/// `load(fragment, index)` is the f32 value of element `index` (= r w + e)
/// of a lane's A or B fragment. Each lane's D is computed in f32, summing
/// over k in order.
template <typename Load>
void runMmaLayout(Fiber *const *lanes, int64_t count, int64_t w, Load load) {
  const int64_t K = 8 * w, half = K / 2;
  float A[16][32], B[32][8];
  for (int64_t l = 0; l < count; ++l) {
    int64_t g = l / 4, t = l % 4;
    const void *a = at<const void>(lanes[l]->syncPtr[0]);
    const void *b = at<const void>(lanes[l]->syncPtr[1]);
    for (int64_t e = 0; e < w; ++e) {
      for (int64_t r = 0; r < 4; ++r)
        A[g + 8 * (r % 2)][(r / 2) * half + w * t + e] = load(a, r * w + e);
      for (int64_t r = 0; r < 2; ++r)
        B[r * half + w * t + e][g] = load(b, r * w + e);
    }
  }
  for (int64_t l = 0; l < count; ++l) {
    int64_t g = l / 4, t = l % 4;
    const auto *c = at<const float>(lanes[l]->syncPtr[2]);
    auto *d = at<float>(lanes[l]->syncPtr[3]);
    for (int64_t i = 0; i < 4; ++i) {
      int64_t row = g + (i / 2) * 8, col = 2 * t + i % 2;
      float sum = c[i];
      for (int64_t k = 0; k < K; ++k)
        sum += A[row][k] * B[k][col];
      d[i] = sum;
    }
  }
}

/// The simulated mma.sync variants (see runMmaLayout). tf32 inputs are
/// rounded first, as the GPU lowering does with cvt.rna.tf32.f32; fp8
/// products are exact in f32.
void runMma(Fiber *const *lanes, int64_t count) {
  switch (lanes[0]->syncMode) {
  case kMmaF16:
    return runMmaLayout(lanes, count, 2, [](const void *p, int64_t i) {
      return f16BitsToF32(static_cast<const uint16_t *>(p)[i]);
    });
  case kMmaBF16:
    return runMmaLayout(lanes, count, 2, [](const void *p, int64_t i) {
      return bf16BitsToF32(static_cast<const uint16_t *>(p)[i]);
    });
  case kMmaTF32:
    return runMmaLayout(lanes, count, 1, [](const void *p, int64_t i) {
      return roundToTF32(static_cast<const float *>(p)[i]);
    });
  case kMmaE4M3:
    return runMmaLayout(lanes, count, 4, [](const void *p, int64_t i) {
      return f8E4M3BitsToF32(static_cast<const uint8_t *>(p)[i]);
    });
  case kMmaE5M2:
    return runMmaLayout(lanes, count, 4, [](const void *p, int64_t i) {
      return f8E5M2BitsToF32(static_cast<const uint8_t *>(p)[i]);
    });
  }
  // A variant the lowering emits but the simulator does not know must not
  // leave D unwritten silently.
  lanes[0]->sched->fail(StatusCode::kInternal,
                        "sim: unknown mma.sync variant " +
                            std::to_string(lanes[0]->syncMode) + " in " +
                            lanes[0]->sched->where());
}

/// The byte offset in the shared arena of element (mn, k) of a wgmma
/// operand read through matrix descriptor `desc` (PTX ISA, "Matrix
/// Descriptor Format" and "Shared Memory Matrix Layout" of the
/// asynchronous warpgroup-level matrix instructions), or -1 with `why`
/// set. The descriptor holds bits 4-17 of the start address (bits 0-13),
/// of the leading- (16-29) and stride-dimension byte offsets (32-45), a
/// base offset (49-51) and the swizzle mode (62-63: none, 128, 64 or 32
/// bytes). Addresses are the low 18 bits of shared addresses, taken
/// relative to the arena's. A K-major operand (mn rows of k elements):
/// without swizzle, core matrices of 8 rows x 16 bytes, LBO apart along K
/// and SBO apart along M/N; with swizzle, rows of the swizzle width, 8-row
/// groups SBO apart. An MN-major (transposed) one: atoms of 8 K-rows of
/// the swizzle width along M/N, LBO apart along M/N, 8-row groups SBO
/// apart along K. The swizzle XORs the 16-byte chunk (address bits 4 and
/// up) with the row within the atom (bits 7 and up), on the address.
int64_t wgmmaOffset(uint64_t desc, int64_t mn, int64_t k, bool mnMajor,
                    int64_t elemBytes, uint64_t arena, std::string &why) {
  int64_t start = int64_t((desc & 0x3fff) << 4);
  int64_t lbo = int64_t(((desc >> 16) & 0x3fff) << 4);
  int64_t sbo = int64_t(((desc >> 32) & 0x3fff) << 4);
  int64_t baseOffset = int64_t((desc >> 49) & 7);
  int64_t mode = int64_t(desc >> 62);
  int64_t swizzle = mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 0;
  if (baseOffset != 0) {
    why = "a matrix base offset (not a canonical layout)";
    return -1;
  }
  int64_t off;
  if (!mnMajor) {
    off = swizzle ? (mn / 8) * sbo + (mn % 8) * swizzle + k * elemBytes
                  : (mn / 8) * sbo + (k * elemBytes / 16) * lbo +
                        (mn % 8) * 16 + (k * elemBytes) % 16;
  } else {
    if (!swizzle) {
      why = "an MN-major operand without swizzle";
      return -1;
    }
    int64_t atom = swizzle / elemBytes;
    off = (mn / atom) * lbo + (k / 8) * sbo + (k % 8) * swizzle +
          (mn % atom) * elemBytes;
  }
  const int64_t window = int64_t(1) << 18;
  int64_t a =
      ((start - int64_t(arena % uint64_t(window))) % window + window) % window +
      off;
  if (swizzle)
    a ^= ((a >> 7) & (swizzle / 16 - 1)) << 4;
  return a;
}

/// wgmma.mma_async m64nNk16 (16-bit inputs), m64nNk32 (fp8) or m64nNk8 (tf32)
/// over one warpgroup (`lanes`: its 128 threads), f32 accumulation. The
/// accumulator fragments (PTX ISA, "Register Fragments" of wgmma .m64nNk16):
/// warp w of the warpgroup, g = lane/4, t = lane%4, register i = 4j + e holds
/// (16w + g + 8 (e/2), 8j + 2t + e%2). The sum runs over k in order, in f32, as
/// the mma.sync emulation does.
void runWgmma(Fiber *const *lanes) {
  Scheduler &s = *lanes[0]->sched;
  const BlockLaunch &l = *s.launch;
  const int64_t config = lanes[0]->syncMode;
  // Formats 0 f16, 1 bf16 (k16), 2 e4m3, 3 e5m2 (k32), 4 tf32 (k8; bit 9),
  // fp8 and tf32 operands K-major from shared memory.
  const int64_t n = config & 0x1ff,
                format = (config >> 9) & 1 ? 4 : (config >> 10) & 3;
  const bool transA = (config >> 12) & 1, transB = (config >> 13) & 1;
  const bool scaleD = (config >> 14) & 1, registerA = (config >> 15) & 1;
  const uint64_t descA = uint64_t(lanes[0]->syncPtr[0]);
  const uint64_t descB = uint64_t(lanes[0]->syncPtr[1]);
  auto fail = [&](const std::string &what) {
    s.fail(StatusCode::kFailedPrecondition,
           "sim: " + what + " in " + s.where() + ", warpgroup " +
               std::to_string(lanes[0]->tid / kWarpgroupSize) + ": " +
               s.site(lanes[0]->syncSite));
  };
  for (int64_t t = 1; t < kWarpgroupSize; ++t)
    if (lanes[t]->syncMode != config ||
        (!registerA && uint64_t(lanes[t]->syncPtr[0]) != descA) ||
        uint64_t(lanes[t]->syncPtr[1]) != descB)
      return fail("threads of a warpgroup issued wgmma.mma_async with "
                  "different descriptors or shapes (thread " +
                  std::to_string(lanes[t]->tid) + ")");
  const int64_t bytes = format == 4   ? 4
                        : format >= 2 ? 1
                                      : 2,
                kDim = 32 / bytes;
  if (n < 8 || n > 256 || n % 8 ||
      (format >= 2 && (registerA || transA || transB)))
    return fail("unsupported wgmma.mma_async (N " + std::to_string(n) +
                ", format " + std::to_string(format) +
                (format >= 2
                     ? ", fp8 and tf32 operands K-major in shared memory only)"
                     : ")"));
  if (!l.arena)
    return fail("wgmma.mma_async without shared memory");
  const uint64_t arena = reinterpret_cast<uintptr_t>(l.arena);
  // This product's number in its warpgroup; the bytes it reads stay
  // reserved until the warpgroup waits for it.
  const size_t group = size_t(lanes[0]->tid / kWarpgroupSize);
  if (s.wgmmaReads.empty())
    s.wgmmaReads.assign(size_t(l.arenaBytes), 0);
  const int64_t product = ++s.wgmmaIssued[group];
  const size_t chain = size_t(config >> 16);
  for (int64_t t = 0; t < kWarpgroupSize; ++t) {
    lanes[t]->wgmmaLatest = product;
    std::vector<int64_t> &latest = lanes[t]->wgmmaChainLatest;
    if (latest.size() <= chain)
      latest.resize(chain + 1, 0);
    latest[chain] = product;
  }
  auto value = [&](uint32_t bits) {
    switch (format) {
    case 0:
      return f16BitsToF32(uint16_t(bits));
    case 1:
      return bf16BitsToF32(uint16_t(bits));
    case 2:
      return f8E4M3BitsToF32(uint8_t(bits));
    case 3:
      return f8E5M2BitsToF32(uint8_t(bits));
    default: {
      // tf32: the tensor cores read the sign, the exponent and the top 10
      // mantissa bits of each f32 in shared memory (no rounding).
      bits &= 0xffffe000u;
      float x;
      std::memcpy(&x, &bits, sizeof x);
      return x;
    }
    }
  };
  std::vector<uint64_t> tmaChecked;
  // Operand element (mn, k), its read reported to the race checker as by
  // the warpgroup's first thread.
  auto load = [&](uint64_t desc, int64_t mn, int64_t k, bool mnMajor,
                  float &out) {
    std::string why;
    int64_t off = wgmmaOffset(desc, mn, k, mnMajor, bytes, arena, why);
    if (off < 0) {
      fail("wgmma.mma_async operand with " + why);
      return false;
    }
    if (off + bytes > l.arenaBytes) {
      fail("wgmma.mma_async operand read at shared offset " +
           std::to_string(off) + ", beyond the " +
           std::to_string(l.arenaBytes) + "-byte arena");
      return false;
    }
    const auto *p = static_cast<const unsigned char *>(l.arena) + off;
    for (int64_t b = off; b < off + bytes; ++b)
      s.wgmmaReads[size_t(b)] = (uint64_t(product) << 8) | (group + 1);
    // Bytes a TMA copy wrote: every thread of the warpgroup must have
    // waited for the copy's mbarrier phase (checked once per phase).
    if (!s.tmaWrites.empty() && s.tmaWrites[size_t(off)] &&
        std::find(tmaChecked.begin(), tmaChecked.end(),
                  s.tmaWrites[size_t(off)]) == tmaChecked.end()) {
      for (int64_t t = 0; t < kWarpgroupSize; ++t)
        if (!checkTmaRead(lanes[t], off, lanes[0]->syncSite))
          return false;
      tmaChecked.push_back(s.tmaWrites[size_t(off)]);
    }
    int64_t ctx;
    const Fiber *first = lanes[0];
    std::memcpy(&ctx, &first, sizeof ctx);
    tessera_sim_access(ctx, int64_t(uintptr_t(p)), bytes, 0,
                       lanes[0]->syncSite);
    uint32_t bits = 0;
    std::memcpy(&bits, p, size_t(bytes));
    out = value(bits);
    return true;
  };
  float A[64][32], B[32][256];
  if (registerA) {
    // Each thread's 8 elements of A (its 4 words at `descA`): warp w,
    // g = lane/4, t = lane%4; element h at (16w + g + 8 (h/2 % 2),
    // 2t + h%2 + 8 (h/4)), mma.sync's m16k16 fragment per warp.
    for (int64_t t = 0; t < kWarpgroupSize; ++t) {
      int64_t w = t / kWarpSize, lane = t % kWarpSize;
      const auto *words = at<uint16_t>(lanes[t]->syncPtr[0]);
      for (int64_t h = 0; h < 8; ++h)
        A[16 * w + lane / 4 + 8 * (h / 2 % 2)]
         [2 * (lane % 4) + h % 2 + 8 * (h / 4)] = value(words[h]);
    }
  } else {
    for (int64_t m = 0; m < 64; ++m)
      for (int64_t k = 0; k < kDim; ++k)
        if (!load(descA, m, k, transA, A[m][k]))
          return;
  }
  for (int64_t k = 0; k < kDim; ++k)
    for (int64_t j = 0; j < n; ++j)
      if (!load(descB, j, k, transB, B[k][j]))
        return;
  for (int64_t t = 0; t < kWarpgroupSize; ++t) {
    int64_t w = t / kWarpSize, lane = t % kWarpSize;
    int64_t g = lane / 4, q = lane % 4;
    auto *d = at<float>(lanes[t]->syncPtr[2]);
    for (int64_t i = 0; i < n / 2; ++i) {
      int64_t j = i / 4, e = i % 4;
      int64_t row = 16 * w + g + 8 * (e / 2), col = 8 * j + 2 * q + e % 2;
      float sum = scaleD ? d[i] : 0.0f;
      for (int64_t k = 0; k < kDim; ++k)
        sum += A[row][k] * B[k][col];
      d[i] = sum;
    }
  }
}

} // namespace

std::vector<std::pair<std::string, void *>> runtimeSymbols() {
  // Each hook under its own name.
#define TESSERA_SIM_SYMBOL(fn)                                                 \
  std::pair<std::string, void *>(#fn, reinterpret_cast<void *>(&fn))
  return {TESSERA_SIM_SYMBOL(tessera_sim_barrier),
          TESSERA_SIM_SYMBOL(tessera_sim_named_barrier),
          TESSERA_SIM_SYMBOL(tessera_sim_named_barrier_arrive),
          TESSERA_SIM_SYMBOL(tessera_sim_shuffle),
          TESSERA_SIM_SYMBOL(tessera_sim_ldmatrix),
          TESSERA_SIM_SYMBOL(tessera_sim_mma),
          TESSERA_SIM_SYMBOL(tessera_sim_wgmma),
          TESSERA_SIM_SYMBOL(tessera_sim_wgmma_read),
          TESSERA_SIM_SYMBOL(tessera_sim_tma_load),
          TESSERA_SIM_SYMBOL(tessera_sim_mbarrier_create),
          TESSERA_SIM_SYMBOL(tessera_sim_mbarrier_init),
          TESSERA_SIM_SYMBOL(tessera_sim_mbarrier_arrive),
          TESSERA_SIM_SYMBOL(tessera_sim_mbarrier_test_wait),
          TESSERA_SIM_SYMBOL(tessera_sim_mbarrier_wait_parity),
          TESSERA_SIM_SYMBOL(tessera_sim_wgmma_fence),
          TESSERA_SIM_SYMBOL(tessera_sim_wgmma_commit),
          TESSERA_SIM_SYMBOL(tessera_sim_wgmma_wait),
          TESSERA_SIM_SYMBOL(tessera_sim_cp_async),
          TESSERA_SIM_SYMBOL(tessera_sim_cp_async_commit),
          TESSERA_SIM_SYMBOL(tessera_sim_cp_async_wait),
          TESSERA_SIM_SYMBOL(tessera_sim_fault),
          TESSERA_SIM_SYMBOL(tessera_sim_access),
          TESSERA_SIM_SYMBOL(tessera_sim_access_counted),
          TESSERA_SIM_SYMBOL(tessera_sim_branch)};
#undef TESSERA_SIM_SYMBOL
}

// getcontext() in the fiber set-up loop leaves GCC's AddressSanitizer with
// stale scope poisoning on this frame (false stack-use-after-scope reports
// on the loop's locals); the scheduler itself is not instrumented. The
// kernels, the runtime and the fibers' stacks still are.
#ifdef TESSERA_ASAN_FIBERS
__attribute__((no_sanitize("address")))
#endif
Status
runBlock(const BlockLaunch &launch) {
  Scheduler sched;
  sched.launch = &launch;
  if (launch.arena && tlsShadow.size() < size_t(launch.arenaBytes))
    tlsShadow.resize(size_t(launch.arenaBytes));
  sched.shadowPtr = &tlsShadow;
  sched.epoch = ++tlsEpoch;
  const int64_t n = launch.blockSize;
  sched.wgmmaIssued.assign(size_t((n + kWarpgroupSize - 1) / kWarpgroupSize),
                           0);
  sched.wgmmaRetired = sched.wgmmaIssued;
  std::optional<BlockCounters> counters;
  if (launch.counts) {
    counters.emplace(n, launch.sites ? launch.sites->size() : 0,
                     *launch.counts);
    sched.counters = &*counters;
  }
  std::vector<std::unique_ptr<Fiber>> fibers;
  fibers.reserve(n);
  sched.fibers = &fibers;
  for (int64_t t = 0; t < n; ++t) {
    auto f = std::make_unique<Fiber>();
    f->sched = &sched;
    f->tid = t;
    f->slots = *launch.slots;
    f->slots.push_back(t);
    for (int d = 0; d < 3; ++d)
      f->slots.push_back(launch.block[d]);
    for (int d = 0; d < 3; ++d)
      f->slots.push_back(launch.grid[d]);
    int64_t self;
    Fiber *raw = f.get();
    std::memcpy(&self, &raw, sizeof(self));
    f->slots.push_back(self);
    f->args.resize(f->slots.size());
    for (size_t i = 0; i < f->slots.size(); ++i)
      f->args[i] = &f->slots[i];
    char *stack = tlsStacks.get(size_t(t));
    if (!stack)
      return Status(StatusCode::kResourceExhausted,
                    "sim: cannot allocate a fiber stack for thread " +
                        std::to_string(t));
    getcontext(&f->ctx);
    f->stack = stack;
    f->ctx.uc_stack.ss_sp = stack;
    f->ctx.uc_stack.ss_size = kStackBytes;
    f->ctx.uc_link = &sched.main;
    uintptr_t p = reinterpret_cast<uintptr_t>(raw);
    makecontext(&f->ctx, reinterpret_cast<void (*)()>(fiberMain), 2,
                unsigned(p >> 32), unsigned(p & 0xffffffffu));
    fibers.push_back(std::move(f));
  }

  while (true) {
    for (auto &f : fibers) {
      if (f->state != FiberState::Runnable)
        continue;
#ifdef TESSERA_ASAN_FIBERS
      __sanitizer_start_switch_fiber(&sched.fakeStack, f->stack, kStackBytes);
#endif
#ifdef TESSERA_TSAN_FIBERS
      __tsan_switch_to_fiber(f->tsanFiber, 0);
#endif
      swapcontext(&sched.main, &f->ctx);
#ifdef TESSERA_ASAN_FIBERS
      __sanitizer_finish_switch_fiber(sched.fakeStack, nullptr, nullptr);
#endif
    }
    // Every thread is parked: the warp requests of this stretch are
    // complete.
    if (counters)
      counters->flush();
    // Warp collectives: a warp whose lanes all wait at the same shuffle
    // exchanges values and runs on; one where only some lanes do (the
    // others have returned or wait at a barrier) is divergent.
    bool released = false;
    for (int64_t w0 = 0; w0 < n; w0 += kWarpSize) {
      int64_t w1 = std::min(n, w0 + kWarpSize);
      int64_t atSync = 0;
      for (int64_t t = w0; t < w1; ++t)
        atSync += fibers[t]->state == FiberState::AtWarpSync;
      if (atSync == 0)
        continue;
      if (atSync != w1 - w0) {
        int64_t issuer = w0, other = w0;
        for (int64_t t = w0; t < w1; ++t) {
          if (fibers[t]->state == FiberState::AtWarpSync)
            issuer = t;
          else
            other = t;
        }
        return Status(StatusCode::kFailedPrecondition,
                      "sim: warp collective divergence in " + sched.where() +
                          ", warp " + std::to_string(w0 / kWarpSize) + ": " +
                          std::to_string(atSync) + " of " +
                          std::to_string(w1 - w0) + " lanes issued " +
                          sched.site(fibers[issuer]->syncSite) + " (lane " +
                          std::to_string(other - w0) + " did not)");
      }
      for (int64_t t = w0 + 1; t < w1; ++t)
        if (fibers[t]->syncSite != fibers[w0]->syncSite)
          return Status(StatusCode::kFailedPrecondition,
                        "sim: warp collective divergence in " + sched.where() +
                            ": lanes of warp " +
                            std::to_string(w0 / kWarpSize) +
                            " issued different collectives (" +
                            sched.site(fibers[w0]->syncSite) + " and " +
                            sched.site(fibers[t]->syncSite) + ")");
      Collective kind = fibers[w0]->syncKind;
      if (kind != Collective::Shuffle && w1 - w0 != kWarpSize)
        return Status(StatusCode::kFailedPrecondition,
                      "sim: " + sched.site(fibers[w0]->syncSite) +
                          " needs a full warp of 32 lanes in " + sched.where());
      // A warpgroup collective waits for its other warps (below).
      if (kind == Collective::Wgmma)
        continue;
      Fiber *lanes[kWarpSize];
      for (int64_t t = w0; t < w1; ++t)
        lanes[t - w0] = fibers[t].get();
      if (kind == Collective::LdMatrix)
        runLdMatrix(lanes, w1 - w0);
      else if (kind == Collective::Mma)
        runMma(lanes, w1 - w0);
      for (int64_t t = w0; t < w1 && kind == Collective::Shuffle; ++t) {
        Fiber &f = *fibers[t];
        int64_t lane = t - w0, width = std::max<int64_t>(1, f.syncWidth);
        int64_t segment = lane / width * width, inSeg = lane % width, src;
        switch (f.syncMode) {
        case 0:
          src = inSeg ^ f.syncOffset;
          break;
        case 1:
          src = inSeg + f.syncOffset;
          break;
        case 2:
          src = inSeg - f.syncOffset;
          break;
        default:
          src = f.syncOffset;
          break;
        }
        bool valid = src >= 0 && src < width && segment + src < w1 - w0;
        int64_t v = valid ? fibers[w0 + segment + src]->syncValue : f.syncValue;
        f.syncResult = (v & 0xffffffffLL) | (valid ? (int64_t(1) << 32) : 0);
      }
      for (int64_t t = w0; t < w1; ++t)
        fibers[t]->state = FiberState::Runnable;
      released = true;
    }
    // Warpgroup collectives (wgmma) run once all four warps of the
    // warpgroup have issued the same one; a warpgroup part of which waits
    // elsewhere with nothing else left to run is divergent.
    bool pendingWarpgroup = false;
    int64_t stuckWarpgroup = -1;
    for (int64_t g0 = 0; g0 < n; g0 += kWarpgroupSize) {
      int64_t at = 0;
      for (int64_t t = g0; t < std::min(n, g0 + kWarpgroupSize); ++t)
        at += fibers[t]->state == FiberState::AtWarpSync &&
              fibers[t]->syncKind == Collective::Wgmma &&
              fibers[t]->syncSite == fibers[g0]->syncSite;
      if (at == 0)
        continue;
      if (at != kWarpgroupSize) {
        pendingWarpgroup = true;
        if (stuckWarpgroup < 0)
          stuckWarpgroup = g0;
        continue;
      }
      Fiber *lanes[kWarpgroupSize];
      for (int64_t t = 0; t < kWarpgroupSize; ++t)
        lanes[t] = fibers[g0 + t].get();
      runWgmma(lanes);
      for (int64_t t = 0; t < kWarpgroupSize; ++t)
        lanes[t]->state = FiberState::Runnable;
      released = true;
    }
    // Threads waiting on an mbarrier phase that has completed run on.
    bool atMbarrier = false;
    for (auto &f : fibers) {
      if (f->state != FiberState::AtMbarrier)
        continue;
      if (mbarrierPasses(sched.mbarriers[size_t(f->mbarrierWait)],
                         f->mbarrierParity)) {
        f->state = FiberState::Runnable;
        released = true;
      } else {
        atMbarrier = true;
      }
    }
    // Named barriers (bar.sync id, count) release their threads once
    // `count` of them wait there.
    std::map<int64_t, std::vector<Fiber *>> named;
    for (auto &f : fibers)
      if (f->state == FiberState::AtBarrier && f->barrierCount > 0)
        named[f->barrierId].push_back(f.get());
    bool atNamed = false;
    for (auto &[id, waiters] : named) {
      int64_t count = waiters.front()->barrierCount;
      Scheduler::NamedArrivals &arrivals = sched.namedArrivals[id];
      for (Fiber *w : waiters)
        if (w->barrierCount != count)
          return Status(StatusCode::kFailedPrecondition,
                        "sim: named barrier " + std::to_string(id) + " in " +
                            sched.where() + " is waited at for " +
                            std::to_string(count) + " threads by thread " +
                            std::to_string(waiters.front()->tid) + " and for " +
                            std::to_string(w->barrierCount) + " by thread " +
                            std::to_string(w->tid));
      if (arrivals.arrived > 0 && arrivals.count != count)
        return Status(StatusCode::kFailedPrecondition,
                      "sim: named barrier " + std::to_string(id) + " in " +
                          sched.where() + " is waited at for " +
                          std::to_string(count) +
                          " threads and arrived at "
                          "(bar.arrive) for " +
                          std::to_string(arrivals.count));
      int64_t have = int64_t(waiters.size()) + arrivals.arrived;
      if (have < count) {
        atNamed = true;
        continue;
      }
      if (have > count)
        return Status(StatusCode::kFailedPrecondition,
                      "sim: " + std::to_string(waiters.size()) +
                          " threads wait at named barrier " +
                          std::to_string(id) + " and " +
                          std::to_string(arrivals.arrived) +
                          " arrived there, for " + std::to_string(count) +
                          " in " + sched.where() + ": " +
                          sched.site(waiters.front()->barrierSite));
      arrivals.arrived = 0;
      if (counters)
        counters->barrier();
      sched.epoch = ++tlsEpoch;
      for (Fiber *w : waiters)
        w->state = FiberState::Runnable;
      released = true;
    }
    if (released)
      continue;
    if (atNamed && !atMbarrier && !pendingWarpgroup) {
      if (sched.failed)
        return sched.error;
      auto &[id, waiters] =
          *std::find_if(named.begin(), named.end(), [&](const auto &e) {
            return int64_t(e.second.size()) +
                       sched.namedArrivals[e.first].arrived <
                   e.second.front()->barrierCount;
          });
      return Status(
          StatusCode::kFailedPrecondition,
          "sim: deadlock in " + sched.where() + ": " +
              std::to_string(waiters.size()) + " threads (first: thread " +
              std::to_string(waiters.front()->tid) +
              ") wait at named barrier " + std::to_string(id) + " for " +
              std::to_string(waiters.front()->barrierCount) + " threads (" +
              std::to_string(sched.namedArrivals[id].arrived) +
              " arrived without waiting), which never all arrive; at " +
              sched.site(waiters.front()->barrierSite));
    }
    if (atMbarrier && !pendingWarpgroup) {
      // Nothing left to run can complete the phases they wait for.
      if (sched.failed)
        return sched.error;
      std::string waiters;
      int64_t count = 0;
      const Fiber *first = nullptr;
      for (auto &f : fibers) {
        if (f->state != FiberState::AtMbarrier)
          continue;
        if (!first)
          first = f.get();
        if (count++ < 4)
          waiters += (waiters.empty() ? "" : ", ") + std::to_string(f->tid);
      }
      const Fiber &w = *first;
      const Scheduler::Mbarrier &b = sched.mbarriers[size_t(w.mbarrierWait)];
      return Status(
          StatusCode::kFailedPrecondition,
          "sim: deadlock in " + sched.where() + ": " + std::to_string(count) +
              " threads (" + waiters + (count > 4 ? ", ..." : "") +
              ") wait on mbarrier " + std::to_string(w.mbarrierWait) +
              " for phase parity " + std::to_string(w.mbarrierParity) +
              ", which never completes (" + std::to_string(b.pending) + " of " +
              std::to_string(b.count) + " arrivals and " +
              std::to_string(b.tx) +
              " transaction bytes outstanding); first waiter at " +
              sched.site(w.mbarrierSite));
    }
    if (pendingWarpgroup) {
      int64_t g0 = stuckWarpgroup, other = std::min(n, g0 + kWarpgroupSize);
      for (int64_t t = g0; t < std::min(n, g0 + kWarpgroupSize); ++t)
        if (fibers[t]->state != FiberState::AtWarpSync ||
            fibers[t]->syncKind != Collective::Wgmma ||
            fibers[t]->syncSite != fibers[g0]->syncSite) {
          other = t;
          break;
        }
      return Status(StatusCode::kFailedPrecondition,
                    "sim: warpgroup collective divergence in " + sched.where() +
                        ", warpgroup " + std::to_string(g0 / kWarpgroupSize) +
                        ": " + sched.site(fibers[g0]->syncSite) +
                        " waits for thread " + std::to_string(other) +
                        (other >= n ? " (the block ends inside the warpgroup)"
                                    : ", which does not issue it"));
    }
    int64_t done = 0, waiting = 0;
    for (auto &f : fibers) {
      done += f->state == FiberState::Done;
      waiting += f->state == FiberState::AtBarrier;
    }
    if (done == n) {
      if (sched.failed)
        return sched.error;
      if (counters)
        counters->finish();
      return okStatus();
    }
    if (done > 0) {
      // Some threads left the kernel while others wait at a barrier: on a
      // GPU this deadlocks or is undefined. The waiting fibers are
      // abandoned (their stacks are reused by the next block).
      int64_t firstWaiting = 0;
      for (int64_t t = 0; t < n; ++t)
        if (fibers[t]->state == FiberState::AtBarrier) {
          firstWaiting = t;
          break;
        }
      return Status(StatusCode::kFailedPrecondition,
                    "sim: barrier divergence in kernel '" + launch.kernel +
                        "', block (" + std::to_string(launch.block[0]) + ", " +
                        std::to_string(launch.block[1]) + ", " +
                        std::to_string(launch.block[2]) + "): " +
                        std::to_string(waiting) + " of " + std::to_string(n) +
                        " threads wait at gpu.barrier (first: thread " +
                        std::to_string(firstWaiting) + ") while " +
                        std::to_string(done) + " have returned");
    }
    // Everyone waits at a barrier: it must be the same one (a barrier in
    // divergent code is undefined behaviour on a GPU).
    for (int64_t t = 1; t < n; ++t)
      if (fibers[t]->barrierSite != fibers[0]->barrierSite)
        return Status(StatusCode::kFailedPrecondition,
                      "sim: barrier divergence in " + sched.where() +
                          ": threads wait at different barriers (thread 0 at " +
                          sched.site(fibers[0]->barrierSite) + ", thread " +
                          std::to_string(t) + " at " +
                          sched.site(fibers[t]->barrierSite) + ")");
    if (sched.failed)
      return sched.error;
    // Everyone is at the barrier: release the block into a new epoch.
    if (counters)
      counters->barrier();
    sched.epoch = ++tlsEpoch;
    for (auto &f : fibers)
      f->state = FiberState::Runnable;
  }
}

} // namespace tessera::sim
