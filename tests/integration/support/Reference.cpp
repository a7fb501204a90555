//===- Reference.cpp - Reference implementations for kernel tests ---------===//
//
// Deliberately simple loops over dense double copies of the inputs. Speed is
// secondary; every function should be checkable by reading it once.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include "Check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

namespace tessera::testing {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// max() that propagates NaN from either side.
double maxPropagatingNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return kNaN;
  return a > b ? a : b;
}

/// Stable softmax of `scores` in IEEE double: exp(s - max) / sum. Writes the
/// probabilities to `probs` (same size) and returns the log-sum-exp
/// max + log(sum). `scores` must not be empty.
double stableSoftmax(std::span<const double> scores, std::span<double> probs) {
  double rowMax = -kInf;
  for (double s : scores)
    rowMax = maxPropagatingNaN(rowMax, s);
  double sum = 0.0;
  for (size_t j = 0; j < scores.size(); ++j) {
    probs[j] = std::exp(scores[j] - rowMax);
    sum += probs[j];
  }
  for (double &p : probs)
    p /= sum;
  return rowMax + std::log(sum);
}

void checkShapesEqual(const HostTensor &x, const HostTensor &y,
                      const char *message) {
  TESSERA_TEST_CHECK(x.shape() == y.shape(), message);
}

void checkRank(const HostTensor &t, int64_t rank, const char *message) {
  TESSERA_TEST_CHECK(t.defined() && t.rank() == rank, message);
}

size_t toSize(int64_t v) { return static_cast<size_t>(v); }

/// out = f(x[i], y[i]) element-wise, for same-shape tensors.
template <typename Fn>
void binaryElementwise(const HostTensor &x, const HostTensor &y,
                       HostTensor &out, Fn fn) {
  checkShapesEqual(x, y, "element-wise operands must have the same shape");
  checkShapesEqual(x, out, "element-wise output must match the operands");
  std::vector<double> xs = x.toDoubleVector();
  std::vector<double> ys = y.toDoubleVector();
  std::vector<double> result(xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    result[i] = fn(xs[i], ys[i]);
  out.assignFromDoubles(result);
}

} // namespace

//===----------------------------------------------------------------------===//
// Matrix and row operations
//===----------------------------------------------------------------------===//

void gemm(const HostTensor &a, const HostTensor &b, HostTensor &c, double alpha,
          double beta) {
  checkRank(a, 2, "gemm: A must be 2-D [M, K]");
  checkRank(b, 2, "gemm: B must be 2-D [K, N]");
  checkRank(c, 2, "gemm: C must be 2-D [M, N]");
  int64_t m = a.dim(0), k = a.dim(1), n = b.dim(1);
  TESSERA_TEST_CHECK(b.dim(0) == k, "gemm: A is [M, K] but B is not [K, N]");
  TESSERA_TEST_CHECK(c.dim(0) == m && c.dim(1) == n, "gemm: C is not [M, N]");
  std::vector<double> as = a.toDoubleVector();
  // B^T, so that both operands of each dot product are contiguous rows.
  std::vector<double> bts = b.transposed(0, 1).toDoubleVector();
  // BLAS semantics: with beta == 0, C is output-only and never read.
  std::vector<double> cs =
      beta != 0.0 ? c.toDoubleVector() : std::vector<double>(toSize(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p)
        acc += as[toSize(i * k + p)] * bts[toSize(j * k + p)];
      double &out = cs[toSize(i * n + j)];
      out = beta != 0.0 ? alpha * acc + beta * out : alpha * acc;
    }
  }
  c.assignFromDoubles(cs);
}

void softmax(const HostTensor &x, HostTensor &y, bool causal) {
  checkRank(x, 2, "softmax: X must be 2-D [rows, cols]");
  checkShapesEqual(x, y, "softmax: Y must have the shape of X");
  int64_t rows = x.dim(0), cols = x.dim(1);
  std::vector<double> xs = x.toDoubleVector();
  std::vector<double> ys(xs.size(), 0.0); // masked outputs stay exactly 0
  for (int64_t r = 0; r < rows; ++r) {
    // Column c is masked when c > r, so columns [0, r] are visible.
    int64_t visible = causal ? std::min(cols, r + 1) : cols;
    if (visible == 0)
      continue;
    std::span<const double> scores(xs.data() + r * cols, toSize(visible));
    std::span<double> probs(ys.data() + r * cols, toSize(visible));
    stableSoftmax(scores, probs);
  }
  y.assignFromDoubles(ys);
}

