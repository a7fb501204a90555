//===- DenseKernelsTest.cpp - gemm, softmax, layernorm, attention on cpu --===//

#include "KernelTest.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

using namespace tessera;
using namespace tessera::testing;
namespace ref = tessera::testing;

namespace {

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

struct GemmCase {
  DType dtype;
  int64_t m, n, k;
  bool transA, transB;
  /// Precision policy "tf32": f32 data, products on tf32 tensor cores where
  /// the device has them.
  bool tf32 = false;
};

std::string gemmName(const ::testing::TestParamInfo<GemmCase> &i) {
  const GemmCase &c = i.param;
  return std::string(c.tf32 ? "tf32" : dtypeName(c.dtype)) + "_" +
         std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
         std::to_string(c.k) + (c.transA ? "_tA" : "") +
         (c.transB ? "_tB" : "");
}

std::vector<GemmCase> gemmCases() {
  std::vector<GemmCase> v;
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F8E4M3})
    for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
             {1, 1, 1}, {7, 5, 3}, {64, 64, 64}, {100, 37, 129}, {130, 70, 33}})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          v.push_back({t, m, n, k, ta, tb});
  for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
           {7, 5, 3}, {64, 64, 64}, {100, 37, 129}, {130, 70, 33}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        v.push_back({DType::F32, m, n, k, ta, tb, /*tf32=*/true});
  // The packed types, read element by element (rows of odd length start
  // inside a byte).
  for (DType t : {DType::F6E3M2, DType::F6E2M3, DType::F4E2M1})
    for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
             {7, 5, 3}, {64, 64, 64}, {100, 37, 129}})
      for (bool ta : {false, true})
        v.push_back({t, m, n, k, ta, !ta});
  return v;
}

class Gemm : public ::testing::TestWithParam<GemmCase> {};

TEST_P(Gemm, AlphaBeta) {
  const GemmCase &c = GetParam();
  CompileOptions opts;
  opts.precision =
      std::string(c.tf32 ? "tf32" : dtypeName(c.dtype)) + "@accum(fp32)";
  opts.constants = {{"TRANS_A", ConstValue::boolean(c.transA)},
                    {"TRANS_B", ConstValue::boolean(c.transB)},
                    {"BLOCK_M", ConstValue::integer(32)},
                    {"BLOCK_N", ConstValue::integer(32)},
                    {"BLOCK_K", ConstValue::integer(16)}};
  auto kernel = libraryKernel("gemm", "gemm", opts);
  // Stored operands (transposed storage when the flag is set).
  HostTensor a = c.transA ? HostTensor::empty({c.k, c.m}, c.dtype)
                          : HostTensor::empty({c.m, c.k}, c.dtype);
  HostTensor b = c.transB ? HostTensor::empty({c.n, c.k}, c.dtype)
                          : HostTensor::empty({c.k, c.n}, c.dtype);
  HostTensor cm = HostTensor::empty({c.m, c.n}, DType::F32);
  fillUniform(a, 31);
  fillUniform(b, 32);
  fillUniform(cm, 33);
  HostTensor expected = cm.clone();
  ref::gemm(c.transA ? a.transposed(0, 1) : a,
            c.transB ? b.transposed(0, 1) : b, expected, 0.75, 0.5);
  ASSERT_LAUNCH(kernel, {view(a), view(b), view(cm), Arg(0.75), Arg(0.5)});
  // fp6/fp4 products are f16 products of the decoded values (exact in f16):
  // f16's tolerance, not the packed type's (docs/testing.md).
  EXPECT_CLOSE(cm, expected,
               c.tf32 ? tf32GemmTolerance(c.k)
               : isPackedDType(c.dtype)
                   ? toleranceFor(DType::F16, Op::Gemm, c.k)
                   : toleranceFor(c.dtype, Op::Gemm, c.k));
}

INSTANTIATE_TEST_SUITE_P(Cpu, Gemm, ::testing::ValuesIn(gemmCases()), gemmName);

TEST(GemmEdge, BetaZeroIgnoresNaNInC) {
  auto kernel =
      libraryKernel("gemm", "gemm",
                    {.constants = {{"BLOCK_M", ConstValue::integer(32)},
                                   {"BLOCK_N", ConstValue::integer(32)},
                                   {"BLOCK_K", ConstValue::integer(16)}}});
  HostTensor a = HostTensor::empty({40, 20}, DType::F32);
  HostTensor b = HostTensor::empty({20, 50}, DType::F32);
  HostTensor c = HostTensor::full({40, 50}, DType::F32,
                                  std::numeric_limits<double>::quiet_NaN());
  fillUniform(a, 1);
  fillUniform(b, 2);
  HostTensor expected = HostTensor::zeros({40, 50}, DType::F32);
  ref::gemm(a, b, expected, 1.0, 0.0);
  ASSERT_LAUNCH(kernel, {view(a), view(b), view(c), Arg(1.0), Arg(0.0)});
  EXPECT_CLOSE(c, expected, toleranceFor(DType::F32, Op::Gemm, 20));
}

TEST(GemmEdge, NonContiguousViews) {
  // A is a column-sliced view with a row stride larger than its width; B is
  // a transposed view of row-major storage (TRANS_B = False).
  auto kernel =
      libraryKernel("gemm", "gemm",
                    {.constants = {{"BLOCK_M", ConstValue::integer(32)},
                                   {"BLOCK_N", ConstValue::integer(32)},
                                   {"BLOCK_K", ConstValue::integer(16)}}});
  HostTensor abig = HostTensor::empty({45, 80}, DType::F32);
  fillUniform(abig, 3);
  HostTensor a = abig.slice(1, 10, 40); // [45, 30], row stride 80
  HostTensor bstore = HostTensor::empty({33, 30}, DType::F32);
  fillUniform(bstore, 4);
  HostTensor b = bstore.transposed(0, 1); // [30, 33], strides (1, 30)
  HostTensor c = HostTensor::zeros({45, 33}, DType::F32);
  HostTensor expected = c.clone();
  ref::gemm(a, b, expected, 1.0, 0.0);
  ASSERT_LAUNCH(kernel, {view(a), view(b), view(c), Arg(1.0), Arg(0.0)});
  EXPECT_CLOSE(c, expected, toleranceFor(DType::F32, Op::Gemm, 30));
}

