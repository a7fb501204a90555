//===- Runtime.cpp - Tessera runtime --------------------------------------===//

#include "tessera/runtime/Runtime.h"

#include "tessera/Support/Hash.h"
#include "tessera/Support/Host.h"

#include "Core/ThreadPool.h"
#include "Cuda/CudaDevice.h"
#include "Sim/FiberScheduler.h"
#include "tessera/Driver/Driver.h"
#include "tessera/Target/CUDA/Nvrtc.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>

using namespace tessera;

//===----------------------------------------------------------------------===//
// Small types
//===----------------------------------------------------------------------===//

const char *tessera::deviceKindName(DeviceKind kind) {
  switch (kind) {
  case DeviceKind::Cpu:
    return "cpu";
  case DeviceKind::Sim:
    return "sim";
  case DeviceKind::Cuda:
    return "cuda";
  }
  return "?";
}

std::optional<DeviceKind> tessera::parseDeviceKind(std::string_view name) {
  if (name == "cpu")
    return DeviceKind::Cpu;
  if (name == "sim")
    return DeviceKind::Sim;
  if (name == "cuda" || name == "gpu")
    return DeviceKind::Cuda;
  return std::nullopt;
}

TensorView TensorView::contiguous(void *data, DType dtype,
                                  std::vector<int64_t> shape) {
  TensorView t;
  t.data = data;
  t.dtype = dtype;
  t.strides.assign(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    t.strides[i] = t.strides[i + 1] * std::max<int64_t>(shape[i + 1], 1);
  t.shape = std::move(shape);
  return t;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string Arg::describe() const {
  if (isNone())
    return "None";
  if (auto *t = tensor()) {
    std::string s = std::string(dtypeName(t->dtype)) + " tensor of shape (";
    for (size_t i = 0; i < t->shape.size(); ++i)
      s += (i ? ", " : "") + std::to_string(t->shape[i]);
    return s + ")";
  }
  if (auto *d = floating())
    return "float " + std::to_string(*d);
  if (auto *i = integer())
    return "int " + std::to_string(*i);
  return std::string("bool ") + (*boolean() ? "True" : "False");
}

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

Program::Program(std::shared_ptr<const driver::SourceModule> module)
    : module_(std::move(module)) {}
Program::~Program() = default;
const std::string &Program::name() const { return module_->name(); }
std::vector<const KernelInfo *> Program::kernels() const {
  return module_->kernels();
}
const KernelInfo *Program::findKernel(const std::string &name) const {
  return module_->findKernel(name);
}
uint64_t Program::sourceHash() const { return module_->sourceHash(); }
std::string_view Program::source() const { return module_->text(); }
StatusOr<bool> Program::satisfiesRestrictions(
    const std::string &kernel,
    const std::map<std::string, ConstValue> &constants) const {
  Specialization spec;
  spec.constants = constants;
  return module_->satisfiesRestrictions(kernel, spec);
}

const char *tessera::compilerVersion() {
  return "tessera " TESSERA_VERSION_STRING;
}

//===----------------------------------------------------------------------===//
// Runtime internals
//===----------------------------------------------------------------------===//

struct Runtime::Impl {
  explicit Impl(RuntimeOptions o) : options(o), pool(o.numThreads) {}
  RuntimeOptions options;
  ThreadPool pool;
  mutable std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<Kernel>> kernels;
  CompileCacheStats stats;

  /// The `cuda` device (ordinal 0), opened on first use; the status says
  /// why it cannot be used.
  mutable std::mutex cudaMutex;
  mutable bool cudaProbed = false;
  mutable Status cudaStatus = Status::ok();
  mutable std::unique_ptr<cuda::CudaDevice> cudaDevice;
  StatusOr<cuda::CudaDevice *> cuda() const {
    std::lock_guard<std::mutex> lock(cudaMutex);
    if (!cudaProbed) {
      cudaProbed = true;
      auto dev = cuda::CudaDevice::open(0);
      if (dev.ok())
        cudaDevice = std::move(*dev);
      else
        cudaStatus =
            Status(dev.status().code(), "the 'cuda' device is unavailable: " +
                                            dev.status().message());
    }
    if (!cudaDevice)
      return cudaStatus;
    return cudaDevice.get();
  }
  /// A buffer the size of the device's L2 cache, rewritten before a timed
  /// launch so that the kernel starts with a cold cache (declared after
  /// the device: released before it).
  std::mutex flushMutex;
  std::optional<cuda::DeviceBuffer> l2Flush;
  uint8_t flushValue = 0;
  Status flushL2(cuda::CudaDevice *dev) {
    std::lock_guard<std::mutex> lock(flushMutex);
    size_t bytes = size_t(
        std::max<int64_t>(dev->properties().l2CacheBytes, int64_t(1) << 20));
    if (!l2Flush) {
      TESSERA_ASSIGN_OR_RETURN(cuda::DeviceBuffer b, dev->allocate(bytes));
      l2Flush = std::move(b);
    }
    return dev->fill(l2Flush->address(), ++flushValue, bytes);
  }
  /// Calls `enqueueOne` `launches` times between two events recorded on the
  /// legacy default stream of `dev` (after the L2 flush when `flush`),
  /// without synchronising between the calls, waits for the end event and
  /// returns the elapsed time / `launches`, in ms. Each call must queue its
  /// work on that stream.
  StatusOr<double> timeCudaBatch(cuda::CudaDevice *dev, int launches,
                                 bool flush,
                                 const std::function<Status()> &enqueueOne) {
    if (flush)
      TESSERA_RETURN_IF_ERROR(flushL2(dev));
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaEvent start, dev->createEvent());
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaEvent end, dev->createEvent());
    TESSERA_RETURN_IF_ERROR(start.record());
    for (int i = 0; i < launches; ++i)
      TESSERA_RETURN_IF_ERROR(enqueueOne());
    TESSERA_RETURN_IF_ERROR(end.record());
    TESSERA_RETURN_IF_ERROR(end.synchronize());
    TESSERA_ASSIGN_OR_RETURN(float elapsed,
                             cuda::CudaEvent::elapsedMs(start, end));
    return double(elapsed) / double(launches);
  }
};

namespace {
/// A kernel loaded on the CUDA device: its module and entry, the block
/// size and dynamic shared memory of its configuration.
struct CudaExecutable {
  uint64_t fingerprint = 0;
  cuda::CudaModule module;
  cuda::CudaKernel function;
  int blockSize = 0;
  int64_t sharedBytes = 0;
  driver::StageTimes times;
  /// The tensor maps passed after the arguments.
  std::vector<driver::TensorMapArg> tensorMaps;
  driver::ProgramSchedule schedule;
  /// Blocks of this kernel resident at once on the device (persistent
  /// kernels launch that many at most).
  int64_t residentBlocks = 0;
};

/// Blocks of a persistent kernel the sim runs at most: the multiprocessors
/// of the device it models.
constexpr int64_t kSimPersistentBlocks = 4;

/// The launch grid of a kernel with program schedule `s` for the grid of
/// programs `grid`: that grid for an unscheduled kernel, one block per
/// program along x for a grouped one, and at most `resident` blocks for a
/// persistent one.
std::array<int64_t, 3> launchGridOf(const driver::ProgramSchedule &s,
                                    const std::array<int64_t, 3> &grid,
                                    int64_t resident) {
  if (!s.logicalGrid)
    return grid;
  int64_t total = grid[0] * grid[1] * grid[2];
  if (s.persistent)
    total = std::min(total, std::max<int64_t>(resident, 1));
  return {total, 1, 1};
}
/// What a launch guarantees that its compiled variant relies on; the masks
/// have one bit per parameter.
struct VariantKey {
  uint64_t unitMask = 0, absentMask = 0;
  /// Tensors 16-byte aligned (cpu code ignores it).
  uint64_t alignedMask = 0;
  /// Every dimension and element offset of every tensor fits in 31 bits.
  bool index32 = false;
  /// The grid is within the one the kernel declares for these shapes, axis
  /// by axis (Specialization::declaredGrid).
  bool declaredGrid = false;
  /// The `@heuristics` values ("NAME=VALUE;...").
  std::string heuristics;
  auto operator<=>(const VariantKey &) const = default;
};
} // namespace

