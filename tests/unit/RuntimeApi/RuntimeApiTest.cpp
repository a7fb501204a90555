//===- RuntimeApiTest.cpp - Runtime launch checks and compile cache -------===//

#include "tessera/Target/CUDA/Nvrtc.h"
#include "tessera/runtime/Runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace tessera;
using ::testing::HasSubstr;

namespace {

Runtime &rt() {
  static Runtime *r = new Runtime(RuntimeOptions{2});
  return *r;
}

const char *kSource = R"(
@kernel(grid=(cdiv(N, BLOCK),))
def scale(x: Tensor["N", f32], y: Tensor["N", f32], s: float, BLOCK: constexpr = 64):
    off = tile.program_id(0) * BLOCK
    v = tile.load(x, offsets=(off,), shape=(BLOCK,))
    tile.store(y, v * s, offsets=(off,))

@kernel
def pair(a: Tensor["M", "K", f16], b: Tensor["K", 4, f16], n: int):
    pass

@kernel(grid=(1,))
def first(x: Tensor["N", f32], y: Tensor["N", f32], BLOCK: constexpr = 64):
    off = tile.program_id(0) * BLOCK
    tile.store(y, tile.load(x, offsets=(off,), shape=(BLOCK,)) * 2.0,
               offsets=(off,))

@kernel(grid=(cdiv(N, BLOCK),))
def center(x: Tensor["N", f32], y: Tensor["N", f32], BLOCK: constexpr = 64):
    off = tile.program_id(0) * BLOCK
    v = tile.load(x, offsets=(off,), shape=(BLOCK,))
    tile.store(y, v - tile.max(v, axis=0), offsets=(off,))
)";

std::shared_ptr<Kernel> compileScale() {
  auto prog = rt().loadSource("test.tile", kSource);
  EXPECT_TRUE(prog.ok()) << prog.status().toString();
  auto k = rt().compile(**prog, "scale");
  EXPECT_TRUE(k.ok()) << k.status().toString();
  return *k;
}

TEST(RuntimeApi, LaunchComputes) {
  auto k = compileScale();
  std::vector<float> x(100), y(100, -1);
  for (int i = 0; i < 100; ++i)
    x[i] = float(i);
  Status s = k->launch({TensorView::contiguous(x.data(), DType::F32, {100}),
                        TensorView::contiguous(y.data(), DType::F32, {100}),
                        Arg(2.0)});
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(y[i], 2.0f * i);
}

// launchTimed runs the kernel like launch() and reports its time: the whole
// grid on cpu and sim; on cuda the kernel alone between CUDA events, after
// an L2 flush (skipped without a GPU).
TEST(RuntimeApi, LaunchTimedComputesAndReportsTheTime) {
  auto prog = rt().loadSource("test.tile", kSource);
  ASSERT_TRUE(prog.ok());
  for (DeviceKind d : {DeviceKind::Cpu, DeviceKind::Sim, DeviceKind::Cuda}) {
    auto k = rt().compile(**prog, "scale", {}, d);
    if (!k.ok()) {
      ASSERT_EQ(d, DeviceKind::Cuda) << k.status().toString();
      EXPECT_EQ(k.status().code(), StatusCode::kUnavailable);
      continue;
    }
    std::vector<float> x(1000), y(1000, -1);
    for (int i = 0; i < 1000; ++i)
      x[i] = float(i);
    for (bool flush : {false, true}) {
      auto ms = (*k)->launchTimed(
          {TensorView::contiguous(x.data(), DType::F32, {1000}),
           TensorView::contiguous(y.data(), DType::F32, {1000}), Arg(3.0)},
          {}, flush);
      ASSERT_TRUE(ms.ok()) << deviceKindName(d) << ": "
                           << ms.status().toString();
      EXPECT_GT(*ms, 0.0) << deviceKindName(d);
      EXPECT_LT(*ms, 60000.0) << deviceKindName(d);
      for (int i = 0; i < 1000; ++i)
        ASSERT_EQ(y[i], 3.0f * float(i)) << deviceKindName(d) << " " << i;
    }
    // Bad arguments are reported as by launch().
    auto bad = (*k)->launchTimed(
        {TensorView::contiguous(x.data(), DType::F16, {1000}),
         TensorView::contiguous(y.data(), DType::F32, {1000}), Arg(3.0)});
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  }
}

