//===- Tolerance.h - Dtype-aware tolerances and comparison ------*- C++ -*-===//
//
// The allclose-style comparison of whole tensors under the tolerance table
// of tessera/Support/Tolerance.h (whose file comment explains the table;
// docs/testing.md carries it with the reasoning).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_SUPPORT_TOLERANCE_H
#define TESSERA_TESTS_SUPPORT_TOLERANCE_H

#include "HostTensor.h"

#include "tessera/Support/Tolerance.h"

#include <cstdint>
#include <string>

namespace tessera::testing {

// The table itself lives in tessera/Support (shared with the autotuner and
// the benchmarks).
using ::tessera::baseTolerance;
using ::tessera::isClose;
using ::tessera::mantissaBits;
using ::tessera::minSubnormal;
using ::tessera::opName;
using ::tessera::tf32GemmTolerance;
using ::tessera::Tolerance;
using ::tessera::toleranceFor;
using ::tessera::ulpAtOne;
using ::tessera::withOutputRounding;
using Op = ::tessera::ToleranceOp;

/// Result of compare().
struct Comparison {
  /// True if the shapes match and every element isClose().
  bool pass = false;
  /// Largest |actual - expected| over all elements; +inf if a NaN or inf
  /// was mismatched.
  double maxAbsErr = 0.0;
  /// Largest |actual - expected| / |expected| over elements with a finite
  /// non-zero expected value; +inf if a NaN or inf was mismatched.
  double maxRelErr = 0.0;
  /// Logical flat index of the worst element: the one whose error uses the
  /// largest fraction of its allowance (mismatched special values first);
  /// -1 if there are no elements or the shapes differ.
  int64_t worstIndex = -1;
  /// Number of elements that are not isClose().
  int64_t mismatches = 0;
  /// One line: PASS/FAIL, mismatch count, errors, tolerance, and the worst
  /// element's multi-index with its actual and expected values.
  std::string summary;
};

/// Compares two tensors of the same shape element-wise in logical order
/// (dtypes and strides may differ) under `tol`. A shape mismatch fails with
/// a summary saying so.
Comparison compare(const HostTensor &actual, const HostTensor &expected,
                   Tolerance tol);

} // namespace tessera::testing

#endif // TESSERA_TESTS_SUPPORT_TOLERANCE_H
