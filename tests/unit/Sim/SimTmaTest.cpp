//===- SimTmaTest.cpp - the sim's TMA copies
//-------------------------------===//
//
// A hand-written gpu-dialect kernel copies one box of a global f16 tensor
// into shared memory with nvgpu.tma.async.load: thread 0 announces the
// bytes on an mbarrier and issues the copy, every thread waits for the
// phase, then the block copies the shared bytes out in memory order. The
// box straddles the tensor's last rows and columns (zeros there), and each
// swizzle mode moves 16-byte chunks as the hardware's XOR pattern does
// (row r's chunk c at chunk c ^ ((r / perPhase) % maxPhase), perPhase =
// 128 / row bytes). Broken kernels check what the sim reports: a read of
// the box before the wait, and a transaction count the copy cannot
// complete (a deadlock naming the waiting threads). With counters, the
// copy is one global request whose sectors and bytes are those of the
// box's part inside the tensor.
//
//===----------------------------------------------------------------------===//

#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

using namespace tessera;

namespace {

constexpr int64_t kThreads = 128;
/// The global tensor: kLayers x kRows x kCols f16, rows kPitch apart.
constexpr int64_t kLayers = 2, kRows = 10, kCols = 70, kPitch = 72;
/// The box: 8 rows at row 4 (rows 10 and 11 outside), `cols` columns at
/// column 16 (64 columns reach past column 69); in layer 1.
constexpr int64_t kBoxRows = 8, kRow0 = 4, kCol0 = 16, kLayer = 1;

enum class Bug { None, ReadBeforeWait, TxTooLarge };

std::string kernel(int64_t cols, int64_t swizzle, int64_t rank, Bug bug) {
  const int64_t elems = kBoxRows * cols, bytes = elems * 2;
  std::string g = "!nvgpu.mbarrier.group<memorySpace = "
                  "#gpu.address_space<workgroup>, num_barriers = 1>";
  std::string box =
      rank == 3 ? "1x8x" + std::to_string(cols) : "8x" + std::to_string(cols);
  std::string dst = "memref<" + box + "xf16, #gpu.address_space<workgroup>>";
  std::string desc = "!nvgpu.tensormap.descriptor<tensor = " + dst +
                     ", swizzle = " +
                     (swizzle ? "swizzle_" + std::to_string(swizzle) + "b"
                              : std::string("none")) +
                     ", l2promo = none, oob = zero, interleave = none>";
  std::string coords = rank == 3 ? "%c16, %c4, %c1" : "%c16, %c4";
  std::string s = R"(
module {
  gpu.module @m {
    gpu.func @k(%out: memref<?xf32>, %mapArg: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c128 = arith.constant 128 : index
      %elems = arith.constant )" +
                  std::to_string(elems) + R"( : index
      %bytes = arith.constant )" +
                  std::to_string(bytes + (bug == Bug::TxTooLarge ? 16 : 0)) +
                  R"( : index
      %ticks = arith.constant 1000000 : index
      %map = builtin.unrealized_conversion_cast %mapArg : !llvm.ptr to )" +
                  desc + R"(
      %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %box = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to )" +
                  dst + R"(
      %flat = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<)" +
                  std::to_string(elems) +
                  R"(xf16, #gpu.address_space<workgroup>>
      %bars = nvgpu.mbarrier.create -> )" +
                  g + R"(
      %first = arith.cmpi eq, %tid, %c0 : index
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %first : )" +
                  g + R"(
      gpu.barrier
      nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %bytes, predicate = %first : )" +
                  g + R"(
      nvgpu.tma.async.load %map[)" +
                  coords + R"(], %bars[%c0] to %box, predicate = %first : )" +
                  desc + ", " + g + " -> " + dst + "\n";
  if (bug != Bug::ReadBeforeWait)
    s += "      %p0 = arith.constant false\n"
         "      nvgpu.mbarrier.try_wait.parity %bars[%c0], %p0, %ticks : " +
         g + "\n";
  s += R"(      scf.for %i = %tid to %elems step %c128 {
        %v = memref.load %flat[%i] : memref<)" +
       std::to_string(elems) + R"(xf16, #gpu.address_space<workgroup>>
        %w = arith.extf %v : f16 to f32
        memref.store %w, %out[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
}
)";
  return s;
}

/// The tensor's element values: distinct and exact in f16.
float valueAt(int64_t layer, int64_t row, int64_t col) {
  return float(layer * 1000 + row * 80 + col);
}

uint16_t f16Bits(float v) {
  // Integers below 2048 only: exact in f16.
  uint32_t i = uint32_t(v);
  int e = 0;
  while ((i >> e) > 1)
    ++e;
  uint32_t mant = e >= 10 ? (i >> (e - 10)) & 0x3ff : (i << (10 - e)) & 0x3ff;
  return v == 0.0f ? 0 : uint16_t(((e + 15) << 10) | mant);
}

