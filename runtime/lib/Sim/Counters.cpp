//===- Counters.cpp - What a GPU would do, counted by the sim -------------===//

#include "Sim/Counters.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <limits>

namespace tessera::sim {

GlobalCost globalCost(const LaneAccess *lanes, size_t count, int64_t width) {
  GlobalCost c;
  count = std::min<size_t>(count, kWarpLanes);
  if (!count || width <= 0)
    return c;
  std::array<int64_t, kWarpLanes> address;
  for (size_t i = 0; i < count; ++i)
    address[i] = lanes[i].address;
  std::sort(address.begin(), address.begin() + count);
  // In address order the lanes' byte ranges and sector ranges start in
  // order (every lane accesses `width` bytes), so one pass finds the union
  // of the bytes and the distinct sectors.
  int64_t coveredEnd = std::numeric_limits<int64_t>::min();
  int64_t lastSector = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < count; ++i) {
    int64_t begin = address[i], end = begin + width;
    int64_t from = std::max(begin, coveredEnd);
    if (end > from)
      c.usefulBytes += end - from;
    coveredEnd = std::max(coveredEnd, end);
    int64_t first = std::max(begin / kSectorBytes, lastSector + 1);
    int64_t last = (end - 1) / kSectorBytes;
    if (last >= first) {
      c.sectors += last - first + 1;
      lastSector = last;
    }
  }
  c.idealSectors = (c.usefulBytes + kSectorBytes - 1) / kSectorBytes;
  return c;
}

void AccessCounts::add(const AccessCounts &o) {
  width = std::max(width, o.width);
  requests += o.requests;
  lanes += o.lanes;
  sectors += o.sectors;
  idealSectors += o.idealSectors;
  usefulBytes += o.usefulBytes;
  wavefronts += o.wavefronts;
  idealWavefronts += o.idealWavefronts;
}

void LaunchCounts::merge(const LaunchCounts &o) {
  if (accesses.size() < o.accesses.size())
    accesses.resize(o.accesses.size());
  for (size_t i = 0; i < o.accesses.size(); ++i)
    accesses[i].add(o.accesses[i]);
  if (branches.size() < o.branches.size())
    branches.resize(o.branches.size());
  for (size_t i = 0; i < o.branches.size(); ++i) {
    branches[i].instances += o.branches[i].instances;
    branches[i].divergent += o.branches[i].divergent;
  }
  blocks += o.blocks;
  barriers += o.barriers;
  maxBarriersPerBlock = std::max(maxBarriersPerBlock, o.maxBarriersPerBlock);
}

BlockCounters::BlockCounters(int64_t blockSize, size_t numSites,
                             LaunchCounts &into)
    : blockSize_(std::max<int64_t>(blockSize, 1)),
      numWarps_((blockSize_ + kWarpLanes - 1) / kWarpLanes), into_(into),
      memoryStreamOf_(numSites * 6, 0), branchStreamOf_(numSites, 0) {
  if (into_.accesses.size() < numSites * 6)
    into_.accesses.resize(numSites * 6);
  if (into_.branches.size() < numSites)
    into_.branches.resize(numSites);
}

int64_t BlockCounters::Executions::next(int64_t tid, size_t stream,
                                        int64_t threads) {
  if (stream >= stride) {
    // Room for more streams: copy every thread's counts to a wider row.
    size_t wider = std::max<size_t>(8, 2 * (stream + 1));
    std::vector<uint32_t> grown(size_t(threads) * wider, 0);
    for (size_t t = 0; t < size_t(threads) && stride; ++t)
      std::copy_n(count.begin() + ptrdiff_t(t * stride), stride,
                  grown.begin() + ptrdiff_t(t * wider));
    count = std::move(grown);
    stride = wider;
  }
  return count[size_t(tid) * stride + stream]++;
}

void BlockCounters::access(int64_t tid, int64_t site, Space space,
                           AccessKind kind, int64_t address, int64_t bytes) {
  if (tid < 0 || tid >= blockSize_ || site < 0 ||
      size_t(site) >= branchStreamOf_.size())
    return;
  size_t slot = LaunchCounts::slot(site, space, kind);
  uint32_t &id = memoryStreamOf_[slot];
  if (!id) {
    MemoryStream s;
    s.slot = slot;
    s.space = space;
    s.warps.resize(size_t(numWarps_));
    memory_.push_back(std::move(s));
    id = uint32_t(memory_.size());
  }
  MemoryStream &s = memory_[id - 1];
  s.width = std::max(s.width, bytes);
  int64_t k = memoryExecutions_.next(tid, id - 1, blockSize_);
  int64_t lane = tid % kWarpLanes;
  MemoryQueue &q = s.warps[size_t(tid / kWarpLanes)];
  int64_t i = k - q.base;
  if (i < 0) {
    // A lane catching up with requests already scored (its warp diverged
    // across a synchronisation): a request of its own.
    LaneAccess one{int32_t(lane), address};
    score(s, &one, 1);
    return;
  }
  if (q.active.size() <= size_t(i))
    q.active.resize(size_t(i) + 1, 0);
  q.active[size_t(i)] |= 1u << lane;
  std::vector<int64_t> &mine = q.address[size_t(lane)];
  if (mine.size() <= size_t(i))
    mine.resize(size_t(i) + 1);
  mine[size_t(i)] = address;
}

