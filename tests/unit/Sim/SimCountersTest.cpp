//===- SimCountersTest.cpp - the sim's memory, barrier and branch counters ===//
//
// The counting layer on synthesized per-lane addresses (sectors, shared
// memory wavefronts, the assembly of warp requests from threads that run
// one after another), then hand-written gpu-dialect kernels compiled with
// counters and run by the fiber scheduler: a shared 32x32 tile walked by
// columns, unpadded, padded and swizzled; barriers; divergent and uniform
// branches.
//
//===----------------------------------------------------------------------===//

#include "Sim/Counters.h"
#include "Sim/FiberScheduler.h"
#include "tessera/Driver/Driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

using namespace tessera;
using namespace tessera::sim;

namespace {

/// 32 lanes, lane l at base + l * stride (lanes outside `active` absent).
std::vector<LaneAccess> lanes(int64_t base, int64_t stride,
                              uint64_t active = 0xffffffffu) {
  std::vector<LaneAccess> out;
  for (int l = 0; l < 32; ++l)
    if (active >> l & 1)
      out.push_back({l, base + l * stride});
  return out;
}

GlobalCost global(const std::vector<LaneAccess> &l, int64_t width) {
  return globalCost(l.data(), l.size(), width);
}
SharedCost shared(const std::vector<LaneAccess> &l, int64_t width) {
  return sharedCost(l.data(), l.size(), width);
}

constexpr int64_t kBase = 1 << 20; // 128-byte aligned

TEST(SimCounters, CoalescedF32WarpTouchesTheIdealSectors) {
  GlobalCost c = global(lanes(kBase, 4), 4);
  EXPECT_EQ(c.sectors, 4);
  EXPECT_EQ(c.idealSectors, 4);
  EXPECT_EQ(c.usefulBytes, 128);
}

TEST(SimCounters, Stride32F32WarpTouchesASectorPerLane) {
  // Each lane 128 bytes from the next: 32 sectors for 128 useful bytes.
  GlobalCost c = global(lanes(kBase, 128), 4);
  EXPECT_EQ(c.sectors, 32);
  EXPECT_EQ(c.idealSectors, 4);
  EXPECT_EQ(c.usefulBytes, 128);
}

TEST(SimCounters, GlobalSectorsOfVectorsMisalignmentBroadcastAndPartialWarps) {
  // 16-byte vectors, contiguous: 512 bytes in 16 sectors.
  GlobalCost v = global(lanes(kBase, 16), 16);
  EXPECT_EQ(v.sectors, 16);
  EXPECT_EQ(v.idealSectors, 16);
  // Contiguous but 4 bytes off a sector boundary: one sector more.
  GlobalCost m = global(lanes(kBase + 4, 4), 4);
  EXPECT_EQ(m.sectors, 5);
  EXPECT_EQ(m.idealSectors, 4);
  // Every lane reads the same word: one sector, 4 useful bytes.
  GlobalCost b = global(lanes(kBase, 0), 4);
  EXPECT_EQ(b.sectors, 1);
  EXPECT_EQ(b.idealSectors, 1);
  EXPECT_EQ(b.usefulBytes, 4);
  // Eight active lanes, contiguous: one sector is ideal.
  GlobalCost p = global(lanes(kBase, 4, 0xff), 4);
  EXPECT_EQ(p.sectors, 1);
  EXPECT_EQ(p.idealSectors, 1);
  EXPECT_EQ(p.usefulBytes, 32);
  // f16 pairs straddling sectors: 2-byte lanes 2 bytes apart, 64 bytes.
  GlobalCost h = global(lanes(kBase + 16, 2), 2);
  EXPECT_EQ(h.sectors, 3);
  EXPECT_EQ(h.idealSectors, 2);
}

TEST(SimCounters, SharedColumnOfUnpaddedTileIs32Way) {
  // Lane l reads element (l, c) of a 32x32 f32 tile: every lane in bank c.
  for (int64_t c : {0, 5, 31}) {
    SharedCost s = shared(lanes(kBase + 4 * c, 32 * 4), 4);
    EXPECT_EQ(s.wavefronts, 32) << c;
    EXPECT_EQ(s.idealWavefronts, 1);
  }
}

TEST(SimCounters, SharedColumnOfPaddedOrSwizzledTileIsConflictFree) {
  // 33 columns: element (l, c) is word 33 l + c, in bank (l + c) % 32.
  SharedCost padded = shared(lanes(kBase + 4 * 7, 33 * 4), 4);
  EXPECT_EQ(padded.wavefronts, 1);
  EXPECT_EQ(padded.idealWavefronts, 1);
  // XOR swizzle: element (l, c) stored at column c ^ l.
  std::vector<LaneAccess> swz;
  for (int l = 0; l < 32; ++l)
    swz.push_back({l, kBase + 4 * (32 * l + (7 ^ l))});
  SharedCost swizzled = shared(swz, 4);
  EXPECT_EQ(swizzled.wavefronts, 1);
  EXPECT_EQ(swizzled.idealWavefronts, 1);
}

TEST(SimCounters, SharedBroadcastTwoWayAndWidePhases) {
  // Every lane reads one word: a broadcast, no conflict.
  EXPECT_EQ(shared(lanes(kBase, 0), 4).wavefronts, 1);
  // Stride of two words: 32 distinct words in the 16 even banks, 2-way
  // (they would fit in one wavefront).
  SharedCost two = shared(lanes(kBase, 8), 4);
  EXPECT_EQ(two.wavefronts, 2);
  EXPECT_EQ(two.idealWavefronts, 1);
  // f16 lanes: pairs share a word, 16 words, one wavefront.
  EXPECT_EQ(shared(lanes(kBase, 2), 2).wavefronts, 1);
  // 8-byte lanes, contiguous: two half-warp phases of 128 bytes.
  SharedCost d = shared(lanes(kBase, 8), 8);
  EXPECT_EQ(d.wavefronts, 2);
  EXPECT_EQ(d.idealWavefronts, 2);
  // 16-byte lanes, contiguous: four quarter-warp phases.
  SharedCost q = shared(lanes(kBase, 16), 16);
  EXPECT_EQ(q.wavefronts, 4);
  EXPECT_EQ(q.idealWavefronts, 4);
  // 16-byte lanes each at the start of a 128-byte row: the 8 lanes of a
  // phase all use banks 0..3, 8 ways in each of the 4 phases.
  SharedCost rows = shared(lanes(kBase, 128), 16);
  EXPECT_EQ(rows.wavefronts, 32);
  EXPECT_EQ(rows.idealWavefronts, 4);
  // Only the first quarter warp active: one phase.
  SharedCost part = shared(lanes(kBase, 16, 0xff), 16);
  EXPECT_EQ(part.wavefronts, 1);
  EXPECT_EQ(part.idealWavefronts, 1);
}

TEST(SimCounters, RequestsGroupEachLanesKthExecution) {
  // 64 threads run one after another (as fibers do), each executing the
  // same global load twice: the first execution of warp 0 is coalesced,
  // the second strided. Two warps, two requests each.
  LaunchCounts counts;
  BlockCounters b(64, /*numSites=*/2, counts);
  for (int64_t t = 0; t < 64; ++t) {
    b.access(t, 1, Space::Global, AccessKind::Load, kBase + 4 * t, 4);
    b.access(t, 1, Space::Global, AccessKind::Load, kBase + 128 * t, 4);
  }
  b.finish();
  const AccessCounts &c =
      counts.accesses[LaunchCounts::slot(1, Space::Global, AccessKind::Load)];
  EXPECT_EQ(c.requests, 4);
  EXPECT_EQ(c.lanes, 128);
  EXPECT_EQ(c.width, 4);
  EXPECT_EQ(c.sectors, 4 + 4 + 32 + 32);
  EXPECT_EQ(c.idealSectors, 16);
  EXPECT_EQ(c.usefulBytes, 4 * 128);
  EXPECT_EQ(counts.blocks, 1);
}

TEST(SimCounters, LanesThatMissAnExecutionAreInactive) {
  // Only odd lanes execute the store: 16 active lanes, contiguous by
  // 8 bytes, 4-byte stores.
  LaunchCounts counts;
  BlockCounters b(32, 1, counts);
  for (int64_t t = 1; t < 32; t += 2)
    b.access(t, 0, Space::Global, AccessKind::Store, kBase + 4 * t, 4);
  b.finish();
  const AccessCounts &c =
      counts.accesses[LaunchCounts::slot(0, Space::Global, AccessKind::Store)];
  EXPECT_EQ(c.requests, 1);
  EXPECT_EQ(c.lanes, 16);
  EXPECT_EQ(c.sectors, 4);
  EXPECT_EQ(c.idealSectors, 2);
  EXPECT_EQ(c.usefulBytes, 64);
}

TEST(SimCounters, FlushClosesRequestsAndLateLanesFormTheirOwn) {
  LaunchCounts counts;
  BlockCounters b(32, 1, counts);
  for (int64_t t = 0; t < 16; ++t)
    b.access(t, 0, Space::Shared, AccessKind::Load, kBase + 4 * t, 4);
  b.flush();
  // Lane 16 executes the site for the first time after the flush.
  b.access(16, 0, Space::Shared, AccessKind::Load, kBase, 4);
  b.finish();
  const AccessCounts &c =
      counts.accesses[LaunchCounts::slot(0, Space::Shared, AccessKind::Load)];
  EXPECT_EQ(c.requests, 2);
  EXPECT_EQ(c.wavefronts, 2);
}

TEST(SimCounters, BranchesDivergeWhenActiveLanesDisagree) {
  LaunchCounts counts;
  BlockCounters b(64, 2, counts);
  for (int64_t t = 0; t < 64; ++t) {
    b.branch(t, 0, t % 2 == 1); // lane parity: divergent in both warps
    b.branch(t, 1, t < 32);     // warp-uniform
  }
  b.barrier();
  b.barrier();
  b.finish();
  EXPECT_EQ(counts.branches[0].instances, 2);
  EXPECT_EQ(counts.branches[0].divergent, 2);
  EXPECT_EQ(counts.branches[1].instances, 2);
  EXPECT_EQ(counts.branches[1].divergent, 0);
  EXPECT_EQ(counts.barriers, 2);
  EXPECT_EQ(counts.maxBarriersPerBlock, 2);
}

TEST(SimCounters, LaunchCountsMerge) {
  LaunchCounts a, b;
  BlockCounters ba(32, 1, a), bb(32, 1, b);
  ba.barrier();
  bb.barrier();
  bb.barrier();
  bb.branch(0, 0, true);
  ba.finish();
  bb.finish();
  a.merge(b);
  EXPECT_EQ(a.blocks, 2);
  EXPECT_EQ(a.barriers, 3);
  EXPECT_EQ(a.maxBarriersPerBlock, 2);
  EXPECT_EQ(a.branches[0].instances, 1);
}

TEST(SimCounters, SiteDescriptionsSplitIntoOpAndShortLocation) {
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(splitSite("vector.load at loc(\"/k/softmax.tile\":52:10)"),
            P("vector.load", "softmax.tile:52:10"));
  EXPECT_EQ(
      splitSite("memref.store at loc(fused[\"a.tile\":3:4, \"a.tile\":5:6])"),
      P("memref.store", "a.tile:3:4"));
  EXPECT_EQ(splitSite("scf.if at loc(unknown)"), P("scf.if", "unknown"));
  EXPECT_EQ(splitSite("gpu.barrier"), P("gpu.barrier", ""));
}

//===----------------------------------------------------------------------===//
// Kernels compiled with counters
//===----------------------------------------------------------------------===//

/// A kernel `@k(%out: memref<?xf32>)` of `threads` threads whose shared
/// arena (`arenaBytes`) is viewed as a memref of `shape` (e.g. "32x33xf32")
/// %s; BODY uses %tid, %bid, %s, %out, %x (the thread id as f32) and %c0,
/// %c1, %c2, %c32.
std::string kernel(int64_t threads, int64_t arenaBytes,
                   const std::string &shape, const std::string &body) {
  std::string shared = "memref<" + shape + ", #gpu.address_space<workgroup>>";
  return R"(
module {
  gpu.module @m {
    gpu.func @k(%out: memref<?xf32>) kernel attributes {known_block_size = array<i32: )" +
         std::to_string(threads) + R"(, 1, 1>, tile.shared_bytes = )" +
         std::to_string(arenaBytes) + R"( : i64} {
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c32 = arith.constant 32 : index
      %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to )" +
         shared + R"(
      %s = memref.memory_space_cast %v : )" +
         shared + " to memref<" + shape + R"(>
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

struct Counted {
  Status status = okStatus();
  LaunchCounts counts;
  std::vector<std::string> sites;

  /// The counts of the `space`/`kind` access whose site starts with `op`.
  AccessCounts access(const std::string &op, Space space,
                      AccessKind kind) const {
    AccessCounts sum;
    for (size_t i = 0; i < sites.size(); ++i)
      if (sites[i].rfind(op, 0) == 0)
        sum.add(counts.accesses[LaunchCounts::slot(int64_t(i), space, kind)]);
    return sum;
  }
  BranchCounts branches(const std::string &op) const {
    BranchCounts sum;
    for (size_t i = 0; i < sites.size(); ++i)
      if (sites[i].rfind(op, 0) == 0) {
        sum.instances += counts.branches[i].instances;
        sum.divergent += counts.branches[i].divergent;
      }
    return sum;
  }
};

/// Compiles `module` with counters and runs `blocks` blocks of it.
Counted runCounted(const std::string &module, int64_t arenaBytes,
                   std::vector<float> &out, int64_t blocks = 1) {
  Counted r;
  auto exe = driver::compileGpuIRForSim(module, "k", sim::runtimeSymbols(),
                                        /*counters=*/true);
  if (!exe.ok()) {
    r.status = exe.status();
    return r;
  }
  r.sites = (*exe)->accessSites();
  std::vector<unsigned char> arena(size_t(arenaBytes), 0xff);
  // `out` on a sector boundary, as a GPU allocation would be.
  struct alignas(128) Line {
    float v[32];
  };
  std::vector<Line> aligned((out.size() + 31) / 32);
  float *o = aligned.data()->v;
  std::copy(out.begin(), out.end(), o);
  int64_t outPtr, arenaPtr;
  unsigned char *a = arena.data();
  std::memcpy(&outPtr, &o, sizeof(o));
  std::memcpy(&arenaPtr, &a, sizeof(a));
  std::vector<int64_t> slots = {outPtr,   outPtr,   0, int64_t(out.size()), 1,
                                arenaPtr, arenaPtr, 0, arenaBytes,          1};
  for (int64_t b = 0; b < blocks && r.status.ok(); ++b) {
    sim::BlockLaunch l;
    l.entry = (*exe)->entry();
    l.slots = &slots;
    l.blockSize = (*exe)->blockSize();
    l.block[0] = b;
    l.grid[0] = blocks;
    l.kernel = "k";
    l.arena = arena.data();
    l.arenaBytes = arenaBytes;
    l.sites = &r.sites;
    l.counts = &r.counts;
    r.status = sim::runBlock(l);
  }
  std::copy(o, o + out.size(), out.begin());
  return r;
}

/// One warp writes a 32 x COLS f32 tile row by row (thread t writes row t,
/// column k at step k: the warp stores a column per step), then, after a
/// barrier, reads it column by column (thread t reads column t, row k at
/// step k: the warp loads a row per step) and stores its sum. `col(r, c)`
/// is the physical column of element (r, c).
std::string tileWalk(int64_t cols, bool swizzle) {
  std::string shape = "32x" + std::to_string(cols) + "xf32";
  auto col = [&](const std::string &r, const std::string &c,
                 const std::string &name) {
    return swizzle
               ? "      %" + name + " = arith.xori " + c + ", " + r +
                     " : index\n"
               : "      %" + name + " = arith.addi " + c + ", %c0 : index\n";
  };
  std::string mem = "memref<" + shape + ">";
  return kernel(32, 32 * cols * 4, shape,
                R"(
      scf.for %k = %c0 to %c32 step %c1 {
)" + col("%tid", "%k", "wc") +
                    R"(
        memref.store %x, %s[%tid, %wc] : )" +
                    mem + R"(
      }
      gpu.barrier
      %zero = arith.constant 0.0 : f32
      %sum = scf.for %k = %c0 to %c32 step %c1 iter_args(%acc = %zero) -> f32 {
)" + col("%k", "%tid", "rc") +
                    R"(
        %y = memref.load %s[%k, %rc] : )" +
                    mem + R"(
        %a = arith.addf %acc, %y : f32
        scf.yield %a : f32
      }
      memref.store %sum, %out[%tid] : memref<?xf32>
)");
}