// On the GPU path 16-bit tile loads copy 16-byte chunks with cp.async when
// the tensor and the shared tile are aligned at run time, element by
// element otherwise. Both views below hold the same values: one starts on
// an aligned element with an aligned row stride (64 halves), the other one
// element later with an odd row stride (65 halves), so each takes a
// different path; both must give the reference result.
TEST(GemmEdge, F16AlignedAndMisalignedViews) {
  auto kernel =
      libraryKernel("gemm", "gemm",
                    {.constants = {{"BLOCK_M", ConstValue::integer(32)},
                                   {"BLOCK_N", ConstValue::integer(32)},
                                   {"BLOCK_K", ConstValue::integer(16)}},
                     .precision = "f16@accum(fp32)"});
  const int64_t m = 40, n = 36, k = 50;
  for (int64_t stride : {64, 65}) {
    int64_t start = stride == 64 ? 0 : 1;
    HostTensor abig = HostTensor::empty({m + 1, stride}, DType::F16);
    HostTensor bbig = HostTensor::empty({k + 1, stride}, DType::F16);
    fillUniform(abig, 5);
    fillUniform(bbig, 6);
    HostTensor a = abig.slice(1, start, start + k).slice(0, 0, m);
    HostTensor b = bbig.slice(1, start, start + n).slice(0, 0, k);
    HostTensor c = HostTensor::zeros({m, n}, DType::F32);
    HostTensor expected = c.clone();
    ref::gemm(a, b, expected, 1.0, 0.0);
    ASSERT_LAUNCH(kernel, {view(a), view(b), view(c), Arg(1.0), Arg(0.0)});
    EXPECT_CLOSE(c, expected, toleranceFor(DType::F16, Op::Gemm, k))
        << "row stride " << stride;
  }
}

/// The gemm kernel with BLOCK_M x BLOCK_N x BLOCK_K tiles, `warps` warps
/// and `stages` pipeline stages, compiled for `precision`.
std::shared_ptr<Kernel> gemmKernel(const std::string &precision, int64_t bm,
                                   int64_t bn, int64_t bk, int64_t warps,
                                   int64_t stages) {
  return libraryKernel(
      "gemm", "gemm",
      {.constants = {{"BLOCK_M", ConstValue::integer(bm)},
                     {"BLOCK_N", ConstValue::integer(bn)},
                     {"BLOCK_K", ConstValue::integer(bk)},
                     {"num_warps", ConstValue::integer(warps)},
                     {"num_stages", ConstValue::integer(stages)}},
       .precision = precision});
}

/// Launches `kernel` on uniform A (m x k) and B (k x n) of `dt` (seeds
/// `seed`, `seed` + 1) and C (f32; uniform with seed `seed` + 2, or zeros
/// when beta is 0) and compares C with the reference under `tol`; `what`
/// names the case in a failure.
void expectGemm(const std::shared_ptr<Kernel> &kernel, DType dt, int64_t m,
                int64_t n, int64_t k, double alpha, double beta, Tolerance tol,
                uint64_t seed, const std::string &what) {
  HostTensor a = HostTensor::empty({m, k}, dt);
  HostTensor b = HostTensor::empty({k, n}, dt);
  fillUniform(a, seed);
  fillUniform(b, seed + 1);
  HostTensor c = HostTensor::zeros({m, n}, DType::F32);
  if (beta != 0.0)
    fillUniform(c, seed + 2);
  HostTensor expected = c.clone();
  ref::gemm(a, b, expected, alpha, beta);
  ASSERT_LAUNCH(kernel, {view(a), view(b), view(c), Arg(alpha), Arg(beta)});
  EXPECT_CLOSE(c, expected, tol) << what << ", " << m << "x" << n << "x" << k;
}

// On the GPU path num_stages >= 2 software-pipelines the tile copies of the
// K loop (one shared buffer per stage; loads of iteration k + S - 1 issued
// before the compute of iteration k). K below gives fewer iterations than
// stages, a few, and many; every stage count must give the same result.
TEST(GemmEdge, PipelineStages) {
  for (const std::string precision : {"f32", "tf32", "f16@accum(fp32)"})
    for (int64_t stages : {1, 2, 3, 4}) {
      auto kernel = gemmKernel(precision, 32, 32, 16, 4, stages);
      DType dt = precision == "f16@accum(fp32)" ? DType::F16 : DType::F32;
      for (int64_t k : {16, 40, 130})
        expectGemm(kernel, dt, 33, 40, k, 1.0, 0.0,
                   precision == "tf32" ? tf32GemmTolerance(k)
                                       : toleranceFor(dt, Op::Gemm, k),
                   7, precision + ", num_stages " + std::to_string(stages));
    }
}

// Precision "tf32" rounds the dot inputs to tf32 (to nearest, ties away
// from zero, as cvt.rna.tf32.f32) where tensor cores run them (sim, cuda);
// cpu keeps full f32. 1 + 2^-11 lies exactly halfway between the tf32
// neighbours 1 and 1 + 2^-10, so each product is 1 + 2^-10 on tensor cores
// (1.0 if ties went to even, 1 + 2^-11 unrounded): the sums are exact in f32
// and tell the three apart.
TEST(GemmEdge, TF32RoundsDotInputsOnTensorCores) {
  const int64_t m = 32, n = 32, k = 16;
  auto kernel =
      libraryKernel("gemm", "gemm",
                    {.constants = {{"BLOCK_M", ConstValue::integer(32)},
                                   {"BLOCK_N", ConstValue::integer(32)},
                                   {"BLOCK_K", ConstValue::integer(16)}},
                     .precision = "tf32"});
  HostTensor a = HostTensor::full({m, k}, DType::F32, 1.0 + 0x1p-11);
  HostTensor b = HostTensor::full({k, n}, DType::F32, 1.0);
  HostTensor c = HostTensor::zeros({m, n}, DType::F32);
  ASSERT_LAUNCH(kernel, {view(a), view(b), view(c), Arg(1.0), Arg(0.0)});
  const double product =
      testDevice() == DeviceKind::Cpu ? 1.0 + 0x1p-11 : 1.0 + 0x1p-10;
  HostTensor expected = HostTensor::full({m, n}, DType::F32, k * product);
  EXPECT_CLOSE(c, expected, (Tolerance{0.0, 0.0}));
}

