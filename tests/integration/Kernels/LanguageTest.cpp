//===- LanguageTest.cpp - Language features end to end --------------------===//
//
// Small kernels, written inline, that exercise one feature of the language
// each (and the regressions found by porting kernels from Triton), run on
// the test device (cpu, sim or cuda, as the other kernel tests) against
// plain loops.
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"

#include <algorithm>
#include <cmath>

using namespace tessera;
using namespace tessera::testing;

namespace {

/// Kernel `name` of `source`, compiled for the test device.
std::shared_ptr<Kernel> sourceKernel(const std::string &source,
                                     const std::string &name,
                                     CompileOptions opts = {}) {
  auto prog = runtime().loadSource(name + ".tile", source);
  if (!prog.ok()) {
    ADD_FAILURE() << prog.status().toString();
    return nullptr;
  }
  auto k = runtime().compile(**prog, name, opts, testDevice());
  if (!k.ok()) {
    ADD_FAILURE() << k.status().toString();
    return nullptr;
  }
  return *k;
}

/// out[i, j] = sum_k a[i, k] * b[k, j] for row-major [n, n] matrices.
std::vector<double> matmul(const HostTensor &a, const HostTensor &b,
                           int64_t n) {
  std::vector<double> out(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < n; ++j)
        out[i * n + j] += a.at(i * n + k) * b.get({k, j});
  return out;
}

// A tile reshaped by splitting a dimension ((256,) -> (16, 16)) is a valid
// tile.dot operand (the cpu lowering failed on it with an empty message).
TEST(Language, ReshapeSplittingADimensionFeedsDot) {
  auto k = sourceKernel(R"(
@kernel(grid=(1,))
def split_dot(a: Tensor["N", f32], b: Tensor[16, 16, f32],
              out: Tensor[16, 16, f32]):
    x = tile.reshape(tile.load(a, offsets=(0,), shape=(256,)), (16, 16))
    w = tile.load(b, offsets=(0, 0), shape=(16, 16))
    tile.store(out, tile.dot(x, w, tile.zeros((16, 16), f32)), offsets=(0, 0))
)",
                        "split_dot");
  HostTensor a = HostTensor::empty({256}, DType::F32);
  HostTensor b = HostTensor::empty({16, 16}, DType::F32);
  for (int64_t i = 0; i < 256; ++i) {
    a.set({i}, (i % 7) - 3.0);
    b.set({i / 16, i % 16}, (i % 5) * 0.5);
  }
  HostTensor out = HostTensor::zeros({16, 16}, DType::F32);
  ASSERT_LAUNCH(k, {view(a), view(b), view(out)});
  std::vector<double> want = matmul(a, b, 16);
  for (int64_t i = 0; i < 256; ++i)
    ASSERT_EQ(out.at(i), want[i]) << "element " << i;
}

