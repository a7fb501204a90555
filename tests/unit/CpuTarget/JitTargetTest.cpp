//===- JitTargetTest.cpp - TESSERA_JIT_CPU and the conversion routines ----===//

#include "tessera/Target/CPU/JitTarget.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

using namespace tessera;

namespace {

TEST(JitTarget, FollowsTheEnvironment) {
  StatusOr<cpu::JitTarget> t = cpu::jitTarget();
  ASSERT_TRUE(t.ok()) << t.status().message();
  const char *env = std::getenv("TESSERA_JIT_CPU");
  std::string want = env ? env : "";
  if (want.empty() || want == "host") {
    EXPECT_FALSE(t->forced);
    EXPECT_FALSE(t->features.empty());
    EXPECT_NE(t->describe().find("host"), std::string::npos);
  } else {
    EXPECT_TRUE(t->forced);
    EXPECT_EQ(t->cpu, want);
    EXPECT_NE(t->describe().find("TESSERA_JIT_CPU"), std::string::npos);
  }
}

#if defined(__x86_64__)
TEST(JitTarget, BaselineX86HasNoVectorExtensions) {
  cpu::JitTarget t;
  t.triple = "x86_64-unknown-linux-gnu";
  t.cpu = "x86-64";
  t.forced = true;
  EXPECT_TRUE(t.hasFeature("sse2"));
  for (const char *f : {"avx", "avx2", "f16c", "avx512f", "avx512bf16"})
    EXPECT_FALSE(t.hasFeature(f)) << f;
  t.cpu = "x86-64-v4";
  EXPECT_TRUE(t.hasFeature("avx512f"));
}
#endif

#if defined(__x86_64__) && defined(__FLT16_MAX__)
template <typename Fn> Fn routine(const char *name) {
  for (const cpu::RuntimeRoutine &r : cpu::floatConversionRoutines())
    if (std::string(r.name) == name)
      return reinterpret_cast<Fn>(r.address);
  return nullptr;
}

uint16_t bits(_Float16 h) {
  uint16_t b;
  std::memcpy(&b, &h, sizeof(b));
  return b;
}

_Float16 half(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, sizeof(h));
  return h;
}

/// APFloat's round-to-nearest-even conversion of `x` into `sem`, as bits.
template <typename T> uint16_t oracle(T x, const llvm::fltSemantics &sem) {
  llvm::APFloat f(x);
  bool lost;
  f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

bool isNaNBits(uint16_t b, int manBits) {
  uint16_t exp = static_cast<uint16_t>((0x7fff >> manBits) << manBits);
  return (b & exp) == exp && (b & ((1u << manBits) - 1)) != 0;
}

std::vector<float> probeFloats() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.5f,
                          65504.0f,
                          65519.0f,
                          65520.0f,
                          1e30f,
                          std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::denorm_min(),
                          std::ldexp(1.0f, -24),
                          std::ldexp(1.0f, -25),
                          std::ldexp(3.0f, -26),
                          1.00390625f, // a bf16 tie (1 + 2^-8)
                          1.01171875f, // a bf16 tie rounding up (1 + 3*2^-8)
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  std::mt19937 gen(7);
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 200000; ++i) {
    uint32_t b = any(gen);
    float f;
    std::memcpy(&f, &b, sizeof(f));
    if (!std::isnan(f))
      v.push_back(f);
  }
  return v;
}

TEST(FloatConversions, EveryRoutineIsProvided) {
  for (const char *name : {"__truncsfbf2", "__truncdfbf2", "__truncsfhf2",
                           "__truncdfhf2", "__extendhfsf2"})
    EXPECT_NE(routine<void (*)()>(name), nullptr) << name;
}

TEST(FloatConversions, TruncateFloatMatchesAPFloat) {
  auto toBf16 = routine<_Float16 (*)(float)>("__truncsfbf2");
  auto toF16 = routine<_Float16 (*)(float)>("__truncsfhf2");
  ASSERT_TRUE(toBf16 && toF16);
  for (float x : probeFloats()) {
    ASSERT_EQ(bits(toBf16(x)), oracle(x, llvm::APFloat::BFloat())) << x;
    ASSERT_EQ(bits(toF16(x)), oracle(x, llvm::APFloat::IEEEhalf())) << x;
  }
}

TEST(FloatConversions, TruncateDoubleRoundsOnce) {
  auto toBf16 = routine<_Float16 (*)(double)>("__truncdfbf2");
  auto toF16 = routine<_Float16 (*)(double)>("__truncdfhf2");
  ASSERT_TRUE(toBf16 && toF16);
  // Just above a bf16 tie: through f32 it would become the tie and round to
  // even (1.0); rounded once it goes up.
  double aboveTie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(bits(toBf16(aboveTie)), 0x3f81);
  double aboveHalfTie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(bits(toF16(aboveHalfTie)), 0x3c01);
  for (float f : probeFloats()) {
    double x = static_cast<double>(f) * (1.0 + std::ldexp(1.0, -30));
    ASSERT_EQ(bits(toBf16(x)), oracle(x, llvm::APFloat::BFloat())) << x;
    ASSERT_EQ(bits(toF16(x)), oracle(x, llvm::APFloat::IEEEhalf())) << x;
  }
}

TEST(FloatConversions, NaNStaysQuietNaN) {
  auto toBf16 = routine<_Float16 (*)(float)>("__truncsfbf2");
  auto toF16 = routine<_Float16 (*)(float)>("__truncsfhf2");
  auto widen = routine<float (*)(_Float16)>("__extendhfsf2");
  ASSERT_TRUE(toBf16 && toF16 && widen);
  for (uint32_t b : {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fffffffu}) {
    float x;
    std::memcpy(&x, &b, sizeof(x));
    uint16_t bf = bits(toBf16(x)), h = bits(toF16(x));
    EXPECT_TRUE(isNaNBits(bf, 7)) << std::hex << b;
    EXPECT_TRUE(bf & 0x40) << "quiet bit, " << std::hex << b;
    EXPECT_EQ(bf >> 15, b >> 31);
    EXPECT_TRUE(isNaNBits(h, 10)) << std::hex << b;
    EXPECT_TRUE(h & 0x200) << "quiet bit, " << std::hex << b;
    EXPECT_TRUE(std::isnan(widen(half(h))));
  }
}

TEST(FloatConversions, WidenHalfIsExactForEveryValue) {
  auto widen = routine<float (*)(_Float16)>("__extendhfsf2");
  ASSERT_TRUE(widen);
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    llvm::APFloat want(llvm::APFloat::IEEEhalf(), llvm::APInt(16, b));
    bool lost;
    want.convert(llvm::APFloat::IEEEsingle(),
                 llvm::APFloat::rmNearestTiesToEven, &lost);
    float got = widen(half(static_cast<uint16_t>(b)));
    if (want.isNaN()) {
      ASSERT_TRUE(std::isnan(got)) << b;
      continue;
    }
    uint32_t gotBits;
    std::memcpy(&gotBits, &got, sizeof(gotBits));
    ASSERT_EQ(gotBits, want.bitcastToAPInt().getZExtValue()) << b;
  }
}
#endif

} // namespace
