//===- SimCountersRuntimeTest.cpp - counters of tile kernels on sim -------===//
//
// Tile-language kernels launched on the sim device with
// LaunchOptions::counters: a coalesced copy reads exactly the ideal
// sectors, a stride-32 copy eight times as many; barriers and branches of
// the GPU lowering; the API around the counters.
//
//===----------------------------------------------------------------------===//

#include "tessera/runtime/Runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

using namespace tessera;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

Runtime &rt() {
  static Runtime *r = new Runtime(RuntimeOptions{2});
  return *r;
}

const char *kSource = R"(
@kernel(grid=(cdiv(N, BLOCK),))
def copy(x: Tensor["N", f32], y: Tensor["N", f32], BLOCK: constexpr = 512):
    off = tile.program_id(0) * BLOCK
    v = tile.load(x, offsets=(off,), shape=(BLOCK,))
    tile.store(y, v, offsets=(off,))

@kernel(grid=(cdiv(N, BLOCK),))
def center(x: Tensor["N", f32], y: Tensor["N", f32], BLOCK: constexpr = 256):
    off = tile.program_id(0) * BLOCK
    v = tile.load(x, offsets=(off,), shape=(BLOCK,))
    tile.store(y, v - tile.max(v, axis=0), offsets=(off,))
)";

std::shared_ptr<Kernel> compile(const std::string &name,
                                DeviceKind device = DeviceKind::Sim) {
  auto prog = rt().loadSource("copy.tile", kSource);
  EXPECT_TRUE(prog.ok()) << prog.status().toString();
  auto k = rt().compile(**prog, name, {}, device);
  EXPECT_TRUE(k.ok()) << k.status().toString();
  return *k;
}

/// 64-byte aligned sim memory (sector boundaries are where a GPU's are).
struct Buffer {
  DeviceBuffer buffer;
  explicit Buffer(int64_t floats) {
    auto b = rt().allocate(DeviceKind::Sim, size_t(floats) * 4);
    EXPECT_TRUE(b.ok());
    buffer = std::move(*b);
    auto *p = static_cast<float *>(buffer.data());
    for (int64_t i = 0; i < floats; ++i)
      p[i] = float(i);
  }
  float *data() const { return static_cast<float *>(buffer.data()); }
  TensorView view(int64_t n, int64_t stride = 1) const {
    TensorView v = TensorView::contiguous(data(), DType::F32, {n});
    v.strides = {stride};
    v.device = DeviceKind::Sim;
    return v;
  }
};

/// The sum of the rows of `space` and `kind`.
SimAccessCounters total(const SimCounters &c, SimAccessCounters::Space space,
                        SimAccessCounters::Kind kind) {
  SimAccessCounters t;
  for (const SimAccessCounters &a : c.accesses)
    if (a.space == space && a.kind == kind) {
      t.requests += a.requests;
      t.lanes += a.lanes;
      t.sectors += a.sectors;
      t.idealSectors += a.idealSectors;
      t.usefulBytes += a.usefulBytes;
    }
  return t;
}

constexpr auto kGlobal = SimAccessCounters::Space::Global;
constexpr auto kLoad = SimAccessCounters::Kind::Load;
constexpr auto kStore = SimAccessCounters::Kind::Store;

TEST(SimCountersRuntime, CoalescedCopyReadsTheIdealSectors) {
  const int64_t n = 4096;
  Buffer x(n), y(n);
  auto k = compile("copy");
  LaunchOptions counting;
  counting.counters = true;
  Status s = k->launch({x.view(n), y.view(n)}, counting);
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y.data()[i], float(i));
  auto c = k->lastCounters();
  ASSERT_TRUE(c.ok()) << c.status().toString();
  SimAccessCounters loads = total(*c, kGlobal, kLoad);
  // Every byte of x is read once, in whole sectors.
  EXPECT_EQ(loads.usefulBytes, n * 4);
  EXPECT_EQ(loads.sectors, n * 4 / 32);
  EXPECT_EQ(loads.idealSectors, loads.sectors);
  SimAccessCounters stores = total(*c, kGlobal, kStore);
  EXPECT_EQ(stores.sectors, n * 4 / 32);
  EXPECT_EQ(c->globalSectors, 2 * n * 4 / 32);
  EXPECT_EQ(c->globalIdealSectors, c->globalSectors);
  EXPECT_EQ(c->globalBytesMoved, 2 * n * 4);
  EXPECT_EQ(c->globalUsefulBytes, 2 * n * 4);
  EXPECT_DOUBLE_EQ(c->coalescingEfficiency, 1.0);
  EXPECT_EQ(c->globalRequests, loads.requests + stores.requests);
  EXPECT_EQ(c->sharedRequests, 0);
  EXPECT_EQ(c->blocks, n / 512);
  // Every row names its instruction and where it comes from.
  bool sawVectorLoad = false;
  for (const SimAccessCounters &a : c->accesses) {
    EXPECT_THAT(a.location, StartsWith("copy.tile:"));
    if (a.kind == kLoad && a.widthBytes == 16) {
      sawVectorLoad = true;
      EXPECT_EQ(a.op, "vector.load");
      EXPECT_THAT(a.description(), StartsWith("global load 16B at copy.tile:"));
    }
  }
  EXPECT_TRUE(sawVectorLoad);
  // Whole warps of one direction: no divergent branch.
  EXPECT_EQ(c->divergentBranches, 0);
  EXPECT_GT(c->warpBranchInstances, 0);
}

