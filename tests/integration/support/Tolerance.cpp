//===- Tolerance.cpp - Dtype-aware tolerances and comparison --------------===//

#include "Tolerance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace tessera::testing {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Unit roundoff of f32 (half an ulp at 1.0), the accumulation precision of
/// every kernel.
constexpr double kF32UnitRoundoff = 0x1p-24;

/// Allowance for the f32 error of row statistics over `k` terms.
double rowStatisticsAllowance(double k) {
  return 8.0 * std::sqrt(k) * kF32UnitRoundoff;
}

std::string formatDouble(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9g", v);
  return buffer;
}

bool isSpecial(double v) { return std::isnan(v) || std::isinf(v); }

} // namespace

const char *opName(Op op) {
  switch (op) {
  case Op::Elementwise:
    return "elementwise";
  case Op::Reduction:
    return "reduction";
  case Op::Gemm:
    return "gemm";
  case Op::Softmax:
    return "softmax";
  case Op::LayerNorm:
    return "layernorm";
  case Op::Attention:
    return "attention";
  }
  return "unknown";
}

int mantissaBits(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 23;
  case DType::F16:
    return 10;
  case DType::BF16:
    return 7;
  case DType::F8E4M3:
    return 3;
  case DType::F8E5M2:
    return 2;
  case DType::I8:
  case DType::I32:
  case DType::I64:
  case DType::Bool:
    return 0;
  }
  return 0;
}

double ulpAtOne(DType dtype) {
  int bits = mantissaBits(dtype);
  return bits == 0 ? 0.0 : std::ldexp(1.0, -bits);
}

double minSubnormal(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 0x1p-149;
  case DType::F16:
    return 0x1p-24;
  case DType::BF16:
    return 0x1p-133;
  case DType::F8E4M3:
    return 0x1p-9;
  case DType::F8E5M2:
    return 0x1p-16;
  case DType::I8:
  case DType::I32:
  case DType::I64:
  case DType::Bool:
    return 0.0;
  }
  return 0.0;
}

Tolerance baseTolerance(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return {1e-5, 1e-5};
  case DType::F16:
    return {1e-3, 1e-3};
  case DType::BF16:
    return {1.6e-2, 1.6e-2};
  case DType::F8E4M3:
    return {1.25e-1, 1.25e-1};
  case DType::F8E5M2:
    return {2.5e-1, 2.5e-1};
  case DType::I8:
  case DType::I32:
  case DType::I64:
  case DType::Bool:
    return {0.0, 0.0};
  }
  return {0.0, 0.0};
}

Tolerance toleranceFor(DType storage, Op op, int64_t reductionLength) {
  Tolerance base = baseTolerance(storage);
  if (!isFloatDType(storage))
    return base;
  double k = static_cast<double>(std::max<int64_t>(reductionLength, 1));
  switch (op) {
  case Op::Elementwise:
    return base;
  case Op::Reduction:
  case Op::Gemm:
    return {base.atol * std::sqrt(k), base.rtol};
  case Op::Softmax:
  case Op::LayerNorm: {
    double g = rowStatisticsAllowance(k);
    return {base.atol + g, base.rtol + g};
  }
  case Op::Attention: {
    double g = rowStatisticsAllowance(k);
    return {2.0 * base.atol + g, base.rtol + g};
  }
  }
  return base;
}

Tolerance tf32GemmTolerance(int64_t reductionLength) {
  return toleranceFor(DType::F16, Op::Gemm, reductionLength);
}

Tolerance withOutputRounding(Tolerance tol, DType output) {
  if (!isFloatDType(output))
    return tol;
  return {tol.atol + 0.5 * minSubnormal(output),
          tol.rtol + 0.5 * ulpAtOne(output)};
}

bool isClose(double actual, double expected, Tolerance tol) {
  if (std::isnan(expected) || std::isnan(actual))
    return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual))
    return actual == expected;
  return std::fabs(actual - expected) <=
         tol.atol + tol.rtol * std::fabs(expected);
}

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
