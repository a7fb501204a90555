//===- Sass.h - Code-shape figures from disassembled SASS -------*- C++ -*-===//
//
// Reads the SASS text that `nvdisasm` or `cuobjdump -sass` prints for a
// cubin and counts what the scorecard reports: the instruction mix of the
// whole kernel and of its main loop (global and shared accesses by width,
// ldmatrix, cp.async, TMA, tensor-core instructions, barriers, shuffles,
// calls), and the figures derived from it. Pure text processing: no CUDA
// tool is run here (see the scorecard in benchsuite/cli).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCH_SASS_H
#define TESSERA_BENCH_SASS_H

#include "tessera/Support/Status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::bench {

struct SassInstruction {
  uint64_t address = 0;
  std::string predicate; ///< "@P0", "@!P1" or ""
  std::string opcode;    ///< with modifiers: "LDG.E.128.CONSTANT"
  std::string operands;  ///< the rest, without the trailing ';'
  /// For a branch: its target address, when the text names one.
  std::optional<uint64_t> target;
};

struct SassFunction {
  std::string name;
  std::vector<SassInstruction> instructions;
};

/// Splits the disassembly into functions. Understands both tools' layouts:
/// `Function : name` headers (cuobjdump) and `.text.name:` sections with
/// `.L_x_N:` labels (nvdisasm); branch targets are absolute addresses or
/// labels. INVALID_ARGUMENT when the text holds no instruction.
StatusOr<std::vector<SassFunction>> parseSass(std::string_view text);

/// One class of instruction the scorecard counts, by name: "global.load.128"
/// (bits per lane), "shared.store.32", "ldsm", "ldgsts.128", "tma", "mma"
/// (every tensor-core instruction), "hmma", "hgmma", "bar", "syncs"
/// (mbarrier operations), "shfl", "call", "branch"; "" for the rest.
/// `widthBits` is the access width (0 when not a memory access).
struct InstructionClass {
  std::vector<std::string> counters;
  int widthBits = 0;
  bool global = false; ///< a global-memory access (ld/st/atomic/cp.async)
};
InstructionClass classify(const SassInstruction &inst);

/// A loop: the instructions from a backward branch's target up to the
/// branch, as indices into SassFunction::instructions.
struct SassLoop {
  size_t begin = 0, end = 0; ///< [begin, end]
  bool innermost = false;    ///< contains no other loop
};
std::vector<SassLoop> findLoops(const SassFunction &fn);

/// The counts of one function: "instructions" (NOPs excluded), one entry per
/// class of classify(), "globalBytes" (bytes per thread moved by the global
/// accesses in the static code), "loops"; the same figures of the main loop
/// (the loop that does the work: the smallest loop holding a tensor-core
/// instruction; in a kernel without any, the smallest loop holding global
/// accesses and, when such a loop holds a barrier, a barrier) prefixed
/// "loop.", and the
/// derived "instrPerGlobalByte" (instructions / globalBytes; absent when
/// the function has TMA copies, whose bytes per thread are unknown),
/// "instrPerMma" (main-loop instructions per tensor-core instruction in it,
/// or the whole kernel's when the loop has none) and
/// "barriersPerIteration" (= loop.bar). Absent entries are zero.
std::map<std::string, double> analyzeSass(const SassFunction &fn);

} // namespace tessera::bench

#endif // TESSERA_BENCH_SASS_H
