//===- DTypeTest.cpp - Tests for element types and conversions ------------===//
//
// The float conversions are checked bit for bit against llvm::APFloat (round
// to nearest, ties to even), which serves as an independent oracle.
//
//===----------------------------------------------------------------------===//

#include "tessera/Support/DType.h"

#include <gtest/gtest.h>
#include <llvm/ADT/APFloat.h>
#include <llvm/ADT/APInt.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace tessera;

namespace {

/// One narrow float format: our conversions and the matching APFloat
/// semantics.
struct Format {
  const char *name;
  const llvm::fltSemantics &(*semantics)();
  unsigned width;
  DType dtype;
  uint32_t (*encode)(float);
  float (*decode)(uint32_t);
};

const Format kF16 = {
    "f16",
    llvm::APFloat::IEEEhalf,
    16,
    DType::F16,
    [](float x) -> uint32_t { return f32ToF16Bits(x); },
    [](uint32_t b) { return f16BitsToF32(uint16_t(b)); }};
const Format kBF16 = {
    "bf16",
    llvm::APFloat::BFloat,
    16,
    DType::BF16,
    [](float x) -> uint32_t { return f32ToBF16Bits(x); },
    [](uint32_t b) { return bf16BitsToF32(uint16_t(b)); }};
const Format kE4M3 = {
    "fp8_e4m3",
    llvm::APFloat::Float8E4M3FN,
    8,
    DType::F8E4M3,
    [](float x) -> uint32_t { return f32ToF8E4M3Bits(x); },
    [](uint32_t b) { return f8E4M3BitsToF32(uint8_t(b)); }};
const Format kE5M2 = {
    "fp8_e5m2",
    llvm::APFloat::Float8E5M2,
    8,
    DType::F8E5M2,
    [](float x) -> uint32_t { return f32ToF8E5M2Bits(x); },
    [](uint32_t b) { return f8E5M2BitsToF32(uint8_t(b)); }};

uint32_t bitsOf(float x) { return std::bit_cast<uint32_t>(x); }
float floatOf(uint32_t b) { return std::bit_cast<float>(b); }

/// APFloat's encoding of `x` in `fmt`.
uint32_t oracleEncode(const Format &fmt, float x) {
  llvm::APFloat value(x);
  bool losesInfo = false;
  (void)value.convert(fmt.semantics(), llvm::APFloat::rmNearestTiesToEven,
                      &losesInfo);
  return uint32_t(value.bitcastToAPInt().getZExtValue());
}

/// APFloat's encoding of the double `x` in `fmt` (one rounding).
uint32_t oracleEncodeDouble(const Format &fmt, double x) {
  llvm::APFloat value(x);
  bool losesInfo = false;
  (void)value.convert(fmt.semantics(), llvm::APFloat::rmNearestTiesToEven,
                      &losesInfo);
  return uint32_t(value.bitcastToAPInt().getZExtValue());
}

/// APFloat's f32 bits for the code `bits` of `fmt`.
uint32_t oracleDecode(const Format &fmt, uint32_t bits) {
  llvm::APFloat value(fmt.semantics(), llvm::APInt(fmt.width, bits));
  bool losesInfo = false;
  (void)value.convert(llvm::APFloat::IEEEsingle(),
                      llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return uint32_t(value.bitcastToAPInt().getZExtValue());
}

/// Counts mismatches of a sweep and reports only the first few, so that a
/// broken conversion cannot flood the log with millions of failures.
class MismatchLog {
public:
  explicit MismatchLog(const char *what) : what(what) {}
  ~MismatchLog() {
    if (count > 0)
      ADD_FAILURE() << what << ": " << count << " mismatches in " << checked
                    << " checks";
  }
  void check(uint64_t input, uint64_t got, uint64_t want) {
    ++checked;
    if (got == want)
      return;
    if (++count <= 8)
      ADD_FAILURE() << what << ": input 0x" << std::hex << input << " gave 0x"
                    << got << ", APFloat gives 0x" << want;
  }

private:
  const char *what;
  uint64_t checked = 0;
  uint64_t count = 0;
};

void checkEncode(const Format &fmt, float x, MismatchLog &log) {
  log.check(bitsOf(x), fmt.encode(x), oracleEncode(fmt, x));
}

/// Checks x and its two f32 neighbours, for both signs.
void checkEncodeAround(const Format &fmt, float x, MismatchLog &log) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {x, std::nextafter(x, inf), std::nextafter(x, -inf)}) {
    checkEncode(fmt, v, log);
    checkEncode(fmt, -v, log);
  }
}

/// All finite non-negative values of `fmt` in increasing order, plus the
/// value one ulp above the largest finite one (the overflow edge).
std::vector<double> finiteValuesWithEdge(const Format &fmt) {
  std::vector<double> values;
  uint32_t signBit = 1u << (fmt.width - 1);
  for (uint32_t code = 0; code < signBit; ++code) {
    float v = floatOf(oracleDecode(fmt, code));
    if (std::isfinite(v))
      values.push_back(v);
  }
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  values.push_back(values[n - 1] + (values[n - 1] - values[n - 2]));
  return values;
}

