//===- FiberScheduler.cpp - GPU threads as fibers -------------------------===//

#include "Sim/FiberScheduler.h"

#include <sys/mman.h>
#include <ucontext.h>

#include <cstring>
#include <memory>

namespace tessera::sim {
namespace {

constexpr size_t kStackBytes = 64 * 1024;

enum class FiberState { Runnable, AtBarrier, Done };

struct Scheduler;

struct Fiber {
  ucontext_t ctx;
  Scheduler *sched = nullptr;
  FiberState state = FiberState::Runnable;
  std::vector<int64_t> slots;
  std::vector<void *> args;
};

struct Scheduler {
  ucontext_t main;
  const BlockLaunch *launch = nullptr;
  uint64_t switches = 0;
};

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
thread_local uint64_t tlsSwitches = 0;

void fiberMain(unsigned hi, unsigned lo) {
  auto *f = reinterpret_cast<Fiber *>((uintptr_t(hi) << 32) | uintptr_t(lo));
  f->sched->launch->entry(f->args.data());
  f->state = FiberState::Done;
  // Returning resumes uc_link (the scheduler).
}

} // namespace

extern "C" void tessera_sim_barrier(int64_t context) {
  auto *f = reinterpret_cast<Fiber *>(static_cast<uintptr_t>(context));
  f->state = FiberState::AtBarrier;
  ++f->sched->switches;
  swapcontext(&f->ctx, &f->sched->main);
}

uint64_t fiberSwitches() { return tlsSwitches; }

Status runBlock(const BlockLaunch &launch) {
  Scheduler sched;
  sched.launch = &launch;
  const int64_t n = launch.blockSize;
  std::vector<std::unique_ptr<Fiber>> fibers;
  fibers.reserve(n);
  for (int64_t t = 0; t < n; ++t) {
    auto f = std::make_unique<Fiber>();
    f->sched = &sched;
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
      ++sched.switches;
      swapcontext(&sched.main, &f->ctx);
    }
    int64_t done = 0, waiting = 0;
    for (auto &f : fibers) {
      done += f->state == FiberState::Done;
      waiting += f->state == FiberState::AtBarrier;
    }
    tlsSwitches += sched.switches;
    sched.switches = 0;
    if (done == n)
      return Status::ok();
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
      return Status(
          StatusCode::kFailedPrecondition,
          "sim: barrier divergence in kernel '" + launch.kernel +
              "', block (" + std::to_string(launch.block[0]) + ", " +
              std::to_string(launch.block[1]) + ", " +
              std::to_string(launch.block[2]) + "): " +
              std::to_string(waiting) + " of " + std::to_string(n) +
              " threads wait at gpu.barrier (first: thread " +
              std::to_string(firstWaiting) + ") while " +
              std::to_string(done) + " have returned");
    }
    // Everyone is at the barrier: release the block.
    for (auto &f : fibers)
      f->state = FiberState::Runnable;
  }
}

} // namespace tessera::sim
