//===- SimCheckersTest.cpp - sim checkers on deliberately broken kernels --===//
//
// Hand-written gpu-dialect kernels (what tessera-distribute-to-gpu emits,
// with one bug each) run through the sim lowering, the JIT and the fiber
// scheduler. A correct kernel passes; each broken one fails the launch with
// a report naming the kernel, block, thread and the access.
//
//===----------------------------------------------------------------------===//

#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace tessera;

namespace {

// A kernel over `out: memref<?xf32>` with 64 threads and a 256-byte shared
// arena viewed as memref<64xf32>; BODY uses %tid, %s (the shared view),
// %out and %c0..%c64.
std::string kernel(const std::string &body) {
  return R"(
module {
  gpu.module @m {
    gpu.func @k(%out: memref<?xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, tile.shared_bytes = 256 : i64} {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
      %s = memref.memory_space_cast %v : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
      %f = arith.index_cast %tid : index to i64
      %x = arith.sitofp %f : i64 to f32
)" + body +
         R"(
      gpu.return
    }
  }
}
)";
}

/// Compiles (gpu.subgroup_reduce is lowered to shuffles on the way) and
/// runs one block.
Status run(const std::string &body, std::vector<float> &out,
           int64_t visible = -1) {
  std::vector<unsigned char> arena(256, 0xff);
  std::vector<int64_t> slots;
  simtest::addMemref(slots, out.data(),
                     visible >= 0 ? visible : int64_t(out.size()));
  simtest::addMemref(slots, arena.data(), 256);
  return simtest::runBlock(kernel(body), slots, arena.data(), 256);
}

using simtest::expectReport;

/// After a barrier, each thread copies its neighbour's shared slot to
/// out[tid].
constexpr const char *kReadNeighbour = R"(
      gpu.barrier
      %n0 = arith.addi %tid, %c1 : index
      %n = arith.remui %n0, %c64 : index
      %y = memref.load %s[%n] : memref<64xf32>
      memref.store %y, %out[%tid] : memref<?xf32>
)";

TEST(SimCheckers, CorrectKernelPasses) {
  // Each thread writes its slot, barrier, reads its neighbour's.
  std::vector<float> out(64, -1);
  Status s = run(R"(
      memref.store %x, %s[%tid] : memref<64xf32>
)" + std::string(kReadNeighbour),
                 out);
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(out[t], float((t + 1) % 64));
}

TEST(SimCheckers, MissingBarrierIsARace) {
  // The same exchange without the barrier: thread 1 reads what thread 2
  // writes in the same epoch (on a GPU: stale or fresh, by luck).
  std::vector<float> out(64, -1);
  Status s = run(R"(
      memref.store %x, %s[%tid] : memref<64xf32>
      %n0 = arith.addi %tid, %c1 : index
      %n = arith.remui %n0, %c64 : index
      %y = memref.load %s[%n] : memref<64xf32>
      memref.store %y, %out[%tid] : memref<?xf32>
)",
                 out);
  expectReport(
      s, {"shared-memory race in kernel 'k', block (0, 0, 0)", "memref.store"});
}

TEST(SimCheckers, ConcurrentWritesToOneWordAreARace) {
  std::vector<float> out(64, -1);
  Status s = run(R"(
      memref.store %x, %s[%c0] : memref<64xf32>
)",
                 out);
  expectReport(s, {"thread 1 writes shared byte offset 0 that "
                   "thread 0 wrote in the same barrier epoch"});
}

TEST(SimCheckers, OutOfBoundsSharedAccessIsReported) {
  // Thread t writes element t + 1 of a 64-element tile: thread 63 is out
  // of bounds.
  std::vector<float> out(64, -1);
  Status s = run(R"(
      %i = arith.addi %tid, %c1 : index
      memref.store %x, %s[%i] : memref<64xf32>
)",
                 out);
  expectReport(s, {"out-of-bounds access in kernel 'k', block "
                   "(0, 0, 0), thread 63: memref.store"});
}

TEST(SimCheckers, OutOfBoundsGlobalAccessIsReportedAndSkipped) {
  // 64 threads store to a 32-element output: threads 32..63 are out of
  // bounds; nothing is written past the end.
  // The buffer has one more element than the kernel sees: it must stay
  // untouched.
  std::vector<float> out(33, -1);
  Status s = run(R"(
      memref.store %x, %out[%tid] : memref<?xf32>
)",
                 out, /*visible=*/32);
  expectReport(s, {"thread 32: memref.store"});
  for (int t = 0; t < 32; ++t)
    EXPECT_EQ(out[t], float(t));
  EXPECT_EQ(out[32], -1.0f);
}

TEST(SimCheckers, BarrierInDivergentCodeIsReported) {
  std::vector<float> out(64, -1);
  Status s = run(R"(
      %c32 = arith.constant 32 : index
      %lo = arith.cmpi ult, %tid, %c32 : index
      scf.if %lo {
        gpu.barrier
      }
)",
                 out);
  expectReport(s, {"barrier divergence in kernel 'k'",
                   "32 of 64 threads wait at gpu.barrier"});
}

TEST(SimCheckers, WarpReductionThroughShuffles) {
  // Butterfly sum over each 32-lane warp: every lane ends with the sum of
  // its warp's thread ids.
  std::vector<float> out(64, -1);
  Status s = run(R"(
      %r = gpu.subgroup_reduce add %x uniform : (f32) -> f32
      memref.store %r, %out[%tid] : memref<?xf32>
)",
                 out);
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(out[t], t < 32 ? 496.0f : 1520.0f) << t;
}

