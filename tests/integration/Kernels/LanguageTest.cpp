//===- LanguageTest.cpp - Language features end to end --------------------===//
//
// Small kernels, written inline, that exercise one feature of the language
// each (and the regressions found by porting kernels from Triton), run on
// the test device (cpu, sim or cuda, as the other kernel tests) against
// plain loops.
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"

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

} // namespace