// fp8 products run on tensor cores: widened to f16 as they are staged
// (the register lowering, which contiguous tensors take), or on fp8
// mma.sync m16n8k32 (the shared-memory lowering, sm_89+). The products of fp8
// values are exact in f32 and the sums are f32, so the result must match
// the reference on the same fp8 inputs to f32 accuracy -- far tighter than
// the fp8 row of the tolerance table, which covers fp8 outputs. K values
// below, at and above BLOCK_K, and M/N edges, for both formats.
TEST(GemmEdge, F8TensorCoresAccumulateExactlyInF32) {
  for (DType dt : {DType::F8E4M3, DType::F8E5M2})
    for (int64_t stages : {1, 3}) {
      auto kernel = gemmKernel(std::string(dtypeName(dt)) + "@accum(fp32)", 32,
                               32, 32, 4, stages);
      for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
               {32, 32, 32}, {64, 48, 96}, {33, 40, 70}, {100, 37, 17}})
        expectGemm(kernel, dt, m, n, k, 0.5, 2.0,
                   toleranceFor(DType::F32, Op::Gemm, k), 11,
                   std::string(dtypeName(dt)) + ", num_stages " +
                       std::to_string(stages));
    }
}

// When every warp owns the same number of warp tiles, the GPU path keeps
// the accumulator fragments in registers across the kernel's K loop (read
// from the accumulator tile once before it, written back once after it) --
// with one and with two warp tiles per warp, with and without pipelined
// copies, for K below, at and well above BLOCK_K (one K iteration, a few,
// many; K = 0 is GemmEdge.ZeroSizedProblemIsANoOp), on edge-sized M and N.
TEST(GemmEdge, RegisterResidentAccumulators) {
  for (auto [precision, dt] : std::vector<std::pair<std::string, DType>>{
           {"f16@accum(fp32)", DType::F16},
           {"tf32", DType::F32},
           {"fp8_e4m3@accum(fp32)", DType::F8E4M3}})
    for (auto [warps, stages] :
         std::vector<std::array<int64_t, 2>>{{2, 1}, {4, 3}}) {
      auto kernel = gemmKernel(precision, 64, 64, 32, warps, stages);
      for (int64_t k : {20, 64, 200})
        expectGemm(kernel, dt, 70, 90, k, 1.5, -0.5,
                   precision == "tf32" ? tf32GemmTolerance(k)
                                       : toleranceFor(DType::F32, Op::Gemm, k),
                   21,
                   precision + ", num_warps " + std::to_string(warps) +
                       ", num_stages " + std::to_string(stages));
    }
}

/// A block configuration of the library GEMM.
struct GemmConfig {
  int64_t bm, bn, bk, warps, stages;
  bool persistent = false;
  int64_t group = 0;
  bool specialized = false;
  /// "BMxBNxBK, num_warps W, num_stages S[, persistent][, program_group
  /// G][, warp_specialize]".
  std::string describe() const {
    return std::to_string(bm) + "x" + std::to_string(bn) + "x" +
           std::to_string(bk) + ", num_warps " + std::to_string(warps) +
           ", num_stages " + std::to_string(stages) +
           (persistent ? ", persistent" : "") +
           (group ? ", program_group " + std::to_string(group) : "") +
           (specialized ? ", warp_specialize" : "");
  }
};

/// The library GEMM at `cfg` with the given operand orders.
std::shared_ptr<Kernel> configuredGemm(const std::string &precision,
                                       const GemmConfig &cfg, bool ta,
                                       bool tb) {
  return libraryKernel(
      "gemm", "gemm",
      {.constants = {{"BLOCK_M", ConstValue::integer(cfg.bm)},
                     {"BLOCK_N", ConstValue::integer(cfg.bn)},
                     {"BLOCK_K", ConstValue::integer(cfg.bk)},
                     {"num_warps", ConstValue::integer(cfg.warps)},
                     {"num_stages", ConstValue::integer(cfg.stages)},
                     {"persistent", ConstValue::boolean(cfg.persistent)},
                     {"program_group", ConstValue::integer(cfg.group)},
                     {"warp_specialize", ConstValue::boolean(cfg.specialized)},
                     {"TRANS_A", ConstValue::boolean(ta)},
                     {"TRANS_B", ConstValue::boolean(tb)}},
       .precision = precision});
}

/// Launches `kernel` (the library GEMM with TRANS_A = `ta`, TRANS_B = `tb`)
/// on uniform operands of `dt` in their stored shapes (seeds `seed`,
/// `seed` + 1) and a uniform f32 C (`seed` + 2), and compares C with the
/// reference under `tolerance` (the f32 GEMM tolerance when none is
/// given); `what` names the case.
void expectStoredGemm(const std::shared_ptr<Kernel> &kernel, DType dt, bool ta,
                      bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                      double beta, uint64_t seed, const std::string &what,
                      std::optional<Tolerance> tolerance = std::nullopt) {
  SCOPED_TRACE(what + (ta ? ", TRANS_A" : "") + (tb ? ", TRANS_B" : "") + ", " +
               std::to_string(m) + "x" + std::to_string(n) + "x" +
               std::to_string(k));
  HostTensor a =
      ta ? HostTensor::empty({k, m}, dt) : HostTensor::empty({m, k}, dt);
  HostTensor b =
      tb ? HostTensor::empty({n, k}, dt) : HostTensor::empty({k, n}, dt);
  HostTensor c = HostTensor::empty({m, n}, DType::F32);
  fillUniform(a, seed);
  fillUniform(b, seed + 1);
  fillUniform(c, seed + 2);
  HostTensor expected = c.clone();
  ref::gemm(ta ? a.transposed(0, 1) : a, tb ? b.transposed(0, 1) : b, expected,
            alpha, beta);
  ASSERT_LAUNCH(kernel, {view(a), view(b), view(c), Arg(alpha), Arg(beta)});
  EXPECT_CLOSE(c, expected,
               tolerance.value_or(toleranceFor(DType::F32, Op::Gemm, k)));
}