struct Kernel::Impl {
  Runtime::Impl *rt = nullptr;
  std::shared_ptr<const driver::SourceModule> module;
  std::string name;
  const KernelInfo *info = nullptr;
  DeviceKind device = DeviceKind::Cpu;
  Specialization spec;
  CompileTimes times;
  /// Element type of every tensor parameter (generic dtypes resolved).
  std::vector<DType> paramDTypes;
  /// Indices of the parameters passed at launch (tensors and scalars).
  std::vector<int> launchParams;

  std::mutex mutex;
  /// Compiled cpu variants, keyed by the facts cpu code uses (masks of
  /// unit-stride and absent tensors, @heuristics values).
  std::map<VariantKey, std::shared_ptr<driver::CpuExecutable>> variants;

  /// The cpu variant for `key` (whose GPU-only facts it ignores).
  StatusOr<std::shared_ptr<driver::CpuExecutable>>
  variant(const VariantKey &key);
  /// sim variants, without and with the counters' branch reports.
  std::map<VariantKey, std::shared_ptr<driver::SimExecutable>> simVariants,
      simCountingVariants;
  StatusOr<std::shared_ptr<driver::SimExecutable>>
  simVariant(const VariantKey &key, bool counters = false);
  /// What the last launch counted (LaunchOptions::counters), under `mutex`.
  std::optional<SimCounters> lastCounters;
  std::map<VariantKey, std::shared_ptr<CudaExecutable>> cudaVariants;
  /// Set for a CUDA C++ kernel (Runtime::compileCuda): its loaded code and
  /// block shape. Tensors are passed as bare device pointers.
  std::shared_ptr<CudaExecutable> cudaSource;
  std::array<int, 3> cudaBlock = {1, 1, 1};
  StatusOr<std::shared_ptr<CudaExecutable>> cudaVariant(const VariantKey &key);
  /// The `@heuristics` values a compile without a launch uses: the
  /// specialisation's, else the parameters' defaults.
  std::string defaultHeuristics() const;
  /// Tensors whose first element, outer strides and rows are multiples of
  /// 16 bytes (with a unit innermost stride): the GPU code reads them with
  /// 16-byte vectors without testing alignment at run time.
  uint64_t alignedMaskOf(const std::vector<Arg> &args) const;
  /// Compile times of the first variant.
  Status compileFirst(uint64_t unitMask);
  /// The first variant's code fingerprint.
  uint64_t fingerprint = 0;
  struct Checked;
  /// With `counters`, the counts of the launch go to `lastCounters`.
  Status launchSim(const std::vector<Arg> &args,
                   const std::vector<int64_t> &slots, const Checked &c,
                   bool counters);
  /// The tensor of kernel parameter `param` in `args` (for its tensor
  /// map), with the parameter's name.
  StatusOr<std::pair<const TensorView *, std::string>>
  tensorOfParam(const std::vector<Arg> &args, int param) const;
  /// Runs `launches` launches back to back, then synchronises; with `ms`,
  /// they are timed with CUDA events (after an L2 flush when `flush`) and
  /// `ms` receives the time of one.
  Status launchCuda(const std::vector<Arg> &args, const Checked &c,
                    int launches, double *ms, bool flush);
  /// The kernel's argument slots: tensors as (allocated, aligned, offset,
  /// sizes..., strides...), absent ones omitted -- for a CUDA C++ kernel a
  /// tensor is one pointer (null when absent) -- and scalars as one slot
  /// each (value in the low bytes).
  std::vector<int64_t> flattenArgs(const std::vector<Arg> &args) const;
  struct Checked {
    std::array<int64_t, 3> grid{1, 1, 1};
    /// The variant this launch takes. Its aligned mask is that of the
    /// arguments a sim kernel receives (cuda launches test their device
    /// copies instead).
    VariantKey key;
  };
  StatusOr<Checked> check(const std::vector<Arg> &args,
                          const LaunchOptions &opts) const;
  /// SourceModule::index32GridBound for the index32 variant of a launch,
  /// cached by its `@heuristics` values.
  std::array<int64_t, 3> index32GridBound(const Checked &c) const;
  mutable std::mutex gridBoundMutex;
  mutable std::map<std::string, std::array<int64_t, 3>> gridBounds;
  /// Kernel::launch run `launches` times; with `ms` also the mean time of
  /// one (see Kernel::launchTimedBatch).
  Status launch(const std::vector<Arg> &args, const LaunchOptions &opts,
                int launches, double *ms, bool flush);
};

namespace {
/// Appends NAME=VALUE to the `@heuristics` part of a variant key
/// ("NAME=VALUE;...", which variantSpec reads back).
void appendHeuristic(std::string &key, const std::string &name,
                     const ConstValue &value) {
  key += (key.empty() ? "" : ";") + name + "=" + value.toString();
}

Specialization variantSpec(const Specialization &spec, const KernelInfo &info,
                           const VariantKey &key) {
  const std::string &heuristics = key.heuristics;
  Specialization s = spec;
  s.alignmentKnown = true;
  s.index32 = key.index32;
  s.declaredGrid = key.declaredGrid;
  for (size_t start = 0; start < heuristics.size();) {
    size_t end = heuristics.find(';', start);
    if (end == std::string::npos)
      end = heuristics.size();
    std::string item = heuristics.substr(start, end - start);
    size_t eq = item.find('=');
    s.constants[item.substr(0, eq)] = ConstValue::parse(item.substr(eq + 1));
    start = end + 1;
  }
  for (size_t i = 0; i < info.params.size(); ++i) {
    if (info.params[i].kind != ParamKind::Tensor)
      continue;
    if (key.unitMask >> i & 1)
      s.unitStrideTensors.push_back(info.params[i].name);
    if (key.alignedMask >> i & 1)
      s.alignedTensors.push_back(info.params[i].name);
    if (key.absentMask >> i & 1)
      s.absentTensors.push_back(info.params[i].name);
  }
  return s;
}

/// The compiled variant for `key` in `cache`, compiled by `compile(spec)` on
/// first use. Called under the kernel's mutex.
template <typename Exe, typename Compile>
StatusOr<std::shared_ptr<Exe>>
cachedVariant(std::map<VariantKey, std::shared_ptr<Exe>> &cache,
              const Specialization &spec, const KernelInfo &info,
              const VariantKey &key, Compile compile) {
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  TESSERA_ASSIGN_OR_RETURN(auto exe, compile(variantSpec(spec, info, key)));
  std::shared_ptr<Exe> shared(std::move(exe));
  cache[key] = shared;
  return shared;
}
} // namespace

StatusOr<std::shared_ptr<driver::SimExecutable>>
Kernel::Impl::simVariant(const VariantKey &key, bool counters) {
  std::lock_guard<std::mutex> lock(mutex);
  return cachedVariant(counters ? simCountingVariants : simVariants, spec,
                       *info, key, [&](const Specialization &s) {
                         return driver::compileForSim(*module, name, s,
                                                      sim::runtimeSymbols(),
                                                      "sm_90a", counters);
                       });
}

namespace {
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
} // namespace

std::string SimAccessCounters::description() const {
  std::string s = space == Space::Shared ? "shared " : "global ";
  s += kind == Kind::Store    ? "store "
       : kind == Kind::Atomic ? "atomic "
                              : "load ";
  s += std::to_string(widthBytes) + "B";
  if (!location.empty())
    s += " at " + location;
  return s;
}

std::string Kernel::Impl::defaultHeuristics() const {
  std::string key;
  for (const std::string &n : info->heuristics) {
    ConstValue v;
    if (auto it = spec.constants.find(n); it != spec.constants.end())
      v = it->second;
    else if (const ParamInfo *p = info->findParam(n); p && p->defaultValue)
      v = *p->defaultValue;
    appendHeuristic(key, n, v);
  }
  return key;
}

