//===- Format.cpp - Terminal, CSV and markdown output ---------------------===//
//
// Formatters for runs and comparisons. A FAILED case never shows a speed:
// its row carries the failure text and the measured errors instead.
//
//===----------------------------------------------------------------------===//

#include "tessera/bench/Format.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace tessera;
using namespace tessera::bench;

namespace {
constexpr const char *kRed = "\033[31m";
constexpr const char *kGreen = "\033[32m";
constexpr const char *kYellow = "\033[33m";
constexpr const char *kBold = "\033[1m";
constexpr const char *kReset = "\033[0m";

/// Terminal columns of UTF-8 text (one per code point).
size_t displayWidth(const std::string &s) {
  size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80)
      ++w;
  return w;
}

/// Newlines and tabs become spaces (one row per case).
std::string oneLine(std::string s) {
  for (char &c : s)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  return s;
}

std::string fmtMs(double ms) {
  if (ms >= 100)
    return formatString("%.1f", ms);
  if (ms >= 1)
    return formatString("%.3f", ms);
  return formatString("%.4f", ms);
}

std::string fmtRate(double x) {
  if (x >= 100)
    return formatString("%.0f", x);
  if (x >= 10)
    return formatString("%.1f", x);
  // Three significant digits below 10 (0.0035 TFLOPS, not 0.00).
  return formatString("%.3g", x);
}

std::string fmtErrors(const CaseResult &c) {
  return formatString("max abs err %.3g, max rel err %.3g", c.maxAbsError,
                      c.maxRelError);
}

std::string configText(const CaseResult &c) {
  std::string s;
  for (auto &[k, v] : c.config) {
    if (!s.empty())
      s += ' ';
    s += k + "=" + v;
  }
  if (!c.configSource.empty())
    s += (s.empty() ? "(" : " (") + c.configSource + ")";
  return s.empty() ? "-" : s;
}

struct Cell {
  std::string text;
  bool right = false; ///< right-aligned (numbers)
  const char *color = nullptr;
  bool rest = false; ///< runs to the end of the line, not aligned
};

/// Aligned text table; a header row, then rows. Columns are separated by two
/// spaces.
std::string renderTable(const std::vector<std::string> &header,
                        const std::vector<bool> &rightAligned,
                        const std::vector<std::vector<Cell>> &rows,
                        bool color) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i)
    width[i] = displayWidth(header[i]);
  for (const auto &row : rows)
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      if (!row[i].rest)
        width[i] = std::max(width[i], displayWidth(row[i].text));
  auto pad = [](const std::string &text, size_t w, bool right) {
    size_t dw = displayWidth(text);
    std::string fill(w > dw ? w - dw : 0, ' ');
    return right ? fill + text : text + fill;
  };
  std::string out;
  auto emit = [&](const std::vector<Cell> &row) {
    std::string line;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      if (i)
        line += "  ";
      const Cell &c = row[i];
      std::string text =
          c.rest ? c.text : pad(c.text, width[i], c.right || rightAligned[i]);
      if (color && c.color)
        text = std::string(c.color) + text + kReset;
      line += text;
      if (c.rest)
        break;
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + "\n";
  };
  std::vector<Cell> head;
  for (const std::string &h : header)
    head.push_back({h, false, color ? kBold : nullptr, false});
  emit(head);
  std::vector<Cell> rule;
  for (size_t i = 0; i < header.size(); ++i)
    rule.push_back({std::string(width[i], '-'), false, nullptr, false});
  emit(rule);
  for (const auto &row : rows)
    emit(row);
  return out;
}

std::string csvField(const std::string &s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos)
    return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"')
      out += '"';
    out += c;
  }
  return out + "\"";
}

std::string num(double x) { return formatString("%.9g", x); }

/// A byte count with one decimal in the largest binary unit below it.
std::string fmtBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? formatString("%lld B", static_cast<long long>(bytes))
                : formatString("%.1f %s", v, units[u]);
}

/// The sim counters' columns (formatTable, formatMarkdown).
const std::vector<std::string> kCounterColumns = {
    "case",           "global req",
    "coalesced",      "moved / useful",
    "smem req",       "wavefronts/req (ideal)",
    "barriers/block", "divergent / branches"};