void layerNorm(const HostTensor &x, const HostTensor &weight,
               const HostTensor &bias, HostTensor &y, double eps,
               HostTensor *mean, HostTensor *rstd) {
  checkRank(x, 2, "layerNorm: X must be 2-D [rows, hidden]");
  checkShapesEqual(x, y, "layerNorm: Y must have the shape of X");
  int64_t rows = x.dim(0), hidden = x.dim(1);
  std::vector<double> ws(toSize(hidden), 1.0);
  std::vector<double> bs(toSize(hidden), 0.0);
  if (weight.defined()) {
    TESSERA_TEST_CHECK(weight.shape() == std::vector<int64_t>{hidden},
                       "layerNorm: weight must be [hidden]");
    ws = weight.toDoubleVector();
  }
  if (bias.defined()) {
    TESSERA_TEST_CHECK(bias.shape() == std::vector<int64_t>{hidden},
                       "layerNorm: bias must be [hidden]");
    bs = bias.toDoubleVector();
  }
  std::vector<int64_t> statsShape{rows};
  if (mean)
    TESSERA_TEST_CHECK(mean->shape() == statsShape,
                       "layerNorm: mean output must be [rows]");
  if (rstd)
    TESSERA_TEST_CHECK(rstd->shape() == statsShape,
                       "layerNorm: rstd output must be [rows]");

  std::vector<double> xs = x.toDoubleVector();
  std::vector<double> ys(xs.size());
  std::vector<double> means(toSize(rows)), rstds(toSize(rows));
  double h = static_cast<double>(hidden);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = xs.data() + r * hidden;
    double sum = 0.0;
    for (int64_t c = 0; c < hidden; ++c)
      sum += row[c];
    double mu = sum / h;
    double squares = 0.0;
    for (int64_t c = 0; c < hidden; ++c)
      squares += (row[c] - mu) * (row[c] - mu);
    double var = squares / h;
    double denom = std::sqrt(var + eps);
    for (int64_t c = 0; c < hidden; ++c)
      ys[toSize(r * hidden + c)] =
          (row[c] - mu) / denom * ws[toSize(c)] + bs[toSize(c)];
    means[toSize(r)] = mu;
    rstds[toSize(r)] = 1.0 / denom;
  }
  y.assignFromDoubles(ys);
  if (mean)
    mean->assignFromDoubles(means);
  if (rstd)
    rstd->assignFromDoubles(rstds);
}

double defaultAttentionScale(int64_t headDim) {
  TESSERA_TEST_CHECK(headDim > 0, "head dimension must be positive");
  return 1.0 / std::sqrt(static_cast<double>(headDim));
}

void attention(const HostTensor &q, const HostTensor &k, const HostTensor &v,
               HostTensor &o, bool causal, double scale, HostTensor *lse) {
  checkRank(q, 3, "attention: Q must be [BH, Sq, D]");
  checkRank(k, 3, "attention: K must be [BH, Sk, D]");
  checkRank(v, 3, "attention: V must be [BH, Sk, Dv]");
  checkRank(o, 3, "attention: O must be [BH, Sq, Dv]");
  int64_t bh = q.dim(0), sq = q.dim(1), d = q.dim(2);
  int64_t sk = k.dim(1), dv = v.dim(2);
  TESSERA_TEST_CHECK(k.dim(0) == bh && k.dim(2) == d,
                     "attention: K must be [BH, Sk, D]");
  TESSERA_TEST_CHECK(v.dim(0) == bh && v.dim(1) == sk,
                     "attention: V must be [BH, Sk, Dv]");
  TESSERA_TEST_CHECK(o.dim(0) == bh && o.dim(1) == sq && o.dim(2) == dv,
                     "attention: O must be [BH, Sq, Dv]");
  if (lse)
    TESSERA_TEST_CHECK(lse->shape() == (std::vector<int64_t>{bh, sq}),
                       "attention: lse must be [BH, Sq]");

  std::vector<double> qs = q.toDoubleVector();
  std::vector<double> ks = k.toDoubleVector();
  std::vector<double> vs = v.toDoubleVector();
  std::vector<double> os(toSize(bh * sq * dv), 0.0);
  std::vector<double> lses(toSize(bh * sq), -kInf);
  std::vector<double> scores(toSize(sk)), probs(toSize(sk));
  for (int64_t b = 0; b < bh; ++b) {
    for (int64_t i = 0; i < sq; ++i) {
      // Key j is masked when j > i + (sk - sq): keys [0, i + sk - sq] are
      // visible (clamped to [0, sk]).
      int64_t visible = sk;
      if (causal)
        visible = std::clamp<int64_t>(i + (sk - sq) + 1, 0, sk);
      if (visible == 0)
        continue; // O row stays 0, lse stays -inf.
      const double *qRow = qs.data() + (b * sq + i) * d;
      for (int64_t j = 0; j < visible; ++j) {
        const double *kRow = ks.data() + (b * sk + j) * d;
        double acc = 0.0;
        for (int64_t c = 0; c < d; ++c)
          acc += qRow[c] * kRow[c];
        scores[toSize(j)] = scale * acc;
      }
      lses[toSize(b * sq + i)] =
          stableSoftmax(std::span<const double>(scores.data(), toSize(visible)),
                        std::span<double>(probs.data(), toSize(visible)));
      double *oRow = os.data() + (b * sq + i) * dv;
      for (int64_t j = 0; j < visible; ++j) {
        const double *vRow = vs.data() + (b * sk + j) * dv;
        for (int64_t c = 0; c < dv; ++c)
          oRow[c] += probs[toSize(j)] * vRow[c];
      }
    }
  }
  o.assignFromDoubles(os);
  if (lse)
    lse->assignFromDoubles(lses);
}