Status Kernel::Impl::compileFirst(uint64_t unitMask) {
  const driver::StageTimes *t = nullptr;
  std::shared_ptr<driver::CpuExecutable> cpuExe;
  std::shared_ptr<driver::SimExecutable> simExe;
  std::shared_ptr<CudaExecutable> cudaExe;
  // The all-contiguous, all-aligned, 31-bit variant on the declared grid
  // most launches take.
  VariantKey first{unitMask, 0, unitMask, true, true, defaultHeuristics()};
  if (device == DeviceKind::Sim) {
    TESSERA_ASSIGN_OR_RETURN(simExe, simVariant(first));
    t = &simExe->times();
    fingerprint = simExe->codeFingerprint();
  } else if (device == DeviceKind::Cuda) {
    TESSERA_ASSIGN_OR_RETURN(cudaExe, cudaVariant(first));
    t = &cudaExe->times;
    fingerprint = cudaExe->fingerprint;
  } else {
    TESSERA_ASSIGN_OR_RETURN(cpuExe, variant(first));
    t = &cpuExe->times();
    fingerprint = cpuExe->codeFingerprint();
  }
  times = {t->parse, t->sema, t->tilePasses, t->lowering, t->codegen};
  return Status::ok();
}

namespace {
/// A tensor map's geometry as cuTensorMapEncodeTiled takes it: dimensions
/// innermost first, byte strides (strides[0] the element size) and box.
struct TensorMapGeometry {
  int rank = 0;
  uint64_t dims[5] = {0, 0, 0, 0, 0}, strides[5] = {0, 0, 0, 0, 0};
  unsigned box[5] = {0, 0, 0, 0, 0};
  int64_t elementBytes = 0;
};

/// Why a TMA tensor map cannot describe `t`, empty when it can: its first
/// element 16-byte aligned, a unit innermost stride, the strides of
/// dimensions it steps along positive multiples of 16 bytes below 2^40,
/// and every extent in [1, 2^31) (coordinates are 32-bit).
std::string tensorMapObstacle(const TensorView &t) {
  const int64_t rank = int64_t(t.shape.size());
  const int64_t elem = int64_t(dtypeSize(t.dtype));
  if (rank == 0)
    return "it has no dimensions";
  if (reinterpret_cast<uintptr_t>(t.data) % 16)
    return "its first element is not 16-byte aligned";
  for (int64_t d = 0; d < rank; ++d)
    if (t.shape[d] < 1 || t.shape[d] > std::numeric_limits<int32_t>::max())
      return "dimension " + std::to_string(d) + " has " +
             std::to_string(t.shape[d]) + " elements";
  if (t.strides.back() != 1 && t.shape.back() > 1)
    return "its innermost stride is not 1";
  for (int64_t d = 0; d + 1 < rank; ++d) {
    int64_t bytes = t.strides[d] * elem;
    if (t.shape[d] > 1 &&
        (bytes <= 0 || bytes % 16 || bytes >= (int64_t(1) << 40)))
      return "dimension " + std::to_string(d) + " has a stride of " +
             std::to_string(bytes) + " bytes";
  }
  return "";
}

/// The geometry of the tensor map `m` over `t`. The launch only takes a
/// variant with TMA copies for tensors alignedMaskOf accepts (which
/// tensorMapObstacle is part of), so a refusal here is an internal error.
StatusOr<TensorMapGeometry> tensorMapGeometry(const TensorView &t,
                                              const driver::TensorMapArg &m,
                                              const std::string &kernel,
                                              const std::string &param) {
  TensorMapGeometry g;
  g.rank = int(t.shape.size());
  g.elementBytes = int64_t(dtypeSize(t.dtype));
  std::string why = tensorMapObstacle(t);
  if (why.empty() && (g.rank > 5 || size_t(g.rank) != m.box.size()))
    why = "a rank-" + std::to_string(g.rank) + " tensor for a rank-" +
          std::to_string(m.box.size()) + " box";
  if (!why.empty())
    return internalError("kernel '%s': parameter '%s' cannot be copied by "
                         "TMA: %s",
                         kernel.c_str(), param.c_str(), why.c_str());
  g.strides[0] = uint64_t(g.elementBytes);
  for (int inner = 0; inner < g.rank; ++inner) {
    int d = g.rank - 1 - inner;
    g.dims[inner] = uint64_t(t.shape[d]);
    g.box[inner] = unsigned(m.box[d]);
    if (inner == 0)
      continue;
    // A dimension of one element is never stepped along: any stride past
    // the inner ones describes it.
    g.strides[inner] =
        t.shape[d] > 1
            ? uint64_t(t.strides[d] * g.elementBytes)
            : (g.strides[inner - 1] * g.dims[inner - 1] + 15) / 16 * 16;
  }
  return g;
}
} // namespace

StatusOr<std::pair<const TensorView *, std::string>>
Kernel::Impl::tensorOfParam(const std::vector<Arg> &args, int param) const {
  for (size_t ai = 0; ai < args.size() && ai < launchParams.size(); ++ai)
    if (launchParams[ai] == param && args[ai].tensor())
      return std::make_pair(args[ai].tensor(), info->params[param].name);
  return internalError("kernel '%s': no tensor for the tensor map of "
                       "parameter %d",
                       name.c_str(), param);
}

