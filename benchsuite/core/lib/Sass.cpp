//===- Sass.cpp - Code-shape figures from disassembled SASS ---------------===//

#include "tessera/bench/Sass.h"

#include <algorithm>
#include <cctype>
#include <regex>

using namespace tessera;
using namespace tessera::bench;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

bool isBranch(std::string_view base) {
  return base == "BRA" || base == "BRX" || base == "JMP" || base == "JMX";
}

std::string baseOf(const std::string &opcode) {
  return opcode.substr(0, opcode.find('.'));
}

std::vector<std::string> modifiersOf(const std::string &opcode) {
  std::vector<std::string> mods;
  size_t pos = opcode.find('.');
  while (pos != std::string::npos) {
    size_t next = opcode.find('.', pos + 1);
    mods.push_back(opcode.substr(pos + 1, next == std::string::npos
                                              ? std::string::npos
                                              : next - pos - 1));
    pos = next;
  }
  return mods;
}

int widthOf(const std::vector<std::string> &mods) {
  for (const std::string &m : mods) {
    if (m == "128")
      return 128;
    if (m == "64")
      return 64;
    if (m == "U8" || m == "S8")
      return 8;
    if (m == "U16" || m == "S16")
      return 16;
  }
  return 32;
}

} // namespace

StatusOr<std::vector<SassFunction>> bench::parseSass(std::string_view text) {
  static const std::regex cuobjdumpHeader(R"(Function\s*:\s*(\S+))");
  static const std::regex nvdisasmHeader(R"(^\s*\.text\.([^\s:]+):\s*$)");
  static const std::regex label(R"(^\s*(\.L[\w$.]+):\s*$)");
  static const std::regex instruction(
      R"(/\*([0-9a-fA-F]+)\*/\s*\{?\s*(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*([^;]*);)");
  static const std::regex hexTarget(R"(\b0x([0-9a-fA-F]+)\b)");
  static const std::regex labelTarget(R"(`\((\.L[\w$.]+)\))");

  std::vector<SassFunction> functions;
  // Labels of the current function, and the branches that name one.
  std::map<std::string, uint64_t> labels;
  std::vector<std::pair<size_t, std::string>> labelled;
  std::vector<std::string> pendingLabels;
  auto finish = [&] {
    if (functions.empty())
      return;
    SassFunction &fn = functions.back();
    for (const auto &[index, name] : labelled) {
      auto it = labels.find(name);
      if (it != labels.end())
        fn.instructions[index].target = it->second;
    }
    labels.clear();
    labelled.clear();
    pendingLabels.clear();
  };
  auto begin = [&](std::string name) {
    finish();
    functions.push_back(SassFunction{std::move(name), {}});
  };

  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string line(text.substr(start, end - start));
    start = end + 1;
    std::smatch m;
    if (std::regex_search(line, m, cuobjdumpHeader)) {
      begin(m[1]);
      continue;
    }
    if (std::regex_match(line, m, nvdisasmHeader)) {
      begin(m[1]);
      continue;
    }
    if (std::regex_match(line, m, label)) {
      pendingLabels.push_back(m[1]);
      continue;
    }
    if (!std::regex_search(line, m, instruction))
      continue;
    if (functions.empty())
      begin("");
    SassFunction &fn = functions.back();
    SassInstruction inst;
    inst.address = std::stoull(m[1].str(), nullptr, 16);
    inst.predicate = std::string(trim(m[2].str()));
    inst.opcode = m[3];
    inst.operands = std::string(trim(m[4].str()));
    for (const std::string &l : pendingLabels)
      labels[l] = inst.address;
    pendingLabels.clear();
    if (isBranch(baseOf(inst.opcode))) {
      std::smatch t;
      if (std::regex_search(inst.operands, t, labelTarget))
        labelled.push_back({fn.instructions.size(), t[1]});
      else if (std::regex_search(inst.operands, t, hexTarget))
        inst.target = std::stoull(t[1].str(), nullptr, 16);
    }
    fn.instructions.push_back(std::move(inst));
  }
  finish();
  functions.erase(std::remove_if(functions.begin(), functions.end(),
                                 [](const SassFunction &f) {
                                   return f.instructions.empty();
                                 }),
                  functions.end());
  if (functions.empty())
    return invalidArgument("the disassembly holds no SASS instruction");
  return functions;
}

InstructionClass bench::classify(const SassInstruction &inst) {
  InstructionClass c;
  const std::string base = baseOf(inst.opcode);
  const std::vector<std::string> mods = modifiersOf(inst.opcode);
  auto access = [&](const std::string &what, bool global) {
    c.widthBits = widthOf(mods);
    c.global = global;
    c.counters.push_back(what + "." + std::to_string(c.widthBits));
  };
  if (base == "LDG")
    access("global.load", true);
  else if (base == "STG")
    access("global.store", true);
  else if (base == "LD")
    access("generic.load", true);
  else if (base == "ST")
    access("generic.store", true);
  else if (base == "ATOMG" || base == "RED" || base == "ATOM")
    access("global.atomic", true);
  else if (base == "LDS")
    access("shared.load", false);
  else if (base == "STS")
    access("shared.store", false);
  else if (base == "ATOMS")
    access("shared.atomic", false);
  else if (base == "LDGSTS")
    access("ldgsts", true);
  else if (base == "LDSM")
    c.counters.push_back("ldsm");
  else if (base == "STSM")
    c.counters.push_back("stsm");
  else if (base == "UTMALDG" || base == "UTMASTG" || base == "UBLKCP" ||
           base == "UTMAPF" || base == "UTMAREDG")
    c.counters.push_back("tma");
  else if (base == "HMMA" || base == "IMMA" || base == "DMMA" || base == "QMMA")
    c.counters = {"hmma", "mma"};
  else if (base == "HGMMA" || base == "QGMMA" || base == "IGMMA" ||
           base == "BGMMA")
    c.counters = {"hgmma", "mma"};
  else if (base == "BAR")
    c.counters.push_back("bar");
  else if (base == "SYNCS")
    c.counters.push_back("syncs");
  else if (base == "SHFL")
    c.counters.push_back("shfl");
  else if (base == "CALL")
    c.counters.push_back("call");
  else if (isBranch(base))
    c.counters.push_back("branch");
  return c;
}

