//===- JitTarget.h - The machine the CPU and sim JITs compile for -*- C++ -*-=//
//
// The CPU and sim devices generate native code in-process. By default they
// compile for the host (its CPU name and every feature it reports); with
// TESSERA_JIT_CPU=<cpu> they compile for that CPU's baseline instead (for
// example `x86-64`: SSE2, no AVX, F16C or AVX-512), so that a test run can
// prove that the generated code, and the routines it calls, do not depend
// on the host's instruction set.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_CPU_JITTARGET_H
#define TESSERA_TARGET_CPU_JITTARGET_H

#include "tessera/Support/Status.h"

#include <string>
#include <vector>

namespace tessera::cpu {

struct JitTarget {
  std::string triple;
  std::string cpu;
  /// Subtarget features, "+name" or "-name"; empty for a forced CPU (its
  /// own baseline).
  std::vector<std::string> features;
  /// True when TESSERA_JIT_CPU chose the CPU.
  bool forced = false;

  /// Whether the target has the subtarget feature `name` (e.g. "avx512f").
  bool hasFeature(const std::string &name) const;
  /// "host (znver4)" or "x86-64 (TESSERA_JIT_CPU)".
  std::string describe() const;
};

/// The JIT's target: the host, or the CPU TESSERA_JIT_CPU names ("host" or
/// unset: the host). A name LLVM does not know for the host's triple is an
/// INVALID_ARGUMENT error that says so. Read once per process.
StatusOr<JitTarget> jitTarget();

/// A routine the JIT'd code may call, with the address it resolves to.
struct RuntimeRoutine {
  const char *name;
  void *address;
};

/// The floating-point conversion routines the code generator calls where
/// the target has no instruction for the conversion (`__truncsfbf2`,
/// `__truncdfbf2`, `__extendhfsf2`, `__truncsfhf2`, `__truncdfhf2`):
/// round-to-nearest-even, NaN kept quiet, bit-exact with the instructions.
/// They are given to every JIT, so that code compiled for any target links
/// whatever the host's runtime libraries provide. Empty on hosts whose ABI
/// for 16-bit floats the routines are not written for (non-x86-64).
const std::vector<RuntimeRoutine> &floatConversionRoutines();

} // namespace tessera::cpu

#endif // TESSERA_TARGET_CPU_JITTARGET_H