// On sm_90a (the sim's target) tiles whose rows fill every warp take
// warpgroup matrix products (wgmma) on swizzled shared-memory operands:
// operands stored either way (the TRANS flags), K steps within one swizzle
// atom and across atoms (BLOCK_K 128), 128-, 64- and 32-byte swizzles
// (BLOCK_K 64, 32, 16), two warpgroups, N up to wgmma's 256, with and
// without pipelined copies, on edge shapes and on rows that are not
// 16-byte aligned (copied element by element).
TEST(GemmEdge, WarpgroupConfigurations) {
  for (DType dt : {DType::F16, DType::BF16})
    for (GemmConfig cfg : std::vector<GemmConfig>{{64, 64, 32, 4, 3},
                                                  {128, 128, 32, 4, 3},
                                                  {128, 64, 64, 8, 2},
                                                  {64, 128, 128, 4, 1},
                                                  {64, 32, 16, 4, 3},
                                                  {64, 256, 32, 4, 2}})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          std::string precision = std::string(dtypeName(dt)) + "@accum(fp32)";
          auto kernel = configuredGemm(precision, cfg, ta, tb);
          // Rows of 16-byte multiples (every tensor copied by TMA on
          // sm_90a, with the edges zero-filled), then unaligned rows.
          for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
                   {136, 88, 200}, {130, 90, 200}, {70, 37, 17}})
            expectStoredGemm(kernel, dt, ta, tb, m, n, k, 1.25, -0.5, 41,
                             precision + " " + cfg.describe());
        }
}

/// The library GEMM at each of `configs`, in f16 (both operand orders) and
/// fp8 e4m3 (K-major operands for wgmma k32, and the widened path), on a
/// shape whose 7 K steps are no multiple of a ring's slots and on an edge
/// shape of one K step.
void expectGemmConfigs(const std::vector<GemmConfig> &configs, int seed) {
  struct Case {
    DType dt;
    bool ta, tb;
  };
  for (Case c :
       {Case{DType::F16, false, false}, Case{DType::F16, true, true},
        Case{DType::F8E4M3, false, true}, Case{DType::F8E4M3, false, false}})
    for (const GemmConfig &cfg : configs) {
      std::string precision = std::string(dtypeName(c.dt)) + "@accum(fp32)";
      auto kernel = configuredGemm(precision, cfg, c.ta, c.tb);
      bool hardwareAccumulation = testDevice() == DeviceKind::Cuda &&
                                  c.dt == DType::F8E4M3 && c.tb && !c.ta &&
                                  cfg.warps % 4 == 0;
      for (auto [m, n, k] :
           std::vector<std::array<int64_t, 3>>{{328, 200, 224}, {70, 37, 17}})
        expectStoredGemm(kernel, c.dt, c.ta, c.tb, m, n, k, 1.25, -0.5, seed,
                         precision + " " + cfg.describe(),
                         hardwareAccumulation
                             ? std::optional<Tolerance>(tf32GemmTolerance(k))
                             : std::nullopt);
    }
}

// Program schedules: blocks that loop over the programs (the sim runs a
// persistent kernel on 4 blocks, so each block runs several programs, and
// a TMA ring carries its slots and mbarrier phases from one program's K
// loop to the next) and programs in groups along M (the last group
// smaller).
TEST(GemmEdge, ProgramSchedules) {
  expectGemmConfigs({{64, 64, 32, 4, 3, true, 0},
                     {64, 64, 32, 4, 3, false, 3},
                     {128, 64, 32, 4, 2, true, 2},
                     {64, 32, 32, 2, 3, true, 8}},
                    61);
}

// Warp specialisation: on sm_90a (the sim's target) a producer warpgroup
// issues the TMA copies of the K loop into rings whose slots the consumer
// warpgroups release on mbarriers; the consumers synchronise on a named
// barrier of their own. One and two consumer warpgroups, products kept in
// flight across iterations or not, rings of 2 and 3 slots, alone and in
// persistent and grouped schedules (the producer carries its ring's slot
// and phase across programs as the consumers do). Where wgmma does not
// apply (two warps, widened fp8) the kernel is not specialised and runs as
// before.
TEST(GemmEdge, WarpSpecialized) {
  expectGemmConfigs({{64, 64, 32, 4, 3, false, 0, true},
                     {128, 64, 32, 8, 4, false, 0, true},
                     {64, 64, 32, 4, 2, true, 0, true},
                     {128, 64, 32, 4, 3, true, 3, true},
                     {64, 32, 32, 2, 3, false, 0, true}},
                    67);
}

