//===- FloatConversions.cpp - Conversion routines given to the JIT --------===//
//
// Without AVX-512 BF16 or F16C, LLVM's x86 code generator rounds to bf16
// and f16, and widens f16, by calling routines that compiler runtimes
// provide under fixed names. Not every host's runtime has all of them
// (libgcc before GCC 13 has no bf16 routine), so every JIT gets these
// instead: exact, round-to-nearest-even, and independent of the host.
//
//===----------------------------------------------------------------------===//

#include "tessera/Target/CPU/JitTarget.h"

#include <cmath>
#include <cstdint>
#include <cstring>

using namespace ::tessera;

namespace {
/// `value` rounded to nearest-even into the binary format with `expBits`
/// exponent and `manBits` mantissa bits (IEEE-style: subnormals, infinity,
/// NaN), as the format's bit pattern in the low bits.
uint32_t roundToFormat(double value, int expBits, int manBits) {
  const uint32_t sign = std::signbit(value) ? 1u << (expBits + manBits) : 0u;
  const uint32_t expMask = ((1u << expBits) - 1) << manBits;
  if (std::isnan(value)) {
    // Quiet NaN with the top payload bits kept, as the instructions do.
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    uint32_t payload =
        static_cast<uint32_t>((bits >> (52 - manBits)) & ((1u << manBits) - 1));
    return sign | expMask | payload | (1u << (manBits - 1));
  }
  double a = std::fabs(value);
  if (a == 0)
    return sign;
  const int bias = (1 << (expBits - 1)) - 1;
  const int minExp = 1 - bias;
  if (std::isinf(a))
    return sign | expMask;
  int e;
  (void)std::frexp(a, &e); // a = f * 2^e, f in [0.5, 1)
  int exponent = std::max(e - 1, minExp);
  // Units of the last place at this exponent: exact scaling by 2^k, then
  // one rounding to nearest-even (the default floating-point environment).
  double units = std::nearbyint(std::ldexp(a, manBits - exponent));
  if (units >= std::ldexp(1.0, manBits + 1)) { // carried into the next binade
    units /= 2;
    ++exponent;
  }
  if (exponent > bias)
    return sign | expMask; // overflow to infinity
  uint32_t mantissa = static_cast<uint32_t>(units);
  if (mantissa < (1u << manBits)) // subnormal (or rounded to zero)
    return sign | mantissa;
  return sign | (static_cast<uint32_t>(exponent + bias) << manBits) |
         (mantissa - (1u << manBits));
}

// On x86-64, 16-bit floating-point arguments and results travel in the low
// bits of an SSE register; GCC and Clang pass _Float16 that way, which makes
// it the carrier for bf16 too (the routines only move bits through it).
#if defined(__x86_64__) && defined(__FLT16_MAX__)
using Half = _Float16;

Half fromBits(uint32_t bits) {
  uint16_t b = static_cast<uint16_t>(bits);
  Half h;
  std::memcpy(&h, &b, sizeof(h));
  return h;
}

uint16_t toBits(Half h) {
  uint16_t b;
  std::memcpy(&b, &h, sizeof(b));
  return b;
}

Half tessera_truncsfbf2(float x) { return fromBits(roundToFormat(x, 8, 7)); }
Half tessera_truncdfbf2(double x) { return fromBits(roundToFormat(x, 8, 7)); }
Half tessera_truncsfhf2(float x) { return fromBits(roundToFormat(x, 5, 10)); }
Half tessera_truncdfhf2(double x) { return fromBits(roundToFormat(x, 5, 10)); }
float tessera_extendhfsf2(Half h) {
  uint32_t bits = toBits(h);
  uint32_t sign = (bits >> 15) & 1, exponent = (bits >> 10) & 0x1f,
           mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0x1f) {
    if (mantissa == 0) {
      magnitude = INFINITY;
    } else {
      uint32_t f = 0x7fc00000u | (mantissa << 13);
      std::memcpy(&magnitude, &f, sizeof(f));
    }
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400),
                           static_cast<int>(exponent) - 25);
  }
  return sign ? -magnitude : magnitude;
}
#define TESSERA_HAVE_FLOAT_ROUTINES 1
#endif
} // namespace

const std::vector<cpu::RuntimeRoutine> &cpu::floatConversionRoutines() {
#ifdef TESSERA_HAVE_FLOAT_ROUTINES
  static const std::vector<RuntimeRoutine> routines = {
      {"__truncsfbf2", reinterpret_cast<void *>(&tessera_truncsfbf2)},
      {"__truncdfbf2", reinterpret_cast<void *>(&tessera_truncdfbf2)},
      {"__truncsfhf2", reinterpret_cast<void *>(&tessera_truncsfhf2)},
      {"__truncdfhf2", reinterpret_cast<void *>(&tessera_truncdfhf2)},
      {"__extendhfsf2", reinterpret_cast<void *>(&tessera_extendhfsf2)},
  };
#else
  static const std::vector<RuntimeRoutine> routines;
#endif
  return routines;
}