// 3-D and 4-D block loads reshaped to 2-D for tile.dot (the multi-head form)
// compute the batched product.
TEST(Language, HigherRankBlocksReshapedIntoDot) {
  auto k3 = sourceKernel(R"(
@kernel(grid=(cdiv(M, 32), cdiv(N, 32), B))
def dot3(a: Tensor["B", "M", "K", f32], b: Tensor["B", "K", "N", f32],
         c: Tensor["B", "M", "N", f32]):
    z = tile.program_id(2)
    m0 = tile.program_id(0) * 32
    n0 = tile.program_id(1) * 32
    acc = tile.zeros((32, 32), f32)
    for k0 in range(0, a.shape[2], 16):
        x = tile.load(a, offsets=(z, m0, k0), shape=(1, 32, 16))
        w = tile.load(b, offsets=(z, k0, n0), shape=(1, 16, 32))
        acc = tile.dot(tile.reshape(x, (32, 16)), tile.reshape(w, (16, 32)), acc)
    tile.store(c, tile.reshape(acc, (1, 32, 32)), offsets=(z, m0, n0))
)",
                         "dot3");
  auto k4 = sourceKernel(R"(
@kernel(grid=(cdiv(M, 32), cdiv(N, 32), B))
def dot4(a: Tensor["B", 1, "M", "K", f32], b: Tensor["B", 1, "K", "N", f32],
         c: Tensor["B", 1, "M", "N", f32]):
    z = tile.program_id(2)
    m0 = tile.program_id(0) * 32
    n0 = tile.program_id(1) * 32
    acc = tile.zeros((32, 32), f32)
    for k0 in range(0, a.shape[3], 16):
        x = tile.load(a, offsets=(z, 0, m0, k0), shape=(1, 1, 32, 16))
        w = tile.load(b, offsets=(z, 0, k0, n0), shape=(1, 1, 16, 32))
        acc = tile.dot(tile.reshape(x, (32, 16)), tile.reshape(w, (16, 32)), acc)
    tile.store(c, tile.reshape(acc, (1, 1, 32, 32)), offsets=(z, 0, m0, n0))
)",
                         "dot4");
  const int64_t nb = 2, n = 48; // edge blocks in M, N and K
  for (int rank : {3, 4}) {
    SCOPED_TRACE(rank);
    std::vector<int64_t> shape = rank == 3 ? std::vector<int64_t>{nb, n, n}
                                           : std::vector<int64_t>{nb, 1, n, n};
    HostTensor a = HostTensor::empty(shape, DType::F32);
    HostTensor b = HostTensor::empty(shape, DType::F32);
    HostTensor c = HostTensor::zeros(shape, DType::F32);
    for (int64_t i = 0; i < nb * n * n; ++i) {
      a.set(a.unflatten(i), double((i * 7) % 11) - 5.0);
      b.set(b.unflatten(i), double((i * 3) % 7) * 0.25);
    }
    ASSERT_LAUNCH(rank == 3 ? k3 : k4, {view(a), view(b), view(c)});
    for (int64_t z = 0; z < nb; ++z)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (int64_t k = 0; k < n; ++k)
            want += a.at((z * n + i) * n + k) * b.at((z * n + k) * n + j);
          ASSERT_EQ(c.at((z * n + i) * n + j), want)
              << "batch " << z << " (" << i << ", " << j << ")";
        }
  }
}

// range() iterates as Python's: negative steps count down, a run-time step
// of unknown sign is honoured, and a zero step fails the launch with a
// clear error (it hung on cpu and sim).
TEST(Language, RangeStepsFollowPython) {
  auto k = sourceKernel(R"(
@kernel(grid=(1,))
def steps(out: Tensor[4, i64], lo: int, hi: int, step: int):
    count = 0
    total = 0
    for i in range(lo, hi, step):
        count = count + 1
        total = total + i
    down = 0
    for j in range(10, 0, -3):
        down = down + j
    tile.store(out, tile.where(tile.arange(0, 4) == 0, count,
                               tile.where(tile.arange(0, 4) == 1, total,
                                          tile.where(tile.arange(0, 4) == 2,
                                                     down, -1))),
               offsets=(0,))
)",
                        "steps");
  struct Case {
    int64_t lo, hi, step;
  };
  for (Case c : {Case{0, 10, 3}, Case{10, 0, -3}, Case{-5, 6, 4}, Case{3, 3, 1},
                 Case{3, 9, -2}, Case{9, 3, -1}}) {
    SCOPED_TRACE(std::to_string(c.lo) + ", " + std::to_string(c.hi) + ", " +
                 std::to_string(c.step));
    int64_t count = 0, total = 0;
    for (int64_t i = c.lo; c.step > 0 ? i < c.hi : i > c.hi; i += c.step) {
      ++count;
      total += i;
    }
    HostTensor out = HostTensor::zeros({4}, DType::I64);
    ASSERT_LAUNCH(k, {view(out), Arg(c.lo), Arg(c.hi), Arg(c.step)});
    EXPECT_EQ(out.at(0), count);
    EXPECT_EQ(out.at(1), total);
    EXPECT_EQ(out.at(2), 10 + 7 + 4 + 1);
  }
  HostTensor out = HostTensor::zeros({4}, DType::I64);
  ASSERT_NE(k, nullptr);
  Status s = k->launch(
      {view(out), Arg(int64_t(0)), Arg(int64_t(10)), Arg(int64_t(0))});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.toString();
  EXPECT_NE(s.message().find("kernel assertion failed"), std::string::npos)
      << s.toString();
  EXPECT_NE(s.message().find("steps.tile:6:14: range() step is zero"),
            std::string::npos)
      << s.toString();
}

