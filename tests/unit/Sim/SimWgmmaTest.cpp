//===- SimWgmmaTest.cpp - the sim's warpgroup matrix products -------------===//
//
// Hand-written gpu-dialect kernels issue `nvvm.wgmma.mma_async` on operands
// that the test lays out in the block's shared arena, and store their
// accumulators; the products are checked against a plain loop. The
// layouts are written the way the GPU lowering's copies and Triton's
// sm_90a GEMM lay them out (XOR-swizzled 16-byte chunks; B's N split into
// 64-column atoms), not through the simulator's descriptor decoding, and
// the descriptors carry the offsets Triton's GEMM puts in its own
// (A: 64-byte swizzle, SBO 512; B transposed: 128-byte swizzle, LBO 4096,
// SBO 1024). Broken kernels check the warpgroup rules the sim enforces.
//
//===----------------------------------------------------------------------===//

#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace tessera;

namespace {

using simtest::expectReport;

constexpr int64_t kM = 64, kN = 128, kK = 32;
constexpr int64_t kArenaBytes = 16384;
/// A (kM x kK, K contiguous) at offset 0, B at 8192.
constexpr int64_t kOffsetB = 8192;

/// The f16 bits of `x`, a small integer or half-integer (exact in f16).
uint16_t toF16(float x) {
  // x = s * 2^e * 1.f with |x| < 2^11: encode by hand.
  if (x == 0.0f)
    return 0;
  uint16_t sign = x < 0 ? 0x8000 : 0;
  float a = x < 0 ? -x : x;
  int e = 0;
  while (a >= 2.0f) {
    a /= 2.0f;
    ++e;
  }
  while (a < 1.0f) {
    a *= 2.0f;
    --e;
  }
  auto frac = static_cast<uint16_t>((a - 1.0f) * 1024.0f);
  return sign | static_cast<uint16_t>((e + 15) << 10) | frac;
}

/// Operand values: small integers, exact in f16 and in their f32 products.
float valueA(int64_t m, int64_t k) { return float((m * 3 + k * 5) % 7 - 3); }
float valueB(int64_t k, int64_t n) { return float((k * 2 + n * 7) % 5 - 2); }

/// Byte offset of element (row, col) of a block of `rowBytes`-byte rows of
/// f16, its 16-byte chunks XOR-swizzled by row: chunk ^ (row / perPhase)
/// % maxPhase, 128 bytes per phase, as the GPU lowering's copies write
/// their shared blocks.
int64_t swizzled(int64_t row, int64_t col, int64_t rowBytes) {
  int64_t perPhase = std::max<int64_t>(1, 128 / rowBytes);
  int64_t maxPhase = std::min<int64_t>(8, rowBytes / 16);
  int64_t chunk = col * 2 / 16, within = col * 2 % 16;
  return row * rowBytes + (chunk ^ ((row / perPhase) % maxPhase)) * 16 + within;
}

/// Thread code for K step `step` with A from registers: words
/// %word<step>_j, j < 4, each two f16 elements of valueA. Element h of
/// thread (warp w, lane 4 g + q) is A(16 w + g + 8 (h/2 % 2), 16 step +
/// 2 q + h % 2 + 8 (h/4)) (PTX ISA, wgmma .m64nNk16 register fragment of A).
std::string registerFragment(int64_t step) {
  std::string s, p = "%f" + std::to_string(step) + "_";
  auto let = [&](const std::string &name, const std::string &rhs) {
    s += "        " + name + " = " + rhs + "\n";
  };
  auto index = [&](const std::string &name, int64_t v) {
    let(name, "arith.constant " + std::to_string(v) + " : index");
  };
  for (int64_t v : {3, 4, 5, 7, 16, 32})
    index(p + "c" + std::to_string(v), v);
  let(p + "w", "arith.divui %tid, " + p + "c32 : index");
  let(p + "lane", "arith.remui %tid, " + p + "c32 : index");
  let(p + "g", "arith.divui " + p + "lane, " + p + "c4 : index");
  let(p + "q", "arith.remui " + p + "lane, " + p + "c4 : index");
  let(p + "w16", "arith.muli " + p + "w, " + p + "c16 : index");
  let(p + "r0", "arith.addi " + p + "w16, " + p + "g : index");
  let(p + "q2", "arith.addi " + p + "q, " + p + "q : index");
  for (int64_t j = 0; j < 4; ++j) {
    std::string js = p + std::to_string(j) + "_", halves;
    for (int64_t e = 0; e < 2; ++e) {
      int64_t h = 2 * j + e;
      std::string x = js + std::to_string(e) + "_";
      index(x + "dr", 8 * (h / 2 % 2));
      index(x + "dc", 16 * step + h % 2 + 8 * (h / 4));
      // valueA(row, col) = (3 row + 5 col) % 7 - 3.
      let(x + "row", "arith.addi " + p + "r0, " + x + "dr : index");
      let(x + "col", "arith.addi " + p + "q2, " + x + "dc : index");
      let(x + "a", "arith.muli " + x + "row, " + p + "c3 : index");
      let(x + "b", "arith.muli " + x + "col, " + p + "c5 : index");
      let(x + "sum", "arith.addi " + x + "a, " + x + "b : index");
      let(x + "mod", "arith.remui " + x + "sum, " + p + "c7 : index");
      let(x + "i", "arith.index_cast " + x + "mod : index to i32");
      let(x + "m3", "arith.constant 3 : i32");
      let(x + "v", "arith.subi " + x + "i, " + x + "m3 : i32");
      let(x + "h", "arith.sitofp " + x + "v : i32 to f16");
      halves += (e ? ", " : "") + x + "h";
    }
    let(js + "pair", "vector.from_elements " + halves + " : vector<2xf16>");
    let(js + "bits",
        "vector.bitcast " + js + "pair : vector<2xf16> to " + "vector<1xi32>");
    let("%word" + std::to_string(step) + "_" + std::to_string(j),
        "vector.extract " + js + "bits[0] : i32 from vector<1xi32>");
  }
  return s;
}

/// The kernel: 128 threads, wgmma over K in 16-element steps, every
/// thread's accumulators stored to out[tid * 64 ...]. `transposeB`: B is
/// stored K x N (MN-major); otherwise N x K (K-major). `fence`: whether the
/// kernel issues wgmma.fence first. `issuers`: threads below it issue.
/// `wait`: whether it commits and waits, then stores the accumulators
/// (without, it stores nothing). `overwrite`: thread 0 stores to A's first
/// element after the commit, before the wait (1) or after the wait and a
/// barrier (2); 0: it does not. `readEarly`: every thread stores its first
/// accumulator between the commit and the wait. `registerA`: A comes from
/// registers (the GPU lowering's inline-PTX form), each thread computing
/// its fragment of valueA as the PTX ISA lays out wgmma's m64k16 A.
std::string wgmmaKernel(bool transposeB, bool fence = true,
                        int64_t issuers = 128, bool wait = true,
                        int overwrite = 0, bool readEarly = false,
                        bool registerA = false) {
  std::string fields;
  for (int64_t i = 0; i < kN / 2; ++i)
    fields += std::string(i ? ", " : "") + "f32";
  const std::string acc = "!llvm.struct<(" + fields + ")>";
  // Descriptor constants: swizzle mode (bits 62-63), SBO and LBO in 16-byte
  // units. A: 64-byte swizzle (mode 2), SBO 512. B transposed: 128-byte
  // swizzle (mode 1), LBO 4096, SBO 1024; B K-major (N rows of 64 bytes):
  // like A.
  uint64_t constA = (uint64_t(2) << 62) | (uint64_t(512 / 16) << 32);
  uint64_t constB = transposeB
                        ? (uint64_t(1) << 62) | (uint64_t(1024 / 16) << 32) |
                              (uint64_t(4096 / 16) << 16)
                        : constA;
  // A K step moves 32 bytes along A's rows; along B 16 rows of 256 bytes
  // (transposed) or 32 bytes.
  int64_t stepA = 32, stepB = transposeB ? 2048 : 32;
  std::string s = R"(
module {
  gpu.module @m {
    gpu.func @k(%out: memref<?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 16384 : i64} {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8192xf16, #gpu.address_space<workgroup>>
      %p = memref.extract_aligned_pointer_as_index %v : memref<8192xf16, #gpu.address_space<workgroup>> -> index
      %pi = arith.index_cast %p : index to i64
      %c4 = arith.constant 4 : i64
      %mask = arith.constant 16383 : i64
      %sh = arith.shrui %pi, %c4 : i64
      %base = arith.andi %sh, %mask : i64
      %cA = arith.constant )" +
                  std::to_string(int64_t(constA)) + R"( : i64
      %cB = arith.constant )" +
                  std::to_string(int64_t(constB)) + R"( : i64
      %zero = arith.constant 0.0 : f32
      %acc0 = llvm.mlir.poison : )" +
                  acc + "\n";
  std::string cur = "%acc0";
  for (int64_t i = 0; i < kN / 2; ++i) {
    std::string next = "%a" + std::to_string(i);
    s += "      " + next + " = llvm.insertvalue %zero, " + cur + "[" +
         std::to_string(i) + "] : " + acc + "\n";
    cur = next;
  }
  s += "      %c" + std::to_string(issuers) + " = arith.constant " +
       std::to_string(issuers) + " : index\n";
  s += "      %issues = arith.cmpi ult, %tid, %c" + std::to_string(issuers) +
       " : index\n";
  s += "      %d = scf.if %issues -> (" + acc + ") {\n";
  if (fence)
    s += "        nvvm.wgmma.fence.aligned\n";
  std::string in = cur;
  for (int64_t step = 0; step < kK / 16; ++step) {
    std::string st = std::to_string(step);
    s += "        %oa" + st + " = arith.constant " +
         std::to_string(step * stepA / 16) + " : i64\n";
    s += "        %ob" + st + " = arith.constant " +
         std::to_string((kOffsetB + step * stepB) / 16) + " : i64\n";
    s += "        %la" + st + " = arith.addi %base, %oa" + st + " : i64\n";
    s += "        %lb" + st + " = arith.addi %base, %ob" + st + " : i64\n";
    s += "        %da" + st + " = arith.ori %la" + st + ", %cA : i64\n";
    s += "        %db" + st + " = arith.ori %lb" + st + ", %cB : i64\n";
    std::string out = "%r" + st;
    if (registerA) {
      s += registerFragment(step);
      std::string asmOperands = "%word" + st + "_0, %word" + st + "_1, %word" +
                                st + "_2, %word" + st + "_3, %db" + st;
      std::string constraints, types = "i32, i32, i32, i32, i64";
      for (int64_t i = 0; i < kN / 2; ++i)
        constraints += "=f,";
      constraints += "r,r,r,r,l";
      for (int64_t i = 0; i < kN / 2; ++i) {
        std::string is = std::to_string(i);
        s += "        %in" + st + "_" + is + " = llvm.extractvalue " + in +
             "[" + is + "] : " + acc + "\n";
        asmOperands += ", %in" + st + "_" + is;
        constraints += "," + is;
        types += ", f32";
      }
      // The text is never assembled here; the config describes it (N,
      // B transposed, scale-d, A from registers).
      int64_t config = kN | (transposeB ? 1 << 13 : 0) | (1 << 14) | (1 << 15);
      s += "        " + out +
           " = llvm.inline_asm has_side_effects asm_dialect = att "
           "{tile.wgmma = " +
           std::to_string(config) + " : i64} \"wgmma\", \"" + constraints +
           "\" " + asmOperands + " : (" + types + ") -> " + acc + "\n";
      in = out;
      continue;
    }
    s += "        " + out + " = nvvm.wgmma.mma_async %da" + st + ", %db" + st +
         ", " + in + ", #nvvm.shape<m = 64, n = " + std::to_string(kN) +
         ", k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, "
         "<one>, " +
         (transposeB ? "<row>" : "<col>") + "] : " + acc + " -> " + acc + "\n";
    in = out;
  }
  std::string store = "        %first = arith.cmpi eq, %tid, %c0 : index\n"
                      "        scf.if %first {\n"
                      "          %h = arith.constant 0.0 : f16\n"
                      "          memref.store %h, %v[%c0] : memref<8192xf16, "
                      "#gpu.address_space<workgroup>>\n"
                      "        }\n";
  if (wait) {
    s += "        nvvm.wgmma.commit.group.sync.aligned\n";
    if (overwrite == 1)
      s += store;
    if (readEarly)
      s += "        %early = llvm.extractvalue " + in + "[0] : " + acc +
           "\n        memref.store %early, %out[%c0] : memref<?xf32>\n";
    s += "        nvvm.wgmma.wait.group.sync.aligned 0\n";
    if (overwrite == 2)
      s += "        gpu.barrier\n" + store;
  }
  s += "        scf.yield " + in + " : " + acc + "\n";
  s += "      } else {\n        scf.yield " + cur + " : " + acc + "\n      }\n";
  s += "      %c64 = arith.constant 64 : index\n";
  s += "      %row = arith.muli %tid, %c64 : index\n";
  for (int64_t i = 0; wait && i < kN / 2; ++i) {
    std::string is = std::to_string(i);
    s +=
        "      %x" + is + " = llvm.extractvalue %d[" + is + "] : " + acc + "\n";
    s += "      %i" + is + " = arith.constant " + is + " : index\n";
    s += "      %o" + is + " = arith.addi %row, %i" + is + " : index\n";
    s +=
        "      memref.store %x" + is + ", %out[%o" + is + "] : memref<?xf32>\n";
  }
  s += R"(      gpu.return
    }
  }
}
)";
  return s;
}

