//===- DType.cpp - Element types of Tessera tensors -----------------------===//
//
// Names, sizes and exact host-side conversions of the Tessera element types.
// The float conversions use integer bit manipulation only (no _Float16, no
// compiler builtins) and round to nearest, ties to even, producing the same
// bits as llvm::APFloat::convert with rmNearestTiesToEven for every input,
// NaN payloads included.
//
//===----------------------------------------------------------------------===//

#include "tessera/Support/DType.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

using namespace tessera;

namespace {

/// Layout of a binary floating-point format with an implicit leading bit.
/// `FiniteOnly` selects the OCP "FN" encoding: no infinities, the all-ones
/// exponent field still holds normal numbers and only S.1..1.1..1 is NaN.
template <int ExpBits, int ManBits, bool FiniteOnly> struct FloatLayout {
  static constexpr int kExpBits = ExpBits;
  static constexpr int kManBits = ManBits;
  static constexpr bool kFiniteOnly = FiniteOnly;
  static constexpr int kBias = (1 << (ExpBits - 1)) - 1;
  /// Exponent of the smallest normal number.
  static constexpr int kMinExp = 1 - kBias;
  static constexpr uint64_t kSignBit = uint64_t(1) << (ExpBits + ManBits);
  static constexpr uint64_t kExpMask = (uint64_t(1) << ExpBits) - 1;
  static constexpr uint64_t kManMask = (uint64_t(1) << ManBits) - 1;
  /// Magnitude bits of +infinity (IEEE-like layouts only).
  static constexpr uint64_t kInfBits = kExpMask << ManBits;
  /// Most significant mantissa bit; set in every quiet NaN.
  static constexpr uint64_t kQuietBit = uint64_t(1) << (ManBits - 1);
  /// Magnitude bits of the single NaN of a finite-only layout.
  static constexpr uint64_t kFiniteOnlyNaN = kSignBit - 1;
  static constexpr uint64_t kMaxFinite =
      FiniteOnly ? kFiniteOnlyNaN - 1 : kInfBits - 1;
};

using F64Layout = FloatLayout<11, 52, false>;
using F32Layout = FloatLayout<8, 23, false>;
using F16Layout = FloatLayout<5, 10, false>;
using BF16Layout = FloatLayout<8, 7, false>;
using F8E4M3Layout = FloatLayout<4, 3, true>;
using F8E5M2Layout = FloatLayout<5, 2, false>;

/// Rounds the positive value `sig * 2^exp2` (sig != 0) to `Dst` with ties to
/// even and returns its magnitude bits; overflow gives infinity, or NaN for
/// finite-only layouts. General but branchy: convertBits only uses it for
/// results below the normal range of `Dst`.
template <typename Dst> uint64_t roundMagnitude(uint64_t sig, int exp2) {
  int msb = 63 - std::countl_zero(sig);
  int exp = exp2 + msb; // floor(log2(value))
  // Results below the normal range share the subnormal quantum.
  int binadeExp = std::max(exp, Dst::kMinExp);
  int shift = binadeExp - Dst::kManBits - exp2;
  uint64_t scaled;
  if (shift <= 0) {
    scaled = sig << -shift; // Exact: the value has few significant bits.
  } else if (shift >= 64) {
    scaled = 0; // sig < 2^63 <= half a quantum: rounds to zero.
  } else {
    scaled = sig >> shift;
    uint64_t rest = sig & ((uint64_t(1) << shift) - 1);
    uint64_t half = uint64_t(1) << (shift - 1);
    if (rest > half || (rest == half && (scaled & 1)))
      ++scaled;
  }
  // `scaled` includes the implicit bit, so the exponent field is one less
  // than the biased exponent (0 for subnormals, whose binadeExp is kMinExp);
  // a carry out of the mantissa then bumps the exponent by itself.
  int64_t bits =
      (int64_t(binadeExp + Dst::kBias - 1) << Dst::kManBits) + int64_t(scaled);
  if (bits > int64_t(Dst::kMaxFinite))
    return Dst::kFiniteOnly ? Dst::kFiniteOnlyNaN : Dst::kInfBits;
  return uint64_t(bits);
}

/// Converts the bits of an IEEE value in layout `Src` to layout `Dst`.
/// NaNs keep the sign and the top payload bits and become quiet, as APFloat
/// does; a finite-only `Dst` has a single NaN per sign.
template <typename Src, typename Dst> uint64_t convertBits(uint64_t srcBits) {
  static_assert(!Src::kFiniteOnly, "source must be an IEEE layout");
  static_assert(Src::kManBits > Dst::kManBits, "must narrow the mantissa");
  uint64_t signOut = (srcBits & Src::kSignBit) ? Dst::kSignBit : 0;
  uint64_t expField = (srcBits >> Src::kManBits) & Src::kExpMask;
  uint64_t man = srcBits & Src::kManMask;
  if (expField == Src::kExpMask) {
    if (Dst::kFiniteOnly)
      return signOut | Dst::kFiniteOnlyNaN;
    if (man == 0)
      return signOut | Dst::kInfBits;
    return signOut | Dst::kInfBits | Dst::kQuietBit |
           (man >> (Src::kManBits - Dst::kManBits));
  }
  // Fast path for results in the normal range or overflowing: rebias the
  // exponent in place and round the dropped mantissa bits to nearest even;
  // a carry out of the mantissa bumps the exponent by itself.
  uint64_t magnitude = srcBits & (Src::kSignBit - 1);
  constexpr uint64_t kDstMinNormal = uint64_t(Dst::kMinExp + Src::kBias)
                                     << Src::kManBits;
  if (magnitude >= kDstMinNormal) {
    constexpr int kShift = Src::kManBits - Dst::kManBits;
    uint64_t rebiased =
        magnitude - (uint64_t(Src::kBias - Dst::kBias) << Src::kManBits);
    uint64_t rounded = (rebiased + ((uint64_t(1) << (kShift - 1)) - 1) +
                        ((rebiased >> kShift) & 1)) >>
                       kShift;
    if (rounded > Dst::kMaxFinite)
      return signOut |
             (Dst::kFiniteOnly ? Dst::kFiniteOnlyNaN : Dst::kInfBits);
    return signOut | rounded;
  }
  if (expField == 0) {
    if (man == 0)
      return signOut;
    return signOut |
           roundMagnitude<Dst>(man, Src::kMinExp - Src::kManBits);
  }
  uint64_t sig = man | (uint64_t(1) << Src::kManBits);
  int exp2 = int(expField) - Src::kBias - Src::kManBits;
  return signOut | roundMagnitude<Dst>(sig, exp2);
}

/// Widens the bits of a value in layout `Src` to f32 exactly. Every
/// subnormal of `Src` must be a normal f32 (true for f16 and the fp8 types).
template <typename Src> float widenToF32(uint32_t bits) {
  static_assert(Src::kMinExp - Src::kManBits >= F32Layout::kMinExp,
                "subnormals of Src must be normal in f32");
  uint32_t sign = (bits & Src::kSignBit) ? 0x80000000u : 0u;
  uint32_t expField = (bits >> Src::kManBits) & Src::kExpMask;
  uint32_t man = bits & Src::kManMask;
  uint32_t magnitude = bits & uint32_t(Src::kSignBit - 1);
  constexpr int kManShift = F32Layout::kManBits - Src::kManBits;
  bool isNaN = Src::kFiniteOnly ? magnitude == Src::kFiniteOnlyNaN
                                : (expField == Src::kExpMask && man != 0);
  uint32_t out;
  if (isNaN) {
    // Payload moves to the top of the f32 mantissa and the NaN is quieted.
    out = uint32_t(F32Layout::kInfBits | F32Layout::kQuietBit) |
          (man << kManShift);
  } else if (!Src::kFiniteOnly && expField == Src::kExpMask) {
    out = uint32_t(F32Layout::kInfBits);
  } else if (expField == 0) {
    if (man == 0) {
      out = 0;
    } else {
      // Renormalise: the leading set bit becomes the implicit bit.
      int msb = 31 - std::countl_zero(man);
      int exp = Src::kMinExp - Src::kManBits + msb;
      out = (uint32_t(exp + F32Layout::kBias) << F32Layout::kManBits) |
            ((man ^ (1u << msb)) << (F32Layout::kManBits - msb));
    }
  } else {
    int exp = int(expField) - Src::kBias;
    out = (uint32_t(exp + F32Layout::kBias) << F32Layout::kManBits) |
          (man << kManShift);
  }
  return std::bit_cast<float>(sign | out);
}

uint32_t floatBits(float x) { return std::bit_cast<uint32_t>(x); }
uint64_t doubleBits(double x) { return std::bit_cast<uint64_t>(x); }

/// Converts a finite or infinite double to int64 by truncation toward zero,
/// saturating at the int64 range (NaN gives 0), so that no cast is UB.
int64_t truncToInt64(double v) {
  if (std::isnan(v))
    return 0;
  // 2^63 is exactly representable; every double below it converts safely.
  constexpr double kTwo63 = 9223372036854775808.0;
  if (v >= kTwo63)
    return INT64_MAX;
  if (v < -kTwo63)
    return INT64_MIN;
  return static_cast<int64_t>(v);
}

template <typename T> T loadRaw(const void *data, size_t i) {
  T value;
  std::memcpy(&value, static_cast<const char *>(data) + i * sizeof(T),
              sizeof(T));
  return value;
}

template <typename T> void storeRaw(void *data, size_t i, T value) {
  std::memcpy(static_cast<char *>(data) + i * sizeof(T), &value, sizeof(T));
}

struct DTypeAlias {
  std::string_view name;
  DType type;
};

/// Every spelling parseDType accepts (canonical names first).
constexpr DTypeAlias kDTypeAliases[] = {
    {"f32", DType::F32},
    {"f16", DType::F16},
    {"bf16", DType::BF16},
    {"fp8_e4m3", DType::F8E4M3},
    {"fp8_e5m2", DType::F8E5M2},
    {"i8", DType::I8},
    {"i32", DType::I32},
    {"i64", DType::I64},
    {"bool", DType::Bool},
    {"fp6_e3m2", DType::F6E3M2},
    {"fp6_e2m3", DType::F6E2M3},
    {"fp4_e2m1", DType::F4E2M1},
    {"fp32", DType::F32},
    {"float32", DType::F32},
    {"float", DType::F32},
    {"fp16", DType::F16},
    {"float16", DType::F16},
    {"half", DType::F16},
    {"bfloat16", DType::BF16},
    {"float8_e4m3fn", DType::F8E4M3},
    {"fp8_e4m3fn", DType::F8E4M3},
    {"e4m3", DType::F8E4M3},
    {"float8_e5m2", DType::F8E5M2},
    {"e5m2", DType::F8E5M2},
    {"int8", DType::I8},
    {"int32", DType::I32},
    {"int", DType::I32},
    {"int64", DType::I64},
    {"boolean", DType::Bool},
    // Without block scales, the wider range of E3M2 serves more data than
    // E2M3's extra mantissa bit: "fp6" is fp6_e3m2.
    {"fp6", DType::F6E3M2},
    {"float6_e3m2fn", DType::F6E3M2},
    {"e3m2", DType::F6E3M2},
    {"float6_e2m3fn", DType::F6E2M3},
    {"e2m3", DType::F6E2M3},
    {"fp4", DType::F4E2M1},
    {"float4_e2m1fn", DType::F4E2M1},
    {"e2m1", DType::F4E2M1},
};

/// Exponent and mantissa widths of a packed type.
struct MiniLayout {
  int expBits, manBits;
};
MiniLayout miniLayout(DType t) {
  switch (t) {
  case DType::F6E3M2:
    return {3, 2};
  case DType::F6E2M3:
    return {2, 3};
  default:
    return {2, 1};
  }
}

/// Code `bits` (dtypeBits wide) of element i of a packed buffer.
uint8_t readPacked(const void *data, unsigned bits, size_t i) {
  const auto *p = static_cast<const uint8_t *>(data);
  size_t bit = i * bits, byte = bit / 8;
  unsigned shift = unsigned(bit % 8);
  unsigned word = p[byte];
  if (shift + bits > 8)
    word |= unsigned(p[byte + 1]) << 8;
  return uint8_t((word >> shift) & ((1u << bits) - 1));
}

void writePacked(void *data, unsigned bits, size_t i, uint8_t code) {
  auto *p = static_cast<uint8_t *>(data);
  size_t bit = i * bits, byte = bit / 8;
  unsigned shift = unsigned(bit % 8);
  unsigned mask = ((1u << bits) - 1) << shift;
  unsigned value = unsigned(code) << shift;
  p[byte] = uint8_t((p[byte] & ~mask) | (value & 0xFF));
  if (shift + bits > 8)
    p[byte + 1] = uint8_t((p[byte + 1] & ~(mask >> 8)) | ((value >> 8) & 0xFF));
}

} // namespace

