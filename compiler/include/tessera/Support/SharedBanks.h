//===- SharedBanks.h - Shared-memory bank conflicts of a warp ---*- C++ -*-===//
//
// The cost of one warp's shared-memory access as NVIDIA GPUs serve it: 32
// banks of 4 bytes, served in phases of at most 128 bytes. The sim counts
// kernels' requests with it, and the register lowering chooses the padding
// of the buffers it lays out with it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SUPPORT_SHAREDBANKS_H
#define TESSERA_SUPPORT_SHAREDBANKS_H

#include <cstddef>
#include <cstdint>

namespace tessera {

constexpr int64_t kWarpLanes = 32;
/// Shared memory: 32 banks of 4 bytes; one wavefront serves at most one
/// 32-bit word per bank, for at most 128 bytes.
constexpr int64_t kBanks = 32;
constexpr int64_t kBankBytes = 4;

/// One lane's part of a warp request.
struct LaneAccess {
  int32_t lane = 0;
  int64_t address = 0;
};

/// A shared-memory warp request's wavefronts. The warp is served in
/// phases of 128 bytes: all 32 lanes for accesses of up to 4 bytes, half
/// warps for 8 bytes, quarter warps for 16 (128 / width lanes per phase in
/// general). A phase with active lanes takes as many wavefronts as the most
/// distinct 32-bit words any one bank holds among its accesses (lanes
/// sharing a word: a broadcast); the ideal is as many wavefronts as its
/// distinct words need at 32 per wavefront.
struct SharedCost {
  int64_t wavefronts = 0, idealWavefronts = 0;
};
SharedCost sharedCost(const LaneAccess *lanes, size_t count, int64_t width);

} // namespace tessera

#endif // TESSERA_SUPPORT_SHAREDBANKS_H