std::vector<std::string> counterCells(const CaseResult &c) {
  const CaseCounters &k = *c.counters;
  auto n = [](int64_t v) {
    return formatString("%lld", static_cast<long long>(v));
  };
  bool global = k.globalRequests > 0, shared = k.sharedRequests > 0;
  return {oneLine(c.name),
          n(k.globalRequests),
          global ? formatString("%.1f%%", k.coalescingEfficiency * 100) : "-",
          global ? fmtBytes(k.globalBytesMoved) + " / " +
                       fmtBytes(k.globalUsefulBytes)
                 : "-",
          n(k.sharedRequests),
          shared ? formatString("%.2f (%.2f)", k.wavefrontsPerSharedRequest(),
                                k.idealWavefrontsPerSharedRequest())
                 : "-",
          formatString("%.1f (max %lld)", k.barriersPerBlock,
                       static_cast<long long>(k.maxBarriersPerBlock)),
          n(k.divergentBranches) + " / " + n(k.warpBranchInstances)};
}

bool anyCounters(const RunResult &run) {
  for (const CaseResult &c : run.cases)
    if (c.counters)
      return true;
  return false;
}

std::string mdCell(const std::string &s) {
  std::string out;
  for (char c : oneLine(s)) {
    if (c == '|')
      out += '\\';
    out += c;
  }
  return out;
}
} // namespace

std::string tessera::bench::formatTable(const RunResult &run, bool color) {
  std::vector<std::string> header = {
      "case",    "device",     "precision", "config",   "median ms",
      "±CI ms",  "TFLOPS",     "GB/s",      "roofline", "baseline",
      "speedup", "compile ms", "tune ms"};
  std::vector<bool> right = {false, false, false, false, true, true, true,
                             true,  true,  false, true,  true, true};
  std::vector<std::vector<Cell>> rows;
  for (const CaseResult &c : run.cases) {
    std::vector<Cell> row = {{oneLine(c.name)},
                             {oneLine(c.device)},
                             {oneLine(c.precision)},
                             {oneLine(configText(c))}};
    if (!c.passed) {
      if (c.skipped)
        row.push_back({"SKIPPED: " + oneLine(c.failure), false, kYellow, true});
      else
        row.push_back(
            {"FAILED: " + oneLine(c.failure) + " (" + fmtErrors(c) + ")", false,
             kRed, true});
      rows.push_back(std::move(row));
      continue;
    }
    row.push_back({fmtMs(c.stats.median)});
    row.push_back({"±" + fmtMs(c.stats.ci95HalfWidth())});
    row.push_back({c.work.flops > 0 ? fmtRate(c.tflops) : "-"});
    row.push_back({c.work.bytes > 0 ? fmtRate(c.gbs) : "-"});
    row.push_back({c.rooflineEfficiency
                       ? formatString("%.1f%%", *c.rooflineEfficiency * 100)
                       : "-"});
    if (c.baseline) {
      row.push_back({c.baseline->name + " " + fmtMs(c.baseline->stats.median)});
      const char *col = c.baseline->speedup >= 1 ? kGreen : kYellow;
      row.push_back({formatString("%.2fx", c.baseline->speedup), true, col});
    } else {
      row.push_back({"-"});
      row.push_back({"-"});
    }
    row.push_back({c.compile.total() > 0 ? fmtMs(c.compile.total()) : "-"});
    row.push_back({c.compile.tuning > 0 ? fmtMs(c.compile.tuning) : "-"});
    rows.push_back(std::move(row));
  }
  std::string out = renderTable(header, right, rows, color);
  if (!anyCounters(run))
    return out;
  std::vector<std::vector<Cell>> counterRows;
  for (const CaseResult &c : run.cases) {
    if (!c.counters)
      continue;
    std::vector<Cell> row;
    for (std::string &text : counterCells(c))
      row.push_back({std::move(text)});
    counterRows.push_back(std::move(row));
  }
  std::vector<bool> counterRight(kCounterColumns.size(), true);
  counterRight[0] = false;
  return out + "\nsim counters (one launch per case):\n" +
         renderTable(kCounterColumns, counterRight, counterRows, color);
}