const char *kAxpySource = R"(
@kernel(grid=(cdiv(N, BLOCK),))
def axpy(x: Tensor["N", f32], y: Tensor["N", f32], a: float, BLOCK: constexpr = 64):
    off = tile.program_id(0) * BLOCK
    xv = tile.load(x, offsets=(off,), shape=(BLOCK,))
    yv = tile.load(y, offsets=(off,), shape=(BLOCK,))
    tile.store(y, yv + xv * a, offsets=(off,))
)";

// launchTimedBatch launches the kernel N times back to back: y += a * x
// accumulates N times, on host views and on device buffers, and the time
// of one launch is positive. On cuda (skipped without a GPU, where compiling
// is UNAVAILABLE) the launches run between two events without a host
// synchronisation between them.
TEST(RuntimeApi, LaunchTimedBatchLaunchesNTimes) {
  auto prog = rt().loadSource("axpy.tile", kAxpySource);
  ASSERT_TRUE(prog.ok()) << prog.status().toString();
  const int n = 1000;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = float(i % 17);
  for (DeviceKind d : {DeviceKind::Cpu, DeviceKind::Sim, DeviceKind::Cuda}) {
    SCOPED_TRACE(deviceKindName(d));
    auto k = rt().compile(**prog, "axpy", {}, d);
    if (!k.ok()) {
      ASSERT_EQ(d, DeviceKind::Cuda) << k.status().toString();
      EXPECT_EQ(k.status().code(), StatusCode::kUnavailable);
      continue;
    }
    for (int launches : {1, 5}) {
      for (bool flush : {false, true}) {
        std::vector<float> y(n, 1.0f);
        auto ms = (*k)->launchTimedBatch(
            {TensorView::contiguous(x.data(), DType::F32, {n}),
             TensorView::contiguous(y.data(), DType::F32, {n}), Arg(0.5)},
            {}, launches, flush);
        ASSERT_TRUE(ms.ok()) << ms.status().toString();
        EXPECT_GT(*ms, 0.0);
        EXPECT_LT(*ms, 60000.0);
        for (int i = 0; i < n; ++i)
          ASSERT_EQ(y[i], 1.0f + float(launches) * 0.5f * x[i])
              << launches << " launches, element " << i;
      }
    }
    // Device-resident data: the batch works on the buffers in place.
    auto bx = rt().allocate(d, n * sizeof(float));
    auto by = rt().allocate(d, n * sizeof(float));
    ASSERT_TRUE(bx.ok() && by.ok());
    std::vector<float> ones(n, 1.0f), y(n, 0.0f);
    ASSERT_TRUE(bx->copyFrom(x.data(), n * sizeof(float)).ok());
    ASSERT_TRUE(by->copyFrom(ones.data(), n * sizeof(float)).ok());
    auto vx = bx->view(DType::F32, {n});
    auto vy = by->view(DType::F32, {n});
    ASSERT_TRUE(vx.ok() && vy.ok());
    auto ms = (*k)->launchTimedBatch({*vx, *vy, Arg(0.25)}, {}, 8);
    ASSERT_TRUE(ms.ok()) << ms.status().toString();
    EXPECT_GT(*ms, 0.0);
    ASSERT_TRUE(by->copyTo(y.data(), n * sizeof(float)).ok());
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(y[i], 1.0f + 8 * 0.25f * x[i]) << "element " << i;
    // No launch at all is an error, and so are bad arguments; nothing runs.
    auto none = (*k)->launchTimedBatch({*vx, *vy, Arg(0.25)}, {}, 0);
    EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(none.status().message(), HasSubstr("at least one launch"));
    auto bad = (*k)->launchTimedBatch(
        {TensorView::contiguous(x.data(), DType::F16, {n}), *vy, Arg(1.0)}, {},
        3);
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
    ASSERT_TRUE(by->copyTo(y.data(), n * sizeof(float)).ok());
    EXPECT_EQ(y[1], 1.0f + 8 * 0.25f * x[1]);
  }
}