const char *tessera::dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F8E4M3:
    return "fp8_e4m3";
  case DType::F8E5M2:
    return "fp8_e5m2";
  case DType::I8:
    return "i8";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::Bool:
    return "bool";
  case DType::F6E3M2:
    return "fp6_e3m2";
  case DType::F6E2M3:
    return "fp6_e2m3";
  case DType::F4E2M1:
    return "fp4_e2m1";
  }
  return "<invalid dtype>";
}

std::optional<DType> tessera::parseDType(std::string_view name) {
  for (const DTypeAlias &alias : kDTypeAliases)
    if (alias.name == name)
      return alias.type;
  return std::nullopt;
}

size_t tessera::dtypeSize(DType t) {
  switch (t) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F8E4M3:
  case DType::F8E5M2:
  case DType::I8:
  case DType::Bool:
  case DType::F6E3M2:
  case DType::F6E2M3:
  case DType::F4E2M1:
    return 1;
  case DType::I64:
    return 8;
  }
  return 0;
}

unsigned tessera::dtypeBits(DType t) {
  switch (t) {
  case DType::F6E3M2:
  case DType::F6E2M3:
    return 6;
  case DType::F4E2M1:
    return 4;
  default:
    return unsigned(8 * dtypeSize(t));
  }
}

bool tessera::isPackedDType(DType t) { return dtypeBits(t) < 8; }

