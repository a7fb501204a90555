//===- Format.h - Terminal, CSV and markdown output -------------*- C++ -*-===//
//
// Human-readable forms of a run and of a comparison. A FAILED case shows its
// failure and errors, never a speed.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCH_FORMAT_H
#define TESSERA_BENCH_FORMAT_H

#include "tessera/bench/Compare.h"
#include "tessera/bench/Result.h"

#include <string>

namespace tessera::bench {

/// Aligned terminal table: case, device, precision, config, median ms, +-CI,
/// TFLOPS, GB/s, roofline %, baseline & speedup, compile ms, tune ms. `color`
/// adds ANSI colours (FAILED red, speedup >= 1 green / < 1 yellow). When
/// cases carry sim counters, a second table follows with them: global
/// requests, coalescing efficiency, bytes moved / useful, shared requests,
/// wavefronts per request (ideal), barriers per block (max), divergent
/// branches / warp branch instances.
std::string formatTable(const RunResult &run, bool color);

/// One header row and one row per case (RFC 4180 quoting); the speed columns
/// of a FAILED case are empty.
std::string formatCsv(const RunResult &run);

/// A markdown document: the run header as a list, then a table of the cases
/// (and one of the sim counters, as formatTable).
std::string formatMarkdown(const RunResult &run);

/// Aligned table of a comparison (case, base ms, new ms, change, noise,
/// verdict) and a summary line.
std::string formatComparison(const Comparison &comparison, bool color);

} // namespace tessera::bench

#endif // TESSERA_BENCH_FORMAT_H