// Runtime::timeBatch times calls that queue device work (a library call, on
// cuda) as launchTimedBatch times launches: the calls are made N times in a
// row, the time is that of one, an error stops the batch. On cuda without a
// GPU it is UNAVAILABLE before anything is called.
TEST(RuntimeApi, TimeBatchCallsNTimes) {
  auto prog = rt().loadSource("axpy2.tile", kAxpySource);
  ASSERT_TRUE(prog.ok()) << prog.status().toString();
  const int n = 256;
  std::vector<float> x(n, 2.0f);
  for (DeviceKind d : {DeviceKind::Cpu, DeviceKind::Sim, DeviceKind::Cuda}) {
    SCOPED_TRACE(deviceKindName(d));
    int calls = 0;
    if (!rt().deviceStatus(d).ok()) {
      ASSERT_EQ(d, DeviceKind::Cuda);
      auto t = rt().timeBatch(
          d,
          [&] {
            ++calls;
            return okStatus();
          },
          4);
      EXPECT_EQ(t.status().code(), StatusCode::kUnavailable)
          << t.status().toString();
      EXPECT_EQ(calls, 0);
      continue;
    }
    auto k = rt().compile(**prog, "axpy", {}, d);
    ASSERT_TRUE(k.ok()) << k.status().toString();
    std::vector<float> y(n, 0.0f);
    std::vector<Arg> args{TensorView::contiguous(x.data(), DType::F32, {n}),
                          TensorView::contiguous(y.data(), DType::F32, {n}),
                          Arg(1.0)};
    for (bool flush : {false, true}) {
      calls = 0;
      std::fill(y.begin(), y.end(), 0.0f);
      auto t = rt().timeBatch(
          d,
          [&] {
            ++calls;
            return (*k)->launch(args);
          },
          6, flush);
      ASSERT_TRUE(t.ok()) << t.status().toString();
      EXPECT_GT(*t, 0.0);
      EXPECT_EQ(calls, 6);
      EXPECT_EQ(y[0], 12.0f);
      EXPECT_EQ(y[n - 1], 12.0f);
    }
    // The first error ends the batch and is returned.
    calls = 0;
    auto failing = rt().timeBatch(
        d,
        [&] {
          return ++calls == 3 ? Status(StatusCode::kInternal, "third call")
                              : okStatus();
        },
        10);
    EXPECT_EQ(failing.status().code(), StatusCode::kInternal);
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(rt().timeBatch(
                      d, [] { return okStatus(); }, 0)
                  .status()
                  .code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(rt().timeBatch(d, nullptr, 2).status().code(),
              StatusCode::kInvalidArgument);
  }
}

// The code fingerprint is what lets the autotuner time identical code once:
// num_warps does not change the CPU code, the block size does.
TEST(RuntimeApi, CodeFingerprintTellsIdenticalCodeApart) {
  auto prog = rt().loadSource("test.tile", kSource);
  ASSERT_TRUE(prog.ok());
  auto fingerprint = [&](int64_t block, int64_t warps) -> uint64_t {
    CompileOptions o;
    o.constants = {{"BLOCK", ConstValue::integer(block)},
                   {"num_warps", ConstValue::integer(warps)}};
    auto k = rt().compile(**prog, "scale", o);
    EXPECT_TRUE(k.ok()) << k.status().toString();
    return k.ok() ? (*k)->codeFingerprint() : 0;
  };
  uint64_t a = fingerprint(64, 4);
  EXPECT_NE(a, 0u);
  EXPECT_EQ(fingerprint(64, 8), a);
  EXPECT_NE(fingerprint(128, 4), a);
}

TEST(RuntimeApi, CompileCacheHitsReturnTheSameKernel) {
  auto prog = rt().loadSource("cache.tile", kSource);
  ASSERT_TRUE(prog.ok());
  auto before = rt().cacheStats();
  auto k1 = rt().compile(**prog, "scale");
  auto k2 = rt().compile(**prog, "scale");
  ASSERT_TRUE(k1.ok() && k2.ok());
  EXPECT_EQ(k1->get(), k2->get());
  auto after = rt().cacheStats();
  EXPECT_EQ(after.hits, before.hits + 1);
  // A different specialisation is a different kernel.
  auto k3 = rt().compile(**prog, "scale",
                         {.constants = {{"BLOCK", ConstValue::integer(32)}}});
  ASSERT_TRUE(k3.ok());
  EXPECT_NE(k1->get(), k3->get());
}

// The grid a launch's shapes decide is reused for repeated shapes and
// re-evaluated when they change (back and forth).
TEST(RuntimeApi, GridFollowsEachLaunchsShapes) {
  auto k = compileScale();
  std::vector<float> x(1000), y(1000);
  for (int64_t n : {64, 1000, 65, 64, 1000, 0}) {
    auto grid =
        k->check({TensorView::contiguous(x.data(), DType::F32, {n}),
                  TensorView::contiguous(y.data(), DType::F32, {n}), Arg(1.0)});
    ASSERT_TRUE(grid.ok()) << grid.status().toString();
    EXPECT_EQ((*grid)[0], (n + 63) / 64) << n;
  }
}

TEST(RuntimeApi, WrongDTypeNamesTheParameter) {
  auto k = compileScale();
  std::vector<double> x(10);
  std::vector<float> y(10);
  Status s =
      k->launch({TensorView::contiguous(x.data(), DType::F16, {10}),
                 TensorView::contiguous(y.data(), DType::F32, {10}), Arg(1.0)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("parameter 'x' expects a f32 tensor"));
}

TEST(RuntimeApi, InconsistentShapeSymbol) {
  auto k = compileScale();
  std::vector<float> x(10), y(12);
  Status s =
      k->launch({TensorView::contiguous(x.data(), DType::F32, {10}),
                 TensorView::contiguous(y.data(), DType::F32, {12}), Arg(1.0)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("shape symbol 'N' is 10"));
  EXPECT_THAT(s.message(), HasSubstr("'y'"));
}

TEST(RuntimeApi, WrongRankCountAndScalarKind) {
  auto k = compileScale();
  std::vector<float> x(10), y(10);
  TensorView xv = TensorView::contiguous(x.data(), DType::F32, {10});
  TensorView y2 = TensorView::contiguous(y.data(), DType::F32, {2, 5});
  Status s = k->launch({xv, y2, Arg(1.0)});
  EXPECT_THAT(s.message(),
              HasSubstr("parameter 'y' expects a tensor of rank 1"));
  s = k->launch({xv, xv});
  EXPECT_THAT(s.message(), HasSubstr("takes 3 launch arguments"));
  s = k->launch({xv, xv, Arg(xv)});
  EXPECT_THAT(s.message(), HasSubstr("parameter 's' expects a scalar"));
}

TEST(RuntimeApi, BadStridesAndNullData) {
  auto k = compileScale();
  std::vector<float> y(10);
  TensorView bad = TensorView::contiguous(y.data(), DType::F32, {10});
  bad.strides = {-1};
  Status s = k->launch({bad, bad, Arg(1.0)});
  EXPECT_THAT(s.message(), HasSubstr("negative stride"));
  TensorView null = TensorView::contiguous(nullptr, DType::F32, {10});
  s = k->launch({null, null, Arg(1.0)});
  EXPECT_THAT(s.message(), HasSubstr("null data pointer"));
}

TEST(RuntimeApi, FixedDimensionIsChecked) {
  auto prog = rt().loadSource("pair.tile", kSource);
  ASSERT_TRUE(prog.ok());
  auto k = rt().compile(**prog, "pair");
  ASSERT_TRUE(k.ok()) << k.status().toString();
  std::vector<uint16_t> a(12), b(15);
  auto s = (*k)->check({TensorView::contiguous(a.data(), DType::F16, {4, 3}),
                        TensorView::contiguous(b.data(), DType::F16, {3, 5}),
                        Arg(int64_t(1))},
                       {.grid = {{1, 1, 1}}});
  EXPECT_THAT(s.status().message(),
              HasSubstr("parameter 'b' dimension 1 must be 4"));
  s = (*k)->check({TensorView::contiguous(a.data(), DType::F16, {4, 3}),
                   TensorView::contiguous(b.data(), DType::F16, {3, 4}),
                   Arg(1.5)},
                  {.grid = {{1, 1, 1}}});
  EXPECT_THAT(s.status().message(), HasSubstr("parameter 'n' expects an int"));
  // No declared grid and none given.
  s = (*k)->check({TensorView::contiguous(a.data(), DType::F16, {4, 3}),
                   TensorView::contiguous(b.data(), DType::F16, {3, 4}),
                   Arg(int64_t(1))});
  EXPECT_THAT(s.status().message(), HasSubstr("declares no grid"));
}

TEST(RuntimeApi, SourceErrorsAreRendered) {
  auto prog = rt().loadSource(
      "bad.tile", "@kernel\ndef k(x: Tensor[\"N\", f33]):\n    pass\n");
  ASSERT_FALSE(prog.ok());
  EXPECT_THAT(prog.status().message(), HasSubstr("bad.tile:2:"));
  EXPECT_THAT(prog.status().message(), HasSubstr("^"));
}

TEST(RuntimeApi, UnknownKernelAndConstant) {
  auto prog = rt().loadSource("u.tile", kSource);
  ASSERT_TRUE(prog.ok());
  auto k = rt().compile(**prog, "nope");
  EXPECT_EQ(k.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(k.status().message(), HasSubstr("kernels: scale, pair"));
  k = rt().compile(**prog, "scale",
                   {.constants = {{"BLOK", ConstValue::integer(3)}}});
  EXPECT_THAT(k.status().message(),
              HasSubstr("unknown specialisation constant 'BLOK'"));
}

TEST(RuntimeApi, DevicesReportCleanly) {
  EXPECT_TRUE(rt().deviceStatus(DeviceKind::Cpu).ok());
  // Where there is no GPU or driver, `cuda` is UNAVAILABLE with the reason,
  // and compiling for it says the same; nothing else is affected.
  Status cuda = rt().deviceStatus(DeviceKind::Cuda);
  if (!cuda.ok()) {
    EXPECT_EQ(cuda.code(), StatusCode::kUnavailable) << cuda.toString();
    EXPECT_THAT(cuda.message(), HasSubstr("'cuda' device is unavailable"));
    auto prog = rt().loadSource("c.tile", kSource);
    ASSERT_TRUE(prog.ok());
    auto k = rt().compile(**prog, "scale", {}, DeviceKind::Cuda);
    EXPECT_EQ(k.status().code(), StatusCode::kUnavailable);
    EXPECT_TRUE(rt().compile(**prog, "scale", {}, DeviceKind::Cpu).ok());
  }
  EXPECT_TRUE(rt().deviceStatus(DeviceKind::Sim).ok());
}

TEST(RuntimeApi, SimRunsTheGpuLowering) {
  auto prog = rt().loadSource("d.tile", kSource);
  auto k = rt().compile(**prog, "scale", {}, DeviceKind::Sim);
  ASSERT_TRUE(k.ok()) << k.status().toString();
  EXPECT_EQ((*k)->device(), DeviceKind::Sim);
  // The same source and options on cpu is a different cache entry.
  auto kc = rt().compile(**prog, "scale", {}, DeviceKind::Cpu);
  ASSERT_TRUE(kc.ok());
  EXPECT_NE(k->get(), kc->get());
  std::vector<float> x(150), y(150, -1);
  for (int i = 0; i < 150; ++i)
    x[i] = float(i);
  Status s = (*k)->launch({TensorView::contiguous(x.data(), DType::F32, {150}),
                           TensorView::contiguous(y.data(), DType::F32, {150}),
                           Arg(3.0)});
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int i = 0; i < 150; ++i)
    EXPECT_EQ(y[i], 3.0f * float(i)) << i;
  // Launch checks are the same as on cpu.
  s = (*k)->launch({TensorView::contiguous(x.data(), DType::F16, {150}),
                    TensorView::contiguous(y.data(), DType::F32, {150}),
                    Arg(3.0)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

// The 31-bit code of `first` takes program ids to be below its declared
// grid (the sim refuses launches beyond what the code assumes); a larger
// grid given at launch runs the 64-bit code.
TEST(RuntimeApi, GridsBeyondTheIndex32BoundRunThe64BitCode) {
  auto prog = rt().loadSource("first.tile", kSource);
  ASSERT_TRUE(prog.ok());
  auto k = rt().compile(**prog, "first", {}, DeviceKind::Sim);
  ASSERT_TRUE(k.ok()) << k.status().toString();
  std::vector<float> x(256), y(256, -1);
  for (int i = 0; i < 256; ++i)
    x[i] = float(i);
  auto launch = [&](std::optional<std::array<int64_t, 3>> grid) {
    return (*k)->launch({TensorView::contiguous(x.data(), DType::F32, {256}),
                         TensorView::contiguous(y.data(), DType::F32, {256})},
                        {.grid = grid});
  };
  Status s = launch(std::nullopt);
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_EQ(y[63], 126.0f);
  EXPECT_EQ(y[64], -1.0f);
  s = launch(std::array<int64_t, 3>{4, 1, 1});
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int i = 0; i < 256; ++i)
    EXPECT_EQ(y[i], 2.0f * float(i)) << i;
}

// On its declared grid, `rows` takes program r to be below R and does not
// test the row index; a grid given at launch within the declared one keeps
// that code, a larger one runs code that tests it (the sim reports the
// accesses past the last row otherwise).
TEST(RuntimeApi, GridsBeyondTheDeclaredGridTestProgramIds) {
  const char *src = R"(
@kernel(grid=(R,))
def rows(x: Tensor["R", "C", f32], y: Tensor["R", "C", f32],
         BLOCK: constexpr = 32):
    r = tile.program_id(0)
    v = tile.load(x, offsets=(r, 0), shape=(1, BLOCK))
    tile.store(y, v * 2.0, offsets=(r, 0))
)";
  auto prog = rt().loadSource("rows.tile", src);
  ASSERT_TRUE(prog.ok()) << prog.status().toString();
  auto k = rt().compile(**prog, "rows", {}, DeviceKind::Sim);
  ASSERT_TRUE(k.ok()) << k.status().toString();
  constexpr int kRows = 5, kCols = 32;
  std::vector<float> x(kRows * kCols), y;
  for (int i = 0; i < kRows * kCols; ++i)
    x[i] = float(i);
  auto launch = [&](std::optional<std::array<int64_t, 3>> grid) {
    y.assign(kRows * kCols, -1.0f);
    return (*k)->launch(
        {TensorView::contiguous(x.data(), DType::F32, {kRows, kCols}),
         TensorView::contiguous(y.data(), DType::F32, {kRows, kCols})},
        {.grid = grid});
  };
  for (auto grid : {std::optional<std::array<int64_t, 3>>{},
                    std::optional(std::array<int64_t, 3>{kRows + 3, 1, 1}),
                    std::optional(std::array<int64_t, 3>{kRows, 2, 1})}) {
    Status s = launch(grid);
    ASSERT_TRUE(s.ok()) << s.toString();
    for (int i = 0; i < kRows * kCols; ++i)
      EXPECT_EQ(y[i], 2.0f * float(i)) << i;
  }
  Status s = launch(std::array<int64_t, 3>{kRows - 2, 1, 1});
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_EQ(y[(kRows - 3) * kCols], 2.0f * float((kRows - 3) * kCols));
  EXPECT_EQ(y[(kRows - 2) * kCols], -1.0f);
}

// @heuristics constexprs follow each launch's shapes: one Kernel runs the
// variant its shapes select, on cpu and sim alike; a specialisation that
// fixes such a constexpr is refused by a launch whose shapes disagree.
TEST(RuntimeApi, HeuristicsFollowTheLaunchShapes) {
  const char *src = R"(
@kernel(grid=(1,))
@heuristics(SMALL=N <= 8)
def fill(x: Tensor["N", f32], SMALL: bool = False):
    if SMALL:
        tile.store(x, tile.zeros((8,), f32) + 1.0, offsets=(0,))
    else:
        tile.store(x, tile.zeros((8,), f32) + 2.0, offsets=(0,))
)";
  auto prog = rt().loadSource("heuristics.tile", src);
  ASSERT_TRUE(prog.ok()) << prog.status().toString();
  for (DeviceKind device : {DeviceKind::Cpu, DeviceKind::Sim}) {
    auto k = rt().compile(**prog, "fill", {}, device);
    ASSERT_TRUE(k.ok()) << k.status().toString();
    for (int64_t n : {4, 20, 8, 9}) {
      std::vector<float> x(size_t(n), 0.0f);
      Status s =
          (*k)->launch({TensorView::contiguous(x.data(), DType::F32, {n})});
      ASSERT_TRUE(s.ok()) << s.toString();
      for (int64_t i = 0; i < std::min<int64_t>(n, 8); ++i)
        EXPECT_EQ(x[size_t(i)], n <= 8 ? 1.0f : 2.0f)
            << deviceKindName(device) << " N=" << n << " i=" << i;
    }
    CompileOptions fixed;
    fixed.constants["SMALL"] = ConstValue::boolean(true);
    auto kf = rt().compile(**prog, "fill", fixed, device);
    ASSERT_TRUE(kf.ok()) << kf.status().toString();
    std::vector<float> x(20, 0.0f);
    Status s =
        (*kf)->launch({TensorView::contiguous(x.data(), DType::F32, {20})});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("@heuristics give False"));
    EXPECT_EQ(x[0], 0.0f);
  }
}

TEST(RuntimeApi, SimRejectsTilesThatDoNotFitInRegisters) {
  auto prog = rt().loadSource("d.tile", kSource);
  // 65536 f32 elements per tile on 128 threads: 512 registers per thread
  // for the loaded block alone.
  auto k = rt().compile(**prog, "center",
                        {.constants = {{"BLOCK", ConstValue::integer(65536)}}},
                        DeviceKind::Sim);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(k.status().message(), HasSubstr("512 registers per thread"));
}

} // namespace

namespace {

const char *kSaxpyCu = R"(
template <typename T>
__global__ void saxpy(const T *x, T *y, float a, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
)";

CudaKernelSource saxpySource() {
  CudaKernelSource src;
  src.name = "saxpy.cu";
  src.source = kSaxpyCu;
  src.kernel = "saxpy<float>";
  src.signature =
      R"(x: Tensor["N", f32], y: Tensor["N", f32], a: float, n: int)";
  src.grid = "(cdiv(N, 128),)";
  src.block = {128, 1, 1};
  return src;
}

} // namespace

TEST(RuntimeApi, CudaSourceCompileErrorsCarryTheNvrtcLog) {
  if (Status nvrtc = cuda::nvrtcAvailable(); !nvrtc.ok())
    GTEST_SKIP() << nvrtc.toString();
  CudaKernelSource src = saxpySource();
  src.source = "__global__ void saxpy(float *x) { x[0] = undeclared_name; }\n";
  src.kernel = "saxpy";
  src.signature = R"(x: Tensor["N", f32])";
  auto k = rt().compileCuda(src);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument)
      << k.status().toString();
  EXPECT_THAT(k.status().message(), HasSubstr("saxpy.cu"));
  EXPECT_THAT(k.status().message(), HasSubstr("undeclared_name"));
}