// The reductions' keep_dims, argmax/argmin (first index on ties, NaN as the
// extreme), element reads t[i, j], t[-1][0] and t[i] (a row), erf and pow.
TEST(Language, ReductionsElementReadsAndMath) {
  auto k = sourceKernel(R"(
@kernel(grid=(1,))
def feats(x: Tensor[4, 8, f32], centred: Tensor[4, 8, f32],
          math: Tensor[2, 4, 8, f32], am: Tensor[8, i32], an: Tensor[4, i32],
          flat: Tensor[2, i32], picks: Tensor[3, f32], row: Tensor[8, f32]):
    t = tile.load(x, offsets=(0, 0), shape=(4, 8))
    tile.store(centred, t - tile.sum(t, axis=1, keep_dims=True), offsets=(0, 0))
    m = tile.reshape(tile.erf(t), (1, 4, 8))
    p = tile.reshape(tile.pow(tile.abs(t), 1.5), (1, 4, 8))
    tile.store(math, m, offsets=(0, 0, 0))
    tile.store(math, p, offsets=(1, 0, 0))
    tile.store(am, tile.argmax(t, axis=0), offsets=(0,))
    tile.store(an, t.argmin(1), offsets=(0,))
    both = tile.where(tile.arange(0, 2) == 0, tile.argmax(t), tile.argmin(t))
    tile.store(flat, both, offsets=(0,))
    v = tile.where(tile.arange(0, 3) == 0, t[1, 2],
                   tile.where(tile.arange(0, 3) == 1, t[-1][0], t[0, -1]))
    tile.store(picks, v, offsets=(0,))
    tile.store(row, t[2], offsets=(0,))
)",
                        "feats");
  HostTensor x = HostTensor::empty({4, 8}, DType::F32);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j)
      x.set({i, j}, double((i * 5 + j * 3) % 7) - 3.0); // ties in rows/cols
  x.set({2, 5}, std::nan("")); // column 5's and row 2's extreme
  HostTensor centred = HostTensor::zeros({4, 8}, DType::F32);
  HostTensor math = HostTensor::zeros({2, 4, 8}, DType::F32);
  HostTensor am = HostTensor::zeros({8}, DType::I32);
  HostTensor an = HostTensor::zeros({4}, DType::I32);
  HostTensor flat = HostTensor::zeros({2}, DType::I32);
  HostTensor picks = HostTensor::zeros({3}, DType::F32);
  HostTensor row = HostTensor::zeros({8}, DType::F32);
  ASSERT_LAUNCH(k, {view(x), view(centred), view(math), view(am), view(an),
                    view(flat), view(picks), view(row)});
  auto better = [](double a, double b, bool max) {
    if (std::isnan(b))
      return false;
    if (std::isnan(a))
      return true;
    return max ? a > b : a < b;
  };
  for (int64_t j = 0; j < 8; ++j) {
    int64_t best = 0;
    for (int64_t i = 1; i < 4; ++i)
      if (better(x.get({i, j}), x.get({best, j}), true))
        best = i;
    EXPECT_EQ(am.at(j), best) << "argmax of column " << j;
  }
  for (int64_t i = 0; i < 4; ++i) {
    int64_t best = 0;
    double sum = 0;
    for (int64_t j = 0; j < 8; ++j) {
      sum += x.get({i, j});
      if (j && better(x.get({i, j}), x.get({i, best}), false))
        best = j;
    }
    EXPECT_EQ(an.at(i), best) << "argmin of row " << i;
    for (int64_t j = 0; j < 8; ++j) {
      double v = x.get({i, j});
      if (std::isnan(sum)) {
        EXPECT_TRUE(std::isnan(centred.get({i, j})));
      } else {
        EXPECT_NEAR(centred.get({i, j}), v - sum, 1e-5);
      }
      if (std::isnan(v))
        continue;
      EXPECT_NEAR(math.get({0, i, j}), std::erf(v), 2e-6) << v;
      EXPECT_NEAR(math.get({1, i, j}), std::pow(std::fabs(v), 1.5),
                  2e-6 * std::pow(std::fabs(v), 1.5) + 1e-7)
          << v;
    }
  }
  EXPECT_EQ(flat.at(0), 2 * 8 + 5) << "argmax over every element: the NaN";
  EXPECT_EQ(flat.at(1), 2 * 8 + 5) << "argmin over every element: the NaN";
  EXPECT_EQ(picks.at(0), x.get({1, 2}));
  EXPECT_EQ(picks.at(1), x.get({3, 0}));
  EXPECT_EQ(picks.at(2), x.get({0, 7}));
  for (int64_t j = 0; j < 8; ++j) {
    if (std::isnan(x.get({2, j})))
      EXPECT_TRUE(std::isnan(row.at(j)));
    else
      EXPECT_EQ(row.at(j), x.get({2, j}));
  }
}

