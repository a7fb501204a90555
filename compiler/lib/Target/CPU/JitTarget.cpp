//===- JitTarget.cpp - The machine the CPU and sim JITs compile for -------===//

#include "tessera/Target/CPU/JitTarget.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>
#include <memory>

using namespace ::tessera;

namespace {
const llvm::Target *lookup(const std::string &triple, std::string &error) {
  llvm::InitializeNativeTarget();
  return llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), error);
}

StatusOr<cpu::JitTarget> detect() {
  cpu::JitTarget t;
  t.triple = llvm::sys::getProcessTriple();
  const char *env = std::getenv("TESSERA_JIT_CPU");
  std::string name = env ? env : "";
  if (name.empty() || name == "host") {
    t.cpu = llvm::sys::getHostCPUName().str();
    for (const auto &[feature, on] : llvm::sys::getHostCPUFeatures())
      t.features.push_back((on ? "+" : "-") + feature.str());
    return t;
  }
  std::string error;
  const llvm::Target *target = lookup(t.triple, error);
  if (!target)
    return internalError("no LLVM target for %s: %s", t.triple.c_str(),
                         error.c_str());
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(llvm::Triple(t.triple), "", ""));
  if (!sti || !sti->isCPUStringValid(name))
    return invalidArgument("TESSERA_JIT_CPU='%s' is not a CPU LLVM knows for "
                           "%s (use 'host', or a name such as x86-64 or "
                           "x86-64-v3)",
                           name.c_str(), t.triple.c_str());
  t.cpu = name;
  t.forced = true;
  return t;
}
} // namespace

bool cpu::JitTarget::hasFeature(const std::string &name) const {
  std::string error;
  const llvm::Target *target = lookup(triple, error);
  if (!target)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(
      llvm::Triple(triple), cpu, llvm::join(features, ",")));
  return sti && sti->checkFeatures("+" + name);
}

std::string cpu::JitTarget::describe() const {
  return forced ? cpu + " (TESSERA_JIT_CPU)" : "host (" + cpu + ")";
}

StatusOr<cpu::JitTarget> cpu::jitTarget() {
  static const StatusOr<JitTarget> target = detect();
  return target;
}