// fp8 operands on tensor cores: widened to f16 as they are staged in
// shared memory, or, on sm_90a (the sim's target) with both operands K
// innermost (TRANS_B without TRANS_A), read as they are by wgmma k32
// from the 32-, 64- and 128-byte swizzles of BLOCK_K 32, 64 and 128. Both
// formats, both operand orders, block configurations on two warps and on
// one and two warpgroups, aligned and unaligned rows. The products are
// exact in f32 and the sim sums them in f32, so the f32 GEMM tolerance
// applies -- except to wgmma k32 on a GPU, whose accumulation keeps fewer
// bits than f32 (docs/language.md): those cases get the tolerance of
// 10-bit inputs summed in f32, not yet checked against an H100.
TEST(GemmEdge, F8OperandsOnTensorCores) {
  for (DType dt : {DType::F8E4M3, DType::F8E5M2})
    for (GemmConfig cfg : std::vector<GemmConfig>{{64, 64, 32, 4, 3},
                                                  {128, 128, 64, 8, 2},
                                                  {64, 32, 32, 2, 3},
                                                  {64, 64, 128, 4, 2}})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          std::string precision = std::string(dtypeName(dt)) + "@accum(fp32)";
          auto kernel = configuredGemm(precision, cfg, ta, tb);
          bool hardwareAccumulation = testDevice() == DeviceKind::Cuda && tb &&
                                      !ta && cfg.warps % 4 == 0;
          for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
                   {136, 80, 160}, {70, 37, 17}})
            expectStoredGemm(kernel, dt, ta, tb, m, n, k, 0.75, 1.5, 51,
                             precision + " " + cfg.describe(),
                             hardwareAccumulation ? std::optional<Tolerance>(
                                                        tf32GemmTolerance(k))
                                                  : std::nullopt);
        }
}

// On sm_90a (the sim's target) tf32 products whose A has K innermost run
// as wgmma k8, reading f32 blocks from the 128-, 64- and 32-byte swizzles of
// BLOCK_K 32, 16 and 8 (and K steps across atoms at BLOCK_K 64), on one and
// two warpgroups, aligned rows (TMA) and unaligned ones: B stored [N, K]
// (TRANS_B) as copied, B stored [K, N] through registers, stored transposed.
// A stored [K, M] (TRANS_A) keeps mma.sync m16n8k8 in shared memory.
TEST(GemmEdge, TF32WarpgroupProducts) {
  for (GemmConfig cfg : std::vector<GemmConfig>{{64, 64, 32, 4, 3},
                                                {128, 128, 32, 4, 3},
                                                {128, 64, 64, 8, 2},
                                                {64, 128, 16, 4, 3},
                                                {64, 32, 8, 4, 2}})
    for (auto [ta, tb] : std::vector<std::pair<bool, bool>>{
             {false, true}, {false, false}, {true, true}}) {
      auto kernel = configuredGemm("tf32", cfg, ta, tb);
      for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
               {136, 88, 200}, {130, 90, 200}, {70, 37, 17}})
        expectStoredGemm(kernel, DType::F32, ta, tb, m, n, k, 1.25, -0.5, 43,
                         "tf32 " + cfg.describe(), tf32GemmTolerance(k));
    }
}

// wgmma k8 (sm_90a, the sim's target: A K-major, the rows filling a
// warpgroup) reads the f32 blocks as they were stored in shared memory:
// the tensor cores take the top 10 mantissa bits of each and drop the
// rest, so 1 + 2^-11 counts as 1.0 there (as 1 + 2^-11 on cpu), with B
// stored either way. Not yet checked against an H100.
TEST(GemmEdge, TF32WarpgroupProductsTruncateDotInputs) {
  const int64_t m = 64, n = 64, k = 16;
  for (bool tb : {true, false}) {
    SCOPED_TRACE(tb ? "TRANS_B" : "B [K, N]");
    auto kernel =
        configuredGemm("tf32", GemmConfig{64, 64, 16, 4, 2}, false, tb);
    HostTensor a = HostTensor::full({m, k}, DType::F32, 1.0 + 0x1p-11);
    HostTensor b = tb ? HostTensor::full({n, k}, DType::F32, 1.0)
                      : HostTensor::full({k, n}, DType::F32, 1.0);
    HostTensor c = HostTensor::zeros({m, n}, DType::F32);
    ASSERT_LAUNCH(kernel, {view(a), view(b), view(c), Arg(1.0), Arg(0.0)});
    const double product =
        testDevice() == DeviceKind::Cpu ? 1.0 + 0x1p-11 : 1.0;
    HostTensor expected = HostTensor::full({m, n}, DType::F32, k * product);
    EXPECT_CLOSE(c, expected, (Tolerance{0.0, 0.0}));
  }
}

// An empty K leaves C = beta * C. On a GPU this also guards the f16
// operands of 0 columns: no tensor map can describe them (the driver
// refuses an empty dimension), so the launch must take a variant without
// TMA copies; cpu and sim check the result only.
TEST(GemmEdge, EmptyInnerDimensionScalesC) {
  auto kernel = libraryKernel("gemm", "gemm", {.precision = "f16@accum(fp32)"});
  HostTensor a = HostTensor::empty({64, 0}, DType::F16);
  HostTensor b = HostTensor::empty({0, 48}, DType::F16);
  HostTensor c = HostTensor::empty({64, 48}, DType::F32);
  fillUniform(c, 7);
  HostTensor expected = c.clone();
  ref::gemm(a, b, expected, 1.0, 0.5);
  ASSERT_LAUNCH(kernel, {view(a), view(b), view(c), Arg(1.0), Arg(0.5)});
  EXPECT_CLOSE(c, expected, toleranceFor(DType::F32, Op::Gemm, 1));
}

TEST(GemmEdge, ZeroSizedProblemIsANoOp) {
  auto kernel = libraryKernel("gemm", "gemm");
  HostTensor a = HostTensor::empty({0, 8}, DType::F32);
  HostTensor b = HostTensor::empty({8, 4}, DType::F32);
  HostTensor c = HostTensor::empty({0, 4}, DType::F32);
  ASSERT_LAUNCH(kernel, {view(a), view(b), view(c), Arg(1.0), Arg(0.0)});
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

struct RowCase {
  DType dtype;
  int64_t rows, cols;
  bool causal;
};
std::string rowName(const ::testing::TestParamInfo<RowCase> &i) {
  return std::string(dtypeName(i.param.dtype)) + "_" +
         std::to_string(i.param.rows) + "x" + std::to_string(i.param.cols) +
         (i.param.causal ? "_causal" : "");
}

std::vector<RowCase> softmaxCases() {
  std::vector<RowCase> v;
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F8E4M3})
    for (auto [r, c] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {3, 7}, {5, 256}, {4, 257}, {2, 1000}, {2, 16384}})
      for (bool causal : {false, true})
        v.push_back({t, r, c, causal});
  return v;
}