void checkDecodeAllCodes(const Format &fmt) {
  MismatchLog log(fmt.name);
  for (uint32_t code = 0; code < (1u << fmt.width); ++code)
    log.check(code, bitsOf(fmt.decode(code)), oracleDecode(fmt, code));
}

void checkEncodeRepresentable(const Format &fmt) {
  MismatchLog log(fmt.name);
  for (uint32_t code = 0; code < (1u << fmt.width); ++code) {
    float v = floatOf(oracleDecode(fmt, code));
    checkEncode(fmt, v, log);
    // Non-NaN values must survive the round trip unchanged.
    if (!std::isnan(v))
      log.check(code, fmt.encode(v), code);
  }
}

void checkEncodeMidpoints(const Format &fmt) {
  MismatchLog log(fmt.name);
  std::vector<double> values = finiteValuesWithEdge(fmt);
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    // Exact: the midpoint needs one more bit than the format has.
    float mid = float((values[i] + values[i + 1]) / 2);
    ASSERT_EQ(double(mid), (values[i] + values[i + 1]) / 2);
    checkEncodeAround(fmt, mid, log);
    checkEncodeAround(fmt, float(values[i]), log);
    // Quarter points stay on one side of the tie.
    checkEncodeAround(fmt, float((3 * values[i] + values[i + 1]) / 4), log);
    checkEncodeAround(fmt, float((values[i] + 3 * values[i + 1]) / 4), log);
  }
}

/// Sweeps every f32 between 0 and four times the smallest normal of `fmt`
/// with a stride that leaves about `samples` points, plus the low f32 range.
void checkEncodeSubnormalRange(const Format &fmt, uint32_t samples) {
  MismatchLog log(fmt.name);
  llvm::APFloat smallestNormal =
      llvm::APFloat::getSmallestNormalized(fmt.semantics());
  bool losesInfo = false;
  (void)smallestNormal.convert(llvm::APFloat::IEEEsingle(),
                               llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  uint32_t limit = bitsOf(smallestNormal.convertToFloat() * 4);
  uint32_t stride = std::max<uint32_t>(1, limit / samples) | 1;
  for (uint32_t b = 0; b <= limit; b += stride) {
    checkEncode(fmt, floatOf(b), log);
    checkEncode(fmt, floatOf(b | 0x80000000u), log);
  }
  // Every f32 subnormal class boundary and the smallest values.
  for (uint32_t b = 0; b < 4096; ++b)
    checkEncode(fmt, floatOf(b), log);
}

void checkEncodeSpecials(const Format &fmt) {
  MismatchLog log(fmt.name);
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f,
                            -0.0f,
                            inf,
                            -inf,
                            std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::signaling_NaN(),
                            floatOf(0x7F800001u),
                            floatOf(0xFF800001u),
                            floatOf(0x7FA00000u),
                            floatOf(0x7FFFFFFFu),
                            floatOf(0xFFFFFFFFu),
                            floatOf(0x7FC00001u),
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::denorm_min(),
                            1e10f,
                            -1e10f,
                            65504.0f,
                            65520.0f,
                            57344.0f,
                            61440.0f,
                            448.0f,
                            464.0f,
                            480.0f};
  for (float x : specials)
    checkEncodeAround(fmt, x, log);
}

/// Uniformly random f32 bit patterns (all classes, NaN payloads included).
void checkEncodeRandomBits(const Format &fmt, uint64_t seed, int count) {
  MismatchLog log(fmt.name);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    uint32_t b = uint32_t(rng() >> 32);
    checkEncode(fmt, floatOf(b), log);
  }
}

/// Random f32 values whose exponent lies in or just around the range of
/// `fmt`, where most of the rounding decisions happen.
void checkEncodeRandomInRange(const Format &fmt, uint64_t seed, int count) {
  MismatchLog log(fmt.name);
  int minExp = llvm::APFloat::semanticsMinExponent(fmt.semantics()) -
               int(llvm::APFloat::semanticsPrecision(fmt.semantics()));
  int maxExp = llvm::APFloat::semanticsMaxExponent(fmt.semantics()) + 2;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> expDist(std::max(minExp - 2, -149),
                                             std::min(maxExp, 127));
  for (int i = 0; i < count; ++i) {
    uint64_t r = rng();
    float magnitude = std::ldexp(1.0f + float(r & 0x7FFFFF) / 8388608.0f,
                                 expDist(rng));
    float x = (r >> 63) ? -magnitude : magnitude;
    checkEncode(fmt, x, log);
  }
}

/// storeFromDouble rounds once from the double; values just off a tie would
/// round to the tie first if they went through f32.
void checkStoreFromDoubleMatchesAPFloat(const Format &fmt) {
  MismatchLog log(fmt.name);
  auto storeBits = [&](double v) -> uint32_t {
    uint8_t buf[8] = {};
    storeFromDouble(buf, fmt.dtype, 0, v);
    uint32_t bits = 0;
    std::memcpy(&bits, buf, fmt.width / 8);
    return bits;
  };
  auto check = [&](double v) {
    for (double s : {v, -v})
      log.check(std::bit_cast<uint64_t>(s), storeBits(s),
                oracleEncodeDouble(fmt, s));
  };
  std::vector<double> values = finiteValuesWithEdge(fmt);
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    double mid = (values[i] + values[i + 1]) / 2;
    double tiny = (values[i + 1] - values[i]) * 0x1p-30;
    check(mid);
    check(mid + tiny);
    check(mid - tiny);
    check(values[i]);
  }
  std::mt19937_64 rng(1234);
  for (int i = 0; i < 20000; ++i)
    check(std::bit_cast<double>(rng()));
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, inf, std::numeric_limits<double>::quiet_NaN(),
                   std::bit_cast<double>(uint64_t(0x7FF0000000000001)),
                   std::numeric_limits<double>::max(),
                   std::numeric_limits<double>::denorm_min(), 1e-300})
    check(v);
}