TEST(SimCountersKernels, UnpaddedSharedTileColumnWalkIs32Way) {
  std::vector<float> out(32, -1);
  Counted r = runCounted(tileWalk(32, false), 32 * 32 * 4, out);
  ASSERT_TRUE(r.status.ok()) << r.status.toString();
  for (float v : out)
    EXPECT_EQ(v, 496.0f); // sum of the writers' ids 0..31
  AccessCounts st = r.access("memref.store", Space::Shared, AccessKind::Store);
  EXPECT_EQ(st.requests, 32);
  EXPECT_EQ(st.width, 4);
  EXPECT_EQ(st.wavefronts, 32 * 32);
  EXPECT_EQ(st.idealWavefronts, 32);
  AccessCounts ld = r.access("memref.load", Space::Shared, AccessKind::Load);
  EXPECT_EQ(ld.requests, 32);
  EXPECT_EQ(ld.wavefronts, 32);
  EXPECT_EQ(ld.idealWavefronts, 32);
  // The sums: one coalesced global store per warp.
  AccessCounts g = r.access("memref.store", Space::Global, AccessKind::Store);
  EXPECT_EQ(g.requests, 1);
  EXPECT_EQ(g.sectors, 4);
  EXPECT_EQ(g.idealSectors, 4);
  EXPECT_EQ(r.counts.barriers, 1);
}