struct Arena {
  unsigned char *bytes;
  Arena()
      : bytes(static_cast<unsigned char *>(
            std::aligned_alloc(1024, kArenaBytes))) {
    std::memset(bytes, 0, kArenaBytes);
  }
  ~Arena() { std::free(bytes); }
  void put(int64_t offset, float x) {
    uint16_t h = toF16(x);
    std::memcpy(bytes + offset, &h, sizeof h);
  }
};

/// Lays out A and B as the kernel's descriptors describe them.
void fill(Arena &arena, bool transposeB) {
  for (int64_t m = 0; m < kM; ++m)
    for (int64_t k = 0; k < kK; ++k)
      arena.put(swizzled(m, k, kK * 2), valueA(m, k));
  for (int64_t k = 0; k < kK; ++k)
    for (int64_t n = 0; n < kN; ++n)
      arena.put(kOffsetB +
                    (transposeB
                         // 64-column atoms of K rows of 128 bytes.
                         ? (n / 64) * (kK * 128) + swizzled(k, n % 64, 128)
                         : swizzled(n, k, kK * 2)),
                valueB(k, n));
}

Status run(const std::string &ir, Arena &arena, std::vector<float> &out) {
  out.assign(128 * 64, -1.0f);
  std::vector<int64_t> slots;
  simtest::addMemref(slots, out.data(), int64_t(out.size()));
  simtest::addMemref(slots, arena.bytes, kArenaBytes);
  return simtest::runBlock(ir, slots, arena.bytes, kArenaBytes);
}