TEST(SimCountersRuntime, Stride32CopyReadsEightTimesTheIdealSectors) {
  // x[i] lives at element 32 i: every lane of a warp request in a sector
  // of its own, 32 sectors where 4 would carry the 128 bytes.
  const int64_t n = 2048;
  Buffer x(n * 32), y(n);
  auto k = compile("copy");
  LaunchOptions counting;
  counting.counters = true;
  Status s = k->launch({x.view(n, 32), y.view(n)}, counting);
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y.data()[i], float(32 * i));
  auto c = k->lastCounters();
  ASSERT_TRUE(c.ok()) << c.status().toString();
  SimAccessCounters loads = total(*c, kGlobal, kLoad);
  EXPECT_EQ(loads.usefulBytes, n * 4);
  EXPECT_EQ(loads.sectors, n);
  EXPECT_EQ(loads.idealSectors, n * 4 / 32);
  EXPECT_EQ(loads.sectors, 8 * loads.idealSectors);
  EXPECT_EQ(loads.lanes, n);
  // The stores stay coalesced.
  SimAccessCounters stores = total(*c, kGlobal, kStore);
  EXPECT_EQ(stores.sectors, stores.idealSectors);
  EXPECT_NEAR(c->coalescingEfficiency,
              double(n / 8 + n / 8) / double(n + n / 8), 1e-12);
}

TEST(SimCountersRuntime, RaggedTailDivergesWholeBlocksDoNot) {
  // 8 elements past the last whole block: in the last block only two
  // lanes have a 4-element vector in bounds, so the bounds check of the
  // vectors splits warp 0.
  const int64_t n = 4096 + 8;
  Buffer x(n), y(n);
  auto k = compile("copy");
  LaunchOptions counting;
  counting.counters = true;
  ASSERT_TRUE(k->launch({x.view(n), y.view(n)}, counting).ok());
  auto c = k->lastCounters();
  ASSERT_TRUE(c.ok());
  EXPECT_GT(c->divergentBranches, 0);
  int64_t divergent = 0;
  for (const SimBranchCounters &b : c->branches) {
    EXPECT_THAT(b.location, StartsWith("copy.tile:"));
    divergent += b.divergent;
  }
  EXPECT_EQ(divergent, c->divergentBranches);
}

TEST(SimCountersRuntime, BarriersAndSharedMemoryOfAReduction) {
  // The block reduction goes through shared memory between barriers; every
  // block runs the same code, so each has the same barrier count.
  const int64_t n = 1024;
  Buffer x(n), y(n);
  auto k = compile("center");
  LaunchOptions counting;
  counting.counters = true;
  ASSERT_TRUE(k->launch({x.view(n), y.view(n)}, counting).ok());
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y.data()[i], float(i - (i / 256 * 256 + 255)));
  auto c = k->lastCounters();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->blocks, 4);
  EXPECT_GT(c->barriers, 0);
  EXPECT_EQ(c->barriers, 4 * c->maxBarriersPerBlock);
  EXPECT_DOUBLE_EQ(c->barriersPerBlock, double(c->maxBarriersPerBlock));
  EXPECT_GT(c->sharedRequests, 0);
  EXPECT_GE(c->sharedWavefronts, c->sharedIdealWavefronts);
}

TEST(SimCountersRuntime, CountersAreOptInPerLaunchAndSimOnly) {
  const int64_t n = 512;
  Buffer x(n), y(n);
  auto k = compile("copy");
  // Off by default: nothing to report.
  ASSERT_TRUE(k->launch({x.view(n), y.view(n)}).ok());
  auto none = k->lastCounters();
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  LaunchOptions counting;
  counting.counters = true;
  ASSERT_TRUE(k->launch({x.view(n), y.view(n)}, counting).ok());
  EXPECT_TRUE(k->lastCounters().ok());
  // A later launch without counters forgets them.
  ASSERT_TRUE(k->launchTimed({x.view(n), y.view(n)}).ok());
  EXPECT_FALSE(k->lastCounters().ok());
  // Only the sim device counts.
  auto onCpu = compile("copy", DeviceKind::Cpu);
  std::vector<float> hx(n, 1), hy(n);
  Status s = onCpu->launch({TensorView::contiguous(hx.data(), DType::F32, {n}),
                            TensorView::contiguous(hy.data(), DType::F32, {n})},
                           counting);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("sim device only"));
}

} // namespace
