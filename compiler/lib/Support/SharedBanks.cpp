//===- SharedBanks.cpp - Shared-memory bank conflicts of a warp -----------===//

#include "tessera/Support/SharedBanks.h"

#include <algorithm>
#include <array>

namespace tessera {

SharedCost sharedCost(const LaneAccess *lanes, size_t count, int64_t width) {
  SharedCost c;
  count = std::min<size_t>(count, kWarpLanes);
  if (!count || width <= 0)
    return c;
  const int64_t phaseBytes = kBanks * kBankBytes;
  const int64_t lanesPerPhase = std::clamp<int64_t>(
      phaseBytes / std::max<int64_t>(width, kBankBytes), 1, kWarpLanes);
  // The distinct words of each bank in the phase (a phase accesses at
  // most 128 bytes plus the misaligned ends: 64 words per bank is ample;
  // more distinct words in one bank than that still count, unrecorded).
  constexpr int kPerBank = 64;
  std::array<std::array<int64_t, kPerBank>, kBanks> seen;
  std::array<int, kBanks> inBank;
  for (int64_t phase = 0; phase * lanesPerPhase < kWarpLanes; ++phase) {
    inBank.fill(0);
    int64_t distinct = 0, most = 0;
    for (size_t i = 0; i < count; ++i) {
      if (lanes[i].lane / lanesPerPhase != phase)
        continue;
      int64_t a = lanes[i].address;
      for (int64_t w = a / kBankBytes; w <= (a + width - 1) / kBankBytes; ++w) {
        size_t b = size_t(w % kBanks);
        int n = inBank[b];
        bool found = false;
        for (int k = 0; k < std::min(n, kPerBank) && !found; ++k)
          found = seen[b][size_t(k)] == w;
        if (found)
          continue;
        if (n < kPerBank)
          seen[b][size_t(n)] = w;
        inBank[b] = n + 1;
        ++distinct;
        most = std::max<int64_t>(most, n + 1);
      }
    }
    if (!distinct)
      continue;
    c.wavefronts += most;
    c.idealWavefronts += (distinct + kBanks - 1) / kBanks;
  }
  return c;
}

} // namespace tessera
