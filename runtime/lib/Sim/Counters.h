//===- Counters.h - What a GPU would do, counted by the sim -----*- C++ -*-===//
//
// The sim runs every GPU thread, so it can count what the hardware would do
// with the accesses and branches of a launch (opt-in; see README.md):
// - global memory: warp requests, the 32-byte sectors each touches against
//   the fewest that could carry the bytes its lanes ask for;
// - shared memory: wavefronts per warp request (32 banks of 4 bytes,
//   8- and 16-byte accesses in half- and quarter-warp phases, lanes reading
//   one 32-bit word are a broadcast) against the ideal;
// - barriers executed per block, and divergent warp-level branches.
//
// A warp request is the k-th execution of one static access (or branch) by
// the lanes of one warp (32 consecutive threads of the block): each thread
// numbers its own executions of every site, so that the lanes' k-th
// executions meet although the fibers run one after another. Requests are
// scored whenever every thread of the block is parked (at a barrier, a warp
// collective or the end), then forgotten: memory is bounded by what a block
// does between two synchronisations.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_SIM_COUNTERS_H
#define TESSERA_RUNTIME_SIM_COUNTERS_H

#include "tessera/Support/SharedBanks.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tessera::sim {

using tessera::kWarpLanes;
/// The unit of global-memory traffic (an L1/L2 sector).
constexpr int64_t kSectorBytes = 32;
using tessera::kBankBytes;
using tessera::kBanks;

enum class Space : uint8_t { Global = 0, Shared = 1 };
/// As tessera_sim_access's `kind`.
enum class AccessKind : uint8_t { Load = 0, Store = 1, Atomic = 2 };

using tessera::LaneAccess;

/// A global warp request's cost: the distinct 32-byte sectors its lanes'
/// accesses of `width` bytes touch; the distinct bytes they ask for (bytes
/// two lanes both read count once); the fewest sectors those bytes need.
struct GlobalCost {
  int64_t sectors = 0, idealSectors = 0, usefulBytes = 0;
};
GlobalCost globalCost(const LaneAccess *lanes, size_t count, int64_t width);

using tessera::SharedCost;
using tessera::sharedCost;

/// What one memory access site (a static op, in one space, of one kind)
/// did over a launch.
struct AccessCounts {
  int64_t width = 0; ///< bytes per lane (the widest seen)
  int64_t requests = 0, lanes = 0;
  int64_t sectors = 0, idealSectors = 0, usefulBytes = 0; // global
  int64_t wavefronts = 0, idealWavefronts = 0;            // shared
  void add(const AccessCounts &o);
};

/// What one branch site did: warp-level instances, and those whose active
/// lanes went both ways.
struct BranchCounts {
  int64_t instances = 0, divergent = 0;
};

/// The counts of a launch, or of part of one (merge adds them up).
/// Accesses are indexed by slot(site, space, kind), branches by site.
struct LaunchCounts {
  std::vector<AccessCounts> accesses;
  std::vector<BranchCounts> branches;
  int64_t blocks = 0, barriers = 0, maxBarriersPerBlock = 0;

  static size_t slot(int64_t site, Space space, AccessKind kind) {
    return size_t(site) * 6 + size_t(space) * 3 + size_t(kind);
  }
  void merge(const LaunchCounts &o);
};

/// Assembles the warp requests of one block of `blockSize` threads whose
/// code has `numSites` sites, and scores them into `into`.
class BlockCounters {
public:
  BlockCounters(int64_t blockSize, size_t numSites, LaunchCounts &into);

  /// Thread `tid` executed access site `site`: `bytes` at `address`.
  void access(int64_t tid, int64_t site, Space space, AccessKind kind,
              int64_t address, int64_t bytes);
  /// A bulk copy (TMA) at access site `site`, one thread's request of
  /// `bytes`: counted at once (no lanes to gather), with the global
  /// sectors, ideal sectors and bytes of the part inside the tensor.
  void bulk(int64_t site, AccessKind kind, int64_t bytes,
            const GlobalCost &cost);
  /// Thread `tid` is about to take branch site `site` in direction `taken`.
  void branch(int64_t tid, int64_t site, bool taken);
  /// The block went through a barrier (once per block-wide barrier).
  void barrier() { ++barriers_; }
  /// Scores every request assembled so far; call when every thread is
  /// parked (no lane can still join one of them).
  void flush();
  /// Flushes and counts the block and its barriers.
  void finish();

private:
  /// The requests of one (access slot, warp) not yet scored: request i
  /// gathers the lanes' (base + i)-th executions; active[i] has a bit per
  /// lane that made it, address[lane][i] the lane's address (lane-major:
  /// a thread runs through its executions in order).
  struct MemoryQueue {
    int64_t base = 0;
    std::vector<uint32_t> active;
    std::array<std::vector<int64_t>, kWarpLanes> address;
  };
  struct BranchRequest {
    uint32_t active = 0, taken = 0;
  };
  struct BranchQueue {
    int64_t base = 0;
    std::vector<BranchRequest> pending;
  };
  /// A slot seen in this block: its queues (one per warp).
  struct MemoryStream {
    size_t slot = 0;
    Space space = Space::Global;
    int64_t width = 0;
    std::vector<MemoryQueue> warps;
  };
  struct BranchStream {
    int64_t site = 0;
    std::vector<BranchQueue> warps;
  };

  /// Executions so far, per thread and stream: count[tid * stride +
  /// stream] (the stride grows as streams appear).
  struct Executions {
    size_t stride = 0;
    std::vector<uint32_t> count;
    /// Thread `tid`'s next execution number of `stream` (0, 1, ...).
    int64_t next(int64_t tid, size_t stream, int64_t threads);
  };
  /// Scores the request of `count` lanes.
  void score(const MemoryStream &s, const LaneAccess *lanes, size_t count);
  void score(const BranchStream &s, const BranchRequest &r);

  int64_t blockSize_, numWarps_;
  LaunchCounts &into_;
  /// Slot (site * 6 + space * 3 + kind) -> memory stream + 1 (0: none yet);
  /// site -> branch stream + 1.
  std::vector<uint32_t> memoryStreamOf_, branchStreamOf_;
  std::vector<MemoryStream> memory_;
  std::vector<BranchStream> branches_;
  Executions memoryExecutions_, branchExecutions_;
  int64_t barriers_ = 0;
};

/// A site description as tessera-gpu-to-host writes it ("vector.load at
/// loc(\"dir/softmax.tile\":52:10)") split into the op ("vector.load") and
/// a short location: the first file:line:col in it with the file's
/// directory dropped ("softmax.tile:52:10"), else what follows " at ".
std::pair<std::string, std::string> splitSite(const std::string &site);

} // namespace tessera::sim

#endif // TESSERA_RUNTIME_SIM_COUNTERS_H