/// What register `i` of thread `t` holds after the kernel: its element of
/// A B under the wgmma m64nNk16 fragment layout.
float expected(int64_t t, int64_t i) {
  int64_t w = t / 32, g = (t % 32) / 4, q = t % 4;
  int64_t row = 16 * w + g + 8 * ((i % 4) / 2);
  int64_t col = 8 * (i / 4) + 2 * q + i % 2;
  float want = 0;
  for (int64_t k = 0; k < kK; ++k)
    want += valueA(row, k) * valueB(k, col);
  return want;
}

/// Runs `ir` on operands laid out with B stored transposed or not.
Status runOn(bool transposedB, const std::string &ir, std::vector<float> &out) {
  Arena arena;
  fill(arena, transposedB);
  return run(ir, arena, out);
}

/// Every accumulator register of every thread holds its element of A B.
void expectProduct(const std::vector<float> &out) {
  for (int64_t t = 0; t < 128; ++t)
    for (int64_t i = 0; i < kN / 2; ++i)
      ASSERT_EQ(out[size_t(t * 64 + i)], expected(t, i))
          << "thread " << t << " register " << i;
}

TEST(SimWgmma, SwizzledKMajorAAndTransposedB) {
  std::vector<float> out;
  Status s = runOn(/*transposedB=*/true, wgmmaKernel(/*transposeB=*/true), out);
  ASSERT_TRUE(s.ok()) << s.toString();
  expectProduct(out);
}

