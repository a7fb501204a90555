//===- SimDevice.cpp - The sim device: GPU code on CPU fibers -------------===//
//
// Kernels lowered like GPU code for sm_90a (driver::compileForSim) and run
// block by block on the runtime's thread pool, each block's threads as
// fibers (FiberScheduler), with the sim's checkers and, on request, its
// counters.
//
//===----------------------------------------------------------------------===//

#include "Hal/Device.h"

#include "Core/ThreadPool.h"
#include "Sim/FiberScheduler.h"

#include "tessera/Target/CPU/KernelAsserts.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>

using namespace tessera;
using namespace tessera::hal;

namespace {

/// Blocks of a persistent kernel the sim runs at most: the multiprocessors
/// of the device it models.
constexpr int64_t kSimPersistentBlocks = 4;

/// The public form of a launch's counts; `sites` describes the site ids.
SimCounters publicCounters(const sim::LaunchCounts &counts,
                           const std::vector<std::string> &sites) {
  SimCounters out;
  for (size_t slot = 0; slot < counts.accesses.size(); ++slot) {
    const sim::AccessCounts &a = counts.accesses[slot];
    if (!a.requests)
      continue;
    size_t site = slot / 6;
    SimAccessCounters row;
    row.space = (slot / 3) % 2 ? SimAccessCounters::Space::Shared
                               : SimAccessCounters::Space::Global;
    row.kind = SimAccessCounters::Kind(slot % 3);
    row.widthBytes = a.width;
    row.requests = a.requests;
    row.lanes = a.lanes;
    row.sectors = a.sectors;
    row.idealSectors = a.idealSectors;
    row.usefulBytes = a.usefulBytes;
    row.wavefronts = a.wavefronts;
    row.idealWavefronts = a.idealWavefronts;
    if (site < sites.size())
      std::tie(row.op, row.location) = sim::splitSite(sites[site]);
    if (row.space == SimAccessCounters::Space::Global) {
      out.globalRequests += a.requests;
      out.globalSectors += a.sectors;
      out.globalIdealSectors += a.idealSectors;
      out.globalUsefulBytes += a.usefulBytes;
    } else {
      out.sharedRequests += a.requests;
      out.sharedWavefronts += a.wavefronts;
      out.sharedIdealWavefronts += a.idealWavefronts;
    }
    out.accesses.push_back(std::move(row));
  }
  out.globalBytesMoved = out.globalSectors * sim::kSectorBytes;
  if (out.globalSectors)
    out.coalescingEfficiency =
        double(out.globalIdealSectors) / double(out.globalSectors);
  for (size_t site = 0; site < counts.branches.size(); ++site) {
    const sim::BranchCounts &b = counts.branches[site];
    if (!b.instances)
      continue;
    SimBranchCounters row;
    if (site < sites.size())
      std::tie(row.op, row.location) = sim::splitSite(sites[site]);
    row.instances = b.instances;
    row.divergent = b.divergent;
    out.warpBranchInstances += b.instances;
    out.divergentBranches += b.divergent;
    out.branches.push_back(std::move(row));
  }
  out.blocks = counts.blocks;
  out.barriers = counts.barriers;
  out.maxBarriersPerBlock = counts.maxBarriersPerBlock;
  if (counts.blocks)
    out.barriersPerBlock = double(counts.barriers) / double(counts.blocks);
  return out;
}

using SimExecutable = HostExecutable<driver::SimExecutable>;

class SimDevice final : public HostDevice {
public:
  explicit SimDevice(ThreadPool &pool) : HostDevice(DeviceKind::Sim, pool) {}
  bool countsAccesses() const override { return true; }

  StatusOr<std::shared_ptr<Executable>>
  compile(const driver::SourceModule &module, const std::string &kernel,
          const Specialization &spec, bool counters) override {
    TESSERA_ASSIGN_OR_RETURN(auto code,
                             driver::compileForSim(module, kernel, spec,
                                                   sim::runtimeSymbols(),
                                                   "sm_90a", counters));
    return std::shared_ptr<Executable>(
        std::make_shared<SimExecutable>(std::move(code)));
  }