TEST(SimCheckers, ShuffleByPartOfAWarpIsReported) {
  std::vector<float> out(64, -1);
  Status s = run(R"(
      %c16 = arith.constant 16 : index
      %c1_i32 = arith.constant 1 : i32
      %c32_i32 = arith.constant 32 : i32
      %lo = arith.cmpi ult, %tid, %c16 : index
      scf.if %lo {
        %sv, %ok = gpu.shuffle xor %x, %c1_i32, %c32_i32 : f32
        memref.store %sv, %out[%tid] : memref<?xf32>
      }
)",
                 out);
  expectReport(s, {"warp collective divergence in kernel 'k', "
                   "block (0, 0, 0), warp 0: 16 of 32 lanes issued "
                   "gpu.shuffle"});
}

TEST(SimCheckers, DifferentBarriersInDivergentCodeAreReported) {
  // Both halves reach *a* barrier, but not the same one.
  std::vector<float> out(64, -1);
  Status s = run(R"(
      %c32 = arith.constant 32 : index
      %lo = arith.cmpi ult, %tid, %c32 : index
      scf.if %lo {
        gpu.barrier
      } else {
        gpu.barrier
      }
)",
                 out);
  expectReport(s, {"threads wait at different barriers (thread 0 "
                   "at gpu.barrier at",
                   "thread 32 at gpu.barrier at"});
}

/// Each thread cp.async-copies out[tid] into shared memory (waiting for the
/// copy or not), then, after a barrier, writes its neighbour's shared
/// value to out[tid]. `out` starts as 0, 1, ..., 63.
Status asyncExchange(bool wait, std::vector<float> &out) {
  out.resize(64);
  for (int t = 0; t < 64; ++t)
    out[t] = float(t);
  std::string waitOp =
      wait ? "nvgpu.device_async_wait %g {numGroups = 0 : i32}" : "";
  return run(R"(
      %tok = nvgpu.device_async_copy %out[%tid], %v[%tid], 1 : memref<?xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group
      )" + waitOp +
                 kReadNeighbour,
             out);
}

// cp.async: the copy lands when the thread waits for its group, so the
// exchange through shared memory sees the copied values...
TEST(SimCheckers, AsyncCopyLandsAtTheWait) {
  std::vector<float> out;
  Status s = asyncExchange(/*wait=*/true, out);
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(out[t], float((t + 1) % 64)) << t;
}

// ... and without the wait the reads see the old shared memory (the sim's
// arena starts as 0xff bytes, a NaN), as they may on a GPU.
TEST(SimCheckers, AsyncCopyWithoutWaitShowsStaleData) {
  std::vector<float> out;
  Status s = asyncExchange(/*wait=*/false, out);
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int t = 0; t < 64; ++t)
    EXPECT_TRUE(std::isnan(out[t])) << t << ": " << out[t];
}

// A cp.async whose source is out of bounds is reported like any access.
TEST(SimCheckers, OutOfBoundsAsyncCopyIsReported) {
  std::vector<float> out(64, 0.0f);
  Status s = run(R"(
      %i = arith.addi %tid, %c1 : index
      %tok = nvgpu.device_async_copy %out[%i], %v[%tid], 1 : memref<?xf32> to memref<64xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group
      nvgpu.device_async_wait %g {numGroups = 0 : i32}
)",
                 out);
  expectReport(s, {"out-of-bounds access in kernel 'k'", "thread 63",
                   "nvgpu.device_async_copy"});
}

// A 16-byte cp.async must be 16-byte aligned at both ends: a source that
// is not fails the launch, as it would on a GPU.
TEST(SimCheckers, MisalignedAsyncCopyIsReported) {
  std::vector<float> out(64, 0.0f);
  Status s = run(R"(
      %z = arith.constant 0 : index
      %first = arith.cmpi eq, %tid, %z : index
      scf.if %first {
        %tok = nvgpu.device_async_copy %out[%c1], %v[%z], 4 {bypassL1} : memref<?xf32> to memref<64xf32, #gpu.address_space<workgroup>>
        %g = nvgpu.device_async_create_group
        nvgpu.device_async_wait %g {numGroups = 0 : i32}
      }
)",
                 out);
  expectReport(s, {"misaligned cp.async of 16 bytes in kernel 'k'", "thread 0",
                   "nvgpu.device_async_copy"});
}

// Vector accesses that promise an alignment (what
// tessera-gpu-vectorize-elementwise emits after its run-time test) are
// checked for it: on a GPU a misaligned ld/st.global.v4 faults.
TEST(SimCheckers, AlignedVectorAccessesPass) {
  std::vector<float> out(64, -1);
  Status s = run(R"(
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %lo = arith.cmpi ult, %tid, %c16 : index
      scf.if %lo {
        %i = arith.muli %tid, %c4 : index
        %vx = vector.broadcast %x : f32 to vector<4xf32>
        vector.store %vx, %out[%i] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
      }
)",
                 out);
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(out[i], float(i / 4));
}

TEST(SimCheckers, MisalignedVectorAccessIsReportedAndSkipped) {
  std::vector<float> out(64, -1);
  Status s = run(R"(
      %z = arith.constant 0 : index
      %first = arith.cmpi eq, %tid, %z : index
      scf.if %first {
        %vx = vector.broadcast %x : f32 to vector<4xf32>
        vector.store %vx, %out[%c1] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
      }
)",
                 out);
  expectReport(s, {"misaligned vector access in kernel 'k', block (0, 0, 0), "
                   "thread 0: vector.store"});
  for (float v : out)
    EXPECT_EQ(v, -1.0f);
}

} // namespace