/// Runs the copy of a box `cols` wide with swizzle `swizzle` (bytes) from
/// a rank-`rank` view of the tensor; `out` gets the shared bytes as f32 in
/// memory order. With `counts`, counted into it; `rowAddress` (when given)
/// gets the global address of each row of the box inside the tensor.
Status run(int64_t cols, int64_t swizzle, int64_t rank, Bug bug,
           std::vector<float> &out, sim::LaunchCounts *counts = nullptr,
           std::vector<int64_t> *rowAddress = nullptr) {
  static std::vector<uint16_t> tensor;
  tensor.assign(size_t(kLayers * kRows * kPitch), 0xffff);
  for (int64_t l = 0; l < kLayers; ++l)
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t c = 0; c < kCols; ++c)
        tensor[size_t((l * kRows + r) * kPitch + c)] =
            f16Bits(valueAt(l, r, c));
  sim::SimTensorMap map;
  map.rank = rank;
  const uint16_t *base =
      tensor.data() + (rank == 3 ? 0 : kLayer * kRows * kPitch);
  map.base = simtest::addressOf(base);
  map.dims[0] = kCols;
  map.dims[1] = kRows;
  map.dims[2] = kLayers;
  map.strides[0] = 2;
  map.strides[1] = kPitch * 2;
  map.strides[2] = kRows * kPitch * 2;
  map.box[0] = cols;
  map.box[1] = kBoxRows;
  map.box[2] = 1;
  map.elementBytes = 2;
  map.swizzle = swizzle;
  out.assign(size_t(kBoxRows * cols), -1.0f);
  std::vector<unsigned char> arena(size_t(kBoxRows * cols * 2), 0xff);
  std::vector<int64_t> slots;
  simtest::addMemref(slots, out.data(), int64_t(out.size()));
  slots.push_back(simtest::addressOf(&map));
  simtest::addMemref(slots, arena.data(), int64_t(arena.size()));
  if (rowAddress)
    for (int64_t r = kRow0; r < std::min(kRows, kRow0 + kBoxRows); ++r)
      rowAddress->push_back(simtest::addressOf(
          tensor.data() + (kLayer * kRows + r) * kPitch + kCol0));
  return simtest::runBlock(kernel(cols, swizzle, rank, bug), slots,
                           arena.data(), int64_t(arena.size()), counts);
}

/// Checks the box in shared memory against the tensor: element (r, c) of
/// the box sits in row r's 16-byte chunk c / 8 ^ phase(r), zero outside.
void expectBox(int64_t cols, int64_t swizzle, int64_t rank) {
  std::vector<float> out;
  Status s = run(cols, swizzle, rank, Bug::None, out);
  ASSERT_TRUE(s.ok()) << s.toString();
  const int64_t rowBytes = cols * 2;
  const int64_t perPhase = swizzle ? std::max<int64_t>(1, 128 / rowBytes) : 1;
  const int64_t maxPhase = swizzle ? swizzle / 16 : 1;
  for (int64_t r = 0; r < kBoxRows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int64_t chunk = (c / 8) ^ ((r / perPhase) % maxPhase);
      int64_t at = r * cols + chunk * 8 + c % 8;
      int64_t row = kRow0 + r, col = kCol0 + c;
      float want =
          row < kRows && col < kCols ? valueAt(kLayer, row, col) : 0.0f;
      ASSERT_EQ(out[size_t(at)], want)
          << "box element (" << r << ", " << c << "), swizzle " << swizzle;
    }
}

TEST(SimTma, Box128ByteSwizzleWithEdgesZeroFilled) { expectBox(64, 128, 2); }
TEST(SimTma, Box64ByteSwizzle) { expectBox(32, 64, 2); }
TEST(SimTma, Box32ByteSwizzle) { expectBox(16, 32, 2); }
TEST(SimTma, BoxWithoutSwizzle) { expectBox(64, 0, 2); }
TEST(SimTma, BoxOfARank3Tensor) { expectBox(64, 128, 3); }

TEST(SimTma, CountersSeeTheBoxInsideTheTensor) {
  std::vector<float> out;
  std::vector<int64_t> rows;
  sim::LaunchCounts counts;
  Status s = run(64, 128, 2, Bug::None, out, &counts, &rows);
  ASSERT_TRUE(s.ok()) << s.toString();
  // Rows 4-9 of the tensor, columns 16-69: 54 f16 each.
  ASSERT_EQ(rows.size(), 6u);
  int64_t sectors = 0, bytes = 0;
  for (int64_t a : rows) {
    int64_t end = a + (kCols - kCol0) * 2;
    sectors += (end - 1) / 32 - a / 32 + 1;
    bytes += end - a;
  }
  const sim::AccessCounts *copy = nullptr;
  for (size_t i = 0; i < counts.accesses.size(); ++i)
    if (i % 6 == sim::LaunchCounts::slot(0, sim::Space::Global,
                                         sim::AccessKind::Load) &&
        counts.accesses[i].width == 64 * 8 * 2)
      copy = &counts.accesses[i];
  ASSERT_NE(copy, nullptr) << "no global load of the box's 1024 bytes";
  EXPECT_EQ(copy->requests, 1);
  EXPECT_EQ(copy->lanes, 1);
  EXPECT_EQ(copy->usefulBytes, bytes);
  EXPECT_EQ(copy->sectors, sectors);
  EXPECT_EQ(copy->idealSectors, (bytes + 31) / 32);
}

TEST(SimTma, ReadBeforeTheMbarrierCompletesIsReported) {
  std::vector<float> out;
  simtest::expectReport(
      run(64, 128, 2, Bug::ReadBeforeWait, out),
      {"that a TMA copy writes before waiting on mbarrier 0 for the phase "
       "that copy completes (phase 0, parity 0)",
       "memref.load"});
}

TEST(SimTma, TransactionBytesTheCopyCannotCompleteAreADeadlock) {
  std::vector<float> out;
  simtest::expectReport(run(64, 128, 2, Bug::TxTooLarge, out),
                        {"deadlock", "128 threads (0, 1, 2, 3, ...) wait on "
                                     "mbarrier 0 for phase parity 0, which "
                                     "never completes (0 of 1 arrivals and 16 "
                                     "transaction bytes outstanding)"});
}

} // namespace