size_t tessera::storageBytes(DType t, size_t elements) {
  return (elements * dtypeBits(t) + 7) / 8;
}

uint8_t tessera::encodePackedFloat(DType t, double v) {
  MiniLayout m = miniLayout(t);
  const int bias = (1 << (m.expBits - 1)) - 1, minExp = 1 - bias;
  const uint8_t maxCode = uint8_t((1u << (m.expBits + m.manBits)) - 1);
  const uint8_t signBit = uint8_t(1u << (m.expBits + m.manBits));
  if (std::isnan(v))
    return maxCode;
  uint8_t sign = std::signbit(v) ? signBit : 0;
  double a = std::fabs(v);
  double maxValue = decodePackedFloat(t, maxCode);
  if (a >= maxValue)
    return sign | maxCode;
  if (a == 0)
    return sign;
  // a = q * n with q the quantum of a's binade (of the subnormals below
  // the normal range); both steps are exact in double.
  int e;
  std::frexp(a, &e); // a in [2^(e-1), 2^e)
  int exp = std::max(e - 1, minExp);
  double q = std::ldexp(1.0, exp - m.manBits);
  double n = a / q, fl = std::floor(n), frac = n - fl;
  uint64_t r = uint64_t(fl);
  if (frac > 0.5 || (frac == 0.5 && (r & 1)))
    ++r;
  // r has manBits + 1 bits for a normal (a carry bumps the binade), fewer
  // for a subnormal: the code is (exp field, mantissa) laid end to end,
  // with the implicit bit landing in the exponent field.
  uint64_t code = uint64_t(exp - minExp) * (uint64_t(1) << m.manBits) + r;
  if (code > maxCode)
    code = maxCode;
  return sign | uint8_t(code);
}

