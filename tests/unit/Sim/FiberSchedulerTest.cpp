//===- FiberSchedulerTest.cpp - sim device: fibers and barriers -----------===//
//
// The scheduler runs hand-written per-thread entries here (the JIT'd ones
// are covered by KernelsSimTest): barrier semantics, and the divergence
// checker on a deliberately broken kernel.
//
//===----------------------------------------------------------------------===//

#include "Sim/FiberScheduler.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace tessera;
using namespace tessera::sim;

namespace {

// Argument layout (see driver::SimExecutable): the launch's slots, then
// thread id, block id x/y/z, grid x/y/z, context.
struct Shared {
  int64_t *data;
  int64_t *out;
};

int64_t slot(void **args, int i) { return *static_cast<int64_t *>(args[i]); }

Shared shared(void **args) {
  Shared s;
  int64_t a = slot(args, 0), b = slot(args, 1);
  std::memcpy(&s.data, &a, sizeof(a));
  std::memcpy(&s.out, &b, sizeof(b));
  return s;
}

constexpr int kTid = 2, kBlockX = 3, kContext = 9;

/// Every thread writes its id, waits, then reads its neighbour's: correct
/// only if no thread passes the barrier before all have written.
void neighbourExchange(void **args) {
  Shared s = shared(args);
  int64_t t = slot(args, kTid), n = 64;
  s.data[t] = 1000 * slot(args, kBlockX) + t;
  tessera_sim_barrier(slot(args, kContext), 0);
  s.out[t] = s.data[(t + 1) % n];
  tessera_sim_barrier(slot(args, kContext), 0);
  s.data[t] = -1;
}

/// Broken on purpose: only even threads reach the barrier.
void divergentBarrier(void **args) {
  if (slot(args, kTid) % 2 == 0)
    tessera_sim_barrier(slot(args, kContext), 0);
}

std::vector<int64_t> slotsFor(int64_t *data, int64_t *out) {
  int64_t a, b;
  std::memcpy(&a, &data, sizeof(a));
  std::memcpy(&b, &out, sizeof(b));
  return {a, b};
}

TEST(FiberScheduler, BarrierOrdersTheBlock) {
  std::vector<int64_t> data(64, 0), out(64, 0);
  std::vector<int64_t> slots = slotsFor(data.data(), out.data());
  for (int64_t block = 0; block < 3; ++block) {
    BlockLaunch l;
    l.entry = neighbourExchange;
    l.slots = &slots;
    l.blockSize = 64;
    l.block[0] = block;
    l.grid[0] = 3;
    l.kernel = "exchange";
    Status s = runBlock(l);
    ASSERT_TRUE(s.ok()) << s.toString();
    for (int64_t t = 0; t < 64; ++t)
      EXPECT_EQ(out[t], 1000 * block + (t + 1) % 64) << "thread " << t;
  }
}

TEST(FiberScheduler, BarrierReachedByPartOfTheBlockFails) {
  std::vector<int64_t> data(8), out(8);
  std::vector<int64_t> slots = slotsFor(data.data(), out.data());
  BlockLaunch l;
  l.entry = divergentBarrier;
  l.slots = &slots;
  l.blockSize = 8;
  l.block[0] = 5;
  l.grid[0] = 6;
  l.kernel = "broken";
  Status s = runBlock(l);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("barrier divergence in kernel 'broken'"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("block (5, 0, 0)"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("4 of 8 threads wait at gpu.barrier"),
            std::string::npos)
      << s.message();

  // The scheduler is usable again afterwards (abandoned fibers are gone).
  std::vector<int64_t> d2(64), o2(64);
  std::vector<int64_t> slots2 = slotsFor(d2.data(), o2.data());
  l.entry = neighbourExchange;
  l.slots = &slots2;
  l.blockSize = 64;
  l.block[0] = 0;
  EXPECT_TRUE(runBlock(l).ok());
  EXPECT_EQ(o2[63], 0);
}

/// Two groups of 64 threads take turns on named barriers 2 and 3, as
/// ping-pong warpgroups do: group g waits at 2 + g, logs its turn, and
/// hands over by arriving at the other's barrier (group 1 lets group 0 go
/// first and skips its last hand-over, which nobody would wait for).
/// data[0] is the log's length, out[] the log.
void takeTurns(void **args) {
  Shared s = shared(args);
  int64_t t = slot(args, kTid), ctx = slot(args, kContext), g = t / 64;
  const int64_t turns = 3;
  if (g == 1)
    tessera_sim_named_barrier_arrive(ctx, 2, 128, 0);
  for (int64_t i = 0; i < turns; ++i) {
    tessera_sim_named_barrier(ctx, 2 + g, 128, 1);
    s.out[s.data[0]++] = g;
    if (g == 0 || i + 1 < turns)
      tessera_sim_named_barrier_arrive(ctx, 3 - g, 128, 2);
  }
}

/// Every thread arrives at barrier 5 (a phase completed with nobody
/// waiting), then, after the block's barrier, every thread waits there (a
/// phase the waits alone complete). Without the block's barrier a thread
/// could count towards one phase twice, which a GPU leaves undefined.
void arriveThenWait(void **args) {
  int64_t ctx = slot(args, kContext);
  tessera_sim_named_barrier_arrive(ctx, 5, 128, 0);
  tessera_sim_barrier(ctx, 1);
  tessera_sim_named_barrier(ctx, 5, 128, 2);
  shared(args).out[slot(args, kTid)] = 1;
}

/// Broken on purpose: group 1 never hands the first turn over.
void turnNeverHandedOver(void **args) {
  int64_t t = slot(args, kTid), ctx = slot(args, kContext), g = t / 64;
  tessera_sim_named_barrier(ctx, 2 + g, 128, 1);
  tessera_sim_named_barrier_arrive(ctx, 3 - g, 128, 2);
}

BlockLaunch namedBarrierLaunch(void (*entry)(void **),
                               std::vector<int64_t> &slots) {
  BlockLaunch l;
  l.entry = entry;
  l.slots = &slots;
  l.blockSize = 128;
  l.grid[0] = 1;
  l.kernel = "turns";
  return l;
}

TEST(FiberScheduler, NamedBarrierArrivalsHandOverTurns) {
  std::vector<int64_t> data(1, 0), out(6 * 64, -1);
  std::vector<int64_t> slots = slotsFor(data.data(), out.data());
  Status s = runBlock(namedBarrierLaunch(takeTurns, slots));
  ASSERT_TRUE(s.ok()) << s.toString();
  ASSERT_EQ(data[0], 6 * 64);
  for (int64_t i = 0; i < 6 * 64; ++i)
    EXPECT_EQ(out[i], (i / 64) % 2) << "log entry " << i;
}

TEST(FiberScheduler, NamedBarrierArrivalsAloneCompleteAPhase) {
  std::vector<int64_t> data(1, 0), out(128, 0);
  std::vector<int64_t> slots = slotsFor(data.data(), out.data());
  Status s = runBlock(namedBarrierLaunch(arriveThenWait, slots));
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_EQ(out[127], 1);
}

TEST(FiberScheduler, TurnNeverHandedOverIsADeadlock) {
  std::vector<int64_t> data(1, 0), out(1, 0);
  std::vector<int64_t> slots = slotsFor(data.data(), out.data());
  Status s = runBlock(namedBarrierLaunch(turnNeverHandedOver, slots));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("deadlock in kernel 'turns'"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("wait at named barrier 2 for 128 threads (0 "
                             "arrived without waiting)"),
            std::string::npos)
      << s.message();
}

} // namespace
