//===- ResourceUsage.cpp - Parser for ptxas-style info logs ---------------===//

#include "tessera/Target/CUDA/ResourceUsage.h"

#include <algorithm>
#include <optional>

using namespace tessera;
using namespace tessera::cuda;

namespace {

/// One function while its lines are being read; the stack figures are kept
/// apart until the end because ptxas reports them in up to three places.
struct PendingFunction {
  FunctionResourceUsage record;
  int64_t stackFrame = 0;
  int64_t cumulativeStack = 0;
  int64_t lmem = 0;
};

std::string_view trim(std::string_view s) {
  size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos)
    return {};
  size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

/// The first run of decimal digits in `s` (saturating; logs hold small
/// numbers, but a corrupt log must not overflow).
std::optional<int64_t> firstNumber(std::string_view s) {
  size_t pos = s.find_first_of("0123456789");
  if (pos == std::string_view::npos)
    return std::nullopt;
  int64_t value = 0;
  for (; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos)
    value = std::min<int64_t>(value * 10 + (s[pos] - '0'), INT64_C(1) << 50);
  return value;
}

/// The function name after `marker` in `line`: quoted ('f' or "f") or up to
/// the end of the line, without a trailing ':'.
std::string nameAfter(std::string_view line, size_t markerEnd) {
  std::string_view rest = trim(line.substr(markerEnd));
  if (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) {
    char quote = rest.front();
    size_t close = rest.find(quote, 1);
    if (close != std::string_view::npos)
      return std::string(rest.substr(1, close - 1));
    rest.remove_prefix(1);
  }
  while (!rest.empty() &&
         (rest.back() == ':' || rest.back() == '\'' || rest.back() == '"'))
    rest.remove_suffix(1);
  return std::string(trim(rest));
}

/// Applies the comma-separated figures of one line to `fn`; returns whether
/// any was recognised.
bool applyFigures(std::string_view line, PendingFunction &fn) {
  // Figures follow the "ptxas info    :" / "info    :" prefix, when present.
  if (size_t colon = line.find(" : "); colon != std::string_view::npos)
    line.remove_prefix(colon + 3);
  bool any = false;
  ResourceUsage &usage = fn.record.usage;
  while (!line.empty()) {
    size_t comma = line.find(',');
    std::string_view item = trim(line.substr(0, comma));
    line = comma == std::string_view::npos ? std::string_view()
                                           : line.substr(comma + 1);
    std::optional<int64_t> number = firstNumber(item);
    if (!number)
      continue;
    int64_t n = *number;
    bool known = true;
    if (endsWith(item, "registers"))
      usage.registers = static_cast<int>(n);
    else if (endsWith(item, "barriers"))
      usage.barriers = static_cast<int>(n);
    else if (endsWith(item, "bytes smem"))
      usage.sharedBytes = n;
    else if (endsWith(item, "bytes cmem[0]"))
      usage.constantBytes = n;
    else if (endsWith(item, "bytes stack frame") || endsWith(item, " stack"))
      fn.stackFrame = n;
    else if (endsWith(item, "bytes cumulative stack size"))
      fn.cumulativeStack = n;
    else if (endsWith(item, "bytes lmem"))
      fn.lmem = n;
    else if (endsWith(item, "bytes spill stores"))
      usage.spillStores = n;
    else if (endsWith(item, "bytes spill loads"))
      usage.spillLoads = n;
    else
      known = false;
    any |= known;
  }
  return any;
}

PendingFunction &findOrAdd(std::vector<PendingFunction> &table,
                           const std::string &name) {
  for (PendingFunction &fn : table)
    if (fn.record.name == name)
      return fn;
  table.emplace_back();
  table.back().record.name = name;
  return table.back();
}

} // namespace

std::vector<FunctionResourceUsage>
tessera::cuda::parseResourceLog(std::string_view log) {
  // ptxas's own records, and those of nvJitLink's link summary, which counts
  // shared memory differently (it includes the system-reserved part) and so
  // is used only for functions ptxas did not describe.
  std::vector<PendingFunction> ptxasTable, linkerTable;
  std::vector<PendingFunction> *currentTable = nullptr;
  size_t currentIndex = 0;

  static constexpr std::string_view kEntry = "Compiling entry function";
  static constexpr std::string_view kProperties = "Function properties for";
  while (!log.empty()) {
    size_t newline = log.find('\n');
    std::string_view line = log.substr(0, newline);
    log = newline == std::string_view::npos ? std::string_view()
                                            : log.substr(newline + 1);
    std::string_view trimmed = trim(line);
    bool fromLinker = trimmed.starts_with("info") &&
                      trimmed.find("ptxas") == std::string_view::npos;
    std::vector<PendingFunction> &table = fromLinker ? linkerTable : ptxasTable;

    if (size_t pos = trimmed.find(kEntry); pos != std::string_view::npos) {
      std::string name = nameAfter(trimmed, pos + kEntry.size());
      // An unquoted "f for sm_90a": keep only the function name.
      if (size_t forPos = name.find(" for "); forPos != std::string::npos)
        name.resize(forPos);
      PendingFunction &fn = findOrAdd(table, name);
      fn.record.isEntry = true;
      currentTable = &table;
      currentIndex = &fn - table.data();
      continue;
    }
    if (size_t pos = trimmed.find(kProperties); pos != std::string_view::npos) {
      PendingFunction &fn =
          findOrAdd(table, nameAfter(trimmed, pos + kProperties.size()));
      currentTable = &table;
      currentIndex = &fn - table.data();
      continue;
    }
    if (!currentTable)
      continue;
    // A figure line from the other section belongs to no open record.
    if (currentTable != &table)
      continue;
    applyFigures(trimmed, (*currentTable)[currentIndex]);
  }

  std::vector<FunctionResourceUsage> result;
  auto finish = [&](PendingFunction &fn) {
    fn.record.usage.localBytes =
        std::max(fn.stackFrame, fn.cumulativeStack) + fn.lmem;
    result.push_back(std::move(fn.record));
  };
  // Decide which link-summary records to keep before the names are moved.
  std::vector<bool> keepLinker;
  for (const PendingFunction &fn : linkerTable)
    keepLinker.push_back(std::none_of(ptxasTable.begin(), ptxasTable.end(),
                                      [&](const PendingFunction &p) {
                                        return p.record.name == fn.record.name;
                                      }));
  for (PendingFunction &fn : ptxasTable)
    finish(fn);
  for (size_t i = 0; i < linkerTable.size(); ++i)
    if (keepLinker[i])
      finish(linkerTable[i]);
  return result;
}

ResourceUsage tessera::cuda::summarizeResourceUsage(
    const std::vector<FunctionResourceUsage> &functions, std::string_view log) {
  bool anyEntry =
      std::any_of(functions.begin(), functions.end(),
                  [](const FunctionResourceUsage &fn) { return fn.isEntry; });
  ResourceUsage total;
  for (const FunctionResourceUsage &fn : functions) {
    if (anyEntry && !fn.isEntry)
      continue;
    const ResourceUsage &u = fn.usage;
    total.registers = std::max(total.registers, u.registers);
    total.sharedBytes = std::max(total.sharedBytes, u.sharedBytes);
    total.localBytes = std::max(total.localBytes, u.localBytes);
    total.spillStores = std::max(total.spillStores, u.spillStores);
    total.spillLoads = std::max(total.spillLoads, u.spillLoads);
    total.barriers = std::max(total.barriers, u.barriers);
    total.constantBytes = std::max(total.constantBytes, u.constantBytes);
  }
  total.rawLog = std::string(log);
  return total;
}