std::string tessera::bench::formatCsv(const RunResult &run) {
  static const char *kColumns[] = {"suite",
                                   "kernel",
                                   "name",
                                   "device",
                                   "precision",
                                   "passed",
                                   "failure",
                                   "max_abs_error",
                                   "max_rel_error",
                                   "config",
                                   "config_source",
                                   "samples",
                                   "median_ms",
                                   "mean_ms",
                                   "min_ms",
                                   "max_ms",
                                   "stddev_ms",
                                   "ci95_low_ms",
                                   "ci95_high_ms",
                                   "rsd",
                                   "stop_reason",
                                   "flops",
                                   "bytes",
                                   "tflops",
                                   "gbs",
                                   "roofline_efficiency",
                                   "compute_path",
                                   "compile_parse_ms",
                                   "compile_sema_ms",
                                   "compile_tile_passes_ms",
                                   "compile_lowering_ms",
                                   "compile_codegen_ms",
                                   "compile_ptx_ms",
                                   "compile_cubin_ms",
                                   "tuning_ms",
                                   "baseline",
                                   "baseline_median_ms",
                                   "speedup"};
  std::string out;
  for (size_t i = 0; i < std::size(kColumns); ++i)
    out += (i ? "," : "") + std::string(kColumns[i]);
  out += "\n";
  for (const CaseResult &c : run.cases) {
    std::string cfg;
    for (auto &[k, v] : c.config)
      cfg += (cfg.empty() ? "" : ";") + k + "=" + v;
    std::vector<std::string> f = {c.suite,
                                  c.kernel,
                                  c.name,
                                  c.device,
                                  c.precision,
                                  c.passed ? "true" : "false",
                                  c.passed    ? ""
                                  : c.skipped ? "skipped: " + oneLine(c.failure)
                                              : oneLine(c.failure),
                                  num(c.maxAbsError),
                                  num(c.maxRelError),
                                  cfg,
                                  c.configSource};
    if (c.passed) {
      const SampleStats &s = c.stats;
      for (std::string v :
           {std::to_string(s.count), num(s.median), num(s.mean), num(s.min),
            num(s.max), num(s.stddev), num(s.ci95Low), num(s.ci95High),
            num(s.rsd), c.stopReason})
        f.push_back(v);
    } else {
      f.insert(f.end(), 10, "");
    }
    f.push_back(num(c.work.flops));
    f.push_back(num(c.work.bytes));
    f.push_back(c.passed ? num(c.tflops) : "");
    f.push_back(c.passed ? num(c.gbs) : "");
    f.push_back(c.passed && c.rooflineEfficiency ? num(*c.rooflineEfficiency)
                                                 : "");
    f.push_back(c.computePath);
    const CompileTimesMs &t = c.compile;
    for (double v : {t.parse, t.sema, t.tilePasses, t.lowering, t.codegen,
                     t.ptx, t.cubin, t.tuning})
      f.push_back(num(v));
    f.push_back(c.baseline ? c.baseline->name : "");
    f.push_back(c.baseline && c.baseline->stats.count > 0
                    ? num(c.baseline->stats.median)
                    : "");
    f.push_back(c.passed && c.baseline ? num(c.baseline->speedup) : "");
    for (size_t i = 0; i < f.size(); ++i)
      out += (i ? "," : "") + csvField(f[i]);
    out += "\n";
  }
  return out;
}