double tessera::decodePackedFloat(DType t, uint8_t bits) {
  MiniLayout m = miniLayout(t);
  const int bias = (1 << (m.expBits - 1)) - 1;
  unsigned man = bits & ((1u << m.manBits) - 1);
  unsigned exp = (bits >> m.manBits) & ((1u << m.expBits) - 1);
  bool negative = (bits >> (m.expBits + m.manBits)) & 1;
  double v = exp == 0 ? std::ldexp(double(man), 1 - bias - m.manBits)
                      : std::ldexp(double(man + (1u << m.manBits)),
                                   int(exp) - bias - m.manBits);
  return negative ? -v : v;
}

bool tessera::isFloatDType(DType t) {
  return t == DType::F32 || isLowPrecisionFloat(t);
}

bool tessera::isIntegerDType(DType t) {
  return t == DType::I8 || t == DType::I32 || t == DType::I64;
}

bool tessera::isLowPrecisionFloat(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F8E4M3 ||
         t == DType::F8E5M2 || isPackedDType(t);
}

uint16_t tessera::f32ToF16Bits(float x) {
  return uint16_t(convertBits<F32Layout, F16Layout>(floatBits(x)));
}

float tessera::f16BitsToF32(uint16_t bits) {
  return widenToF32<F16Layout>(bits);
}