Status Kernel::Impl::launchSim(const std::vector<Arg> &args,
                               const std::vector<int64_t> &argSlots,
                               const Checked &c, bool counters) {
  TESSERA_ASSIGN_OR_RETURN(auto exe, simVariant(c.key, counters));
  // Tensor maps follow the arguments: one slot each, the address of its
  // SimTensorMap.
  std::vector<sim::SimTensorMap> maps(exe->tensorMaps().size());
  std::vector<int64_t> slots = argSlots;
  // A scheduled kernel's grid of programs precedes them.
  if (exe->schedule().logicalGrid)
    slots.insert(slots.end(), c.grid.begin(), c.grid.end());
  for (size_t i = 0; i < maps.size(); ++i) {
    const driver::TensorMapArg &m = exe->tensorMaps()[i];
    TESSERA_ASSIGN_OR_RETURN(auto tensor, tensorOfParam(args, m.param));
    TESSERA_ASSIGN_OR_RETURN(
        TensorMapGeometry g,
        tensorMapGeometry(*tensor.first, m, name, tensor.second));
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
    if (c.grid[d] > exe->gridBound()[d])
      return internalError(
          "kernel '%s': the code of this launch assumes at most %lld program "
          "instances on grid axis %d, the launch has %lld",
          name.c_str(), (long long)exe->gridBound()[d], d,
          (long long)c.grid[d]);
  const int64_t arenaBytes = exe->sharedBytes();
  const std::array<int64_t, 3> blocks =
      launchGridOf(exe->schedule(), c.grid, kSimPersistentBlocks);
  const int64_t total = blocks[0] * blocks[1] * blocks[2];
  std::mutex errMutex;
  Status firstError = Status::ok();
  bool failed = false;
  sim::LaunchCounts counts; // under errMutex
  auto runRange = [&](int64_t begin, int64_t end) {
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
      launch.entry = exe->entry();
      launch.slots = &blockSlots;
      launch.blockSize = exe->blockSize();
      launch.block[0] = lin % blocks[0];
      launch.block[1] = (lin / blocks[0]) % blocks[1];
      launch.block[2] = lin / (blocks[0] * blocks[1]);
      for (int d = 0; d < 3; ++d)
        launch.grid[d] = blocks[d];
      launch.kernel = name;
      launch.arena = arena.data();
      launch.arenaBytes = arenaBytes;
      launch.sites = &exe->accessSites();
      if (counters)
        launch.counts = &rangeCounts;
      Status s = sim::runBlock(launch);
      if (!s.isOk()) {
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
  ThreadPool &pool = rt->pool;
  int64_t grain = std::max<int64_t>(1, total / (int64_t(pool.size()) * 4));
  pool.parallelFor(total, grain, runRange);
  if (firstError.isOk() && counters) {
    SimCounters result = publicCounters(counts, exe->accessSites());
    std::lock_guard<std::mutex> lock(mutex);
    lastCounters = std::move(result);
  }
  return firstError;
}

StatusOr<std::shared_ptr<CudaExecutable>>
Kernel::Impl::cudaVariant(const VariantKey &key) {
  TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, rt->cuda());
  std::lock_guard<std::mutex> lock(mutex);
  return cachedVariant(
      cudaVariants, spec, *info, key,
      [&](const Specialization &s)
          -> StatusOr<std::shared_ptr<CudaExecutable>> {
        driver::GpuEmitOptions gpu;
        gpu.arch = dev->properties().archName();
        driver::GpuResources r;
        auto exe = std::make_shared<CudaExecutable>();
        // A cubin when an assembler is available; otherwise PTX, which the
        // driver compiles when it loads the module.
        auto image = driver::emit(*module, name, s, driver::EmitKind::Cubin,
                                  &exe->times, gpu, &r);
        if (!image.ok() && image.status().code() == StatusCode::kUnavailable)
          image = driver::emit(*module, name, s, driver::EmitKind::PTX,
                               &exe->times, gpu, &r);
        if (!image.ok())
          return image.status();
        exe->fingerprint = fnv1a(*image);
        TESSERA_ASSIGN_OR_RETURN(exe->module, dev->loadModule(*image));
        TESSERA_ASSIGN_OR_RETURN(exe->function, exe->module.kernel(name));
        exe->blockSize = r.blockSize;
        exe->sharedBytes = r.tileSharedBytes;
        exe->tensorMaps = r.tensorMaps;
        exe->schedule = r.schedule;
        if (exe->blockSize <= 0)
          return internalError("kernel '%s': no block size from the GPU "
                               "mapping",
                               name.c_str());
        // Dynamic (the tiles) and static (mbarriers) shared memory.
        if (exe->sharedBytes + r.sharedBytes >
            dev->properties().maxSharedPerBlockOptin)
          return Status(
              StatusCode::kResourceExhausted,
              "kernel '" + name + "' needs " +
                  std::to_string(exe->sharedBytes + r.sharedBytes) +
                  " bytes of shared memory per block; the device "
                  "allows " +
                  std::to_string(dev->properties().maxSharedPerBlockOptin));
        if (exe->sharedBytes > 48 * 1024)
          TESSERA_RETURN_IF_ERROR(dev->setMaxDynamicSharedMemory(
              exe->function, int(exe->sharedBytes)));
        if (exe->schedule.persistent) {
          TESSERA_ASSIGN_OR_RETURN(
              int perSm, dev->activeBlocksPerSm(exe->function, exe->blockSize,
                                                size_t(exe->sharedBytes)));
          exe->residentBlocks =
              int64_t(std::max(perSm, 1)) * dev->properties().smCount;
        }
        return exe;
      });
}

namespace {
/// Element offsets [lo, hi] a strided view touches (empty views: none).
std::pair<int64_t, int64_t> touchedRange(const TensorView &t) {
  int64_t lo = 0, hi = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] == 0)
      return {0, -1};
    int64_t span = (t.shape[d] - 1) * t.strides[d];
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi};
}
} // namespace

Status Kernel::Impl::launchCuda(const std::vector<Arg> &args, const Checked &c,
                                int launches, double *ms, bool flush) {
  TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, rt->cuda());
  // Host tensors are staged through device buffers: copied in before the
  // launches and back after them (the kernel may write any of them). Views
  // of buffers from Runtime::allocate are used in place.
  struct Staged {
    cuda::DeviceBuffer buffer;
    void *host = nullptr; ///< first touched byte on the host
    size_t bytes = 0;
  };
  std::vector<Staged> staged;
  std::vector<Arg> deviceArgs = args;
  for (Arg &a : deviceArgs) {
    const TensorView *t = a.tensor();
    // Views of device buffers are passed as they are.
    if (!t || t->device)
      continue;
    auto [lo, hi] = touchedRange(*t);
    int64_t elem = dtypeSize(t->dtype);
    size_t bytes = hi >= lo ? size_t((hi - lo + 1) * elem) : 0;
    Staged st;
    st.bytes = bytes;
    st.host = static_cast<char *>(t->data) + lo * elem;
    TESSERA_ASSIGN_OR_RETURN(st.buffer,
                             dev->allocate(std::max<size_t>(bytes, 1)));
    if (bytes)
      TESSERA_RETURN_IF_ERROR(
          dev->copyToDevice(st.buffer.address(), st.host, bytes));
    TensorView dv = *t;
    uintptr_t base = uintptr_t(st.buffer.address()) - uintptr_t(lo * elem);
    dv.data = reinterpret_cast<void *>(base);
    a = Arg(dv);
    staged.push_back(std::move(st));
  }
  std::shared_ptr<CudaExecutable> exe = cudaSource;
  if (!exe) {
    // Alignment of what the kernel receives: staged host tensors move.
    VariantKey key = c.key;
    key.alignedMask = alignedMaskOf(deviceArgs);
    TESSERA_ASSIGN_OR_RETURN(exe, cudaVariant(key));
  }
  // The blocks that run the programs (a scheduled kernel takes its grid
  // of programs after its arguments).
  std::array<int64_t, 3> blocks =
      launchGridOf(exe->schedule, c.grid, exe->residentBlocks);
  if (blocks[0] > std::numeric_limits<int32_t>::max() || blocks[1] > 65535 ||
      blocks[2] > 65535)
    return invalidArgument(
        "kernel '%s': grid (%lld, %lld, %lld) exceeds the CUDA grid limits "
        "(2^31-1, 65535, 65535)",
        name.c_str(), (long long)blocks[0], (long long)blocks[1],
        (long long)blocks[2]);
  std::vector<int64_t> slots = flattenArgs(deviceArgs);
  if (exe->schedule.logicalGrid)
    slots.insert(slots.end(), c.grid.begin(), c.grid.end());
  std::vector<void *> params(slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    params[i] = &slots[i];
  // Tensor maps follow, each a 128-byte parameter passed by value.
  std::vector<cuda::CuTensorMap> maps(exe->tensorMaps.size());
  for (size_t i = 0; i < maps.size(); ++i) {
    const driver::TensorMapArg &m = exe->tensorMaps[i];
    TESSERA_ASSIGN_OR_RETURN(auto tensor, tensorOfParam(deviceArgs, m.param));
    TESSERA_ASSIGN_OR_RETURN(
        TensorMapGeometry g,
        tensorMapGeometry(*tensor.first, m, name, tensor.second));
    TESSERA_RETURN_IF_ERROR(dev->encodeTensorMap(&maps[i], tensor.first->dtype,
                                                 g.rank, tensor.first->data,
                                                 g.dims, g.strides + 1, g.box,
                                                 m.swizzle),
                            "kernel '%s': the tensor map of parameter '%s'",
                            name.c_str(), tensor.second.c_str());
    params.push_back(&maps[i]);
  }
  // The arena descriptor the sim passes is not a kernel parameter here:
  // the GPU kernel reads gpu.dynamic_shared_memory.
  cuda::Dim3 grid{unsigned(blocks[0]), unsigned(blocks[1]),
                  unsigned(blocks[2])};
  cuda::Dim3 block{unsigned(exe->blockSize), 1, 1};
  if (cudaSource)
    block = {unsigned(cudaBlock[0]), unsigned(cudaBlock[1]),
             unsigned(cudaBlock[2])};
  // Every launch goes to the legacy default stream, with no host
  // synchronisation between launches of a batch.
  auto launchOnce = [&]() -> Status {
    return dev->launch(exe->function, grid, block, unsigned(exe->sharedBytes),
                       nullptr, params.data());
  };
  if (ms) {
    TESSERA_ASSIGN_OR_RETURN(
        *ms, rt->timeCudaBatch(dev, launches, flush, launchOnce));
  } else {
    for (int i = 0; i < launches; ++i)
      TESSERA_RETURN_IF_ERROR(launchOnce());
    TESSERA_RETURN_IF_ERROR(dev->synchronize());
  }
  for (Staged &st : staged)
    if (st.bytes)
      TESSERA_RETURN_IF_ERROR(
          dev->copyToHost(st.host, st.buffer.address(), st.bytes));
  return Status::ok();
}

