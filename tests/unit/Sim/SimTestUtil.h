//===- SimTestUtil.h - running hand-written kernels on the sim --*- C++ -*-===//
//
// The sim tests compile a gpu-dialect kernel named `k` with the sim
// lowering and run one block of it on the fiber scheduler.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_UNIT_SIM_SIMTESTUTIL_H
#define TESSERA_TESTS_UNIT_SIM_SIMTESTUTIL_H

#include "Sim/FiberScheduler.h"
#include "tessera/Driver/Driver.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace tessera::simtest {

/// A host pointer as the kernels' memref descriptors hold it.
inline int64_t addressOf(const void *p) {
  int64_t v;
  std::memcpy(&v, &p, sizeof v);
  return v;
}

/// The five descriptor slots of a 1-D memref of `size` elements at `p`.
inline void addMemref(std::vector<int64_t> &slots, const void *p,
                      int64_t size) {
  int64_t a = addressOf(p);
  for (int64_t v : {a, a, int64_t(0), size, int64_t(1)})
    slots.push_back(v);
}

/// Compiles `ir` (kernel `k`) for the sim and runs block (0, 0, 0) with
/// the argument descriptor `slots` (the arena's last) and the shared arena
/// `arena` of `arenaBytes`; with `counts`, counting into it.
inline Status runBlock(const std::string &ir, std::vector<int64_t> &slots,
                       const unsigned char *arena, int64_t arenaBytes,
                       sim::LaunchCounts *counts = nullptr) {
  auto exe = driver::compileGpuIRForSim(ir, "k", sim::runtimeSymbols());
  if (!exe.ok())
    return exe.status();
  sim::BlockLaunch l;
  l.entry = (*exe)->entry();
  l.slots = &slots;
  l.blockSize = (*exe)->blockSize();
  l.kernel = "k";
  l.arena = arena;
  l.arenaBytes = arenaBytes;
  l.sites = &(*exe)->accessSites();
  l.counts = counts;
  return sim::runBlock(l);
}

/// A failed launch whose report contains every piece of `parts`.
inline void expectReport(const Status &s,
                         std::initializer_list<std::string> parts) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  for (const std::string &p : parts)
    EXPECT_NE(s.message().find(p), std::string::npos)
        << "missing '" << p << "' in: " << s.message();
}

} // namespace tessera::simtest

#endif // TESSERA_TESTS_UNIT_SIM_SIMTESTUTIL_H
