//===- Tolerance.cpp - Dtype-aware tolerance table ------------------------===//

#include "tessera/Support/Tolerance.h"

#include <algorithm>
#include <cmath>

namespace tessera {

namespace {

/// Unit roundoff of f32 (half an ulp at 1.0), the accumulation precision of
/// every kernel.
constexpr double kF32UnitRoundoff = 0x1p-24;

/// Allowance for the f32 error of row statistics over `k` terms.
double rowStatisticsAllowance(double k) {
  return 8.0 * std::sqrt(k) * kF32UnitRoundoff;
}

} // namespace

const char *opName(ToleranceOp op) {
  switch (op) {
  case ToleranceOp::Elementwise:
    return "elementwise";
  case ToleranceOp::Reduction:
    return "reduction";
  case ToleranceOp::Gemm:
    return "gemm";
  case ToleranceOp::Softmax:
    return "softmax";
  case ToleranceOp::LayerNorm:
    return "layernorm";
  case ToleranceOp::Attention:
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
  case DType::F6E3M2:
    return 2;
  case DType::F6E2M3:
    return 3;
  case DType::F4E2M1:
    return 1;
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
  case DType::F6E3M2:
    return 0x1p-4;
  case DType::F6E2M3:
    return 0x1p-3;
  case DType::F4E2M1:
    return 0x1p-1;
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
  case DType::F6E3M2:
    return {2.5e-1, 2.5e-1};
  case DType::F6E2M3:
    return {1.25e-1, 1.25e-1};
  case DType::F4E2M1:
    return {5e-1, 5e-1};
  case DType::I8:
  case DType::I32:
  case DType::I64:
  case DType::Bool:
    return {0.0, 0.0};
  }
  return {0.0, 0.0};
}

Tolerance toleranceFor(DType storage, ToleranceOp op, int64_t reductionLength) {
  Tolerance base = baseTolerance(storage);
  if (!isFloatDType(storage))
    return base;
  double k = static_cast<double>(std::max<int64_t>(reductionLength, 1));
  switch (op) {
  case ToleranceOp::Elementwise:
    return base;
  case ToleranceOp::Reduction:
  case ToleranceOp::Gemm:
    return {base.atol * std::sqrt(k), base.rtol};
  case ToleranceOp::Softmax:
  case ToleranceOp::LayerNorm: {
    double g = rowStatisticsAllowance(k);
    return {base.atol + g, base.rtol + g};
  }
  case ToleranceOp::Attention: {
    double g = rowStatisticsAllowance(k);
    return {2.0 * base.atol + g, base.rtol + g};
  }
  }
  return base;
}

Tolerance tf32GemmTolerance(int64_t reductionLength) {
  Tolerance f16 = toleranceFor(DType::F16, ToleranceOp::Gemm, reductionLength);
  return {2.0 * f16.atol, 2.0 * f16.rtol};
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

} // namespace tessera