TEST(SimCountersKernels, PaddedSharedTileColumnWalkIsConflictFree) {
  std::vector<float> out(32, -1);
  Counted r = runCounted(tileWalk(33, false), 32 * 33 * 4, out);
  ASSERT_TRUE(r.status.ok()) << r.status.toString();
  for (float v : out)
    EXPECT_EQ(v, 496.0f);
  AccessCounts st = r.access("memref.store", Space::Shared, AccessKind::Store);
  EXPECT_EQ(st.requests, 32);
  EXPECT_EQ(st.wavefronts, 32);
  EXPECT_EQ(st.idealWavefronts, 32);
  AccessCounts ld = r.access("memref.load", Space::Shared, AccessKind::Load);
  EXPECT_EQ(ld.wavefronts, 32);
}

TEST(SimCountersKernels, SwizzledSharedTileColumnWalkIsConflictFree) {
  std::vector<float> out(32, -1);
  Counted r = runCounted(tileWalk(32, true), 32 * 32 * 4, out);
  ASSERT_TRUE(r.status.ok()) << r.status.toString();
  for (float v : out)
    EXPECT_EQ(v, 496.0f);
  AccessCounts st = r.access("memref.store", Space::Shared, AccessKind::Store);
  EXPECT_EQ(st.requests, 32);
  EXPECT_EQ(st.wavefronts, 32);
  AccessCounts ld = r.access("memref.load", Space::Shared, AccessKind::Load);
  EXPECT_EQ(ld.requests, 32);
  EXPECT_EQ(ld.wavefronts, 32);
}

