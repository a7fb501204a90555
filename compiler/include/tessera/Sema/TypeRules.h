//===- TypeRules.h - Promotion rules of the tile language -------*- C++ -*-===//
//
// How the element types of operands combine (docs/language.md, section 11,
// "Types and promotion"). Typed operands promote as in the table there;
// compile-time constants are weak and take the type of the typed operand
// they meet.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SEMA_TYPERULES_H
#define TESSERA_SEMA_TYPERULES_H

#include "tessera/Support/KernelInfo.h"

namespace tessera::sema {

/// Whether `t` is one of the fp8 formats.
bool isFp8(DType t);
/// Rank of an integer type among bool < i8 < i32 < i64; -1 for floats.
int intRank(DType t);
/// The type two typed operands of an arithmetic operation promote to.
DType promoteTyped(DType a, DType b);
/// The type a weak constant `c` takes next to a typed operand of type `t`.
DType weakJoin(const ConstValue &c, DType t);
/// The type of a constant materialised on its own (bool, i64 or f32).
DType constDType(const ConstValue &c);

} // namespace tessera::sema

#endif // TESSERA_SEMA_TYPERULES_H