StatusOr<std::shared_ptr<driver::CpuExecutable>>
Kernel::Impl::variant(const VariantKey &key) {
  VariantKey cpu{key.unitMask, key.absentMask};
  cpu.heuristics = key.heuristics;
  std::lock_guard<std::mutex> lock(mutex);
  return cachedVariant(variants, spec, *info, cpu,
                       [&](const Specialization &s) {
                         return driver::compileForCpu(*module, name, s);
                       });
}

namespace {
std::string paramWhere(const ParamInfo &p) {
  return "parameter '" + p.name + "'";
}
} // namespace

StatusOr<Kernel::Impl::Checked>
Kernel::Impl::check(const std::vector<Arg> &args,
                    const LaunchOptions &opts) const {
  Checked out;
  out.key.index32 = true;
  if (args.size() != launchParams.size()) {
    std::string names;
    for (int pi : launchParams)
      names += (names.empty() ? "" : ", ") + info->params[pi].name;
    return invalidArgument(
        "kernel '%s' takes %zu launch arguments (%s), got %zu", name.c_str(),
        launchParams.size(), names.c_str(), args.size());
  }
  if (info->params.size() > 64)
    return unimplemented("kernels with more than 64 parameters");
  std::map<std::string, std::pair<int64_t, std::string>> symbols;
  for (size_t ai = 0; ai < args.size(); ++ai) {
    const ParamInfo &p = info->params[launchParams[ai]];
    const Arg &a = args[ai];
    if (p.kind == ParamKind::Tensor) {
      if (a.isNone()) {
        if (!p.optional)
          return invalidArgument("%s expects a tensor, got None",
                                 paramWhere(p).c_str());
        out.key.absentMask |= uint64_t(1) << launchParams[ai];
        continue;
      }
      const TensorView *t = a.tensor();
      if (!t)
        return invalidArgument("%s expects a tensor, got %s",
                               paramWhere(p).c_str(), a.describe().c_str());
      if (t->device && *t->device != device)
        return invalidArgument(
            "%s is in %s device memory; this kernel runs on %s",
            paramWhere(p).c_str(), deviceKindName(*t->device),
            deviceKindName(device));
      DType want = paramDTypes[launchParams[ai]];
      if (t->dtype != want)
        return invalidArgument("%s expects a %s tensor, got %s",
                               paramWhere(p).c_str(), dtypeName(want),
                               a.describe().c_str());
      if (t->shape.size() != p.dims.size())
        return invalidArgument("%s expects a tensor of rank %zu, got %s",
                               paramWhere(p).c_str(), p.dims.size(),
                               a.describe().c_str());
      if (t->strides.size() != t->shape.size())
        return invalidArgument("%s has %zu strides for rank %zu",
                               paramWhere(p).c_str(), t->strides.size(),
                               t->shape.size());
      bool empty = false;
      for (size_t d = 0; d < t->shape.size(); ++d) {
        if (t->shape[d] < 0)
          return invalidArgument("%s has a negative size %lld in dimension %zu",
                                 paramWhere(p).c_str(), (long long)t->shape[d],
                                 d);
        if (t->strides[d] < 0)
          return invalidArgument(
              "%s has a negative stride %lld in dimension %zu (negative "
              "strides are not supported)",
              paramWhere(p).c_str(), (long long)t->strides[d], d);
        empty |= t->shape[d] == 0;
        const DimInfo &di = p.dims[d];
        if (di.symbol.empty()) {
          if (t->shape[d] != di.fixed)
            return invalidArgument("%s dimension %zu must be %lld, got %lld",
                                   paramWhere(p).c_str(), d,
                                   (long long)di.fixed, (long long)t->shape[d]);
          continue;
        }
        auto [it, inserted] =
            symbols.try_emplace(di.symbol, t->shape[d],
                                p.name + "' dimension " + std::to_string(d));
        if (!inserted && it->second.first != t->shape[d])
          return invalidArgument(
              "shape symbol '%s' is %lld for parameter '%s, but %lld for "
              "parameter '%s' dimension %zu",
              di.symbol.c_str(), (long long)it->second.first,
              it->second.second.c_str(), (long long)t->shape[d], p.name.c_str(),
              d);
      }
      if (!empty && !t->data)
        return invalidArgument("%s has a null data pointer",
                               paramWhere(p).c_str());
      // Element offsets must fit in 64 bits.
      __int128 span = 0;
      for (size_t d = 0; d < t->shape.size(); ++d)
        if (t->shape[d] > 0)
          span += (__int128)(t->shape[d] - 1) * t->strides[d];
      if (span > std::numeric_limits<int64_t>::max() / 16)
        return invalidArgument("%s spans too many elements",
                               paramWhere(p).c_str());
      constexpr int64_t kIndex32 = std::numeric_limits<int32_t>::max();
      if (span >= kIndex32)
        out.key.index32 = false;
      for (int64_t d : t->shape)
        if (d > kIndex32)
          out.key.index32 = false;
      if (!t->shape.empty() && (t->strides.back() == 1 || t->shape.back() <= 1))
        out.key.unitMask |= uint64_t(1) << launchParams[ai];
      continue;
    }
    // Scalars.
    if (a.tensor() || a.isNone())
      return invalidArgument("%s expects a scalar, got %s",
                             paramWhere(p).c_str(), a.describe().c_str());
    if (p.scalarKind == ScalarKind::Int && !a.integer())
      return invalidArgument("%s expects an int, got %s", paramWhere(p).c_str(),
                             a.describe().c_str());
    if (p.scalarKind == ScalarKind::Bool && !a.boolean())
      return invalidArgument("%s expects a bool, got %s", paramWhere(p).c_str(),
                             a.describe().c_str());
    if ((p.scalarKind == ScalarKind::Float ||
         p.scalarKind == ScalarKind::Any) &&
        !a.floating() && !a.integer())
      return invalidArgument("%s expects a float, got %s",
                             paramWhere(p).c_str(), a.describe().c_str());
  }

  // The shape symbols, for the declared grid and the heuristics.
  std::vector<std::pair<std::string, int64_t>> shapes;
  if (info->hasGrid || !info->heuristics.empty())
    for (auto &[sym, v] : symbols)
      shapes.emplace_back(sym, v.first);
  if (!info->heuristics.empty()) {
    TESSERA_ASSIGN_OR_RETURN(auto values,
                             module->evaluateHeuristics(name, spec, shapes));
    for (const auto &[n, v] : values) {
      auto given = spec.constants.find(n);
      if (given != spec.constants.end() && given->second != v)
        return invalidArgument(
            "kernel '%s' was specialised with %s=%s, but its @heuristics "
            "give %s for this launch's shapes",
            name.c_str(), n.c_str(), given->second.toString().c_str(),
            v.toString().c_str());
      appendHeuristic(out.key.heuristics, n, v);
    }
  }
  if (opts.grid) {
    out.grid = *opts.grid;
    // An explicit grid within the declared one keeps its guarantees (a
    // kernel that declares none assumes nothing); a larger one, or a
    // declared grid that cannot be evaluated, runs code that tests program
    // ids against every extent.
    if (!module || !info->hasGrid) {
      out.key.declaredGrid = true;
    } else {
      auto g = module->evaluateGrid(name, spec, shapes);
      out.key.declaredGrid = g.ok();
      for (size_t i = 0; g.ok() && i < 3; ++i)
        out.key.declaredGrid &= out.grid[i] <= (i < g->size() ? (*g)[i] : 1);
    }
  } else {
    TESSERA_ASSIGN_OR_RETURN(auto g, module->evaluateGrid(name, spec, shapes));
    for (size_t i = 0; i < 3; ++i)
      out.grid[i] = i < g.size() ? g[i] : 1;
    out.key.declaredGrid = true;
  }
  for (int64_t g : out.grid)
    if (g < 0)
      return invalidArgument("grid extents must be non-negative");
  if (out.grid[0] > 0 && out.grid[1] > 0 && out.grid[2] > 0) {
    __int128 total = (__int128)out.grid[0] * out.grid[1] * out.grid[2];
    if (total > (int64_t(1) << 40))
      return invalidArgument("grid of %lld x %lld x %lld program instances is "
                             "too large",
                             (long long)out.grid[0], (long long)out.grid[1],
                             (long long)out.grid[2]);
  }
  // The index32 code takes program ids to be below the kernel's grid
  // bound; a larger grid runs the 64-bit code.
  if (out.key.index32 && module) {
    std::array<int64_t, 3> bound = index32GridBound(out);
    for (size_t i = 0; i < 3; ++i)
      if (out.grid[i] > bound[i])
        out.key.index32 = false;
  }
  // What the sim kernel receives (cuda launches test the device copies).
  if (device == DeviceKind::Sim)
    out.key.alignedMask = alignedMaskOf(args);
  return out;
}