  Status run(const KernelLaunch &l) override {
    // The sim's code reads the arguments as given: their alignment picks
    // the variant.
    launch::VariantKey key = l.plan.key;
    key.alignedMask = l.signature.alignedMask(l.args);
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Executable> exe,
                             l.variant(key, l.counters));
    const auto &sim = static_cast<const SimExecutable &>(*exe);
    std::vector<int64_t> slots = l.signature.flatten(l.args);
    if (l.queue) {
      // The work owns copies of what it reads (the kernel, and so its
      // signature, outlives it).
      auto grids = [this, exe, slots = std::move(slots), args = l.args,
                    plan = l.plan, signature = &l.signature,
                    launches = l.launches] {
        for (int i = 0; i < launches; ++i)
          TESSERA_RETURN_IF_ERROR(runOnce(
              *signature, args, plan, static_cast<const SimExecutable &>(*exe),
              slots, nullptr));
        return okStatus();
      };
      TESSERA_RETURN_IF_ERROR(enqueueOnHost(*l.queue, std::move(grids)));
      return hasHostTensors(l.args) ? l.queue->synchronize() : okStatus();
    }
    // The clock covers the grids only (the variant is compiled above).
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < l.launches; ++i) {
      SimCounters counted;
      TESSERA_RETURN_IF_ERROR(runOnce(l.signature, l.args, l.plan, sim, slots,
                                      l.counters ? &counted : nullptr));
      if (l.counters)
        *l.counted = std::move(counted);
    }
    if (l.ms)
      *l.ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t0)
                  .count() /
              double(l.launches);
    return okStatus();
  }

private:
  /// One launch of sim variant `exe` on `args` (flattened: `argSlots`);
  /// with `counted`, its counts go there.
  Status runOnce(const launch::Signature &signature,
                 const std::vector<Arg> &args, const launch::Plan &plan,
                 const SimExecutable &exe, const std::vector<int64_t> &argSlots,
                 SimCounters *counted) const;
};