// A batched (3-D) tile.dot: [B, M, K] @ [B, K, N], and a 2-D right operand
// shared by every batch entry, with a 3-D accumulator.
TEST(Language, BatchedDot) {
  auto k = sourceKernel(R"(
@kernel(grid=(1,))
def bdot(a: Tensor[3, 16, 16, f32], b: Tensor[3, 16, 16, f32],
         w: Tensor[16, 16, f32], c: Tensor[3, 16, 16, f32],
         d: Tensor[3, 16, 16, f32]):
    x = tile.load(a, offsets=(0, 0, 0), shape=(3, 16, 16))
    y = tile.load(b, offsets=(0, 0, 0), shape=(3, 16, 16))
    tile.store(c, tile.dot(x, y), offsets=(0, 0, 0))
    v = tile.load(w, offsets=(0, 0), shape=(16, 16))
    tile.store(d, tile.dot(x, v, tile.full((3, 16, 16), 1.0, f32)),
               offsets=(0, 0, 0))
)",
                        "bdot");
  HostTensor a = HostTensor::empty({3, 16, 16}, DType::F32);
  HostTensor b = HostTensor::empty({3, 16, 16}, DType::F32);
  HostTensor w = HostTensor::empty({16, 16}, DType::F32);
  for (int64_t i = 0; i < 3 * 256; ++i) {
    a.setAt(i, (i % 7) - 3.0);
    b.setAt(i, (i % 5) * 0.5);
  }
  for (int64_t i = 0; i < 256; ++i)
    w.setAt(i, (i % 3) - 1.0);
  HostTensor c = HostTensor::zeros({3, 16, 16}, DType::F32);
  HostTensor d = HostTensor::zeros({3, 16, 16}, DType::F32);
  ASSERT_LAUNCH(k, {view(a), view(b), view(w), view(c), view(d)});
  for (int64_t z = 0; z < 3; ++z)
    for (int64_t i = 0; i < 16; ++i)
      for (int64_t j = 0; j < 16; ++j) {
        double want = 0, wantW = 1;
        for (int64_t q = 0; q < 16; ++q) {
          want += a.get({z, i, q}) * b.get({z, q, j});
          wantW += a.get({z, i, q}) * w.get({q, j});
        }
        ASSERT_EQ(c.get({z, i, j}), want) << z << "," << i << "," << j;
        ASSERT_EQ(d.get({z, i, j}), wantW) << z << "," << i << "," << j;
      }
}

// Inclusive scans: cumsum along the rows of an f16 tile (in f32), cumprod
// down its columns from the end, and a 1-D i32 cumsum.
TEST(Language, CumsumAndCumprod) {
  auto k = sourceKernel(R"(
@kernel(grid=(1,))
def scans(x: Tensor[4, 8, f16], s: Tensor[4, 8, f32], p: Tensor[4, 8, f32],
          v: Tensor[256, i32], vs: Tensor[256, i32]):
    t = tile.load(x, offsets=(0, 0), shape=(4, 8))
    tile.store(s, tile.cumsum(t, axis=1), offsets=(0, 0))
    tile.store(p, t.cumprod(0, reverse=True), offsets=(0, 0))
    w = tile.load(v, offsets=(0,), shape=(256,))
    tile.store(vs, tile.cumsum(w), offsets=(0,))
)",
                        "scans");
  HostTensor x = HostTensor::empty({4, 8}, DType::F16);
  const double vals[] = {1.0, 2.0, -1.0, 0.5, 3.0, -2.0, 1.5, 0.25};
  for (int64_t i = 0; i < 32; ++i)
    x.setAt(i, vals[(i * 3) % 8]);
  HostTensor v = HostTensor::empty({256}, DType::I32);
  for (int64_t i = 0; i < 256; ++i)
    v.setAt(i, (i * 37) % 11 - 5);
  HostTensor s = HostTensor::zeros({4, 8}, DType::F32);
  HostTensor p = HostTensor::zeros({4, 8}, DType::F32);
  HostTensor vs = HostTensor::zeros({256}, DType::I32);
  ASSERT_LAUNCH(k, {view(x), view(s), view(p), view(v), view(vs)});
  for (int64_t r = 0; r < 4; ++r) {
    double run = 0;
    for (int64_t c = 0; c < 8; ++c) {
      run += x.get({r, c});
      EXPECT_EQ(s.get({r, c}), run) << r << "," << c;
    }
  }
  for (int64_t c = 0; c < 8; ++c) {
    double run = 1;
    for (int64_t r = 3; r >= 0; --r) {
      run *= x.get({r, c});
      EXPECT_EQ(p.get({r, c}), run) << r << "," << c;
    }
  }
  double run = 0;
  for (int64_t i = 0; i < 256; ++i) {
    run += v.at(i);
    ASSERT_EQ(vs.at(i), run) << i;
  }
}