// The usage example of Runtime.h's header comment, line for line (the
// library path made absolute): it must compile and compute.
Status headerExample(const std::string &vectorOps, std::vector<float> &y) {
  tessera::Runtime rt;
  auto prog = rt.loadFile(vectorOps);
  if (!prog.ok())
    return prog.status();
  auto axpy = rt.compile(**prog, "axpy", {.constants = {{"BLOCK_SIZE", 1024}}});
  if (!axpy.ok())
    return axpy.status();
  std::vector<float> x(1000, 1.0f);
  y.assign(1000, 2.0f);
  int64_t n = int64_t(x.size());
  return (*axpy)->launch(
      {tessera::TensorView::contiguous(x.data(), tessera::DType::F32, {n}),
       tessera::TensorView::contiguous(y.data(), tessera::DType::F32, {n}),
       2.0}); // y = 2 x + y
}

TEST(RuntimeApi, HeaderExample) {
  const char *root = std::getenv("TESSERA_SOURCE_DIR");
  ASSERT_NE(root, nullptr) << "ctest sets TESSERA_SOURCE_DIR";
  std::vector<float> y;
  Status s =
      headerExample(std::string(root) + "/kernels_dsl/vector_ops.tile", y);
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_THAT(y, ::testing::Each(4.0f));
}

