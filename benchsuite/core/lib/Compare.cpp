//===- Compare.cpp - Noise-aware comparison of two runs -------------------===//
//
// A change in a case's median counts only when it is larger than the
// threshold and larger than the relative noise of both runs, noise being the
// larger of the sample spread (rsd) and the uncertainty of the mean (95% CI
// half-width over the mean). See docs/bench-json.md ("Compare").
//
//===----------------------------------------------------------------------===//

#include "tessera/bench/Compare.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>

using namespace tessera;
using namespace tessera::bench;

namespace {
using Key = std::tuple<std::string, std::string, std::string, std::string>;

Key keyOf(const CaseResult &c) {
  return {c.suite, c.name, c.device, c.precision};
}
} // namespace

std::string_view tessera::bench::verdictName(CaseChange::Verdict verdict) {
  switch (verdict) {
  case CaseChange::Verdict::Same:
    return "same";
  case CaseChange::Verdict::Faster:
    return "faster";
  case CaseChange::Verdict::Slower:
    return "slower";
  case CaseChange::Verdict::Missing:
    return "missing";
  case CaseChange::Verdict::New:
    return "new";
  case CaseChange::Verdict::Failed:
    return "FAILED";
  case CaseChange::Verdict::Fixed:
    return "fixed";
  case CaseChange::Verdict::Worse:
    return "worse";
  case CaseChange::Verdict::Better:
    return "better";
  }
  return "?";
}

double tessera::bench::relativeNoise(const SampleStats &stats) {
  if (stats.count < 2 || stats.mean <= 0)
    return 0;
  return std::max(stats.rsd, stats.ci95HalfWidth() / stats.mean);
}

const std::vector<std::pair<std::string, bool>> &
tessera::bench::gatedCodeFigures() {
  static const std::vector<std::pair<std::string, bool>> figures = {
      {"registers", false},
      {"spillBytes", false},
      {"localBytes", false},
      {"instructions", false},
      {"loop.instructions", false},
      {"barriersPerIteration", false},
      {"instrPerGlobalByte", false},
      {"instrPerMma", false},
      {"call", false},
      {"occupancy", true}};
  return figures;
}

namespace {
/// Classifies a scorecard case: the code-shape figures are deterministic, so
/// any gated figure that moves by more than the threshold counts (a figure
/// that appears, e.g. spills from 0, is an infinite change). `change` is the
/// largest relative worsening (or, without one, the largest improvement,
/// negative); `detail` lists every figure that moved past the threshold.
void codeChange(const CodeShape &base, const CodeShape &next, double threshold,
                CaseChange &ch) {
  double worst = 0, best = 0;
  for (const auto &[name, moreIsBetter] : gatedCodeFigures()) {
    auto get = [&](const CodeShape &c) {
      auto it = c.metrics.find(name);
      return it == c.metrics.end() ? 0.0 : it->second;
    };
    double b = get(base), n = get(next);
    if (b == n)
      continue;
    double rel = b != 0 ? n / b - 1 : std::numeric_limits<double>::infinity();
    double worsening = moreIsBetter ? -rel : rel;
    if (std::fabs(rel) <= threshold)
      continue;
    if (!ch.detail.empty())
      ch.detail += ", ";
    ch.detail += formatString("%s %g -> %g", name.c_str(), b, n);
    worst = std::max(worst, worsening);
    best = std::min(best, worsening);
  }
  if (worst > 0) {
    ch.verdict = CaseChange::Verdict::Worse;
    ch.change = worst;
  } else if (best < 0) {
    ch.verdict = CaseChange::Verdict::Better;
    ch.change = best;
  }
}
} // namespace