//===----------------------------------------------------------------------===//
// Vector operations and reductions
//===----------------------------------------------------------------------===//

void axpy(double alpha, const HostTensor &x, HostTensor &y) {
  binaryElementwise(x, y, y,
                    [alpha](double xv, double yv) { return alpha * xv + yv; });
}

double dot(const HostTensor &x, const HostTensor &y) {
  checkShapesEqual(x, y, "dot: operands must have the same shape");
  std::vector<double> xs = x.toDoubleVector();
  std::vector<double> ys = y.toDoubleVector();
  double acc = 0.0;
  for (size_t i = 0; i < xs.size(); ++i)
    acc += xs[i] * ys[i];
  return acc;
}

double norm2(const HostTensor &x) {
  double acc = 0.0;
  for (double v : x.toDoubleVector())
    acc += v * v;
  return std::sqrt(acc);
}

void add(const HostTensor &x, const HostTensor &y, HostTensor &out) {
  binaryElementwise(x, y, out, [](double a, double b) { return a + b; });
}

void mul(const HostTensor &x, const HostTensor &y, HostTensor &out) {
  binaryElementwise(x, y, out, [](double a, double b) { return a * b; });
}

double reduceSum(const HostTensor &x) {
  double acc = 0.0;
  for (double v : x.toDoubleVector())
    acc += v;
  return acc;
}

double reduceMax(const HostTensor &x) {
  double acc = -kInf;
  for (double v : x.toDoubleVector())
    acc = maxPropagatingNaN(acc, v);
  return acc;
}

void reduceSumRows(const HostTensor &x, HostTensor &out) {
  checkRank(x, 2, "reduceSumRows: X must be 2-D [rows, cols]");
  TESSERA_TEST_CHECK(out.shape() == std::vector<int64_t>{x.dim(0)},
                     "reduceSumRows: out must be [rows]");
  std::vector<double> sums(toSize(x.dim(0)));
  for (int64_t r = 0; r < x.dim(0); ++r)
    sums[toSize(r)] = reduceSum(x.slice(0, r, r + 1));
  out.assignFromDoubles(sums);
}

void reduceMaxRows(const HostTensor &x, HostTensor &out) {
  checkRank(x, 2, "reduceMaxRows: X must be 2-D [rows, cols]");
  TESSERA_TEST_CHECK(out.shape() == std::vector<int64_t>{x.dim(0)},
                     "reduceMaxRows: out must be [rows]");
  std::vector<double> maxima(toSize(x.dim(0)));
  for (int64_t r = 0; r < x.dim(0); ++r)
    maxima[toSize(r)] = reduceMax(x.slice(0, r, r + 1));
  out.assignFromDoubles(maxima);
}

//===----------------------------------------------------------------------===//
// STREAM kernels
//===----------------------------------------------------------------------===//

void streamCopy(const HostTensor &a, HostTensor &c) {
  checkRank(a, 1, "streamCopy: operands must be 1-D");
  checkShapesEqual(a, c, "streamCopy: operands must have the same shape");
  c.assignFromDoubles(a.toDoubleVector());
}

void streamScale(const HostTensor &a, HostTensor &c, double s) {
  checkRank(a, 1, "streamScale: operands must be 1-D");
  binaryElementwise(a, a, c, [s](double av, double) { return s * av; });
}

void streamAdd(const HostTensor &a, const HostTensor &b, HostTensor &c) {
  checkRank(a, 1, "streamAdd: operands must be 1-D");
  binaryElementwise(a, b, c, [](double av, double bv) { return av + bv; });
}

void streamTriad(const HostTensor &a, const HostTensor &b, HostTensor &c,
                 double s) {
  checkRank(a, 1, "streamTriad: operands must be 1-D");
  binaryElementwise(a, b, c, [s](double av, double bv) { return av + s * bv; });
}

void gather(const HostTensor &src, const HostTensor &indices, HostTensor &out) {
  checkRank(src, 1, "gather: src must be 1-D");
  TESSERA_TEST_CHECK(isIntegerDType(indices.dtype()) &&
                         indices.dtype() != DType::Bool,
                     "gather: indices must have an integer dtype");
  checkShapesEqual(indices, out, "gather: out must have the indices' shape");
  std::vector<double> values = src.toDoubleVector();
  std::vector<double> idx = indices.toDoubleVector();
  std::vector<double> result(idx.size());
  int64_t n = src.dim(0);
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t j = static_cast<int64_t>(idx[i]);
    TESSERA_TEST_CHECK(j >= 0 && j < n, "gather: index out of range");
    result[i] = values[toSize(j)];
  }
  out.assignFromDoubles(result);
}

} // namespace tessera::testing
