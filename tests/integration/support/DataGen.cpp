//===- DataGen.cpp - Deterministic test data for HostTensors --------------===//

#include "DataGen.h"

#include "Check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

namespace tessera::testing {

namespace {

/// Uniform double in [0, 1) from the top 53 bits of one engine output.
double uniform01(std::mt19937_64 &engine) {
  return static_cast<double>(engine() >> 11) * 0x1p-53;
}

/// Uniform double in (0, 1]: never 0, so log() stays finite.
double uniformOpen01(std::mt19937_64 &engine) {
  return static_cast<double>((engine() >> 11) + 1) * 0x1p-53;
}

double clampMagnitude(double magnitude, DType dtype) {
  return std::min(magnitude, maxFiniteValue(dtype));
}

void checkFloat(const HostTensor &t, const char *what) {
  TESSERA_TEST_CHECK(isFloatDType(t.dtype()), what);
}

} // namespace

double maxFiniteValue(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return std::numeric_limits<float>::max();
  case DType::F16:
    return 65504.0;
  case DType::BF16:
    return 0x1.fep127; // (2 - 2^-7) * 2^127
  case DType::F8E4M3:
    return 448.0;
  case DType::F8E5M2:
    return 57344.0;
  case DType::I8:
    return 127.0;
  case DType::I32:
    return 2147483647.0;
  case DType::I64:
    return 0x1.fffffffffffffp62; // largest double below 2^63
  case DType::Bool:
    return 1.0;
  case DType::F6E3M2:
    return 28.0;
  case DType::F6E2M3:
    return 7.5;
  case DType::F4E2M1:
    return 6.0;
  }
  return 0.0;
}

void fillNormal(HostTensor &t, uint64_t seed, double mean, double std) {
  std::mt19937_64 engine(seed);
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (double &v : values) {
    // Box-Muller; one sample per pair of uniforms keeps it simple.
    double radius = std::sqrt(-2.0 * std::log(uniformOpen01(engine)));
    double angle = 2.0 * std::numbers::pi * uniform01(engine);
    v = mean + std * radius * std::cos(angle);
  }
  t.assignFromDoubles(values);
}

void fillUniform(HostTensor &t, uint64_t seed, double lo, double hi) {
  TESSERA_TEST_CHECK(lo <= hi, "fillUniform needs lo <= hi");
  std::mt19937_64 engine(seed);
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (double &v : values)
    v = lo + (hi - lo) * uniform01(engine);
  t.assignFromDoubles(values);
}

void fillRandomIndices(HostTensor &t, uint64_t seed, int64_t bound) {
  TESSERA_TEST_CHECK(bound >= 1, "fillRandomIndices needs bound >= 1");
  TESSERA_TEST_CHECK(static_cast<double>(bound - 1) <=
                         maxFiniteValue(t.dtype()),
                     "index bound does not fit the dtype");
  std::mt19937_64 engine(seed);
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (double &v : values) {
    // Modulo bias is irrelevant for test data.
    v = static_cast<double>(engine() % static_cast<uint64_t>(bound));
  }
  t.assignFromDoubles(values);
}

void fillArange(HostTensor &t, double start, double step) {
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = start + static_cast<double>(i) * step;
  t.assignFromDoubles(values);
}

const char *dataPatternName(DataPattern pattern) {
  switch (pattern) {
  case DataPattern::Zeros:
    return "zeros";
  case DataPattern::LargePositive:
    return "large_pos";
  case DataPattern::LargeNegative:
    return "large_neg";
  case DataPattern::AlternatingSigns:
    return "alternating";
  case DataPattern::HalfAndHalf:
    return "half_half";
  }
  return "unknown";
}

void fillPattern(HostTensor &t, DataPattern pattern) {
  double large = clampMagnitude(kLargeMagnitude, t.dtype());
  double mixed = clampMagnitude(kMixedMagnitude, t.dtype());
  switch (pattern) {
  case DataPattern::Zeros:
    t.fill(0.0);
    return;
  case DataPattern::LargePositive:
    t.fill(large);
    return;
  case DataPattern::LargeNegative:
    t.fill(-large);
    return;
  case DataPattern::AlternatingSigns:
  case DataPattern::HalfAndHalf: {
    std::vector<double> values(static_cast<size_t>(t.numel()));
    int64_t cols = t.rank() == 0 ? 1 : t.dim(-1);
    int64_t firstHalf = (cols + 1) / 2;
    for (size_t i = 0; i < values.size(); ++i) {
      bool positive = pattern == DataPattern::AlternatingSigns
                          ? i % 2 == 0
                          : static_cast<int64_t>(i) % cols < firstHalf;
      values[i] = positive ? mixed : -mixed;
    }
    t.assignFromDoubles(values);
    return;
  }
  }
}

void setNaNAt(HostTensor &t, int64_t flat) {
  checkFloat(t, "NaN needs a floating-point dtype");
  t.setAt(flat, std::numeric_limits<double>::quiet_NaN());
}

void setInfAt(HostTensor &t, int64_t flat, bool negative) {
  checkFloat(t, "infinity needs a floating-point dtype");
  double inf = std::numeric_limits<double>::infinity();
  t.setAt(flat, negative ? -inf : inf);
}

void setRowNegInf(HostTensor &t, int64_t row) {
  checkFloat(t, "-inf needs a floating-point dtype");
  TESSERA_TEST_CHECK(t.rank() >= 1, "setRowNegInf needs rank >= 1");
  int64_t cols = t.dim(-1);
  int64_t rows = cols == 0 ? 0 : t.numel() / cols;
  TESSERA_TEST_CHECK(row >= 0 && row < rows, "row out of range");
  for (int64_t c = 0; c < cols; ++c)
    t.setAt(row * cols + c, -std::numeric_limits<double>::infinity());
}

} // namespace tessera::testing