// Constants and launch scalars from plain C++ values.
TEST(RuntimeApi, ConstantsFromPlainValues) {
  std::map<std::string, ConstValue> c = {{"I", 1024},       {"L", int64_t(7)},
                                         {"F", 1.5},        {"B", true},
                                         {"D", DType::F16}, {"S", "axpy"}};
  EXPECT_EQ(c["I"], ConstValue::integer(1024));
  EXPECT_EQ(c["L"], ConstValue::integer(7));
  EXPECT_EQ(c["F"], ConstValue::floating(1.5));
  EXPECT_EQ(c["B"], ConstValue::boolean(true));
  EXPECT_EQ(c["D"], ConstValue::dtype(DType::F16));
  EXPECT_EQ(c["S"], ConstValue::string("axpy"));
}

TEST(RuntimeApi, CudaSourceSignatureAndDeviceAreChecked) {
  CudaKernelSource src = saxpySource();
  src.signature = "x: Tensor[";
  auto k = rt().compileCuda(src);
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(k.status().message(), HasSubstr("signature of CUDA kernel"));
  k = rt().compileCuda(saxpySource(), DeviceKind::Cpu);
  EXPECT_EQ(k.status().code(), StatusCode::kUnimplemented);
  src = saxpySource();
  src.block = {2048, 1, 1};
  EXPECT_EQ(rt().compileCuda(src).status().code(),
            StatusCode::kInvalidArgument);
}

