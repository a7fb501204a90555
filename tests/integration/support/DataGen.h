//===- DataGen.h - Deterministic test data for HostTensors ------*- C++ -*-===//
//
// Seeded generators and the edge-case data patterns every kernel test draws
// from (see docs/testing.md). All generators:
//   * visit elements in logical (row-major) order, so a view receives the
//     same values as a contiguous tensor of the same shape, and padding
//     around a view is never touched;
//   * write through storeFromDouble, so the stored values are already
//     rounded to the tensor's dtype and references read exactly the inputs
//     the kernel reads;
//   * are deterministic: the random ones use std::mt19937_64 (whose output
//     sequence the C++ standard fixes) with our own uniform and Box-Muller
//     transforms rather than std::*_distribution, whose algorithms differ
//     between standard libraries.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_SUPPORT_DATAGEN_H
#define TESSERA_TESTS_SUPPORT_DATAGEN_H

#include "HostTensor.h"

#include <cstdint>

namespace tessera::testing {

/// Magnitude of the "large value" patterns (exp() overflows in f32 at ~88).
inline constexpr double kLargeMagnitude = 1e4;
/// Magnitude of the mixed-sign patterns.
inline constexpr double kMixedMagnitude = 1e3;

/// Largest finite value of `dtype` (bool: 1). Patterns clamp to it so that
/// e.g. "large" fp8_e4m3 data is 448 rather than NaN.
double maxFiniteValue(DType dtype);

/// Fills `t` with normal(mean, std) samples, rounded to its dtype.
void fillNormal(HostTensor &t, uint64_t seed, double mean = 0.0,
                double std = 1.0);

/// Fills `t` with samples uniform in [lo, hi), rounded to its dtype
/// (integer dtypes truncate toward zero; use fillRandomIndices for indices).
void fillUniform(HostTensor &t, uint64_t seed, double lo = -1.0,
                 double hi = 1.0);

/// Fills `t` with integers drawn uniformly from [0, bound); bound >= 1.
/// Intended for i32/i64 index tensors (gather).
void fillRandomIndices(HostTensor &t, uint64_t seed, int64_t bound);

/// Element with logical flat index i gets start + i * step (rounded).
/// Handy for checking which element a view or kernel addressed.
void fillArange(HostTensor &t, double start = 0.0, double step = 1.0);

/// The edge-case data patterns of docs/testing.md.
enum class DataPattern {
  Zeros,            ///< All 0.
  LargePositive,    ///< All +kLargeMagnitude (clamped to maxFiniteValue).
  LargeNegative,    ///< All -kLargeMagnitude (clamped).
  AlternatingSigns, ///< +m, -m, +m, ... in logical order, m = kMixed (clamped).
  HalfAndHalf,      ///< Along the last axis, the first ceil(n/2) are +m,
                    ///< the rest -m, m = kMixedMagnitude (clamped).
};

/// All patterns, in declaration order.
inline constexpr DataPattern kAllDataPatterns[] = {
    DataPattern::Zeros, DataPattern::LargePositive, DataPattern::LargeNegative,
    DataPattern::AlternatingSigns, DataPattern::HalfAndHalf};

/// Stable name for test names: "zeros", "large_pos", "large_neg",
/// "alternating", "half_half".
const char *dataPatternName(DataPattern pattern);

/// Overwrites every element of `t` with `pattern`.
void fillPattern(HostTensor &t, DataPattern pattern);

/// Sets the element at logical flat index `flat` to NaN. Float dtypes only.
void setNaNAt(HostTensor &t, int64_t flat);

/// Sets the element at logical flat index `flat` to +inf, or -inf when
/// `negative`. Float dtypes only; fp8_e4m3 has no infinity, so the stored
/// value is NaN there (as storeFromDouble documents).
void setInfAt(HostTensor &t, int64_t flat, bool negative = false);

/// Sets row `row` to -inf, where `t` (rank >= 1) is viewed as
/// [numel / dim(-1), dim(-1)] rows of its last axis. Float dtypes only.
void setRowNegInf(HostTensor &t, int64_t row);

} // namespace tessera::testing

#endif // TESSERA_TESTS_SUPPORT_DATAGEN_H