uint16_t tessera::f32ToBF16Bits(float x) {
  return uint16_t(convertBits<F32Layout, BF16Layout>(floatBits(x)));
}

float tessera::bf16BitsToF32(uint16_t bits) {
  // bf16 is the top half of an f32 (its subnormals are f32 subnormals), so
  // only NaNs need work: APFloat quiets them.
  uint32_t wide = uint32_t(bits) << 16;
  if ((wide & 0x7FFFFFFFu) > 0x7F800000u)
    wide |= uint32_t(F32Layout::kQuietBit);
  return std::bit_cast<float>(wide);
}

uint8_t tessera::f32ToF8E4M3Bits(float x) {
  return uint8_t(convertBits<F32Layout, F8E4M3Layout>(floatBits(x)));
}

float tessera::f8E4M3BitsToF32(uint8_t bits) {
  return widenToF32<F8E4M3Layout>(bits);
}

uint8_t tessera::f32ToF8E5M2Bits(float x) {
  return uint8_t(convertBits<F32Layout, F8E5M2Layout>(floatBits(x)));
}

float tessera::f8E5M2BitsToF32(uint8_t bits) {
  return widenToF32<F8E5M2Layout>(bits);
}

double tessera::loadAsDouble(const void *data, DType t, size_t i) {
  switch (t) {
  case DType::F32:
    return loadRaw<float>(data, i);
  case DType::F16:
    return f16BitsToF32(loadRaw<uint16_t>(data, i));
  case DType::BF16:
    return bf16BitsToF32(loadRaw<uint16_t>(data, i));
  case DType::F8E4M3:
    return f8E4M3BitsToF32(loadRaw<uint8_t>(data, i));
  case DType::F8E5M2:
    return f8E5M2BitsToF32(loadRaw<uint8_t>(data, i));
  case DType::I8:
    return loadRaw<int8_t>(data, i);
  case DType::I32:
    return loadRaw<int32_t>(data, i);
  case DType::I64:
    return double(loadRaw<int64_t>(data, i));
  case DType::Bool:
    return loadRaw<uint8_t>(data, i) != 0 ? 1.0 : 0.0;
  case DType::F6E3M2:
  case DType::F6E2M3:
  case DType::F4E2M1:
    return decodePackedFloat(t, readPacked(data, dtypeBits(t), i));
  }
  return 0.0;
}

void tessera::storeFromDouble(void *data, DType t, size_t i, double v) {
  // Floats round straight from the double with the same integer code as the
  // f32 conversions (no dependence on the FPU rounding mode); going through
  // f32 first would round twice and could miss the correctly rounded value.
  switch (t) {
  case DType::F32:
    storeRaw<uint32_t>(
        data, i, uint32_t(convertBits<F64Layout, F32Layout>(doubleBits(v))));
    return;
  case DType::F16:
    storeRaw<uint16_t>(data, i,
                       uint16_t(convertBits<F64Layout, F16Layout>(doubleBits(v))));
    return;
  case DType::BF16:
    storeRaw<uint16_t>(
        data, i, uint16_t(convertBits<F64Layout, BF16Layout>(doubleBits(v))));
    return;
  case DType::F8E4M3:
    storeRaw<uint8_t>(
        data, i, uint8_t(convertBits<F64Layout, F8E4M3Layout>(doubleBits(v))));
    return;
  case DType::F8E5M2:
    storeRaw<uint8_t>(
        data, i, uint8_t(convertBits<F64Layout, F8E5M2Layout>(doubleBits(v))));
    return;
  case DType::I8:
    storeRaw<int8_t>(data, i, static_cast<int8_t>(truncToInt64(v)));
    return;
  case DType::I32:
    storeRaw<int32_t>(data, i, static_cast<int32_t>(truncToInt64(v)));
    return;
  case DType::I64:
    storeRaw<int64_t>(data, i, truncToInt64(v));
    return;
  case DType::Bool:
    storeRaw<uint8_t>(data, i, v != 0 ? 1 : 0);
    return;
  case DType::F6E3M2:
  case DType::F6E2M3:
  case DType::F4E2M1:
    writePacked(data, dtypeBits(t), i, encodePackedFloat(t, v));
    return;
  }
}
