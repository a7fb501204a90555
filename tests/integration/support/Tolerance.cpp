//===- Tolerance.cpp - Comparing tensors under the tolerance table --------===//

#include "Tolerance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace tessera::testing {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string formatDouble(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9g", v);
  return buffer;
}

bool isSpecial(double v) { return std::isnan(v) || std::isinf(v); }

} // namespace

Comparison compare(const HostTensor &actual, const HostTensor &expected,
                   Tolerance tol) {
  Comparison result;
  std::string tolText =
      "atol " + formatDouble(tol.atol) + ", rtol " + formatDouble(tol.rtol);
  if (actual.shape() != expected.shape()) {
    result.pass = false;
    result.mismatches = std::max(actual.numel(), expected.numel());
    result.maxAbsErr = kInf;
    result.maxRelErr = kInf;
    result.summary = "FAIL: shape mismatch: actual " + actual.describe() +
                     " vs expected " + expected.describe();
    return result;
  }

  std::vector<double> as = actual.toDoubleVector();
  std::vector<double> es = expected.toDoubleVector();
  double worstScore = -1.0;
  for (size_t i = 0; i < as.size(); ++i) {
    double a = as[i], e = es[i];
    bool ok = isClose(a, e, tol);
    double absErr = 0.0, relErr = 0.0, score = 0.0;
    if (isSpecial(a) || isSpecial(e)) {
      absErr = relErr = score = ok ? 0.0 : kInf;
    } else {
      absErr = std::fabs(a - e);
      if (e != 0.0)
        relErr = absErr / std::fabs(e);
      double allowance = tol.atol + tol.rtol * std::fabs(e);
      if (allowance > 0.0)
        score = absErr / allowance;
      else
        score = absErr > 0.0 ? kInf : 0.0;
    }
    if (!ok)
      ++result.mismatches;
    result.maxAbsErr = std::max(result.maxAbsErr, absErr);
    result.maxRelErr = std::max(result.maxRelErr, relErr);
    // Strict '>' keeps the first of equally bad elements.
    if (score > worstScore) {
      worstScore = score;
      result.worstIndex = static_cast<int64_t>(i);
    }
  }
  result.pass = result.mismatches == 0;

  std::string text = result.pass ? "PASS: " : "FAIL: ";
  text += std::to_string(result.mismatches) + " of " +
          std::to_string(as.size()) + " elements outside " + tolText;
  if (result.worstIndex >= 0) {
    size_t w = static_cast<size_t>(result.worstIndex);
    text += "; max abs err " + formatDouble(result.maxAbsErr) +
            ", max rel err " + formatDouble(result.maxRelErr) + "; worst " +
            formatShape(expected.unflatten(result.worstIndex)) + " (flat " +
            std::to_string(result.worstIndex) + "): actual " +
            formatDouble(as[w]) + ", expected " + formatDouble(es[w]);
  }
  result.summary = std::move(text);
  return result;
}

} // namespace tessera::testing