std::vector<SassLoop> bench::findLoops(const SassFunction &fn) {
  std::map<uint64_t, size_t> indexOf;
  for (size_t i = 0; i < fn.instructions.size(); ++i)
    indexOf[fn.instructions[i].address] = i;
  std::vector<SassLoop> loops;
  for (size_t i = 0; i < fn.instructions.size(); ++i) {
    const SassInstruction &inst = fn.instructions[i];
    // A branch to itself is the trap after EXIT, not a loop.
    if (!inst.target || *inst.target >= inst.address ||
        !isBranch(baseOf(inst.opcode)))
      continue;
    auto it = indexOf.find(*inst.target);
    if (it == indexOf.end())
      continue;
    loops.push_back(SassLoop{it->second, i, true});
  }
  for (SassLoop &outer : loops)
    for (const SassLoop &inner : loops)
      if (&inner != &outer && inner.begin >= outer.begin &&
          inner.end <= outer.end &&
          (inner.begin != outer.begin || inner.end != outer.end))
        outer.innermost = false;
  return loops;
}

namespace {
void count(const SassFunction &fn, size_t begin, size_t end,
           const std::string &prefix, std::map<std::string, double> &out) {
  double instructions = 0, globalBytes = 0;
  for (size_t i = begin; i <= end && i < fn.instructions.size(); ++i) {
    const SassInstruction &inst = fn.instructions[i];
    if (baseOf(inst.opcode) == "NOP")
      continue;
    ++instructions;
    InstructionClass c = classify(inst);
    for (const std::string &name : c.counters)
      out[prefix + name] += 1;
    if (c.global)
      globalBytes += c.widthBits / 8.0;
  }
  out[prefix + "instructions"] = instructions;
  out[prefix + "globalBytes"] = globalBytes;
}
} // namespace

std::map<std::string, double> bench::analyzeSass(const SassFunction &fn) {
  std::map<std::string, double> out;
  if (fn.instructions.empty())
    return out;
  count(fn, 0, fn.instructions.size() - 1, "", out);
  std::vector<SassLoop> loops = findLoops(fn);
  out["loops"] = static_cast<double>(loops.size());
  // The main loop: the loop that does the kernel's work. In a kernel with
  // tensor-core instructions, the smallest loop holding some (the K loop).
  // Otherwise the smallest loop holding global accesses and, when any such
  // loop holds a barrier, a barrier too (the loop over a row's chunks, not
  // a per-thread loop nested in it); ties go to the most global accesses.
  const bool dense = out.count("mma") && out["mma"] > 0;
  struct Work {
    int work = 0, barriers = 0;
  };
  auto workOf = [&](const SassLoop &l) {
    Work w;
    for (size_t i = l.begin; i <= l.end; ++i) {
      InstructionClass c = classify(fn.instructions[i]);
      w.work += dense ? std::count(c.counters.begin(), c.counters.end(), "mma")
                      : c.global;
      w.barriers += std::count(c.counters.begin(), c.counters.end(), "bar");
    }
    return w;
  };
  std::vector<std::pair<const SassLoop *, Work>> candidates;
  bool anyBarrier = false;
  for (const SassLoop &l : loops) {
    Work w = workOf(l);
    if (w.work == 0)
      continue;
    candidates.push_back({&l, w});
    anyBarrier |= w.barriers > 0;
  }
  const SassLoop *main = nullptr;
  Work mainWork;
  for (const auto &[l, w] : candidates) {
    if (!dense && anyBarrier && w.barriers == 0)
      continue;
    size_t span = l->end - l->begin,
           mainSpan = main ? main->end - main->begin : 0;
    if (!main || span < mainSpan ||
        (span == mainSpan && w.work > mainWork.work)) {
      main = l;
      mainWork = w;
    }
  }
  if (main) {
    count(fn, main->begin, main->end, "loop.", out);
    out["barriersPerIteration"] = out["loop.bar"];
  }
  // Bulk and tensor copies (TMA) move bytes per block, not per thread, in
  // amounts the code does not show: with them the figure is undefined.
  if (out["globalBytes"] > 0 && out["tma"] == 0)
    out["instrPerGlobalByte"] = out["instructions"] / out["globalBytes"];
  if (main && out["loop.mma"] > 0)
    out["instrPerMma"] = out["loop.instructions"] / out["loop.mma"];
  else if (out["mma"] > 0)
    out["instrPerMma"] = out["instructions"] / out["mma"];
  // Keep only what is there: absent entries read as zero.
  for (auto it = out.begin(); it != out.end();)
    it = it->second == 0 && it->first != "instructions" ? out.erase(it)
                                                        : std::next(it);
  return out;
}
