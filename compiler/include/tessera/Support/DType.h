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
};

/// All element types, in declaration order.
inline constexpr DType kAllDTypes[] = {
    DType::F32, DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2,
    DType::I8,  DType::I32, DType::I64,  DType::Bool};

/// Canonical tile-language name: "f32", "f16", "bf16", "fp8_e4m3",
/// "fp8_e5m2", "i8", "i32", "i64", "bool".
const char *dtypeName(DType t);

/// Parses a canonical name or a common alias ("fp32", "float32", "fp16",
/// "half", "bfloat16", "int8", "int32", "int64", "e4m3", ...). Returns
/// nullopt for anything else, including the unsupported "fp6"/"fp4".
std::optional<DType> parseDType(std::string_view name);

/// Size of one element in bytes.
size_t dtypeSize(DType t);

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

/// Reads element `i` of a buffer of type `t` as a double (bool -> 0/1).
double loadAsDouble(const void *data, DType t, size_t i);
/// Writes `v` (rounded/converted as above, integers truncated toward zero
/// with wrap-around) to element `i`.
void storeFromDouble(void *data, DType t, size_t i, double v);

} // namespace tessera

#endif // TESSERA_SUPPORT_DTYPE_H