Comparison tessera::bench::compare(const RunResult &base, const RunResult &next,
                                   double threshold) {
  Comparison out;
  out.threshold = threshold;
  // The first case of each key wins; later duplicates are ignored.
  std::map<Key, const CaseResult *> nextByKey;
  for (const CaseResult &c : next.cases)
    nextByKey.emplace(keyOf(c), &c);
  // Show the device and precision only when the name alone is ambiguous.
  std::map<std::pair<std::string, std::string>, int> nameUses;
  {
    std::set<Key> seen;
    for (const RunResult *run : {&base, &next})
      for (const CaseResult &c : run->cases)
        if (seen.insert(keyOf(c)).second)
          ++nameUses[{c.suite, c.name}];
  }
  auto label = [&](const CaseResult &c) {
    if (nameUses[{c.suite, c.name}] > 1)
      return c.name + " [" + c.device + ", " + c.precision + "]";
    return c.name;
  };
  auto start = [&](const CaseResult &c) {
    CaseChange ch;
    ch.name = label(c);
    ch.suite = c.suite;
    ch.device = c.device;
    ch.precision = c.precision;
    return ch;
  };

  std::set<Key> matched;
  for (const CaseResult &b : base.cases) {
    Key key = keyOf(b);
    if (!matched.insert(key).second)
      continue;
    CaseChange ch = start(b);
    auto it = nextByKey.find(key);
    if (it == nextByKey.end()) {
      ch.verdict = CaseChange::Verdict::Missing;
      if (b.passed)
        ch.baseMedian = b.stats.median;
      out.cases.push_back(std::move(ch));
      continue;
    }
    const CaseResult &n = *it->second;
    // A skipped case (no fault of the kernel) is never a regression.
    if (n.skipped || b.skipped) {
      ch.verdict =
          n.skipped ? CaseChange::Verdict::Missing : CaseChange::Verdict::New;
      ch.detail = "skipped: " + (n.skipped ? n.failure : b.failure);
      if (n.passed)
        ch.newMedian = n.stats.median;
      out.cases.push_back(std::move(ch));
      continue;
    }
    if (b.passed)
      ch.baseMedian = b.stats.median;
    if (n.passed)
      ch.newMedian = n.stats.median;
    if (!n.passed) {
      ch.verdict = CaseChange::Verdict::Failed;
      ch.detail = n.failure;
      if (b.passed)
        out.regressed = true;
      out.cases.push_back(std::move(ch));
      continue;
    }
    if (!b.passed) {
      ch.verdict = CaseChange::Verdict::Fixed;
      ch.detail = b.failure;
      out.cases.push_back(std::move(ch));
      continue;
    }
    if (b.code && n.code) {
      codeChange(*b.code, *n.code, threshold, ch);
      if (ch.verdict == CaseChange::Verdict::Worse)
        out.regressed = true;
      out.cases.push_back(std::move(ch));
      continue;
    }
    ch.baseNoise = relativeNoise(b.stats);
    ch.newNoise = relativeNoise(n.stats);
    ch.noise = std::max(ch.baseNoise, ch.newNoise);
    if (ch.baseMedian > 0) {
      ch.change = ch.newMedian / ch.baseMedian - 1;
      double mag = std::fabs(ch.change);
      if (mag > threshold && mag > ch.noise)
        ch.verdict = ch.change > 0 ? CaseChange::Verdict::Slower
                                   : CaseChange::Verdict::Faster;
    }
    if (ch.verdict == CaseChange::Verdict::Slower)
      out.regressed = true;
    out.cases.push_back(std::move(ch));
  }
  for (const CaseResult &n : next.cases) {
    Key key = keyOf(n);
    if (!matched.insert(key).second)
      continue;
    CaseChange ch = start(n);
    ch.verdict = CaseChange::Verdict::New;
    if (n.passed)
      ch.newMedian = n.stats.median;
    else
      ch.detail = n.failure;
    out.cases.push_back(std::move(ch));
  }
  return out;
}

StatusOr<double> tessera::bench::parseThreshold(std::string_view text) {
  std::string s(text);
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  bool percent = !s.empty() && s.back() == '%';
  if (percent)
    s.pop_back();
  if (s.empty())
    return invalidArgument("threshold '%.*s': expected e.g. 5%% or 0.05",
                           static_cast<int>(text.size()), text.data());
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v) || v < 0)
    return invalidArgument("threshold '%.*s': expected e.g. 5%% or 0.05",
                           static_cast<int>(text.size()), text.data());
  return percent ? v / 100 : v;
}