TEST(DTypeName, RoundTripsForEveryDType) {
  for (DType t : kAllDTypes) {
    std::optional<DType> parsed = parseDType(dtypeName(t));
    ASSERT_TRUE(parsed.has_value()) << dtypeName(t);
    EXPECT_EQ(*parsed, t);
  }
}

TEST(DTypeName, CanonicalNamesAreTheTileLanguageNames) {
  EXPECT_STREQ(dtypeName(DType::F32), "f32");
  EXPECT_STREQ(dtypeName(DType::F16), "f16");
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_STREQ(dtypeName(DType::F8E4M3), "fp8_e4m3");
  EXPECT_STREQ(dtypeName(DType::F8E5M2), "fp8_e5m2");
  EXPECT_STREQ(dtypeName(DType::I8), "i8");
  EXPECT_STREQ(dtypeName(DType::I32), "i32");
  EXPECT_STREQ(dtypeName(DType::I64), "i64");
  EXPECT_STREQ(dtypeName(DType::Bool), "bool");
}

TEST(DTypeName, AliasesParseToTheirType) {
  struct Alias {
    const char *name;
    DType type;
  };
  const Alias aliases[] = {
      {"fp32", DType::F32},          {"float32", DType::F32},
      {"float", DType::F32},         {"fp16", DType::F16},
      {"float16", DType::F16},       {"half", DType::F16},
      {"bfloat16", DType::BF16},     {"float8_e4m3fn", DType::F8E4M3},
      {"e4m3", DType::F8E4M3},       {"fp8_e4m3fn", DType::F8E4M3},
      {"float8_e5m2", DType::F8E5M2}, {"e5m2", DType::F8E5M2},
      {"int8", DType::I8},           {"int32", DType::I32},
      {"int", DType::I32},           {"int64", DType::I64},
      {"bool", DType::Bool},         {"boolean", DType::Bool},
  };
  for (const Alias &a : aliases) {
    std::optional<DType> parsed = parseDType(a.name);
    ASSERT_TRUE(parsed.has_value()) << a.name;
    EXPECT_EQ(*parsed, a.type) << a.name;
  }
}

TEST(DTypeName, UnsupportedOrMisspelledNamesAreRejected) {
  for (const char *name :
       {"fp5", "fp6_e4m1", "", "F32", "Float", "f64", "float64", "double",
        "i16", "int16", "uint8", "u8", "fp8", "f8", "e4m3 ", " f32", "bf16x",
        "float8_e4m3fnuz", "float8_e5m2fnuz"})
    EXPECT_FALSE(parseDType(name).has_value()) << "'" << name << "'";
  // A string_view that is a prefix of a longer buffer.
  std::string_view prefix("f32x", 3);
  EXPECT_EQ(parseDType(prefix), DType::F32);
}

TEST(DTypeSize, MatchesStorageWidth) {
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::F8E4M3), 1u);
  EXPECT_EQ(dtypeSize(DType::F8E5M2), 1u);
  EXPECT_EQ(dtypeSize(DType::I8), 1u);
  EXPECT_EQ(dtypeSize(DType::I32), 4u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
}

TEST(DTypeKind, ClassifiesEveryDType) {
  for (DType t : kAllDTypes) {
    bool isLow = t == DType::F16 || t == DType::BF16 || t == DType::F8E4M3 ||
                 t == DType::F8E5M2 || t == DType::F6E3M2 ||
                 t == DType::F6E2M3 || t == DType::F4E2M1;
    bool isInt = t == DType::I8 || t == DType::I32 || t == DType::I64;
    EXPECT_EQ(isLowPrecisionFloat(t), isLow) << dtypeName(t);
    EXPECT_EQ(isFloatDType(t), isLow || t == DType::F32) << dtypeName(t);
    EXPECT_EQ(isIntegerDType(t), isInt) << dtypeName(t);
  }
}

TEST(F16Conversion, DecodeMatchesAPFloatForAllCodes) {
  checkDecodeAllCodes(kF16);
}
TEST(BF16Conversion, DecodeMatchesAPFloatForAllCodes) {
  checkDecodeAllCodes(kBF16);
}
TEST(F8E4M3Conversion, DecodeMatchesAPFloatForAllCodes) {
  checkDecodeAllCodes(kE4M3);
}
TEST(F8E5M2Conversion, DecodeMatchesAPFloatForAllCodes) {
  checkDecodeAllCodes(kE5M2);
}