TEST(SimWgmma, SwizzledKMajorAAndB) {
  std::vector<float> out;
  Status s =
      runOn(/*transposedB=*/false, wgmmaKernel(/*transposeB=*/false), out);
  ASSERT_TRUE(s.ok()) << s.toString();
  expectProduct(out);
}

// A from registers (the GPU lowering's form for an operand it computed,
// such as attention's P): the same product, B from shared memory either
// way; the fence rule holds as for shared-memory operands.
TEST(SimWgmma, RegisterA) {
  for (bool transposedB : {true, false}) {
    std::vector<float> out;
    Status s = runOn(transposedB,
                     wgmmaKernel(transposedB, /*fence=*/true, /*issuers=*/128,
                                 /*wait=*/true, /*overwrite=*/0,
                                 /*readEarly=*/false, /*registerA=*/true),
                     out);
    ASSERT_TRUE(s.ok()) << s.toString();
    expectProduct(out);
  }
  std::vector<float> out;
  expectReport(runOn(/*transposedB=*/true,
                     wgmmaKernel(/*transposeB=*/true, /*fence=*/false,
                                 /*issuers=*/128, /*wait=*/true,
                                 /*overwrite=*/0, /*readEarly=*/false,
                                 /*registerA=*/true),
                     out),
               {"without a wgmma.fence", "llvm.inline_asm"});
}