class Softmax : public ::testing::TestWithParam<RowCase> {};

TEST_P(Softmax, MatchesReference) {
  const RowCase &c = GetParam();
  auto kernel = libraryKernel(
      "softmax", "softmax",
      withPrecision(c.dtype, {{"CAUSAL", ConstValue::boolean(c.causal)}}));
  HostTensor x = HostTensor::empty({1, 1, c.rows, c.cols}, c.dtype);
  HostTensor y = HostTensor::empty({1, 1, c.rows, c.cols}, c.dtype);
  fillNormal(x, 41, 0.0, 2.0);
  HostTensor x2 = x.reshapedContiguous({c.rows, c.cols});
  HostTensor expected = HostTensor::empty({c.rows, c.cols}, DType::F32);
  ref::softmax(x2, expected, c.causal);
  ASSERT_LAUNCH(kernel, {view(x), view(y)});
  EXPECT_CLOSE(y.reshapedContiguous({c.rows, c.cols}), expected,
               toleranceFor(c.dtype, Op::Softmax, c.cols));
}

INSTANTIATE_TEST_SUITE_P(Cpu, Softmax, ::testing::ValuesIn(softmaxCases()),
                         rowName);

TEST(SoftmaxEdge, SpecialRows) {
  // Row 0: all -inf -> NaN row (documented). Row 1: one +inf -> NaN row.
  // Row 2: a NaN -> NaN row. Row 3: -inf entries -> exact zeros there.
  const int64_t cols = 300;
  auto kernel = libraryKernel("softmax", "softmax");
  HostTensor x = HostTensor::empty({1, 1, 4, cols}, DType::F32);
  fillNormal(x, 42);
  HostTensor x2 = x.reshapedContiguous({4, cols});
  setRowNegInf(x2, 0);
  setInfAt(x2, 1 * cols + 5);
  setNaNAt(x2, 2 * cols + 299);
  setInfAt(x2, 3 * cols + 7, /*negative=*/true);
  x.copyFrom(x2.reshapedContiguous({1, 1, 4, cols}));
  HostTensor y = HostTensor::empty({1, 1, 4, cols}, DType::F32);
  HostTensor expected = HostTensor::empty({4, cols}, DType::F32);
  ref::softmax(x2, expected);
  ASSERT_LAUNCH(kernel, {view(x), view(y)});
  HostTensor got = y.reshapedContiguous({4, cols});
  for (int64_t c = 0; c < cols; ++c) {
    EXPECT_TRUE(std::isnan(got.get({0, c})));
    EXPECT_TRUE(std::isnan(got.get({1, c})));
    EXPECT_TRUE(std::isnan(got.get({2, c})));
  }
  EXPECT_EQ(got.get({3, 7}), 0.0);
  EXPECT_CLOSE(got, expected, toleranceFor(DType::F32, Op::Softmax, cols));
}

TEST(SoftmaxEdge, EmptyBatchIsANoOp) {
  auto kernel = libraryKernel("softmax", "softmax");
  HostTensor x = HostTensor::empty({0, 2, 3, 4}, DType::F32);
  HostTensor y = HostTensor::empty({0, 2, 3, 4}, DType::F32);
  ASSERT_LAUNCH(kernel, {view(x), view(y)});
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

class LayerNorm : public ::testing::TestWithParam<RowCase> {};

std::vector<RowCase> layerNormCases() {
  std::vector<RowCase> v;
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    for (auto [r, c] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {3, 5}, {4, 512}, {3, 513}, {2, 4096}, {1, 16384}})
      v.push_back({t, r, c, false});
  return v;
}

TEST_P(LayerNorm, MatchesReference) {
  const RowCase &c = GetParam();
  auto kernel = libraryKernel("layernorm", "layernorm", withPrecision(c.dtype));
  HostTensor x = HostTensor::empty({1, c.rows, c.cols}, c.dtype);
  HostTensor w = HostTensor::empty({c.cols}, c.dtype);
  HostTensor bias = HostTensor::empty({c.cols}, c.dtype);
  HostTensor y = HostTensor::empty({1, c.rows, c.cols}, c.dtype);
  fillNormal(x, 51, 0.5, 2.0);
  fillUniform(w, 52, 0.5, 1.5);
  fillUniform(bias, 53);
  HostTensor expected = HostTensor::empty({c.rows, c.cols}, DType::F32);
  ref::layerNorm(x.reshapedContiguous({c.rows, c.cols}), w, bias, expected,
                 1e-5);
  ASSERT_LAUNCH(kernel, {view(x), view(w), view(bias), view(y), Arg(1e-5)});
  EXPECT_CLOSE(y.reshapedContiguous({c.rows, c.cols}), expected,
               toleranceFor(c.dtype, Op::LayerNorm, c.cols));
}

INSTANTIATE_TEST_SUITE_P(Cpu, LayerNorm, ::testing::ValuesIn(layerNormCases()),
                         rowName);