// Tile-wide atomics: a histogram (atomic_add of a tile of ones at a tile of
// bin indices, masked), a 2-D scatter-max, and every value into one element.
TEST(Language, TileWideAtomics) {
  auto k = sourceKernel(R"(
@kernel(grid=(cdiv(N, 64),))
def hist(x: Tensor["N", i32], bins: Tensor[16, i32], grid: Tensor[4, 4, f32],
         total: Tensor[1, f32]):
    i0 = tile.program_id(0) * 64
    offs = i0 + tile.arange(0, 64)
    v = tile.load(x, offsets=(i0,), shape=(64,))
    tile.atomic_add(bins, v % 16, 1, mask=offs < x.shape[0])
    tile.atomic_max(grid, ((v // 4) % 4, v % 4), v.to(f32))
    tile.atomic_add(total, 0, tile.where(offs < x.shape[0], 1.0, 0.0))
)",
                        "hist");
  const int64_t n = 1000;
  HostTensor x = HostTensor::empty({n}, DType::I32);
  for (int64_t i = 0; i < n; ++i)
    x.setAt(i, (i * 7919) % 1000);
  HostTensor bins = HostTensor::zeros({16}, DType::I32);
  HostTensor grid = HostTensor::zeros({4, 4}, DType::F32);
  HostTensor total = HostTensor::zeros({1}, DType::F32);
  ASSERT_LAUNCH(k, {view(x), view(bins), view(grid), view(total)});
  std::vector<double> want(16, 0), wantMax(16, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = int64_t(x.at(i));
    want[v % 16] += 1;
    int64_t cell = ((v / 4) % 4) * 4 + v % 4;
    wantMax[cell] = std::max(wantMax[cell], double(v));
  }
  // Lanes past the end load 0 (other=0): bin 0 and cell 0 see them only
  // through the unmasked scatter-max, whose 0 changes nothing.
  for (int64_t b = 0; b < 16; ++b) {
    EXPECT_EQ(bins.at(b), want[b]) << "bin " << b;
    EXPECT_EQ(grid.at(b), wantMax[b]) << "cell " << b;
  }
  EXPECT_EQ(total.at(0), double(n));
}

//===----------------------------------------------------------------------===//
// SIMT programs
//===----------------------------------------------------------------------===//

/// Launches `k` on `args`; the failure message, or "" when it ran.
std::string launchError(const std::shared_ptr<Kernel> &k,
                        std::vector<Arg> args) {
  if (!k)
    return "no kernel";
  Status s = k->launch(std::move(args));
  return s.ok() ? std::string() : s.toString();
}

// Coordinates, integer warp reductions, shared arrays and a grid-stride
// loop with `continue`: out[w] is the minimum of x over the elements that
// the threads of global warp w take, skipping negative ones.
TEST(Language, SimtCoordinatesAndIntegerWarpReductions) {
  auto k = sourceKernel(R"(
@kernel(grid=(3,), num_warps=2)
def wmin(x: Tensor["N", i32], out: Tensor["W", i32], blocks: Tensor[1, i32]):
    best = tile.alloc_shared[i32](2)
    w = tile.warp_id()
    if tile.lane_id() == 0:
        best[w] = 1000000
    tile.barrier()
    m = 1000000
    for i in range(tile.linear_id(), x.shape[0],
                   tile.num_blocks(0) * tile.block_size()):
        if x[i] < 0:
            continue
        m = min(m, x[i])
    m = tile.warp_reduce_min(m)
    if tile.lane_id() == 0:
        tile.atomic_min(best, w, m)
    tile.barrier()
    if tile.thread_id() < 2:
        out[tile.block_id(0) * 2 + tile.thread_id()] = best[tile.thread_id()]
    if tile.linear_id() == 0:
        blocks[0] = tile.num_blocks(0)
)",
                        "wmin");
  const int64_t n = 1000, threads = 3 * 64;
  HostTensor x = HostTensor::empty({n}, DType::I32);
  for (int64_t i = 0; i < n; ++i)
    x.setAt(i, (i * 7919) % 1009 - 50);
  HostTensor out = HostTensor::zeros({6}, DType::I32);
  HostTensor blocks = HostTensor::zeros({1}, DType::I32);
  ASSERT_LAUNCH(k, {view(x), view(out), view(blocks)});
  EXPECT_EQ(blocks.at(0), 3);
  for (int64_t w = 0; w < 6; ++w) {
    double want = 1000000;
    for (int64_t t = w * 32; t < w * 32 + 32; ++t)
      for (int64_t i = t; i < n; i += threads)
        if (x.at(i) >= 0)
          want = std::min(want, x.at(i));
    EXPECT_EQ(out.at(w), want) << "warp " << w;
  }
}

// The sim's checkers apply to SIMT programs (on cpu too, which runs them on
// the sim's scheduler): a warp reduction some lanes of a warp skip, a
// barrier some threads skip, and an element outside its tensor fail the
// launch. (Undefined on a GPU, as in CUDA: not run there.)
TEST(Language, SimtMisuseFailsTheLaunch) {
  if (testDevice() == DeviceKind::Cuda)
    GTEST_SKIP() << "undefined behaviour on a GPU";
  HostTensor x = HostTensor::zeros({64}, DType::F32);
  auto shuffle = sourceKernel(R"(
@kernel(grid=(1,), num_warps=1)
def half_warp(x: Tensor["N", f32]):
    if tile.lane_id() < 16:
        x[tile.lane_id()] = tile.warp_reduce_sum(1.0)
)",
                              "half_warp");
  EXPECT_NE(launchError(shuffle, {view(x)}).find("warp collective divergence"),
            std::string::npos)
      << launchError(shuffle, {view(x)});
  auto barrier = sourceKernel(R"(
@kernel(grid=(1,), num_warps=2)
def first_warp(x: Tensor["N", f32]):
    if tile.thread_id() < 32:
        tile.barrier()
)",
                              "first_warp");
  EXPECT_NE(launchError(barrier, {view(x)}).find("barrier divergence"),
            std::string::npos)
      << launchError(barrier, {view(x)});
  auto bounds = sourceKernel(R"(
@kernel(grid=(1,), num_warps=4)
def past_the_end(x: Tensor["N", f32]):
    x[tile.thread_id()] = 1.0
)",
                             "past_the_end");
  std::string err = launchError(bounds, {view(x)});
  EXPECT_NE(err.find("out-of-bounds access"), std::string::npos) << err;
  EXPECT_NE(err.find("past_the_end.tile\":4:5"), std::string::npos) << err;
}

