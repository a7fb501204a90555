//===- SimMbarrierTest.cpp - the sim's mbarriers
//---------------------------===//
//
// Hand-written gpu-dialect kernels synchronise a block of 128 threads
// through nvgpu mbarriers: a ring of two barriers that every thread
// arrives on and waits for, its phase parity flipping each time the ring
// wraps, lets each thread read what its neighbour wrote before arriving.
// Broken kernels check what the sim reports: a wait whose parity does not
// flip (it passes on a phase the thread already waited for), a
// transaction count nothing completes and arrivals that never come (both
// deadlocks naming the waiting threads), arrivals past a barrier's count
// and a barrier used before its init.
//
//===----------------------------------------------------------------------===//

#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace tessera;

namespace {

constexpr int64_t kThreads = 128, kRounds = 6;

enum class Bug {
  None,
  ParityNeverFlips,
  TxNeverCompletes,
  MissingArrivals,
  CountTooSmall,
  NoInit
};

/// The kernel. Each round r, thread t sets buf[r][t], arrives on barrier
/// r % 2 of the ring and waits for its phase (parity (r / 2) % 2), then adds
/// buf[r][t + 1] to out[t], and 100 unless test.wait says the phase of its
/// arrival has completed: out[t] ends at kRounds.
std::string ringKernel(Bug bug) {
  std::string g = "!nvgpu.mbarrier.group<memorySpace = "
                  "#gpu.address_space<workgroup>, num_barriers = 2>";
  std::string s = R"(
module {
  gpu.module @m {
    gpu.func @k(%out: memref<?xf32>, %buf: memref<?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c96 = arith.constant 96 : index
      %c128 = arith.constant 128 : index
      %c1024 = arith.constant 1024 : index
      %rounds = arith.constant )" +
                  std::to_string(kRounds) + R"( : index
      %one = arith.constant 1.0 : f32
      %hundred = arith.constant 100.0 : f32
      %ticks = arith.constant 1000000 : index
      %bars = nvgpu.mbarrier.create -> )" +
                  g + R"(
      %first = arith.cmpi eq, %tid, %c0 : index
)";
  if (bug == Bug::TxNeverCompletes || bug == Bug::CountTooSmall) {
    // One arrival expected, bringing 1024 bytes no copy ever delivers;
    // with too small a count every thread arrives on the phase that still
    // waits for them.
    s +=
        "      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %first : " + g +
        "\n";
    s += "      gpu.barrier\n";
    s += "      nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %c1024" +
         std::string(bug == Bug::CountTooSmall ? "" : ", predicate = %first") +
         " : " + g + "\n";
    s += "      %p0 = arith.constant false\n";
    s += "      nvgpu.mbarrier.try_wait.parity %bars[%c0], %p0, %ticks : " + g +
         "\n";
  } else {
    for (const char *bar : {"%c0", "%c1"})
      if (bug != Bug::NoInit)
        s += std::string("      nvgpu.mbarrier.init %bars[") + bar +
             "], %c128, predicate = %first : " + g + "\n";
    s += "      gpu.barrier\n";
    s += "      %z = arith.constant 0.0 : f32\n";
    s += "      %sum = scf.for %r = %c0 to %rounds step %c1 iter_args(%acc = "
         "%z) -> (f32) {\n";
    s += "        %slot = arith.remui %r, %c2 : index\n";
    s += "        %wrap = arith.divui %r, %c2 : index\n";
    s += "        %pi = arith.remui %wrap, %c2 : index\n";
    s += "        %pv = arith.cmpi ne, %pi, %c0 : index\n";
    s += "        %never = arith.constant false\n";
    std::string parity = bug == Bug::ParityNeverFlips ? "%never" : "%pv";
    s += "        %base = arith.muli %r, %c128 : index\n";
    s += "        %mine = arith.addi %base, %tid : index\n";
    s += "        memref.store %one, %buf[%mine] : memref<?xf32>\n";
    // Missing arrivals: threads 96 and up arrive on barrier 1 instead.
    std::string target = "%slot";
    if (bug == Bug::MissingArrivals) {
      s += "        %arrives = arith.cmpi ult, %tid, %c96 : index\n";
      s += "        %target = arith.select %arrives, %slot, %c1 : index\n";
      target = "%target";
    }
    s += "        %tok = nvgpu.mbarrier.arrive %bars[" + target + "] : " + g +
         " -> !nvgpu.mbarrier.token\n";
    s += "        nvgpu.mbarrier.try_wait.parity %bars[%slot], " + parity +
         ", %ticks : " + g + "\n";
    s += "        %done = nvgpu.mbarrier.test.wait %bars[" + target +
         "], %tok : " + g + ", !nvgpu.mbarrier.token\n";
    s += "        %n1 = arith.addi %tid, %c1 : index\n";
    s += "        %n = arith.remui %n1, %c128 : index\n";
    s += "        %theirs = arith.addi %base, %n : index\n";
    s += "        %v = memref.load %buf[%theirs] : memref<?xf32>\n";
    s += "        %late = arith.select %done, %z, %hundred : f32\n";
    s += "        %a1 = arith.addf %acc, %v : f32\n";
    s += "        %a2 = arith.addf %a1, %late : f32\n";
    s += "        scf.yield %a2 : f32\n";
    s += "      }\n";
    s += "      memref.store %sum, %out[%tid] : memref<?xf32>\n";
  }
  s += R"(      gpu.return
    }
  }
}
)";
  return s;
}