// What a user with a GPU runs: the CUDA C++ kernel through the same launch
// call as tile kernels. Without a GPU, valid source compiles with NVRTC and
// the result says the device is unavailable.
TEST(RuntimeApi, CudaSourceKernelLaunches) {
  auto k = rt().compileCuda(saxpySource());
  if (!k.ok()) {
    EXPECT_EQ(k.status().code(), StatusCode::kUnavailable)
        << k.status().toString();
    GTEST_SKIP() << k.status().toString();
  }
  std::vector<float> x(1000), y(1000);
  for (int i = 0; i < 1000; ++i) {
    x[i] = float(i);
    y[i] = 1.0f;
  }
  Status s = (*k)->launch({TensorView::contiguous(x.data(), DType::F32, {1000}),
                           TensorView::contiguous(y.data(), DType::F32, {1000}),
                           Arg(2.0), Arg(int64_t(1000))});
  ASSERT_TRUE(s.ok()) << s.toString();
  for (int i = 0; i < 1000; ++i)
    EXPECT_EQ(y[i], 2.0f * float(i) + 1.0f) << i;
  // The launch checks are the tile kernels' ones.
  s = (*k)->launch({TensorView::contiguous(x.data(), DType::F16, {1000}),
                    TensorView::contiguous(y.data(), DType::F32, {1000}),
                    Arg(2.0), Arg(int64_t(1000))});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

namespace {

// Device buffers: kernels on cpu and sim read and write views of them in
// place; data goes in and out through copyFrom/copyTo.
TEST(RuntimeApi, DeviceBuffersRoundTripThroughALaunch) {
  auto prog = rt().loadSource("devmem.tile", kSource);
  ASSERT_TRUE(prog.ok());
  for (DeviceKind dev : {DeviceKind::Cpu, DeviceKind::Sim}) {
    auto k = rt().compile(**prog, "scale", {}, dev);
    ASSERT_TRUE(k.ok()) << k.status().toString();
    std::vector<float> x(100);
    for (int i = 0; i < 100; ++i)
      x[i] = float(i);
    auto bx = rt().allocate(dev, x.size() * sizeof(float));
    auto by = rt().allocate(dev, x.size() * sizeof(float));
    ASSERT_TRUE(bx.ok() && by.ok());
    EXPECT_EQ(bx->device(), dev);
    EXPECT_EQ(bx->bytes(), 400u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(bx->data()) % 64, 0u);
    ASSERT_TRUE(bx->copyFrom(x.data(), 400).ok());
    auto vx = bx->view(DType::F32, {100});
    auto vy = by->view(DType::F32, {100});
    ASSERT_TRUE(vx.ok() && vy.ok());
    EXPECT_EQ(vx->device, dev);
    Status s = (*k)->launch({*vx, *vy, Arg(3.0)});
    ASSERT_TRUE(s.ok()) << deviceKindName(dev) << ": " << s.toString();
    std::vector<float> y(100, -1);
    ASSERT_TRUE(by->copyTo(y.data(), 400).ok());
    for (int i = 0; i < 100; ++i)
      EXPECT_EQ(y[i], 3.0f * i) << deviceKindName(dev) << " " << i;
  }
}

TEST(RuntimeApi, DeviceBufferMisuseIsReported) {
  auto prog = rt().loadSource("devmem2.tile", kSource);
  ASSERT_TRUE(prog.ok());
  auto onSim = rt().compile(**prog, "scale", {}, DeviceKind::Sim);
  ASSERT_TRUE(onSim.ok());
  auto b = rt().allocate(DeviceKind::Cpu, 64 * sizeof(float));
  ASSERT_TRUE(b.ok());
  auto v = b->view(DType::F32, {64});
  ASSERT_TRUE(v.ok());
  // A cpu buffer passed to a sim kernel names the parameter and both
  // devices.
  Status s = (*onSim)->launch({*v, *v, Arg(1.0)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'x'"));
  EXPECT_THAT(s.message(), HasSubstr("is in cpu device memory; this kernel "
                                     "runs on sim"));
  // Copies and views outside the buffer.
  std::vector<float> host(65);
  s = b->copyFrom(host.data(), 65 * sizeof(float));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("outside the 256-byte cpu buffer"));
  s = b->copyTo(host.data(), 8, 252);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  auto big = b->view(DType::F32, {65});
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(big.status().message(), HasSubstr("the buffer has 256"));
  EXPECT_EQ(b->view(DType::F32, {-1}).status().code(),
            StatusCode::kInvalidArgument);
  // An empty (moved-from) buffer.
  DeviceBuffer moved = std::move(*b);
  EXPECT_EQ(b->copyFrom(host.data(), 4).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(moved.bytes(), 256u);
}

// Without a GPU, allocating on cuda reports the device as unavailable.
TEST(RuntimeApi, CudaAllocationWithoutADeviceIsUnavailable) {
  Status dev = rt().deviceStatus(DeviceKind::Cuda);
  if (dev.ok())
    GTEST_SKIP() << "a cuda device is present";
  auto b = rt().allocate(DeviceKind::Cuda, 1024);
  EXPECT_EQ(b.status().code(), dev.code());
  EXPECT_THAT(b.status().message(), HasSubstr("unavailable"));
}

} // namespace
