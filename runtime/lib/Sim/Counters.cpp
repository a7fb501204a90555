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

SharedCost sharedCost(const LaneAccess *lanes, size_t count, int64_t width) {
  SharedCost c;
  count = std::min<size_t>(count, kWarpLanes);
  if (!count || width <= 0)
    return c;
  const int64_t phaseBytes = kBanks * kBankBytes;
  const int64_t lanesPerPhase = std::clamp<int64_t>(
      phaseBytes / std::max<int64_t>(width, kBankBytes), 1, kWarpLanes);
  std::vector<int64_t> words;
  for (int64_t phase = 0; phase * lanesPerPhase < kWarpLanes; ++phase) {
    words.clear();
    for (size_t i = 0; i < count; ++i) {
      if (lanes[i].lane / lanesPerPhase != phase)
        continue;
      int64_t a = lanes[i].address;
      for (int64_t w = a / kBankBytes; w <= (a + width - 1) / kBankBytes; ++w)
        words.push_back(w);
    }
    if (words.empty())
      continue;
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    std::array<int64_t, kBanks> perBank{};
    int64_t most = 0;
    for (int64_t w : words)
      most = std::max(most, ++perBank[size_t(w % kBanks)]);
    c.wavefronts += most;
    c.idealWavefronts += (int64_t(words.size()) + kBanks - 1) / kBanks;
  }
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
      memoryStreamOf_(numSites * 6, 0), branchStreamOf_(numSites, 0),
      memoryExecutions_(size_t(blockSize_)),
      branchExecutions_(size_t(blockSize_)) {
  if (into_.accesses.size() < numSites * 6)
    into_.accesses.resize(numSites * 6);
  if (into_.branches.size() < numSites)
    into_.branches.resize(numSites);
}

int64_t
BlockCounters::nextExecution(std::vector<std::vector<uint32_t>> &executions,
                             int64_t tid, size_t stream) {
  std::vector<uint32_t> &mine = executions[size_t(tid)];
  if (mine.size() <= stream)
    mine.resize(stream + 1, 0);
  return mine[stream]++;
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
  int64_t k = nextExecution(memoryExecutions_, tid, id - 1);
  int64_t lane = tid % kWarpLanes;
  Queue<MemoryRequest> &q = s.warps[size_t(tid / kWarpLanes)];
  int64_t i = k - q.base;
  if (i < 0) {
    // A lane catching up with requests already scored (its warp diverged
    // across a synchronisation): a request of its own.
    MemoryRequest r;
    r.active = 1u << lane;
    r.address[size_t(lane)] = address;
    score(s, r);
    return;
  }
  if (q.pending.size() <= size_t(i))
    q.pending.resize(size_t(i) + 1);
  q.pending[size_t(i)].active |= 1u << lane;
  q.pending[size_t(i)].address[size_t(lane)] = address;
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
  int64_t k = nextExecution(branchExecutions_, tid, id - 1);
  uint32_t bit = 1u << (tid % kWarpLanes);
  Queue<BranchRequest> &q = s.warps[size_t(tid / kWarpLanes)];
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

void BlockCounters::score(const MemoryStream &s, const MemoryRequest &r) {
  std::array<LaneAccess, kWarpLanes> lanes;
  size_t n = 0;
  for (uint32_t m = r.active; m; m &= m - 1) {
    int lane = std::countr_zero(m);
    lanes[n++] = {lane, r.address[size_t(lane)]};
  }
  AccessCounts &c = into_.accesses[s.slot];
  c.width = std::max(c.width, s.width);
  ++c.requests;
  c.lanes += int64_t(n);
  if (s.space == Space::Global) {
    GlobalCost g = globalCost(lanes.data(), n, s.width);
    c.sectors += g.sectors;
    c.idealSectors += g.idealSectors;
    c.usefulBytes += g.usefulBytes;
  } else {
    SharedCost w = sharedCost(lanes.data(), n, s.width);
    c.wavefronts += w.wavefronts;
    c.idealWavefronts += w.idealWavefronts;
  }
}

void BlockCounters::score(const BranchStream &s, const BranchRequest &r) {
  BranchCounts &c = into_.branches[size_t(s.site)];
  ++c.instances;
  if (r.taken != 0 && r.taken != r.active)
    ++c.divergent;
}

void BlockCounters::flush() {
  for (MemoryStream &s : memory_)
    for (Queue<MemoryRequest> &q : s.warps) {
      for (const MemoryRequest &r : q.pending)
        if (r.active)
          score(s, r);
      q.base += int64_t(q.pending.size());
      q.pending.clear();
    }
  for (BranchStream &s : branches_)
    for (Queue<BranchRequest> &q : s.warps) {
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