TEST(F16Conversion, EncodeMatchesAPFloatForRepresentableValues) {
  checkEncodeRepresentable(kF16);
}
TEST(BF16Conversion, EncodeMatchesAPFloatForRepresentableValues) {
  checkEncodeRepresentable(kBF16);
}
TEST(F8E4M3Conversion, EncodeMatchesAPFloatForRepresentableValues) {
  checkEncodeRepresentable(kE4M3);
}
TEST(F8E5M2Conversion, EncodeMatchesAPFloatForRepresentableValues) {
  checkEncodeRepresentable(kE5M2);
}

TEST(F16Conversion, EncodeMatchesAPFloatAroundTies) {
  checkEncodeMidpoints(kF16);
}
TEST(BF16Conversion, EncodeMatchesAPFloatAroundTies) {
  checkEncodeMidpoints(kBF16);
}
TEST(F8E4M3Conversion, EncodeMatchesAPFloatAroundTies) {
  checkEncodeMidpoints(kE4M3);
}
TEST(F8E5M2Conversion, EncodeMatchesAPFloatAroundTies) {
  checkEncodeMidpoints(kE5M2);
}

TEST(F16Conversion, EncodeMatchesAPFloatInSubnormalRange) {
  checkEncodeSubnormalRange(kF16, 100000);
}
TEST(BF16Conversion, EncodeMatchesAPFloatInSubnormalRange) {
  checkEncodeSubnormalRange(kBF16, 100000);
}
TEST(F8E4M3Conversion, EncodeMatchesAPFloatInSubnormalRange) {
  checkEncodeSubnormalRange(kE4M3, 100000);
}
TEST(F8E5M2Conversion, EncodeMatchesAPFloatInSubnormalRange) {
  checkEncodeSubnormalRange(kE5M2, 100000);
}

TEST(F16Conversion, EncodeMatchesAPFloatForSpecialValues) {
  checkEncodeSpecials(kF16);
}
TEST(BF16Conversion, EncodeMatchesAPFloatForSpecialValues) {
  checkEncodeSpecials(kBF16);
}
TEST(F8E4M3Conversion, EncodeMatchesAPFloatForSpecialValues) {
  checkEncodeSpecials(kE4M3);
}
TEST(F8E5M2Conversion, EncodeMatchesAPFloatForSpecialValues) {
  checkEncodeSpecials(kE5M2);
}

constexpr int kRandomBitPatterns = 750000;
constexpr int kRandomInRange = 250000;

TEST(F16Conversion, EncodeMatchesAPFloatForRandomInputs) {
  checkEncodeRandomBits(kF16, 0x5eed0001, kRandomBitPatterns);
  checkEncodeRandomInRange(kF16, 0x5eed0002, kRandomInRange);
}
TEST(BF16Conversion, EncodeMatchesAPFloatForRandomInputs) {
  checkEncodeRandomBits(kBF16, 0x5eed0003, kRandomBitPatterns);
  checkEncodeRandomInRange(kBF16, 0x5eed0004, kRandomInRange);
}
TEST(F8E4M3Conversion, EncodeMatchesAPFloatForRandomInputs) {
  checkEncodeRandomBits(kE4M3, 0x5eed0005, kRandomBitPatterns);
  checkEncodeRandomInRange(kE4M3, 0x5eed0006, kRandomInRange);
}
TEST(F8E5M2Conversion, EncodeMatchesAPFloatForRandomInputs) {
  checkEncodeRandomBits(kE5M2, 0x5eed0007, kRandomBitPatterns);
  checkEncodeRandomInRange(kE5M2, 0x5eed0008, kRandomInRange);
}

TEST(F16Conversion, StoreFromDoubleRoundsOnceLikeAPFloat) {
  checkStoreFromDoubleMatchesAPFloat(kF16);
}
TEST(BF16Conversion, StoreFromDoubleRoundsOnceLikeAPFloat) {
  checkStoreFromDoubleMatchesAPFloat(kBF16);
}
TEST(F8E4M3Conversion, StoreFromDoubleRoundsOnceLikeAPFloat) {
  checkStoreFromDoubleMatchesAPFloat(kE4M3);
}
TEST(F8E5M2Conversion, StoreFromDoubleRoundsOnceLikeAPFloat) {
  checkStoreFromDoubleMatchesAPFloat(kE5M2);
}