// print() and tile.device_print: constexprs spelled as Python prints them,
// run-time integers, floats (%g) and bools, once per program instance in a
// tile program and once per thread in a SIMT program.
TEST(Language, DevicePrint) {
  auto tileProgram = sourceKernel(R"(
@kernel(grid=(2,), num_warps=4)
def show(x: Tensor[2, 8, f32], n: int):
    pid = tile.program_id(0)
    row = tile.load(x, offsets=(pid, 0), shape=(1, 8))
    s = tile.sum(row)
    print("program", pid, "sum", s, s > 10.0, "100%", n, 1.5, None, (1, 2))
    tile.device_print("half:", s.to(f16), sep="", end="|\n")
)",
                                  "show");
  HostTensor x = HostTensor::empty({2, 8}, DType::F32);
  for (int64_t i = 0; i < 16; ++i)
    x.setAt(i, double(i) * 0.25);
  ::testing::internal::CaptureStdout();
  Status s = tileProgram ? tileProgram->launch({view(x), Arg(int64_t(-7))})
                         : okStatus();
  std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(s.ok()) << s.toString();
  std::vector<std::string> lines;
  for (size_t at = 0; at < out.size();) {
    size_t nl = out.find('\n', at);
    if (nl == std::string::npos)
      nl = out.size();
    lines.push_back(out.substr(at, nl - at));
    at = nl + 1;
  }
  std::sort(lines.begin(), lines.end());
  std::vector<std::string> want = {
      "half:23|", "half:7|", "program 0 sum 7 False 100% -7 1.5 None (1, 2)",
      "program 1 sum 23 True 100% -7 1.5 None (1, 2)"};
  EXPECT_EQ(lines, want) << out;

  auto simt = sourceKernel(R"(
@kernel(grid=(2,), num_warps=1)
def lanes(x: Tensor["N", i32]):
    i = tile.linear_id()
    if i % 16 == 3:
        print("thread", i, "block", tile.block_id(0), "x", x[i])
)",
                           "lanes");
  HostTensor xi = HostTensor::empty({64}, DType::I32);
  for (int64_t i = 0; i < 64; ++i)
    xi.setAt(i, double(100 + i));
  ::testing::internal::CaptureStdout();
  s = simt ? simt->launch({view(xi)}) : okStatus();
  out = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(s.ok()) << s.toString();
  lines.clear();
  for (size_t at = 0; at < out.size();) {
    size_t nl = out.find('\n', at);
    lines.push_back(out.substr(at, nl - at));
    at = nl == std::string::npos ? out.size() : nl + 1;
  }
  std::sort(lines.begin(), lines.end());
  want = {"thread 19 block 0 x 119", "thread 3 block 0 x 103",
          "thread 35 block 1 x 135", "thread 51 block 1 x 151"};
  EXPECT_EQ(lines, want) << out;
}