TEST(SimCountersKernels, BarriersAreCountedOncePerBlock) {
  // Five barriers in a loop and one after it: six per block, three blocks.
  std::vector<float> out(64, -1);
  Counted r = runCounted(kernel(64, 4, "1xf32",
                                R"(
      %c5 = arith.constant 5 : index
      scf.for %i = %c0 to %c5 step %c1 {
        gpu.barrier
      }
      gpu.barrier
)"),
                         4, out, /*blocks=*/3);
  ASSERT_TRUE(r.status.ok()) << r.status.toString();
  EXPECT_EQ(r.counts.blocks, 3);
  EXPECT_EQ(r.counts.barriers, 18);
  EXPECT_EQ(r.counts.maxBarriersPerBlock, 6);
}

TEST(SimCountersKernels, BranchOnLaneParityDivergesOnBlockIdDoesNot) {
  // Two warps, two blocks: the parity branch diverges in every warp, the
  // block-id branch in none.
  std::vector<float> out(64, -1);
  Counted r = runCounted(kernel(64, 4, "1xf32",
                                R"(
      %lane = arith.remui %tid, %c2 : index
      %odd = arith.cmpi eq, %lane, %c1 : index
      scf.if %odd {
        memref.store %x, %out[%tid] : memref<?xf32>
      }
      %bpar = arith.remui %bid, %c2 : index
      %oddBlock = arith.cmpi eq, %bpar, %c1 : index
      scf.if %oddBlock {
        %t2 = arith.addi %tid, %c1 : index
        %t3 = arith.remui %t2, %c2 : index
        %even = arith.cmpi eq, %t3, %c1 : index
        scf.if %even {
          memref.store %x, %out[%tid] : memref<?xf32>
        }
      }
)"),
                         4, out, /*blocks=*/2);
  ASSERT_TRUE(r.status.ok()) << r.status.toString();
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(out[t], float(t));
  // The parity branch: 2 blocks x 2 warps, all divergent; the block-id
  // branch: 4 warps, none divergent; the parity branch inside it: the odd
  // block's 2 warps, divergent.
  BranchCounts all = r.branches("scf.if");
  EXPECT_EQ(all.instances, 4 + 4 + 2);
  EXPECT_EQ(all.divergent, 4 + 2);
  int64_t uniformSites = 0;
  for (size_t i = 0; i < r.sites.size(); ++i)
    if (r.counts.branches[i].instances == 4 &&
        r.counts.branches[i].divergent == 0)
      ++uniformSites;
  EXPECT_EQ(uniformSites, 1);
}

TEST(SimCountersKernels, LoopWithLaneDependentTripCountDiverges) {
  // for i = tid; i < 40; i += 32: in warp 0 lanes 0..7 run twice and the
  // others once (the second exit test diverges), in warp 1 lanes 32..39
  // run once and the others never (the first test diverges).
  std::vector<float> out(64, -1);
  Counted r = runCounted(kernel(64, 4, "1xf32",
                                R"(
      %c40 = arith.constant 40 : index
      scf.for %i = %tid to %c40 step %c32 {
        memref.store %x, %out[%i] : memref<?xf32>
      }
)"),
                         4, out);
  ASSERT_TRUE(r.status.ok()) << r.status.toString();
  BranchCounts loop = r.branches("scf.for");
  EXPECT_EQ(loop.instances, 3 + 2);
  EXPECT_EQ(loop.divergent, 2);
}

} // namespace
