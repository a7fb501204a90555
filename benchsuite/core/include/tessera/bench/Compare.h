//===- Compare.h - Noise-aware comparison of two runs -----------*- C++ -*-===//
//
// `compare()` matches the cases of two runs and decides, for each, whether
// it got faster, slower or stayed the same, flagging a change only when it
// exceeds both the threshold and the measured noise of both runs. The rule is
// documented in docs/bench-json.md ("Compare").
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCH_COMPARE_H
#define TESSERA_BENCH_COMPARE_H

#include "tessera/Support/Status.h"
#include "tessera/bench/Result.h"

#include <string>
#include <string_view>
#include <vector>

namespace tessera::bench {

struct CaseChange {
  std::string
      name; ///< "suite/name [device, precision]" when ambiguous, else the name
  std::string suite, device, precision;
  double baseMedian = 0, newMedian = 0; ///< ms
  double change = 0;                    ///< newMedian / baseMedian - 1
  /// The relative noise bound used: max over both runs of
  /// max(rsd, 95% CI half-width / mean).
  double noise = 0;
  double baseNoise = 0, newNoise = 0;
  enum class Verdict {
    Same,    ///< within the threshold or within the noise
    Faster,  ///< change < -threshold and |change| > noise
    Slower,  ///< change > threshold and change > noise (a regression)
    Missing, ///< in base only
    New,     ///< in new only
    Failed,  ///< FAILED in new (a regression when it passed in base)
    Fixed,   ///< FAILED in base, passes in new
    /// Scorecard cases (code shape, no timing): a gated figure got worse
    /// by more than the threshold (a regression), or none did and one got
    /// better by more (see codeChange()).
    Worse,
    Better,
  } verdict = Verdict::Same;
  /// The failure text of the failed side, for Failed.
  std::string detail;
};

/// "same", "faster", "slower", "missing", "new", "FAILED", "fixed",
/// "worse", "better".
std::string_view verdictName(CaseChange::Verdict verdict);

struct Comparison {
  std::vector<CaseChange> cases; ///< base order, then new-only cases
  bool regressed = false; ///< any Slower, or passed in base and FAILED in new
  double threshold = 0;
};

/// The code-shape figures compare() gates, with whether more is better:
/// registers, spillBytes, localBytes, instructions, loop.instructions,
/// barriersPerIteration, instrPerGlobalByte, instrPerMma, call (fewer is
/// better) and occupancy (more is better).
const std::vector<std::pair<std::string, bool>> &gatedCodeFigures();

/// The relative noise of one case's timing: max(rsd, ci95 half-width /
/// mean); 0 with fewer than 2 samples.
double relativeNoise(const SampleStats &stats);

/// Matches cases by (suite, name, device, precision) and classifies each (see
/// CaseChange::Verdict). `threshold` is relative (0.05 = 5%).
Comparison compare(const RunResult &base, const RunResult &next,
                   double threshold = 0.05);

/// Parses a relative threshold: "5%" -> 0.05, "0.05" -> 0.05. Negative,
/// non-finite or malformed input is INVALID_ARGUMENT.
StatusOr<double> parseThreshold(std::string_view text);

} // namespace tessera::bench

#endif // TESSERA_BENCH_COMPARE_H