// Hand-checked bit patterns, independent of the oracle.
TEST(F16Conversion, KnownValuesGiveKnownBits) {
  EXPECT_EQ(f32ToF16Bits(1.0f), 0x3C00);
  EXPECT_EQ(f32ToF16Bits(-2.0f), 0xC000);
  EXPECT_EQ(f32ToF16Bits(0.0f), 0x0000);
  EXPECT_EQ(f32ToF16Bits(-0.0f), 0x8000);
  EXPECT_EQ(f32ToF16Bits(65504.0f), 0x7BFF);
  EXPECT_EQ(f32ToF16Bits(65519.0f), 0x7BFF);
  EXPECT_EQ(f32ToF16Bits(65520.0f), 0x7C00); // Tie above max: to infinity.
  EXPECT_EQ(f32ToF16Bits(-1e6f), 0xFC00);
  EXPECT_EQ(f32ToF16Bits(0x1p-24f), 0x0001);  // Smallest subnormal.
  EXPECT_EQ(f32ToF16Bits(0x1p-25f), 0x0000);  // Tie to even: zero.
  EXPECT_EQ(f32ToF16Bits(0x1.8p-24f), 0x0002); // Tie to even: up.
  EXPECT_EQ(f32ToF16Bits(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
  EXPECT_EQ(f32ToF16Bits(-std::numeric_limits<float>::quiet_NaN()), 0xFE00);
  EXPECT_EQ(f16BitsToF32(0x0001), 0x1p-24f);
  EXPECT_EQ(f16BitsToF32(0x7BFF), 65504.0f);
  EXPECT_TRUE(std::isinf(f16BitsToF32(0x7C00)));
  EXPECT_TRUE(std::signbit(f16BitsToF32(0x8000)));
}

TEST(BF16Conversion, KnownValuesGiveKnownBits) {
  EXPECT_EQ(f32ToBF16Bits(1.0f), 0x3F80);
  EXPECT_EQ(f32ToBF16Bits(floatOf(0x3F808000u)), 0x3F80); // Tie to even.
  EXPECT_EQ(f32ToBF16Bits(floatOf(0x3F818000u)), 0x3F82); // Tie to even.
  EXPECT_EQ(f32ToBF16Bits(floatOf(0x3F808001u)), 0x3F81);
  EXPECT_EQ(f32ToBF16Bits(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(f32ToBF16Bits(std::numeric_limits<float>::quiet_NaN()), 0x7FC0);
  EXPECT_EQ(f32ToBF16Bits(-0.0f), 0x8000);
  EXPECT_EQ(bf16BitsToF32(0x3F80), 1.0f);
  EXPECT_EQ(bf16BitsToF32(0x0001), floatOf(0x00010000u));
}

TEST(F8E4M3Conversion, OverflowAndInfinityBecomeSignedNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(f32ToF8E4M3Bits(448.0f), 0x7E);
  EXPECT_EQ(f32ToF8E4M3Bits(464.0f), 0x7E); // Tie to even stays finite.
  EXPECT_EQ(f32ToF8E4M3Bits(std::nextafter(464.0f, inf)), 0x7F);
  EXPECT_EQ(f32ToF8E4M3Bits(1e9f), 0x7F);
  EXPECT_EQ(f32ToF8E4M3Bits(-1e9f), 0xFF);
  EXPECT_EQ(f32ToF8E4M3Bits(inf), 0x7F);
  EXPECT_EQ(f32ToF8E4M3Bits(-inf), 0xFF);
  EXPECT_EQ(f32ToF8E4M3Bits(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(f32ToF8E4M3Bits(-std::numeric_limits<float>::quiet_NaN()), 0xFF);
  EXPECT_EQ(f32ToF8E4M3Bits(0x1p-9f), 0x01); // Smallest subnormal.
  EXPECT_EQ(f32ToF8E4M3Bits(-0.0f), 0x80);
  EXPECT_EQ(f8E4M3BitsToF32(0x7E), 448.0f);
  EXPECT_EQ(f8E4M3BitsToF32(0x01), 0x1p-9f);
  EXPECT_TRUE(std::isnan(f8E4M3BitsToF32(0x7F)));
  EXPECT_TRUE(std::isnan(f8E4M3BitsToF32(0xFF)));
  EXPECT_EQ(f8E4M3BitsToF32(0x78), 256.0f); // All-ones exponent is finite.
}

TEST(F8E5M2Conversion, OverflowBecomesSignedInfinity) {
  EXPECT_EQ(f32ToF8E5M2Bits(57344.0f), 0x7B);
  EXPECT_EQ(f32ToF8E5M2Bits(61439.0f), 0x7B);
  EXPECT_EQ(f32ToF8E5M2Bits(61440.0f), 0x7C); // Tie above max: infinity.
  EXPECT_EQ(f32ToF8E5M2Bits(-1e9f), 0xFC);
  EXPECT_EQ(f32ToF8E5M2Bits(std::numeric_limits<float>::quiet_NaN()), 0x7E);
  EXPECT_EQ(f32ToF8E5M2Bits(-std::numeric_limits<float>::quiet_NaN()), 0xFE);
  EXPECT_EQ(f32ToF8E5M2Bits(0x1p-16f), 0x01);
  EXPECT_EQ(f8E5M2BitsToF32(0x7B), 57344.0f);
  EXPECT_TRUE(std::isinf(f8E5M2BitsToF32(0xFC)));
}

/// Stores `v` as element 2 of a zeroed buffer, checks its neighbours were
/// not touched, and returns the element read back.
double storeThenLoad(DType t, double v) {
  alignas(8) unsigned char buf[5 * 8] = {};
  storeFromDouble(buf, t, 2, v);
  size_t bits = dtypeBits(t);
  for (size_t bit = 0; bit < 8 * sizeof(buf); ++bit) {
    if (bit < 2 * bits || bit >= 3 * bits) {
      EXPECT_EQ((buf[bit / 8] >> (bit % 8)) & 1, 0)
          << dtypeName(t) << " bit " << bit;
    }
  }
  return loadAsDouble(buf, t, 2);
}

TEST(LoadStore, RoundTripsExactValuesForEveryDType) {
  for (DType t : kAllDTypes) {
    for (double v : {0.0, 1.0, -2.0, 3.0, 96.0, -112.0}) {
      if (isPackedDType(t) && std::fabs(v) > 6)
        continue; // beyond fp4's range (saturation is tested below)
      double expected = t == DType::Bool ? (v != 0 ? 1.0 : 0.0) : v;
      EXPECT_EQ(storeThenLoad(t, v), expected) << dtypeName(t) << " " << v;
    }
  }
}

TEST(LoadStore, FloatsRoundToNearestEven) {
  EXPECT_EQ(storeThenLoad(DType::F32, 0.1), double(0.1f));
  EXPECT_EQ(storeThenLoad(DType::F16, 1.0 / 3), double(f16BitsToF32(0x3555)));
  EXPECT_EQ(storeThenLoad(DType::BF16, 1.0 / 3), double(bf16BitsToF32(0x3EAB)));
  EXPECT_TRUE(std::isnan(storeThenLoad(DType::F8E4M3, 1000.0)));
  EXPECT_EQ(storeThenLoad(DType::F8E4M3, 17.0), 16.0); // Tie to even.
  EXPECT_EQ(storeThenLoad(DType::F8E5M2, 1e6),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(storeThenLoad(DType::F32, 1e300),
            std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(
      storeThenLoad(DType::F16, std::numeric_limits<double>::quiet_NaN())));
}

TEST(LoadStore, F32StoreMatchesAPFloat) {
  MismatchLog log("f32 store");
  auto check = [&](double v) {
    float stored = 0;
    storeFromDouble(&stored, DType::F32, 0, v);
    llvm::APFloat value(v);
    bool losesInfo = false;
    (void)value.convert(llvm::APFloat::IEEEsingle(),
                        llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    log.check(std::bit_cast<uint64_t>(v), bitsOf(stored),
              value.bitcastToAPInt().getZExtValue());
  };
  std::mt19937_64 rng(99);
  for (int i = 0; i < 100000; ++i)
    check(std::bit_cast<double>(rng()));
  // Ties between adjacent floats, and just off them.
  for (int i = 0; i < 20000; ++i) {
    float f = floatOf(uint32_t(rng() >> 32) & 0x7F7FFFFFu);
    double next = std::nextafter(f, std::numeric_limits<float>::infinity());
    double mid = (double(f) + next) / 2;
    check(mid);
    check(std::nextafter(mid, 0.0));
    check(std::nextafter(mid, next));
  }
}

TEST(LoadStore, IntegersTruncateTowardZero) {
  for (DType t : {DType::I8, DType::I32, DType::I64}) {
    EXPECT_EQ(storeThenLoad(t, 3.9), 3.0) << dtypeName(t);
    EXPECT_EQ(storeThenLoad(t, -3.9), -3.0) << dtypeName(t);
    EXPECT_EQ(storeThenLoad(t, 0.5), 0.0) << dtypeName(t);
    EXPECT_EQ(storeThenLoad(t, -0.5), 0.0) << dtypeName(t);
    EXPECT_EQ(storeThenLoad(t, std::numeric_limits<double>::quiet_NaN()), 0.0)
        << dtypeName(t);
  }
}

TEST(LoadStore, IntegersWrapToTheirWidth) {
  EXPECT_EQ(storeThenLoad(DType::I8, 300.0), 44.0);
  EXPECT_EQ(storeThenLoad(DType::I8, 128.0), -128.0);
  EXPECT_EQ(storeThenLoad(DType::I8, -129.0), 127.0);
  EXPECT_EQ(storeThenLoad(DType::I8, 255.7), -1.0);
  EXPECT_EQ(storeThenLoad(DType::I32, 2147483648.0), -2147483648.0);
  EXPECT_EQ(storeThenLoad(DType::I32, 4294967301.0), 5.0);
  EXPECT_EQ(storeThenLoad(DType::I32, -2147483649.0), 2147483647.0);
}

TEST(LoadStore, IntegersSaturateAtInt64RangeBeforeWrapping) {
  const double inf = std::numeric_limits<double>::infinity();
  int64_t out = 0;
  storeFromDouble(&out, DType::I64, 0, 1e19);
  EXPECT_EQ(out, INT64_MAX);
  storeFromDouble(&out, DType::I64, 0, 9223372036854775808.0);
  EXPECT_EQ(out, INT64_MAX);
  storeFromDouble(&out, DType::I64, 0, -9223372036854775808.0);
  EXPECT_EQ(out, INT64_MIN);
  storeFromDouble(&out, DType::I64, 0, -1e300);
  EXPECT_EQ(out, INT64_MIN);
  storeFromDouble(&out, DType::I64, 0, inf);
  EXPECT_EQ(out, INT64_MAX);
  storeFromDouble(&out, DType::I64, 0, 9007199254740993.0);
  EXPECT_EQ(out, 9007199254740992); // The double itself is 2^53.
  storeFromDouble(&out, DType::I64, 0, -123456789012.75);
  EXPECT_EQ(out, -123456789012);
  // INT64_MAX wraps to -1 and INT64_MIN to 0 in the narrower types.
  EXPECT_EQ(storeThenLoad(DType::I32, inf), -1.0);
  EXPECT_EQ(storeThenLoad(DType::I32, -inf), 0.0);
  EXPECT_EQ(storeThenLoad(DType::I8, 1e30), -1.0);
  EXPECT_EQ(storeThenLoad(DType::I8, -1e30), 0.0);
}

TEST(LoadStore, LoadsIntegersExactly) {
  int64_t i64[] = {INT64_MIN, -1, 1LL << 53};
  EXPECT_EQ(loadAsDouble(i64, DType::I64, 0), -9223372036854775808.0);
  EXPECT_EQ(loadAsDouble(i64, DType::I64, 1), -1.0);
  EXPECT_EQ(loadAsDouble(i64, DType::I64, 2), 9007199254740992.0);
  int32_t i32[] = {INT32_MIN, INT32_MAX};
  EXPECT_EQ(loadAsDouble(i32, DType::I32, 0), -2147483648.0);
  EXPECT_EQ(loadAsDouble(i32, DType::I32, 1), 2147483647.0);
  int8_t i8[] = {-128, 127};
  EXPECT_EQ(loadAsDouble(i8, DType::I8, 0), -128.0);
  EXPECT_EQ(loadAsDouble(i8, DType::I8, 1), 127.0);
}

TEST(LoadStore, BoolStoresNonZeroAsOne) {
  EXPECT_EQ(storeThenLoad(DType::Bool, 0.0), 0.0);
  EXPECT_EQ(storeThenLoad(DType::Bool, -0.0), 0.0);
  EXPECT_EQ(storeThenLoad(DType::Bool, 0.25), 1.0);
  EXPECT_EQ(storeThenLoad(DType::Bool, -7.0), 1.0);
  EXPECT_EQ(storeThenLoad(DType::Bool,
                          std::numeric_limits<double>::quiet_NaN()),
            1.0);
  uint8_t raw[2] = {0, 0};
  storeFromDouble(raw, DType::Bool, 1, 42.0);
  EXPECT_EQ(raw[1], 1);
  raw[0] = 2; // Any non-zero byte reads as true.
  EXPECT_EQ(loadAsDouble(raw, DType::Bool, 0), 1.0);
}

TEST(LoadStore, LowPrecisionLoadsDecodeTheBits) {
  uint16_t h[] = {0x3C00, 0xC000};
  EXPECT_EQ(loadAsDouble(h, DType::F16, 1), -2.0);
  uint16_t b[] = {0x3F80, 0x4040};
  EXPECT_EQ(loadAsDouble(b, DType::BF16, 1), 3.0);
  uint8_t e4[] = {0x7E, 0x38};
  EXPECT_EQ(loadAsDouble(e4, DType::F8E4M3, 0), 448.0);
  EXPECT_EQ(loadAsDouble(e4, DType::F8E4M3, 1), 1.0);
  uint8_t e5[] = {0x3C, 0x7B};
  EXPECT_EQ(loadAsDouble(e5, DType::F8E5M2, 0), 1.0);
  EXPECT_EQ(loadAsDouble(e5, DType::F8E5M2, 1), 57344.0);
}

} // namespace

//===----------------------------------------------------------------------===//
// The packed OCP MX element types (fp6_e3m2, fp6_e2m3, fp4_e2m1)
//===----------------------------------------------------------------------===//

namespace {

struct PackedFormat {
  DType dtype;
  const llvm::fltSemantics &(*semantics)();
};
const PackedFormat kPacked[] = {
    {DType::F6E3M2, llvm::APFloat::Float6E3M2FN},
    {DType::F6E2M3, llvm::APFloat::Float6E2M3FN},
    {DType::F4E2M1, llvm::APFloat::Float4E2M1FN},
};

/// APFloat's rounding of `v` (finite) to `f`: round to nearest even,
/// saturating at the largest finite magnitude.
uint8_t apfloatCode(const PackedFormat &f, double v) {
  llvm::APFloat value(v);
  bool losesInfo = false;
  (void)value.convert(f.semantics(), llvm::APFloat::rmNearestTiesToEven,
                      &losesInfo);
  return uint8_t(value.bitcastToAPInt().getZExtValue());
}

} // namespace

TEST(PackedTypes, NamesSizesAndAliases) {
  EXPECT_EQ(parseDType("fp6"), DType::F6E3M2);
  EXPECT_EQ(parseDType("fp4"), DType::F4E2M1);
  EXPECT_EQ(parseDType("float6_e2m3fn"), DType::F6E2M3);
  EXPECT_EQ(parseDType("e2m1"), DType::F4E2M1);
  for (const PackedFormat &f : kPacked) {
    EXPECT_EQ(parseDType(dtypeName(f.dtype)), f.dtype);
    EXPECT_TRUE(isPackedDType(f.dtype));
  }
  EXPECT_FALSE(isPackedDType(DType::F8E4M3));
  EXPECT_EQ(dtypeBits(DType::F6E2M3), 6u);
  EXPECT_EQ(dtypeBits(DType::F4E2M1), 4u);
  EXPECT_EQ(dtypeBits(DType::BF16), 16u);
  EXPECT_EQ(storageBytes(DType::F4E2M1, 7), 4u);
  EXPECT_EQ(storageBytes(DType::F6E3M2, 4), 3u);
  EXPECT_EQ(storageBytes(DType::F6E3M2, 5), 4u);
  EXPECT_EQ(storageBytes(DType::F32, 5), 20u);
}

TEST(PackedTypes, DecodeMatchesAPFloatForAllCodes) {
  for (const PackedFormat &f : kPacked) {
    for (unsigned code = 0; code < (1u << dtypeBits(f.dtype)); ++code) {
      llvm::APFloat value(f.semantics(), llvm::APInt(dtypeBits(f.dtype), code));
      EXPECT_EQ(decodePackedFloat(f.dtype, uint8_t(code)),
                value.convertToDouble())
          << dtypeName(f.dtype) << " code " << code;
    }
  }
  EXPECT_EQ(decodePackedFloat(DType::F6E3M2, 0x1F), 28.0);
  EXPECT_EQ(decodePackedFloat(DType::F6E2M3, 0x1F), 7.5);
  EXPECT_EQ(decodePackedFloat(DType::F4E2M1, 0x7), 6.0);
  EXPECT_EQ(decodePackedFloat(DType::F4E2M1, 0x9), -0.5);
}

TEST(PackedTypes, EncodeMatchesAPFloat) {
  std::mt19937_64 rng(7);
  for (const PackedFormat &f : kPacked) {
    MismatchLog log(dtypeName(f.dtype));
    auto check = [&](double v) {
      log.check(std::bit_cast<uint64_t>(v), encodePackedFloat(f.dtype, v),
                apfloatCode(f, v));
    };
    // Every code, the midpoints between neighbours (ties) and just off them.
    unsigned codes = 1u << dtypeBits(f.dtype);
    for (unsigned c = 0; c < codes; ++c) {
      double v = decodePackedFloat(f.dtype, uint8_t(c));
      check(v);
      for (unsigned d = 0; d < codes; ++d) {
        double w = decodePackedFloat(f.dtype, uint8_t(d));
        double mid = (v + w) / 2;
        check(mid);
        check(std::nextafter(mid, 0.0));
        check(std::nextafter(mid, 100.0));
      }
    }
    std::uniform_real_distribution<double> wide(-40.0, 40.0), narrow(-0.3, 0.3);
    for (int i = 0; i < 20000; ++i) {
      check(wide(rng));
      check(narrow(rng));
    }
  }
}

TEST(PackedTypes, Saturate) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(encodePackedFloat(DType::F4E2M1, 100.0), 0x7);
  EXPECT_EQ(encodePackedFloat(DType::F4E2M1, -inf), 0xF);
  EXPECT_EQ(encodePackedFloat(DType::F4E2M1, 5.0), 0x6); // tie to even: 4
  EXPECT_EQ(encodePackedFloat(DType::F6E3M2, 1e30), 0x1F);
  EXPECT_EQ(encodePackedFloat(DType::F6E2M3, -8.0), 0x3F);
  // NaN has no code: +max, as cvt.rn.satfinite.
  EXPECT_EQ(encodePackedFloat(DType::F6E2M3,
                              std::numeric_limits<double>::quiet_NaN()),
            0x1F);
  EXPECT_EQ(storeThenLoad(DType::F4E2M1, -112.0), -6.0);
  EXPECT_EQ(storeThenLoad(DType::F6E3M2, 96.0), 28.0);
}

TEST(PackedTypes, PackingLayout) {
  // fp4: element 2k in the low nibble of byte k.
  unsigned char b4[2] = {};
  storeFromDouble(b4, DType::F4E2M1, 0, 1.0);  // 0x2
  storeFromDouble(b4, DType::F4E2M1, 1, -6.0); // 0xF
  storeFromDouble(b4, DType::F4E2M1, 2, 0.5);  // 0x1
  EXPECT_EQ(b4[0], 0xF2);
  EXPECT_EQ(b4[1], 0x01);
  // fp6: four elements in three bytes, little-endian bit order.
  unsigned char b6[4] = {};
  const double values[] = {1.0, -0.25, 28.0,
                           0.0625}; // codes 0x0C 0x24 0x1F 0x01
  for (size_t i = 0; i < 4; ++i)
    storeFromDouble(b6, DType::F6E3M2, i, values[i]);
  uint32_t word = b6[0] | uint32_t(b6[1]) << 8 | uint32_t(b6[2]) << 16;
  EXPECT_EQ(word, 0x0Cu | 0x24u << 6 | 0x1Fu << 12 | 0x01u << 18);
  EXPECT_EQ(b6[3], 0);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(loadAsDouble(b6, DType::F6E3M2, i), values[i]) << i;
  // Rewriting an element leaves its neighbours.
  storeFromDouble(b6, DType::F6E3M2, 1, 3.0);
  EXPECT_EQ(loadAsDouble(b6, DType::F6E3M2, 0), 1.0);
  EXPECT_EQ(loadAsDouble(b6, DType::F6E3M2, 1), 3.0);
  EXPECT_EQ(loadAsDouble(b6, DType::F6E3M2, 2), 28.0);
}
