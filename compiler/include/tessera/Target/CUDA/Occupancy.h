//===- Occupancy.h - Theoretical occupancy of a GPU kernel ------*- C++ -*-===//
//
// How many blocks of a kernel fit on one streaming multiprocessor, given its
// threads per block, registers per thread and shared memory per block, and
// the per-SM limits of its architecture (the "Technical Specifications per
// Compute Capability" table of the CUDA C++ Programming Guide). The same
// arithmetic as the CUDA occupancy calculator: registers are allocated per
// warp in units of 256, shared memory per block plus the 1 KiB the driver
// reserves on sm_80 and later.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_CUDA_OCCUPANCY_H
#define TESSERA_TARGET_CUDA_OCCUPANCY_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::cuda {

struct SmLimits {
  int maxThreadsPerSm = 0;
  int maxBlocksPerSm = 0;
  int registersPerSm = 0;
  int registerAllocUnit = 256; ///< registers, per warp
  int64_t sharedPerSm = 0;     ///< bytes usable by blocks
  int64_t reservedSharedPerBlock = 0;
};

/// The limits of "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90",
/// "sm_90a", "sm_100", "sm_100a"; nullopt for an architecture not in the
/// table.
std::optional<SmLimits> smLimits(std::string_view arch);

struct Occupancy {
  int blocksPerSm = 0;
  /// Resident warps / the SM's maximum, 0..1.
  double occupancy = 0;
  /// What bounds blocksPerSm: "threads", "blocks", "registers", "shared".
  std::string limiter;
};

/// The theoretical occupancy; blocksPerSm = 0 when one block does not fit
/// (too many registers or too much shared memory for one SM).
Occupancy occupancy(const SmLimits &limits, int threadsPerBlock,
                    int registersPerThread, int64_t sharedPerBlock);

/// The most registers per thread at which one more block fits on an SM than
/// at `registersPerThread`, when registers are what limits the blocks and
/// the thread, block and shared-memory limits leave room for one more;
/// nullopt otherwise. Always a whole allocation unit per warp.
std::optional<int> registerCapForOneMoreBlock(const SmLimits &limits,
                                              int threadsPerBlock,
                                              int registersPerThread,
                                              int64_t sharedPerBlock);

} // namespace tessera::cuda

#endif // TESSERA_TARGET_CUDA_OCCUPANCY_H
