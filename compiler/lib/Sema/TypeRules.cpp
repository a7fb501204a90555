//===- TypeRules.cpp - Promotion rules of the tile language ---------------===//

#include "tessera/Sema/TypeRules.h"

namespace tessera::sema {

bool isFp8(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; }
int intRank(DType t) {
  switch (t) {
  case DType::Bool:
    return 0;
  case DType::I8:
    return 1;
  case DType::I32:
    return 2;
  case DType::I64:
    return 3;
  default:
    return -1;
  }
}

/// Promotion of two typed operands.
DType promoteTyped(DType a, DType b) {
  if (a == b)
    return a;
  if (a == DType::Bool)
    return b;
  if (b == DType::Bool)
    return a;
  bool fa = isFloatDType(a), fb = isFloatDType(b);
  if (fa && !fb)
    return a;
  if (fb && !fa)
    return b;
  if (!fa && !fb)
    return intRank(a) >= intRank(b) ? a : b;
  if (a == DType::F32 || b == DType::F32)
    return DType::F32;
  bool a16 = a == DType::F16 || a == DType::BF16;
  bool b16 = b == DType::F16 || b == DType::BF16;
  if (a16 && b16)
    return DType::F32; // f16 + bf16
  if (a16)
    return a;
  if (b16)
    return b;
  return DType::F32; // e4m3 + e5m2
}

/// The dtype a weak constant takes next to a typed operand of dtype `t`.
DType weakJoin(const ConstValue &c, DType t) {
  if (c.isFloat())
    return isFloatDType(t) ? t : DType::F32;
  if (c.isInt())
    return t == DType::Bool ? DType::I64 : t;
  return t; // bool constant
}

/// Default dtype of a constant materialised on its own.
DType constDType(const ConstValue &c) {
  if (c.isBool())
    return DType::Bool;
  if (c.isInt())
    return DType::I64;
  return DType::F32;
}

} // namespace tessera::sema
