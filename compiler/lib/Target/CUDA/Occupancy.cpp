//===- Occupancy.cpp - Theoretical occupancy of a GPU kernel --------------===//

#include "tessera/Target/CUDA/Occupancy.h"

#include <algorithm>
#include <limits>

using namespace tessera::cuda;

std::optional<SmLimits> tessera::cuda::smLimits(std::string_view arch) {
  // CUDA C++ Programming Guide, "Technical Specifications per Compute
  // Capability": resident threads, blocks, 32-bit registers and shared
  // memory per SM (the largest carve-out).
  auto make = [](int threads, int blocks, int64_t sharedKiB, int64_t reserved) {
    SmLimits l;
    l.maxThreadsPerSm = threads;
    l.maxBlocksPerSm = blocks;
    l.registersPerSm = 65536;
    l.sharedPerSm = sharedKiB * 1024;
    l.reservedSharedPerBlock = reserved;
    return l;
  };
  if (arch == "sm_70")
    return make(2048, 32, 96, 0);
  if (arch == "sm_75")
    return make(1024, 16, 64, 0);
  if (arch == "sm_80")
    return make(2048, 32, 164, 1024);
  if (arch == "sm_86")
    return make(1536, 16, 100, 1024);
  if (arch == "sm_89")
    return make(1536, 24, 100, 1024);
  if (arch == "sm_90" || arch == "sm_90a" || arch == "sm_100" ||
      arch == "sm_100a")
    return make(2048, 32, 228, 1024);
  return std::nullopt;
}

Occupancy tessera::cuda::occupancy(const SmLimits &limits, int threadsPerBlock,
                                   int registersPerThread,
                                   int64_t sharedPerBlock) {
  Occupancy o;
  if (threadsPerBlock <= 0 || limits.maxThreadsPerSm <= 0)
    return o;
  const int warpsPerBlock = (threadsPerBlock + 31) / 32;
  const int maxWarps = limits.maxThreadsPerSm / 32;
  auto consider = [&](int blocks, const char *why) {
    if (o.limiter.empty() || blocks < o.blocksPerSm) {
      o.blocksPerSm = blocks;
      o.limiter = why;
    }
  };
  consider(maxWarps / warpsPerBlock, "threads");
  consider(limits.maxBlocksPerSm, "blocks");
  if (registersPerThread > 0) {
    int unit = std::max(1, limits.registerAllocUnit);
    int perWarp = (registersPerThread * 32 + unit - 1) / unit * unit;
    consider(limits.registersPerSm / perWarp / warpsPerBlock, "registers");
  }
  if (sharedPerBlock > 0) {
    int64_t perBlock = sharedPerBlock + limits.reservedSharedPerBlock;
    consider(int(std::min<int64_t>(limits.sharedPerSm / perBlock,
                                   std::numeric_limits<int>::max())),
             "shared");
  }
  o.blocksPerSm = std::max(0, o.blocksPerSm);
  o.occupancy = double(o.blocksPerSm * warpsPerBlock) / double(maxWarps);
  return o;
}

std::optional<int> tessera::cuda::registerCapForOneMoreBlock(
    const SmLimits &limits, int threadsPerBlock, int registersPerThread,
    int64_t sharedPerBlock) {
  Occupancy now =
      occupancy(limits, threadsPerBlock, registersPerThread, sharedPerBlock);
  if (now.limiter != "registers")
    return std::nullopt;
  const int target = now.blocksPerSm + 1;
  // What the other limits allow, registers aside.
  if (occupancy(limits, threadsPerBlock, 0, sharedPerBlock).blocksPerSm <
      target)
    return std::nullopt;
  const int warpsPerBlock = (threadsPerBlock + 31) / 32;
  const int unit = std::max(1, limits.registerAllocUnit);
  const int perWarp =
      limits.registersPerSm / (target * warpsPerBlock) / unit * unit;
  const int cap = perWarp / 32;
  if (cap <= 0 || cap >= registersPerThread)
    return std::nullopt;
  return cap;
}