std::string tessera::bench::formatMarkdown(const RunResult &run) {
  const RunHeader &h = run.header;
  std::string out = "# tessera-bench results\n\n";
  auto item = [&](const std::string &key, const std::string &value) {
    if (!value.empty())
      out += "- " + key + ": `" + oneLine(value) + "`\n";
  };
  item("started", h.startedAt);
  item("compiler", h.compilerVersion);
  item("git revision", h.gitRevision);
  item("command", h.commandLine);
  std::string machine, device;
  for (auto &[k, v] : h.machine)
    machine += (machine.empty() ? "" : ", ") + k + "=" + v;
  for (auto &[k, v] : h.device)
    device += (device.empty() ? "" : ", ") + k + "=" + v;
  item("machine", machine);
  item("device", device);
  out += "\n| case | device | precision | config | median ms | ±CI ms | "
         "TFLOPS | GB/s | roofline | baseline | speedup | compile ms |\n";
  out += "|---|---|---|---|--:|--:|--:|--:|--:|---|--:|--:|\n";
  for (const CaseResult &c : run.cases) {
    out += "| " + mdCell(c.name) + " | " + mdCell(c.device) + " | " +
           mdCell(c.precision) + " | " + mdCell(configText(c)) + " | ";
    if (c.skipped) {
      out +=
          "SKIPPED: " + mdCell(c.failure) + " | - | - | - | - | - | - | - |\n";
      continue;
    }
    if (!c.passed) {
      out += "**FAILED**: " + mdCell(c.failure) + " (" + fmtErrors(c) +
             ") | - | - | - | - | " +
             (c.baseline ? mdCell(c.baseline->name) : std::string("-")) +
             " | - | " +
             (c.compile.total() > 0 ? fmtMs(c.compile.total()) : "-") + " |\n";
      continue;
    }
    out += fmtMs(c.stats.median) + " | ±" + fmtMs(c.stats.ci95HalfWidth()) +
           " | " + (c.work.flops > 0 ? fmtRate(c.tflops) : "-") + " | " +
           (c.work.bytes > 0 ? fmtRate(c.gbs) : "-") + " | " +
           (c.rooflineEfficiency
                ? formatString("%.1f%%", *c.rooflineEfficiency * 100)
                : "-") +
           " | ";
    if (c.baseline)
      out += mdCell(c.baseline->name) + " " + fmtMs(c.baseline->stats.median) +
             " | " + formatString("%.2fx", c.baseline->speedup) + " | ";
    else
      out += "- | - | ";
    out += (c.compile.total() > 0 ? fmtMs(c.compile.total()) : "-") + " |\n";
  }
  if (!anyCounters(run))
    return out;
  out += "\n## sim counters (one launch per case)\n\n|";
  for (const std::string &col : kCounterColumns)
    out += " " + col + " |";
  out += "\n|---|";
  for (size_t i = 1; i < kCounterColumns.size(); ++i)
    out += "--:|";
  out += "\n";
  for (const CaseResult &c : run.cases) {
    if (!c.counters)
      continue;
    out += "|";
    for (const std::string &cell : counterCells(c))
      out += " " + mdCell(cell) + " |";
    out += "\n";
  }
  return out;
}

std::string tessera::bench::formatComparison(const Comparison &cmp,
                                             bool color) {
  using V = CaseChange::Verdict;
  std::vector<std::string> header = {"case",   "base ms", "new ms",
                                     "change", "noise",   "verdict"};
  std::vector<bool> right = {false, true, true, true, true, false};
  std::vector<std::vector<Cell>> rows;
  int counts[9] = {};
  for (const CaseChange &c : cmp.cases) {
    ++counts[static_cast<int>(c.verdict)];
    bool both = c.verdict == V::Same || c.verdict == V::Faster ||
                c.verdict == V::Slower;
    std::vector<Cell> row = {{oneLine(c.name)}};
    row.push_back({c.baseMedian > 0 ? fmtMs(c.baseMedian) : "-"});
    row.push_back({c.newMedian > 0 ? fmtMs(c.newMedian) : "-"});
    bool code = c.verdict == V::Worse || c.verdict == V::Better;
    row.push_back(
        {both || code ? formatString("%+.1f%%", c.change * 100) : "-"});
    row.push_back({both ? formatString("±%.1f%%", c.noise * 100) : "-"});
    const char *col = nullptr;
    if (c.verdict == V::Slower || c.verdict == V::Failed ||
        c.verdict == V::Worse)
      col = kRed;
    else if (c.verdict == V::Faster || c.verdict == V::Fixed ||
             c.verdict == V::Better)
      col = kGreen;
    else if (c.verdict == V::Missing || c.verdict == V::New)
      col = kYellow;
    std::string verdict(verdictName(c.verdict));
    if (!c.detail.empty())
      verdict += ": " + oneLine(c.detail);
    row.push_back({verdict, false, col, true});
    rows.push_back(std::move(row));
  }
  std::string out = renderTable(header, right, rows, color);
  out += formatString(
      "%zu cases: %d slower, %d faster, %d worse code, %d better code, %d "
      "same, %d FAILED, %d fixed, %d missing, %d new (threshold %.1f%%, "
      "changes within the noise of either run are 'same')\n",
      cmp.cases.size(), counts[static_cast<int>(V::Slower)],
      counts[static_cast<int>(V::Faster)], counts[static_cast<int>(V::Worse)],
      counts[static_cast<int>(V::Better)], counts[static_cast<int>(V::Same)],
      counts[static_cast<int>(V::Failed)], counts[static_cast<int>(V::Fixed)],
      counts[static_cast<int>(V::Missing)], counts[static_cast<int>(V::New)],
      cmp.threshold * 100);
  std::string verdict = cmp.regressed ? "REGRESSED" : "no regression";
  if (color)
    verdict = std::string(cmp.regressed ? kRed : kGreen) + verdict + kReset;
  out += verdict + "\n";
  return out;
}