std::array<int64_t, 3> Kernel::Impl::index32GridBound(const Checked &c) const {
  std::lock_guard<std::mutex> lock(gridBoundMutex);
  auto it = gridBounds.find(c.key.heuristics);
  if (it == gridBounds.end()) {
    // The specialisation the index32 variant is compiled with.
    VariantKey key = c.key;
    key.index32 = true;
    Specialization s = variantSpec(spec, *info, key);
    it = gridBounds.emplace(key.heuristics, module->index32GridBound(name, s))
             .first;
  }
  return it->second;
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Kernel::~Kernel() = default;
const KernelInfo &Kernel::info() const { return *impl_->info; }
DeviceKind Kernel::device() const { return impl_->device; }
const Specialization &Kernel::specialization() const { return impl_->spec; }
const CompileTimes &Kernel::compileTimes() const { return impl_->times; }
uint64_t Kernel::codeFingerprint() const { return impl_->fingerprint; }

StatusOr<std::array<int64_t, 3>>
Kernel::check(const std::vector<Arg> &args, const LaunchOptions &opts) const {
  TESSERA_ASSIGN_OR_RETURN(auto c, impl_->check(args, opts));
  return c.grid;
}

uint64_t Kernel::Impl::alignedMaskOf(const std::vector<Arg> &args) const {
  uint64_t mask = 0;
  for (size_t ai = 0; ai < args.size() && ai < launchParams.size(); ++ai) {
    const TensorView *t = args[ai].tensor();
    if (!t || t->shape.empty() || t->strides.back() != 1)
      continue;
    int64_t elem = int64_t(dtypeSize(t->dtype));
    if (elem <= 0)
      continue;
    bool ok = reinterpret_cast<uintptr_t>(t->data) % 16 == 0 &&
              t->shape.back() * elem % 16 == 0;
    for (size_t d = 0; ok && d + 1 < t->strides.size(); ++d)
      ok = t->strides[d] * elem % 16 == 0;
    // Also what a TMA copy of it needs.
    ok = ok && tensorMapObstacle(*t).empty();
    if (ok)
      mask |= uint64_t(1) << launchParams[ai];
  }
  return mask;
}

std::vector<int64_t>
Kernel::Impl::flattenArgs(const std::vector<Arg> &args) const {
  // Flatten: tensors as (allocated, aligned, offset, sizes..., strides...)
  // -- for a CUDA C++ kernel as one pointer, null when omitted -- and
  // scalars as one slot each.
  std::vector<int64_t> slots;
  slots.reserve(64);
  for (size_t ai = 0; ai < args.size(); ++ai) {
    const Arg &a = args[ai];
    const ParamInfo &p = info->params[launchParams[ai]];
    if (p.kind == ParamKind::Tensor) {
      int64_t ptr = 0;
      if (!a.isNone())
        std::memcpy(&ptr, &a.tensor()->data, sizeof(ptr));
      if (cudaSource) {
        slots.push_back(ptr);
        continue;
      }
      if (a.isNone())
        continue;
      const TensorView &t = *a.tensor();
      slots.push_back(ptr);
      slots.push_back(ptr);
      slots.push_back(0);
      for (int64_t d : t.shape)
        slots.push_back(d);
      for (int64_t s : t.strides)
        slots.push_back(s);
      continue;
    }
    int64_t slot = 0;
    if (p.scalarKind == ScalarKind::Int) {
      slot = *a.integer();
    } else if (p.scalarKind == ScalarKind::Bool) {
      unsigned char bv = *a.boolean() ? 1 : 0;
      std::memcpy(&slot, &bv, 1);
    } else {
      float f = a.floating() ? float(*a.floating()) : float(*a.integer());
      std::memcpy(&slot, &f, sizeof(f));
    }
    slots.push_back(slot);
  }
  return slots;
}

Status Kernel::launch(const std::vector<Arg> &args, const LaunchOptions &opts) {
  return impl_->launch(args, opts, 1, nullptr, false);
}

StatusOr<double> Kernel::launchTimed(const std::vector<Arg> &args,
                                     const LaunchOptions &opts,
                                     bool flushCaches) {
  return launchTimedBatch(args, opts, 1, flushCaches);
}

StatusOr<double> Kernel::launchTimedBatch(const std::vector<Arg> &args,
                                          const LaunchOptions &opts,
                                          int launches, bool flushCaches) {
  if (launches < 1)
    return invalidArgument("kernel '%s': a batch needs at least one launch, "
                           "got %d",
                           impl_->name.c_str(), launches);
  double ms = 0;
  TESSERA_RETURN_IF_ERROR(
      impl_->launch(args, opts, launches, &ms, flushCaches));
  return ms;
}

StatusOr<SimCounters> Kernel::lastCounters() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (!impl_->lastCounters)
    return failedPrecondition(
        "kernel '%s': the last launch did not count (launch on the sim "
        "device with LaunchOptions::counters)",
        impl_->name.c_str());
  return *impl_->lastCounters;
}

Status Kernel::Impl::launch(const std::vector<Arg> &args,
                            const LaunchOptions &opts, int launches, double *ms,
                            bool flush) {
  if (opts.counters && device != DeviceKind::Sim)
    return invalidArgument("kernel '%s': counters are counted by the sim "
                           "device only; this kernel runs on %s",
                           name.c_str(), deviceKindName(device));
  {
    std::lock_guard<std::mutex> lock(mutex);
    lastCounters.reset();
  }
  TESSERA_ASSIGN_OR_RETURN(auto c, check(args, opts));
  int64_t total = c.grid[0] * c.grid[1] * c.grid[2];
  if (total == 0) {
    // An empty grid is a no-op (that counts nothing).
    if (opts.counters) {
      std::lock_guard<std::mutex> lock(mutex);
      lastCounters = SimCounters{};
    }
    return Status::ok();
  }

  if (device == DeviceKind::Cuda)
    return launchCuda(args, c, launches, ms, flush);
  // The clock covers the grids only: a variant seen for the first time is
  // compiled before it starts. The time is that of one launch.
  std::chrono::steady_clock::time_point t0;
  auto timed = [&](Status s) {
    if (ms && s.isOk())
      *ms = std::chrono::duration<double, std::milli>(
                std::chrono::steady_clock::now() - t0)
                .count() /
            double(launches);
    return s;
  };
  std::vector<int64_t> slots = flattenArgs(args);
  if (device == DeviceKind::Sim) {
    TESSERA_RETURN_IF_ERROR(simVariant(c.key, opts.counters));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i)
      TESSERA_RETURN_IF_ERROR(launchSim(args, slots, c, opts.counters));
    return timed(Status::ok());
  }
  TESSERA_ASSIGN_OR_RETURN(auto exe, variant(c.key));
  std::vector<void *> ptrs(slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    ptrs[i] = &slots[i];

  const int64_t grid[3] = {c.grid[0], c.grid[1], c.grid[2]};
  ThreadPool &pool = rt->pool;
  int64_t grain = std::max<int64_t>(1, total / (int64_t(pool.size()) * 8));
  const driver::CpuExecutable *e = exe.get();
  void **argv = ptrs.data();
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i)
    pool.parallelFor(total, grain,
                     [&](int64_t b, int64_t en) { e->run(argv, b, en, grid); });
  return timed(Status::ok());
}