Status run(const std::string &ir, std::vector<float> &out) {
  out.assign(kThreads, -1.0f);
  std::vector<float> buf(kThreads * kRounds, 0.0f);
  std::vector<unsigned char> arena(16, 0);
  std::vector<int64_t> slots;
  simtest::addMemref(slots, out.data(), int64_t(out.size()));
  simtest::addMemref(slots, buf.data(), int64_t(buf.size()));
  simtest::addMemref(slots, arena.data(), int64_t(arena.size()));
  return simtest::runBlock(ir, slots, arena.data(), int64_t(arena.size()));
}

using simtest::expectReport;

TEST(SimMbarrier, RingOfTwoBarriersOrdersEveryRound) {
  std::vector<float> out;
  Status s = run(ringKernel(Bug::None), out);
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int64_t t = 0; t < kThreads; ++t)
    ASSERT_EQ(out[size_t(t)], float(kRounds)) << "thread " << t;
}

/// Runs the kernel with `bug`, expecting a report with every piece of
/// `parts`.
void expectBug(Bug bug, std::initializer_list<std::string> parts) {
  std::vector<float> out;
  expectReport(run(ringKernel(bug), out), parts);
}

TEST(SimMbarrier, WaitOnAPhaseAlreadyWaitedForIsReported) {
  expectBug(Bug::ParityNeverFlips,
            {"waits on mbarrier 0 for phase parity 0, which passes on phase "
             "0, one it has already waited for",
             "nvgpu.mbarrier.try_wait.parity"});
}

TEST(SimMbarrier, TransactionsThatNeverLandAreADeadlock) {
  expectBug(Bug::TxNeverCompletes,
            {"deadlock", "128 threads (0, 1, 2, 3, ...) wait on mbarrier 0 "
                         "for phase parity 0, which never completes (0 of 1 "
                         "arrivals and 1024 transaction bytes outstanding)"});
}

TEST(SimMbarrier, ArrivalsThatNeverComeAreADeadlock) {
  expectBug(Bug::MissingArrivals,
            {"deadlock", "wait on mbarrier 0 for phase parity 0, which never "
                         "completes (32 of 128 arrivals"});
}

TEST(SimMbarrier, ArrivalsPastTheCountAreReported) {
  expectBug(Bug::CountTooSmall,
            {"thread 1 arrives on mbarrier 0 past its count of 1"});
}

TEST(SimMbarrier, UseBeforeInitIsReported) {
  expectBug(Bug::NoInit,
            {"mbarrier.arrive on mbarrier 0 before mbarrier.init"});
}

} // namespace
