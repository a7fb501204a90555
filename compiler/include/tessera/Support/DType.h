//===- DType.h - Element types of Tessera tensors ---------------*- C++ -*-===//
//
// The element types a kernel can read and write, their names in the tile
// language, and exact host-side conversions to and from f32 (round to
// nearest even, matching llvm::APFloat and the GPU's cvt.rn instructions).
// Plain C++: usable from public runtime headers.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SUPPORT_DTYPE_H
#define TESSERA_SUPPORT_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  F8E4M3, ///< OCP fp8 E4M3 "FN": no infinities, NaN = S.1111.111, max 448.
  F8E5M2, ///< OCP fp8 E5M2: IEEE-like, with infinities, max 57344.
  I8,
  I32,
  I64,
  Bool, ///< Stored as one byte, 0 or 1.
  // OCP Microscaling (MX) element formats, without their block scales:
  // finite only (no infinities, no NaN), packed in memory (see
  // storageBytes), saturating conversions.
  F6E3M2, ///< 6 bits: bias 3, max 28, smallest subnormal 0.0625.
  F6E2M3, ///< 6 bits: bias 1, max 7.5, smallest subnormal 0.125.
  F4E2M1, ///< 4 bits: bias 1, the values 0, 0.5, 1, 1.5, 2, 3, 4, 6.
};

/// All element types, in declaration order.
inline constexpr DType kAllDTypes[] = {
    DType::F32,    DType::F16,    DType::BF16,   DType::F8E4M3,
    DType::F8E5M2, DType::I8,     DType::I32,    DType::I64,
    DType::Bool,   DType::F6E3M2, DType::F6E2M3, DType::F4E2M1};

/// Canonical tile-language name: "f32", "f16", "bf16", "fp8_e4m3",
/// "fp8_e5m2", "i8", "i32", "i64", "bool", "fp6_e3m2", "fp6_e2m3",
/// "fp4_e2m1".
const char *dtypeName(DType t);

/// Parses a canonical name or a common alias ("fp32", "float32", "fp16",
/// "half", "bfloat16", "int8", "int32", "int64", "e4m3", "fp6" (= fp6_e3m2),
/// "fp4" (= fp4_e2m1), "float4_e2m1fn", ...). Returns nullopt for anything
/// else.
std::optional<DType> parseDType(std::string_view name);

/// Size of one element in bytes; 1 for the packed types (whose elements
/// share bytes: size buffers with storageBytes).
size_t dtypeSize(DType t);
/// Bits of one element: 8 * dtypeSize, or 6 and 4 for the packed types.
unsigned dtypeBits(DType t);
/// fp6 and fp4: elements packed into bytes without padding. Element i
/// occupies bits [i * b, i * b + b) of the buffer, bit 0 being the least
/// significant bit of byte 0 (so an fp4 byte holds element 2k in its low
/// nibble and 2k + 1 in its high one; 4 fp6 elements fill 3 bytes).
bool isPackedDType(DType t);
/// Bytes that hold `elements` consecutive elements: elements * dtypeSize,
/// rounded up to whole bytes for the packed types.
size_t storageBytes(DType t, size_t elements);

bool isFloatDType(DType t);
bool isIntegerDType(DType t);
/// True for f16, bf16 and the fp8 types (stored narrow, computed in f32).
bool isLowPrecisionFloat(DType t);

// Exact conversions (round to nearest, ties to even; NaN stays NaN).
uint16_t f32ToF16Bits(float x);
float f16BitsToF32(uint16_t bits);
uint16_t f32ToBF16Bits(float x);
float bf16BitsToF32(uint16_t bits);
/// E4M3FN: values beyond the largest finite (after rounding) and infinities
/// become NaN (0x7F/0xFF), as llvm::APFloat and PyTorch's conversion do.
uint8_t f32ToF8E4M3Bits(float x);
float f8E4M3BitsToF32(uint8_t bits);
/// E5M2: overflow rounds to infinity as in IEEE.
uint8_t f32ToF8E5M2Bits(float x);
float f8E5M2BitsToF32(uint8_t bits);

/// The packed types (fp6/fp4), as codes in the low bits of a byte: round
/// to nearest even, saturating (values past the largest finite magnitude
/// and infinities become +-max; NaN, which has no code, becomes +max, as
/// PTX's cvt.rn.satfinite does).
uint8_t encodePackedFloat(DType t, double v);
/// The exact value of code `bits` (low dtypeBits(t) bits) of packed type `t`.
double decodePackedFloat(DType t, uint8_t bits);

/// Reads element `i` of a buffer of type `t` as a double (bool -> 0/1).
double loadAsDouble(const void *data, DType t, size_t i);
/// Writes `v` (rounded/converted as above, integers truncated toward zero
/// with wrap-around) to element `i`.
void storeFromDouble(void *data, DType t, size_t i, double v);

} // namespace tessera

#endif // TESSERA_SUPPORT_DTYPE_H