//===----------------------------------------------------------------------===//
// Runtime
//===----------------------------------------------------------------------===//

Runtime::Runtime(RuntimeOptions options)
    : impl_(std::make_unique<Impl>(options)) {}
Runtime::~Runtime() = default;
unsigned Runtime::numThreads() const { return impl_->pool.size(); }

StatusOr<std::shared_ptr<Program>> Runtime::loadSource(std::string name,
                                                       std::string text) {
  TESSERA_ASSIGN_OR_RETURN(
      auto m, driver::SourceModule::parse(std::move(name), std::move(text)));
  return std::make_shared<Program>(std::move(m));
}

StatusOr<std::shared_ptr<Program>> Runtime::loadFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return notFound("cannot read '%s'", path.c_str());
  std::stringstream ss;
  ss << in.rdbuf();
  return loadSource(path, ss.str());
}

Status Runtime::deviceStatus(DeviceKind kind) const {
  switch (kind) {
  case DeviceKind::Cpu:
    return Status::ok();
  case DeviceKind::Sim:
    return Status::ok();
  case DeviceKind::Cuda: {
    auto dev = impl_->cuda();
    return dev.ok() ? Status::ok() : dev.status();
  }
  }
  return internalError("unknown device");
}

StatusOr<DeviceInfo> Runtime::deviceInfo(DeviceKind kind) const {
  TESSERA_RETURN_IF_ERROR(deviceStatus(kind));
  DeviceInfo d;
  d.kind = kind;
  if (kind == DeviceKind::Cuda) {
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, impl_->cuda());
    const cuda::CudaDeviceProperties &p = dev->properties();
    d.name = p.name;
    d.arch = p.archName();
    d.computeUnits = p.smCount;
    d.l2CacheBytes = p.l2CacheBytes;
    d.maxSharedPerBlock = p.maxSharedPerBlockOptin;
    d.clockMHz = p.clockRateKHz / 1000;
    d.memoryClockMHz = p.memoryClockRateKHz / 1000;
    d.memoryBusWidthBits = p.memoryBusWidthBits;
    return d;
  }
  d.name = hostCpuModelName();
  if (d.name.empty())
    d.name = "unknown CPU";
  d.arch = "host";
  d.computeUnits = int(impl_->pool.size());
  return d;
}

StatusOr<std::shared_ptr<Kernel>>
Runtime::compile(const Program &program, const std::string &kernel,
                 const CompileOptions &options, DeviceKind device) {
  TESSERA_RETURN_IF_ERROR(deviceStatus(device));
  const driver::SourceModule &m = program.module();
  Specialization spec;
  spec.constants = options.constants;
  spec.precision = options.precision;
  std::string key = m.name();
  key += '\0';
  key += std::to_string(m.sourceHash());
  key += '\0';
  key += kernel;
  key += '\0';
  key += spec.canonical();
  key += '\0';
  key += deviceKindName(device);
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (auto it = impl_->kernels.find(key); it != impl_->kernels.end()) {
      ++impl_->stats.hits;
      return it->second;
    }
  }
  const KernelInfo *info = m.findKernel(kernel);
  if (!info) {
    std::string names;
    for (const KernelInfo *k : m.kernels())
      names += (names.empty() ? "" : ", ") + k->name;
    return notFound("no kernel '%s' in %s (kernels: %s)", kernel.c_str(),
                    m.name().c_str(), names.empty() ? "none" : names.c_str());
  }
  auto impl = std::make_unique<Kernel::Impl>();
  impl->rt = impl_.get();
  impl->name = kernel;
  impl->info = info;
  impl->device = device;
  impl->spec = spec;
  // Keep the module alive as long as the kernel.
  impl->module = program.sharedModule();
  std::string policyError;
  auto policy = PrecisionPolicy::parse(spec.precision, &policyError);
  if (!policy)
    return invalidArgument("%s", policyError.c_str());
  impl->paramDTypes.assign(info->params.size(), DType::F32);
  for (size_t i = 0; i < info->params.size(); ++i) {
    const ParamInfo &p = info->params[i];
    if (p.kind != ParamKind::Constexpr)
      impl->launchParams.push_back((int)i);
    if (p.kind != ParamKind::Tensor)
      continue;
    if (auto d = parseDType(p.dtype)) {
      impl->paramDTypes[i] = *d;
    } else if (auto it = spec.constants.find(p.dtype);
               it != spec.constants.end() && it->second.isDType()) {
      impl->paramDTypes[i] = it->second.getDType();
    } else if (p.dtype == "dtype") {
      impl->paramDTypes[i] = policy->storage;
    } else if (p.dtype == "accum_dtype") {
      impl->paramDTypes[i] = policy->accum;
    } else {
      return invalidArgument("generic dtype '%s' of parameter '%s' is not "
                             "bound; pass it in the constants",
                             p.dtype.c_str(), p.name.c_str());
    }
  }
  // Compile the all-contiguous variant now (reports source errors early).
  uint64_t unitMask = 0;
  for (size_t i = 0; i < info->params.size(); ++i)
    if (info->params[i].kind == ParamKind::Tensor &&
        !info->params[i].dims.empty())
      unitMask |= uint64_t(1) << i;
  auto kernelObj = std::make_shared<Kernel>(std::move(impl));
  Kernel::Impl &ki = *kernelObj->impl_;
  TESSERA_RETURN_IF_ERROR(ki.compileFirst(unitMask));
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto [it, inserted] = impl_->kernels.emplace(key, kernelObj);
  ++impl_->stats.misses;
  impl_->stats.entries = impl_->kernels.size();
  return it->second;
}