TEST(LayerNormEdge, ConstantRowGivesBias) {
  auto kernel = libraryKernel("layernorm", "layernorm");
  const int64_t h = 300;
  HostTensor x = HostTensor::full({1, 2, h}, DType::F32, 1e4);
  HostTensor w = HostTensor::full({h}, DType::F32, 2.0);
  HostTensor bias = HostTensor::empty({h}, DType::F32);
  fillUniform(bias, 54);
  HostTensor y = HostTensor::empty({1, 2, h}, DType::F32);
  ASSERT_LAUNCH(kernel, {view(x), view(w), view(bias), view(y), Arg(1e-5)});
  for (int64_t i = 0; i < h; ++i)
    EXPECT_EQ(y.get({0, 1, i}), bias.get({i}));
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

struct AttnCase {
  DType dtype;
  int64_t heads, m, n, d;
  bool causal;
};
std::string attnName(const ::testing::TestParamInfo<AttnCase> &i) {
  const AttnCase &c = i.param;
  return std::string(dtypeName(c.dtype)) + "_h" + std::to_string(c.heads) +
         "_m" + std::to_string(c.m) + "_n" + std::to_string(c.n) + "_d" +
         std::to_string(c.d) + (c.causal ? "_causal" : "");
}
// Partial key blocks (1, 37, 70, 200 keys) and whole ones (128: the
// masked key loop of a non-causal kernel runs no iteration).
std::vector<AttnCase> attnCases() {
  std::vector<AttnCase> v;
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    for (int64_t d : {64, 128})
      for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{
               {1, 1}, {37, 37}, {130, 70}, {64, 200}, {96, 128}})
        for (bool causal : {false, true})
          v.push_back({t, 2, m, n, d, causal});
  return v;
}

class Attention : public ::testing::TestWithParam<AttnCase> {};

TEST_P(Attention, MatchesReference) {
  const AttnCase &c = GetParam();
  // f32 products keep their tiles in shared memory on the GPU (sim, cuda):
  // 64-row blocks of a 128-wide head do not fit there.
  int64_t blockM =
      testDevice() != DeviceKind::Cpu && c.dtype == DType::F32 && c.d == 128
          ? 32
          : 64;
  auto kernel = libraryKernel(
      "attention", "attention",
      withPrecision(c.dtype, {{"CAUSAL", ConstValue::boolean(c.causal)},
                              {"HEAD_DIM", ConstValue::integer(c.d)},
                              {"BLOCK_M", ConstValue::integer(blockM)},
                              {"BLOCK_N", ConstValue::integer(32)}}));
  HostTensor q = HostTensor::empty({1, c.heads, c.m, c.d}, c.dtype);
  HostTensor k = HostTensor::empty({1, c.heads, c.n, c.d}, c.dtype);
  HostTensor v = HostTensor::empty({1, c.heads, c.n, c.d}, c.dtype);
  HostTensor o = HostTensor::empty({1, c.heads, c.m, c.d}, c.dtype);
  fillNormal(q, 61);
  fillNormal(k, 62);
  fillNormal(v, 63);
  double scale = defaultAttentionScale(c.d);
  HostTensor expected = HostTensor::empty({c.heads, c.m, c.d}, DType::F32);
  ref::attention(q.reshapedContiguous({c.heads, c.m, c.d}),
                 k.reshapedContiguous({c.heads, c.n, c.d}),
                 v.reshapedContiguous({c.heads, c.n, c.d}), expected, c.causal,
                 scale);
  ASSERT_LAUNCH(kernel, {view(q), view(k), view(v), view(o), Arg(scale)});
  EXPECT_CLOSE(o.reshapedContiguous({c.heads, c.m, c.d}), expected,
               toleranceFor(c.dtype, Op::Attention, std::max(c.n, c.d)));
}

INSTANTIATE_TEST_SUITE_P(Cpu, Attention, ::testing::ValuesIn(attnCases()),
                         attnName);

// Every configuration of the autotune space with 16-bit inputs, at head
// dims 64 and 128, causal and not, on an edge shape (a partial query block,
// a partial key block). On sm_90a (the sim's target) both products take
// wgmma whenever the query rows fill the warpgroups: S = Q K^T with both
// operands in shared memory, O += P V with P from registers; K and V come
// through TMA rings. Configurations the resource filter refuses are
// listed, and at least one per head dim must run.
TEST(AttentionEdge, WarpgroupConfigurations) {
  for (int64_t d : {64, 128}) {
    int ran = 0;
    std::string refused;
    for (int64_t bm : {64, 128})
      for (int64_t bn : {32, 64, 128})
        for (int64_t warps : {4, 8}) {
          bool causal = (bm + bn + warps) % 3 == 0;
          DType dt = (bn + warps) % 3 ? DType::F16 : DType::BF16;
          CompileOptions opts = withPrecision(
              dt, {{"CAUSAL", ConstValue::boolean(causal)},
                   {"HEAD_DIM", ConstValue::integer(d)},
                   {"BLOCK_M", ConstValue::integer(bm)},
                   {"BLOCK_N", ConstValue::integer(bn)},
                   {"num_warps", ConstValue::integer(warps)},
                   {"num_stages", ConstValue::integer(bn == 128 ? 2 : 3)}});
          std::string config =
              std::string(dtypeName(dt)) + " d" + std::to_string(d) + " " +
              std::to_string(bm) + "x" + std::to_string(bn) + ", num_warps " +
              std::to_string(warps) + (causal ? ", causal" : "");
          auto prog = libraryProgram("attention");
          ASSERT_NE(prog, nullptr);
          auto kernel =
              runtime().compile(*prog, "attention", opts, testDevice());
          if (!kernel.ok() &&
              kernel.status().code() == StatusCode::kResourceExhausted) {
            refused += "\n  " + config + ": " + kernel.status().message();
            continue;
          }
          ASSERT_TRUE(kernel.ok())
              << config << ": " << kernel.status().toString();
          const int64_t m = 130, n = 100;
          HostTensor q = HostTensor::empty({1, 2, m, d}, dt);
          HostTensor k = HostTensor::empty({1, 2, n, d}, dt);
          HostTensor v = HostTensor::empty({1, 2, n, d}, dt);
          HostTensor o = HostTensor::empty({1, 2, m, d}, dt);
          fillNormal(q, 71);
          fillNormal(k, 72);
          fillNormal(v, 73);
          double scale = defaultAttentionScale(d);
          HostTensor expected = HostTensor::empty({2, m, d}, DType::F32);
          ref::attention(
              q.reshapedContiguous({2, m, d}), k.reshapedContiguous({2, n, d}),
              v.reshapedContiguous({2, n, d}), expected, causal, scale);
          ASSERT_LAUNCH(*kernel,
                        {view(q), view(k), view(v), view(o), Arg(scale)});
          EXPECT_CLOSE(o.reshapedContiguous({2, m, d}), expected,
                       toleranceFor(dt, Op::Attention, std::max(n, d)))
              << config;
          ++ran;
        }
    std::printf("attention, head dim %lld: %d configurations ran; refused:%s\n",
                static_cast<long long>(d), ran,
                refused.empty() ? " none" : refused.c_str());
    EXPECT_GT(ran, 0) << "head dim " << d;
  }
}