void BlockCounters::branch(int64_t tid, int64_t site, bool taken) {
  if (tid < 0 || tid >= blockSize_ || site < 0 ||
      size_t(site) >= branchStreamOf_.size())
    return;
  uint32_t &id = branchStreamOf_[size_t(site)];
  if (!id) {
    BranchStream s;
    s.site = site;
    s.warps.resize(size_t(numWarps_));
    branches_.push_back(std::move(s));
    id = uint32_t(branches_.size());
  }
  BranchStream &s = branches_[id - 1];
  int64_t k = branchExecutions_.next(tid, id - 1, blockSize_);
  uint32_t bit = 1u << (tid % kWarpLanes);
  BranchQueue &q = s.warps[size_t(tid / kWarpLanes)];
  int64_t i = k - q.base;
  if (i < 0) {
    score(s, BranchRequest{bit, taken ? bit : 0u});
    return;
  }
  if (q.pending.size() <= size_t(i))
    q.pending.resize(size_t(i) + 1);
  q.pending[size_t(i)].active |= bit;
  if (taken)
    q.pending[size_t(i)].taken |= bit;
}

void BlockCounters::score(const MemoryStream &s, const LaneAccess *lanes,
                          size_t count) {
  AccessCounts &c = into_.accesses[s.slot];
  c.width = std::max(c.width, s.width);
  ++c.requests;
  c.lanes += int64_t(count);
  if (s.space == Space::Global) {
    GlobalCost g = globalCost(lanes, count, s.width);
    c.sectors += g.sectors;
    c.idealSectors += g.idealSectors;
    c.usefulBytes += g.usefulBytes;
  } else {
    SharedCost w = sharedCost(lanes, count, s.width);
    c.wavefronts += w.wavefronts;
    c.idealWavefronts += w.idealWavefronts;
  }
}

void BlockCounters::bulk(int64_t site, AccessKind kind, int64_t bytes,
                         const GlobalCost &cost) {
  AccessCounts &c =
      into_.accesses[LaunchCounts::slot(site, Space::Global, kind)];
  c.width = std::max(c.width, bytes);
  ++c.requests;
  ++c.lanes;
  c.sectors += cost.sectors;
  c.idealSectors += cost.idealSectors;
  c.usefulBytes += cost.usefulBytes;
}

void BlockCounters::score(const BranchStream &s, const BranchRequest &r) {
  BranchCounts &c = into_.branches[size_t(s.site)];
  ++c.instances;
  if (r.taken != 0 && r.taken != r.active)
    ++c.divergent;
}

void BlockCounters::flush() {
  std::array<LaneAccess, kWarpLanes> lanes;
  for (MemoryStream &s : memory_)
    for (MemoryQueue &q : s.warps) {
      for (size_t i = 0; i < q.active.size(); ++i) {
        size_t n = 0;
        for (uint32_t m = q.active[i]; m; m &= m - 1) {
          int lane = std::countr_zero(m);
          lanes[n++] = {lane, q.address[size_t(lane)][i]};
        }
        if (n)
          score(s, lanes.data(), n);
      }
      q.base += int64_t(q.active.size());
      q.active.clear();
      for (std::vector<int64_t> &a : q.address)
        a.clear();
    }
  for (BranchStream &s : branches_)
    for (BranchQueue &q : s.warps) {
      for (const BranchRequest &r : q.pending)
        if (r.active)
          score(s, r);
      q.base += int64_t(q.pending.size());
      q.pending.clear();
    }
}

void BlockCounters::finish() {
  flush();
  ++into_.blocks;
  into_.barriers += barriers_;
  into_.maxBarriersPerBlock = std::max(into_.maxBarriersPerBlock, barriers_);
}

std::pair<std::string, std::string> splitSite(const std::string &site) {
  size_t at = site.find(" at ");
  if (at == std::string::npos)
    return {site, ""};
  std::string op = site.substr(0, at), rest = site.substr(at + 4);
  // The first quoted file name followed by :line:col.
  for (size_t open = rest.find('"'); open != std::string::npos;
       open = rest.find('"', open + 1)) {
    size_t close = rest.find('"', open + 1);
    if (close == std::string::npos)
      break;
    size_t end = close + 1;
    while (end < rest.size() &&
           (rest[end] == ':' ||
            std::isdigit(static_cast<unsigned char>(rest[end]))))
      ++end;
    if (end == close + 1) {
      open = close;
      continue;
    }
    std::string file = rest.substr(open + 1, close - open - 1);
    if (size_t slash = file.rfind('/'); slash != std::string::npos)
      file = file.substr(slash + 1);
    return {op, file + rest.substr(close + 1, end - close - 1)};
  }
  if (rest.rfind("loc(", 0) == 0 && rest.back() == ')')
    rest = rest.substr(4, rest.size() - 5);
  return {op, rest};
}

} // namespace tessera::sim