StatusOr<std::shared_ptr<Kernel>>
Runtime::compileCuda(const CudaKernelSource &src, DeviceKind device) {
  if (device != DeviceKind::Cuda)
    return unimplemented("CUDA C++ kernel '%s' (%s) runs on the cuda device "
                         "only, not on %s",
                         src.kernel.c_str(), src.name.c_str(),
                         deviceKindName(device));
  if (src.kernel.empty())
    return invalidArgument("%s: no kernel name given", src.name.c_str());
  for (int b : src.block)
    if (b <= 0)
      return invalidArgument("%s: block dimensions must be positive",
                             src.name.c_str());
  if (int64_t(src.block[0]) * src.block[1] * src.block[2] > 1024)
    return invalidArgument("%s: a block of %d x %d x %d threads exceeds 1024",
                           src.name.c_str(), src.block[0], src.block[1],
                           src.block[2]);
  // The signature and grid go through the tile-language front end, which
  // gives the launch-time checks and the grid evaluation of tile kernels.
  const std::string ident = "cuda_kernel";
  std::string text = (src.grid.empty() ? std::string("@kernel\n")
                                       : "@kernel(grid=" + src.grid + ")\n") +
                     "def " + ident + "(" + src.signature + "):\n    pass\n";
  auto m = driver::SourceModule::parse(src.name + " (signature)", text);
  if (!m.ok())
    return invalidArgument("signature of CUDA kernel '%s': %s",
                           src.kernel.c_str(), m.status().message().c_str());
  std::shared_ptr<const driver::SourceModule> module = std::move(*m);
  const KernelInfo *info = module->findKernel(ident);
  if (!info)
    return internalError("signature module without its kernel");

  // Compile first (for the device's architecture when there is one), so
  // that source errors surface even without a GPU.
  auto dev = impl_->cuda();
  cuda::NvrtcOptions o;
  o.arch = dev.ok() ? (*dev)->properties().archName() : "sm_90a";
  o.options = src.options;
  o.headers = src.headers;
  o.nameExpressions = {src.kernel};
  TESSERA_ASSIGN_OR_RETURN(cuda::NvrtcResult compiled,
                           cuda::compileCuda(src.source, src.name, o));
  if (!dev.ok())
    return dev.status();

  auto impl = std::make_unique<Kernel::Impl>();
  impl->rt = impl_.get();
  impl->name = ident;
  impl->info = info;
  impl->device = DeviceKind::Cuda;
  impl->module = module;
  impl->cudaBlock = src.block;
  impl->times.codegen = compiled.seconds * 1e3;
  impl->paramDTypes.assign(info->params.size(), DType::F32);
  for (size_t i = 0; i < info->params.size(); ++i) {
    const ParamInfo &p = info->params[i];
    if (p.kind == ParamKind::Constexpr)
      return invalidArgument("signature of CUDA kernel '%s': constexpr "
                             "parameter '%s' (pass it as an NVRTC -D option)",
                             src.kernel.c_str(), p.name.c_str());
    impl->launchParams.push_back(int(i));
    if (p.kind != ParamKind::Tensor)
      continue;
    auto d = parseDType(p.dtype);
    if (!d)
      return invalidArgument("signature of CUDA kernel '%s': parameter '%s' "
                             "needs a concrete dtype, not '%s'",
                             src.kernel.c_str(), p.name.c_str(),
                             p.dtype.c_str());
    impl->paramDTypes[i] = *d;
  }
  cuda::CudaDevice *device0 = *dev;
  auto exe = std::make_shared<CudaExecutable>();
  const std::string &image =
      compiled.cubin.empty() ? compiled.ptx : compiled.cubin;
  TESSERA_ASSIGN_OR_RETURN(exe->module, device0->loadModule(image));
  std::string lowered = src.kernel;
  if (auto it = compiled.loweredNames.find(src.kernel);
      it != compiled.loweredNames.end())
    lowered = it->second;
  TESSERA_ASSIGN_OR_RETURN(exe->function, exe->module.kernel(lowered));
  exe->blockSize = src.block[0] * src.block[1] * src.block[2];
  exe->sharedBytes = src.dynamicSharedBytes;
  if (exe->sharedBytes > 48 * 1024)
    TESSERA_RETURN_IF_ERROR(device0->setMaxDynamicSharedMemory(
        exe->function, int(exe->sharedBytes)));
  impl->cudaSource = exe;
  return std::make_shared<Kernel>(std::move(impl));
}

CompileCacheStats Runtime::cacheStats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

//===----------------------------------------------------------------------===//
// Device memory
//===----------------------------------------------------------------------===//

struct DeviceBuffer::Impl {
  DeviceKind device = DeviceKind::Cpu;
  size_t bytes = 0;
  /// cpu and sim: 64-byte aligned host memory.
  struct Free {
    void operator()(void *p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> host;
  /// cuda: the device allocation and the device that copies to and from it.
  cuda::DeviceBuffer deviceMemory;
  cuda::CudaDevice *cudaDevice = nullptr;

  void *address() const {
    return device == DeviceKind::Cuda
               ? reinterpret_cast<void *>(uintptr_t(deviceMemory.address()))
               : host.get();
  }
  Status checkRange(size_t n, size_t offset) const {
    if (offset > bytes || n > bytes - offset)
      return invalidArgument("a copy of %zu bytes at offset %zu is outside "
                             "the %zu-byte %s buffer",
                             n, offset, bytes, deviceKindName(device));
    return Status::ok();
  }
};

DeviceBuffer::DeviceBuffer() = default;
DeviceBuffer::DeviceBuffer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
DeviceBuffer::DeviceBuffer(DeviceBuffer &&) noexcept = default;
DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&) noexcept = default;
DeviceBuffer::~DeviceBuffer() = default;

DeviceKind DeviceBuffer::device() const {
  return impl_ ? impl_->device : DeviceKind::Cpu;
}
size_t DeviceBuffer::bytes() const { return impl_ ? impl_->bytes : 0; }
void *DeviceBuffer::data() const { return impl_ ? impl_->address() : nullptr; }

Status DeviceBuffer::copyFrom(const void *host, size_t bytes, size_t offset) {
  if (!impl_)
    return failedPrecondition("copy into an empty DeviceBuffer");
  TESSERA_RETURN_IF_ERROR(impl_->checkRange(bytes, offset));
  if (!bytes)
    return Status::ok();
  if (impl_->device != DeviceKind::Cuda) {
    std::memcpy(static_cast<char *>(impl_->host.get()) + offset, host, bytes);
    return Status::ok();
  }
  return impl_->cudaDevice->copyToDevice(impl_->deviceMemory.address() + offset,
                                         host, bytes);
}

Status DeviceBuffer::copyTo(void *host, size_t bytes, size_t offset) const {
  if (!impl_)
    return failedPrecondition("copy from an empty DeviceBuffer");
  TESSERA_RETURN_IF_ERROR(impl_->checkRange(bytes, offset));
  if (!bytes)
    return Status::ok();
  if (impl_->device != DeviceKind::Cuda) {
    std::memcpy(host, static_cast<const char *>(impl_->host.get()) + offset,
                bytes);
    return Status::ok();
  }
  return impl_->cudaDevice->copyToHost(
      host, impl_->deviceMemory.address() + offset, bytes);
}

StatusOr<TensorView> DeviceBuffer::view(DType dtype,
                                        std::vector<int64_t> shape) const {
  if (!impl_)
    return failedPrecondition("view of an empty DeviceBuffer");
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return invalidArgument("negative dimension %lld in a view", (long long)d);
    if (d && n > std::numeric_limits<int64_t>::max() / d)
      return invalidArgument("view shape overflows");
    n *= d;
  }
  int64_t elem = dtypeSize(dtype);
  if (n > int64_t(impl_->bytes) / elem)
    return invalidArgument(
        "a %s view of %lld elements needs %lld bytes; the buffer has %zu",
        dtypeName(dtype), (long long)n, (long long)(n * elem), impl_->bytes);
  TensorView v =
      TensorView::contiguous(impl_->address(), dtype, std::move(shape));
  v.device = impl_->device;
  return v;
}

StatusOr<double> Runtime::timeBatch(DeviceKind device,
                                    const std::function<Status()> &enqueue,
                                    int launches, bool flushCaches) {
  if (launches < 1)
    return invalidArgument("timeBatch: a batch needs at least one call, got %d",
                           launches);
  if (!enqueue)
    return invalidArgument("timeBatch: nothing to time");
  if (device == DeviceKind::Cuda) {
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, impl_->cuda());
    return impl_->timeCudaBatch(dev, launches, flushCaches, enqueue);
  }
  TESSERA_RETURN_IF_ERROR(deviceStatus(device));
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i)
    TESSERA_RETURN_IF_ERROR(enqueue());
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
             .count() /
         double(launches);
}

StatusOr<DeviceBuffer> Runtime::allocate(DeviceKind device, size_t bytes) {
  auto impl = std::make_unique<DeviceBuffer::Impl>();
  impl->device = device;
  impl->bytes = bytes;
  if (device == DeviceKind::Cuda) {
    TESSERA_ASSIGN_OR_RETURN(impl->cudaDevice, impl_->cuda());
    TESSERA_ASSIGN_OR_RETURN(
        impl->deviceMemory,
        impl->cudaDevice->allocate(std::max<size_t>(bytes, 1)));
    return DeviceBuffer(std::move(impl));
  }
  if (bytes > std::numeric_limits<size_t>::max() - 64)
    return resourceExhausted("cannot allocate %zu bytes", bytes);
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded);
  if (!p)
    return resourceExhausted("cannot allocate %zu bytes of %s memory", bytes,
                             deviceKindName(device));
  impl->host.reset(p);
  return DeviceBuffer(std::move(impl));
}