// A product read through the wrong swizzle mode reads other elements: the
// decoding is not forgiving.
TEST(SimWgmma, LayoutOtherThanTheDescriptorsGivesAnotherProduct) {
  std::vector<float> out;
  Status s =
      runOn(/*transposedB=*/false, wgmmaKernel(/*transposeB=*/true), out);
  ASSERT_TRUE(s.ok()) << s.toString();
  int64_t wrong = 0;
  for (int64_t t = 0; t < 128; ++t)
    for (int64_t i = 0; i < kN / 2; ++i)
      wrong += out[size_t(t * 64 + i)] != expected(t, i);
  EXPECT_GT(wrong, 128 * 32);
}

TEST(SimWgmma, MissingFenceIsReported) {
  std::vector<float> out;
  expectReport(runOn(/*transposedB=*/true,
                     wgmmaKernel(/*transposeB=*/true, /*fence=*/false), out),
               {"without a wgmma.fence", "nvvm.wgmma.mma_async"});
}

TEST(SimWgmma, WarpgroupThatDoesNotIssueTogetherIsReported) {
  std::vector<float> out;
  expectReport(runOn(/*transposedB=*/true,
                     wgmmaKernel(/*transposeB=*/true, /*fence=*/true,
                                 /*issuers=*/96),
                     out),
               {"warpgroup collective divergence", "thread 96"});
}

// Products a thread never waits for fail the launch when it ends, naming
// those left pending.
TEST(SimWgmma, ProductsNotWaitedForAreReported) {
  std::vector<float> out;
  expectReport(runOn(/*transposedB=*/true,
                     wgmmaKernel(/*transposeB=*/true, /*fence=*/true,
                                 /*issuers=*/128, /*wait=*/false),
                     out),
               {"not waited for (2 uncommitted"});
}

// The operands stay in use until every thread of the warpgroup has waited:
// a store to them between the commit and the wait fails the launch, naming
// the writer; the same store after the wait and a barrier is fine.
TEST(SimWgmma, OperandOverwrittenBeforeTheWaitIsReported) {
  for (int overwrite : {1, 2}) {
    Arena arena;
    fill(arena, /*transposeB=*/true);
    std::vector<float> out;
    Status s = run(wgmmaKernel(/*transposeB=*/true, /*fence=*/true,
                               /*issuers=*/128, /*wait=*/true, overwrite),
                   arena, out);
    if (overwrite == 2) {
      ASSERT_TRUE(s.ok()) << s.toString();
      expectProduct(out);
      continue;
    }
    expectReport(s, {"thread 0 writes shared byte offset 0 while a "
                     "wgmma.mma_async of warpgroup 0 may still read",
                     "memref.store"});
  }
}

// The accumulators are undefined until wait_group retires their product:
// a thread that stores one between the commit and the wait fails the
// launch, naming the store.
TEST(SimWgmma, AccumulatorReadBeforeTheWaitIsReported) {
  std::vector<float> out;
  expectReport(runOn(/*transposedB=*/true,
                     wgmmaKernel(/*transposeB=*/true, /*fence=*/true,
                                 /*issuers=*/128, /*wait=*/true,
                                 /*overwrite=*/0, /*readEarly=*/true),
                     out),
               {"reads the accumulators of wgmma.mma_async product 2 of "
                "warpgroup 0 before a wgmma.wait_group retires it",
                "memref.store"});
}

} // namespace
