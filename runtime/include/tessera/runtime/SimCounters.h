//===- SimCounters.h - What the sim device counts ---------------*- C++ -*-===//
//
// The memory, barrier and branch counts of a `sim` launch with
// LaunchOptions::counters (Kernel::lastCounters). Plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_SIMCOUNTERS_H
#define TESSERA_RUNTIME_SIMCOUNTERS_H

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

/// One memory instruction of a kernel's GPU code (a static op, in one
/// memory space) as the `sim` device counted it over a launch. A warp
/// request is the k-th execution of the instruction by the lanes of one
/// warp (runtime/lib/Sim/README.md has the definitions).
struct SimAccessCounters {
  enum class Space { Global, Shared };
  enum class Kind { Load, Store, Atomic };
  Space space = Space::Global;
  Kind kind = Kind::Load;
  int64_t widthBytes = 0; ///< bytes each lane accesses
  int64_t requests = 0;   ///< warp requests
  int64_t lanes = 0;      ///< active lanes, over all requests
  /// Global memory: 32-byte sectors touched, the fewest that could carry
  /// the requested bytes, and those bytes (each distinct byte once).
  int64_t sectors = 0, idealSectors = 0, usefulBytes = 0;
  /// Shared memory: wavefronts (bank conflicts serialise a request into
  /// several), and the fewest the requests' distinct words need.
  int64_t wavefronts = 0, idealWavefronts = 0;
  std::string op;       ///< e.g. "vector.load"
  std::string location; ///< e.g. "softmax.tile:52:10"
  /// E.g. "global load 16B at softmax.tile:52:10".
  std::string description() const;
};

/// One conditional branch of a kernel's GPU code as `sim` counted it:
/// warp-level instances (the k-th evaluation by one warp's lanes) and
/// those whose lanes went different ways.
struct SimBranchCounters {
  std::string op, location;
  int64_t instances = 0, divergent = 0;
};

/// What a `sim` launch with LaunchOptions::counters counted.
struct SimCounters {
  /// The instructions and branches that ran, in the order of the code.
  std::vector<SimAccessCounters> accesses;
  std::vector<SimBranchCounters> branches;
  /// Global memory: warp requests, sectors touched, the ideal sectors,
  /// bytes moved (sectors x 32) and the bytes the lanes asked for.
  int64_t globalRequests = 0, globalSectors = 0, globalIdealSectors = 0,
          globalBytesMoved = 0, globalUsefulBytes = 0;
  /// globalIdealSectors / globalSectors (1 without global accesses).
  double coalescingEfficiency = 1;
  /// Shared memory: warp requests, wavefronts, the ideal wavefronts.
  int64_t sharedRequests = 0, sharedWavefronts = 0, sharedIdealWavefronts = 0;
  /// Block-wide barriers, over all blocks and per block.
  int64_t blocks = 0, barriers = 0, maxBarriersPerBlock = 0;
  double barriersPerBlock = 0;
  /// Warp-level branch instances, and the divergent ones.
  int64_t warpBranchInstances = 0, divergentBranches = 0;
};

} // namespace tessera

#endif // TESSERA_RUNTIME_SIMCOUNTERS_H