// Loads of packed (fp6/fp4) tensors: block loads with out-of-bounds rows
// and `other`, gathers with masks, on contiguous and transposed views
// whose rows start inside a byte; the tile is f16.
TEST(Language, PackedTensorLoads) {
  for (DType dt : {DType::F6E3M2, DType::F6E2M3, DType::F4E2M1}) {
    for (bool transposed : {false, true}) {
      SCOPED_TRACE(std::string(dtypeName(dt)) +
                   (transposed ? " transposed" : ""));
      CompileOptions opts;
      opts.precision = dtypeName(dt);
      auto kernel = sourceKernel(R"(
@kernel(grid=(1,))
def unpack(x: Tensor["R", "C", dtype], y: Tensor[4, 8, f32],
           g: Tensor[8, f32], idx: Tensor[8, i32]):
    t = tile.load(x, offsets=(1, 3), shape=(4, 8), other=-1.0)
    static_assert(t.dtype == f16)
    tile.store(y, t.to(f32), offsets=(0, 0))
    i = tile.load(idx, offsets=(0,), shape=(8,))
    r = tile.load(x, index=(i // 16, i % 16), mask=i != 5, other=2.0)
    tile.store(g, r.to(f32), offsets=(0,))
)",
                                 "unpack", opts);
      const int64_t R = 4, C = 13;
      HostTensor store = transposed ? HostTensor::empty({C, R}, dt)
                                    : HostTensor::empty({R, C}, dt);
      HostTensor x = transposed ? store.transposed(0, 1) : store;
      for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < C; ++c)
          x.set({r, c}, double((r * 7 + c * 3) % 11) * 0.25 - 1.25);
      HostTensor y = HostTensor::zeros({4, 8}, DType::F32);
      HostTensor gathered = HostTensor::zeros({8}, DType::F32);
      HostTensor idx = HostTensor::empty({8}, DType::I32);
      const int32_t picks[8] = {0, 12, 17, 40, 60, 5, 3 * 16 + 12, 64};
      for (int64_t i = 0; i < 8; ++i)
        idx.setAt(i, picks[i]);
      ASSERT_LAUNCH(kernel, {view(x), view(y), view(gathered), view(idx)});
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t c = 0; c < 8; ++c) {
          double want = r + 1 < R ? x.get({r + 1, c + 3}) : -1.0;
          EXPECT_EQ(y.get({r, c}), want) << r << ", " << c;
        }
      for (int64_t i = 0; i < 8; ++i) {
        int64_t row = picks[i] / 16, col = picks[i] % 16;
        double want =
            picks[i] == 5 || row >= R || col >= C ? 2.0 : x.get({row, col});
        EXPECT_EQ(gathered.at(i), want) << "pick " << picks[i];
      }
    }
  }
}

} // namespace