/// Launches the library attention `kernel` on normal Q, K, V of `dt`
/// ([1, heads, m | n, d]; seeds `seed`, `seed` + 1, `seed` + 2) and
/// compares O with the reference under the attention tolerance.
void expectHeads(const std::shared_ptr<Kernel> &kernel, DType dt, bool causal,
                 int64_t heads, int64_t m, int64_t n, int64_t d, int seed) {
  HostTensor q = HostTensor::empty({1, heads, m, d}, dt);
  HostTensor k = HostTensor::empty({1, heads, n, d}, dt);
  HostTensor v = HostTensor::empty({1, heads, n, d}, dt);
  HostTensor o = HostTensor::empty({1, heads, m, d}, dt);
  fillNormal(q, seed);
  fillNormal(k, seed + 1);
  fillNormal(v, seed + 2);
  double scale = defaultAttentionScale(d);
  HostTensor expected = HostTensor::empty({heads, m, d}, DType::F32);
  ref::attention(q.reshapedContiguous({heads, m, d}),
                 k.reshapedContiguous({heads, n, d}),
                 v.reshapedContiguous({heads, n, d}), expected, causal, scale);
  ASSERT_LAUNCH(kernel, {view(q), view(k), view(v), view(o), Arg(scale)});
  EXPECT_CLOSE(o.reshapedContiguous({heads, m, d}), expected,
               toleranceFor(dt, Op::Attention, std::max(n, d)));
}

// Persistent and grouped schedules of attention: 4 query blocks of 3 heads
// (12 programs) on the sim's 4 persistent blocks, so that each block runs
// programs whose key loops differ in length (causal: the diagonal's
// position) and its TMA rings carry their phases across them; with warp
// specialisation alone and persistent (the producer feeding the query
// ring of the loop over programs and the key/value ring inside it).
TEST(AttentionEdge, ProgramSchedules) {
  struct Schedule {
    bool persistent;
    int64_t group;
    bool specialized;
  };
  for (bool causal : {false, true})
    for (auto [persistent, group, specialized] :
         std::vector<Schedule>{{true, 0, false},
                               {true, 3, false},
                               {false, 2, false},
                               {false, 0, true},
                               {true, 2, true}}) {
      const int64_t d = 64, m = 200, n = 150, heads = 3;
      auto kernel = libraryKernel(
          "attention", "attention",
          withPrecision(
              DType::F16,
              {{"CAUSAL", ConstValue::boolean(causal)},
               {"HEAD_DIM", ConstValue::integer(d)},
               {"BLOCK_M", ConstValue::integer(64)},
               {"BLOCK_N", ConstValue::integer(32)},
               {"persistent", ConstValue::boolean(persistent)},
               {"program_group", ConstValue::integer(group)},
               {"warp_specialize", ConstValue::boolean(specialized)}}));
      SCOPED_TRACE(std::string(causal ? "causal" : "non-causal") +
                   (persistent ? ", persistent" : "") + ", program_group " +
                   std::to_string(group) +
                   (specialized ? ", warp_specialize" : ""));
      expectHeads(kernel, DType::F16, causal, heads, m, n, d, 81);
    }
}

// Ping-pong (sm_90a, the sim's target): with a producer warpgroup and two
// consumer warpgroups the consumers take turns at the tensor cores on named
// barriers, each key loop with its own hand-over protocol. Causal and not,
// head dims 64 and 128, f16 and bf16, BLOCK_N 32 to 128 on rings of 3 and 4
// slots, alone and persistent (the protocol of each program's loops after
// the last one's), at shapes that leave a partial key block, a causal
// diagonal inside a block, empty key loops and programs whose loops differ
// in length. A protocol that does not balance its turns deadlocks the sim
// (reported, not hung).
TEST(AttentionEdge, PingpongWarpgroups) {
  struct Case {
    DType dt;
    int64_t d, blockN, stages;
    bool persistent;
  };
  for (bool causal : {false, true})
    for (auto [dt, d, blockN, stages, persistent] :
         std::vector<Case>{{DType::F16, 64, 64, 3, false},
                           {DType::BF16, 128, 32, 3, false},
                           {DType::F16, 64, 128, 4, false},
                           {DType::F16, 64, 32, 3, true}}) {
      auto kernel = libraryKernel(
          "attention", "attention",
          withPrecision(dt, {{"CAUSAL", ConstValue::boolean(causal)},
                             {"HEAD_DIM", ConstValue::integer(d)},
                             {"BLOCK_M", ConstValue::integer(128)},
                             {"BLOCK_N", ConstValue::integer(blockN)},
                             {"num_warps", ConstValue::integer(8)},
                             {"num_stages", ConstValue::integer(stages)},
                             {"persistent", ConstValue::boolean(persistent)},
                             {"warp_specialize", ConstValue::boolean(true)},
                             {"pingpong", ConstValue::boolean(true)}}));
      for (auto [m, n] :
           std::vector<std::array<int64_t, 2>>{{200, 150}, {130, 70}}) {
        const int64_t heads = 2;
        SCOPED_TRACE(std::string(dtypeName(dt)) + (causal ? " causal" : "") +
                     " d " + std::to_string(d) + " BLOCK_N " +
                     std::to_string(blockN) + " num_stages " +
                     std::to_string(stages) +
                     (persistent ? " persistent" : "") + " M " +
                     std::to_string(m) + " N " + std::to_string(n));
        expectHeads(kernel, dt, causal, heads, m, n, d, 91);
      }
    }
}

} // namespace
