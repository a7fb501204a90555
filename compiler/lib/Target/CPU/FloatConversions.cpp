//===- FloatConversions.cpp - Conversion routines given to the JIT --------===//
//
// Without AVX-512 BF16 or F16C, LLVM's x86 code generator rounds to bf16
// and f16, and widens f16, by calling routines that compiler runtimes
// provide under fixed names. Not every host's runtime has all of them
// (libgcc before GCC 13 has no bf16 routine), so every JIT gets these
// instead: the exact round-to-nearest-even conversions of
// tessera/Support/DType.h, independent of the host.
//
//===----------------------------------------------------------------------===//

#include "tessera/Target/CPU/JitTarget.h"

#include "tessera/Support/DType.h"

#include <cstdint>
#include <cstring>

using namespace ::tessera;

namespace {
// On x86-64, 16-bit floating-point arguments and results travel in the low
// bits of an SSE register; GCC and Clang pass _Float16 that way, which makes
// it the carrier for bf16 too (the routines only move bits through it).
#if defined(__x86_64__) && defined(__FLT16_MAX__)
using Half = _Float16;

Half fromBits(uint16_t bits) {
  Half h;
  std::memcpy(&h, &bits, sizeof(h));
  return h;
}

uint16_t toBits(Half h) {
  uint16_t b;
  std::memcpy(&b, &h, sizeof(b));
  return b;
}

/// `x` rounded once, straight from the double, into a 16-bit type.
uint16_t roundDouble(double x, DType type) {
  uint16_t bits;
  storeFromDouble(&bits, type, 0, x);
  return bits;
}

Half tessera_truncsfbf2(float x) { return fromBits(f32ToBF16Bits(x)); }
Half tessera_truncdfbf2(double x) {
  return fromBits(roundDouble(x, DType::BF16));
}
Half tessera_truncsfhf2(float x) { return fromBits(f32ToF16Bits(x)); }
Half tessera_truncdfhf2(double x) {
  return fromBits(roundDouble(x, DType::F16));
}
float tessera_extendhfsf2(Half h) { return f16BitsToF32(toBits(h)); }
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