Status SimDevice::runOnce(const launch::Signature &signature,
                          const std::vector<Arg> &args, const launch::Plan &c,
                          const SimExecutable &exe,
                          const std::vector<int64_t> &argSlots,
                          SimCounters *counted) const {
  const std::string &name = signature.name;
  const bool counters = counted != nullptr;
  // Tensor maps follow the arguments: one slot each, the address of its
  // SimTensorMap.
  std::vector<sim::SimTensorMap> maps(exe.code->tensorMaps().size());
  std::vector<int64_t> slots = argSlots;
  // A scheduled kernel's grid of programs precedes them.
  if (exe.code->schedule().logicalGrid)
    slots.insert(slots.end(), c.grid.begin(), c.grid.end());
  for (size_t i = 0; i < maps.size(); ++i) {
    const driver::TensorMapArg &m = exe.code->tensorMaps()[i];
    TESSERA_ASSIGN_OR_RETURN(auto tensor,
                             signature.tensorOfParam(args, m.param));
    TESSERA_ASSIGN_OR_RETURN(
        launch::TensorMapGeometry g,
        launch::tensorMapGeometry(*tensor.first, m, name, tensor.second));
    sim::SimTensorMap &sm = maps[i];
    std::memcpy(&sm.base, &tensor.first->data, sizeof(sm.base));
    sm.rank = g.rank;
    for (int d = 0; d < g.rank; ++d) {
      sm.dims[d] = int64_t(g.dims[d]);
      sm.strides[d] = int64_t(g.strides[d]);
      sm.box[d] = int64_t(g.box[d]);
    }
    sm.elementBytes = g.elementBytes;
    sm.swizzle = m.swizzle;
    const sim::SimTensorMap *p = &sm;
    int64_t slot;
    std::memcpy(&slot, &p, sizeof(slot));
    slots.push_back(slot);
  }
  for (int d = 0; d < 3; ++d)
    if (c.grid[d] > exe.code->gridBound()[d])
      return internalError(
          "kernel '%s': the code of this launch assumes at most %lld program "
          "instances on grid axis %d, the launch has %lld",
          name.c_str(), (long long)exe.code->gridBound()[d], d,
          (long long)c.grid[d]);
  const int64_t arenaBytes = exe.code->sharedBytes();
  const std::array<int64_t, 3> blocks =
      launch::launchGridOf(exe.code->schedule(), c.grid, kSimPersistentBlocks);
  const int64_t total = blocks[0] * blocks[1] * blocks[2];
  std::mutex errMutex;
  Status firstError = okStatus();
  bool failed = false;
  sim::LaunchCounts counts; // under errMutex
  auto runRange = [&](int64_t begin, int64_t end) {
    // Failed kernel assertions of this range's blocks (the first fails the
    // launch, with the block that failed it).
    cpu::AssertSink asserts;
    cpu::ScopedAssertSink assertScope(asserts);
    std::vector<unsigned char> arena(size_t(std::max<int64_t>(arenaBytes, 1)));
    std::vector<int64_t> blockSlots;
    // This range's counts, added to the launch's at the end (a failed
    // launch has none).
    sim::LaunchCounts rangeCounts;
    for (int64_t lin = begin; lin < end; ++lin) {
      {
        std::lock_guard<std::mutex> lock(errMutex);
        if (failed)
          return;
      }
      // Shared memory starts as garbage on a GPU: NaN/-1 bytes here, so a
      // read before write shows up in the results.
      std::memset(arena.data(), 0xff, arena.size());
      blockSlots = slots;
      {
        int64_t ptr;
        unsigned char *p = arena.data();
        std::memcpy(&ptr, &p, sizeof(ptr));
        blockSlots.insert(blockSlots.end(), {ptr, ptr, 0, arenaBytes, 1});
      }
      sim::BlockLaunch launch;
      launch.entry = exe.code->entry();
      launch.slots = &blockSlots;
      launch.blockSize = exe.code->blockSize();
      launch.block[0] = lin % blocks[0];
      launch.block[1] = (lin / blocks[0]) % blocks[1];
      launch.block[2] = lin / (blocks[0] * blocks[1]);
      for (int d = 0; d < 3; ++d)
        launch.grid[d] = blocks[d];
      launch.kernel = name;
      launch.arena = arena.data();
      launch.arenaBytes = arenaBytes;
      launch.sites = &exe.code->accessSites();
      if (counters)
        launch.counts = &rangeCounts;
      Status s = sim::runBlock(launch);
      if (s.ok() && asserts.failed())
        s = failedPrecondition(
            "sim: kernel assertion failed in kernel '%s', block (%lld, %lld, "
            "%lld): %s",
            name.c_str(), (long long)launch.block[0],
            (long long)launch.block[1], (long long)launch.block[2],
            asserts.message().c_str());
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(errMutex);
        if (!failed) {
          failed = true;
          firstError = std::move(s);
        }
        return;
      }
    }
    if (counters) {
      std::lock_guard<std::mutex> lock(errMutex);
      counts.merge(rangeCounts);
    }
  };
  ThreadPool &pool = pool_;
  int64_t grain = std::max<int64_t>(1, total / (int64_t(pool.size()) * 4));
  pool.parallelFor(total, grain, runRange);
  // Kernel prints (C printf) appear before what the caller prints next.
  std::fflush(stdout);
  if (firstError.ok() && counters) {
    *counted = publicCounters(counts, exe.code->accessSites());
  }
  return firstError;
}

} // namespace

std::unique_ptr<Device> hal::createSimDevice(ThreadPool &pool) {
  return std::make_unique<SimDevice>(pool);
}
