//===- SuiteCommon.cpp - What the suites of tessera-bench share -----------===//
//
// runPlan: the configuration (tuning cache, tuned now, or defaults), the
// compile, the GPU artifacts (PTX/cubin compile time, resources and
// occupancy for the target architecture), validation under the tolerance
// table, sampling, work counting, roofline and the baseline.
//
//===----------------------------------------------------------------------===//

#include "SuiteCommon.h"

#include "tessera/Driver/Driver.h"
#include "tessera/Target/CUDA/Occupancy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <set>
#include <sstream>

using namespace tessera;
using namespace tessera::bench;

StatusOr<std::shared_ptr<Program>>
RunContext::program(const std::string &family) {
  if (auto it = programs.find(family); it != programs.end())
    return it->second;
  TESSERA_ASSIGN_OR_RETURN(auto p,
                           rt->loadFile(kernelsDir + "/" + family + ".tile"));
  programs[family] = p;
  return p;
}

std::shared_ptr<HostArray> HostArray::make(DType dtype, int64_t numel) {
  auto a = std::make_shared<HostArray>();
  a->dtype = dtype;
  a->numel = numel;
  a->bytes.assign(storageBytes(dtype, size_t(numel)), 0);
  return a;
}

void HostArray::fillUniform(uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  for (int64_t i = 0; i < numel; ++i)
    storeFromDouble(data(), dtype, size_t(i), d(rng));
}

void HostArray::fill(double v) {
  for (int64_t i = 0; i < numel; ++i)
    storeFromDouble(data(), dtype, size_t(i), v);
}

std::vector<float> HostArray::toF32() const {
  std::vector<float> out(static_cast<size_t>(numel));
  if (dtype == DType::F32) {
    std::copy_n(reinterpret_cast<const float *>(data()), numel, out.data());
    return out;
  }
  for (int64_t i = 0; i < numel; ++i)
    out[size_t(i)] = float(loadAsDouble(data(), dtype, size_t(i)));
  return out;
}

std::vector<double> HostArray::toF64() const {
  std::vector<double> out(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i)
    out[size_t(i)] = loadAsDouble(data(), dtype, size_t(i));
  return out;
}

TensorView HostArray::view(std::vector<int64_t> shape) {
  return TensorView::contiguous(data(), dtype, std::move(shape));
}

double bench::roundTo(DType dtype, double v) {
  uint8_t buf[8] = {0};
  storeFromDouble(buf, dtype, 0, v);
  return loadAsDouble(buf, dtype, 0);
}

DType bench::storageOf(const std::string &precision) {
  std::string error;
  auto p = PrecisionPolicy::parse(precision, &error);
  return p ? p->storage : DType::F32;
}

ComputePath bench::pathOf(const std::string &precision, DeviceKind device) {
  return computePathForPrecision(precision, device == DeviceKind::Cuda)
      .value_or(ComputePath::Fp32);
}

std::string bench::shortPrecision(const std::string &precision) {
  return precision.substr(0, precision.find('@'));
}

std::string bench::firstLine(const std::string &s) {
  return s.substr(0, s.find('\n'));
}

StatusOr<std::string> bench::canonicalPrecision(const std::string &text) {
  std::string error;
  auto p = PrecisionPolicy::parse(text, &error);
  if (!p)
    return invalidArgument("precision '%s': %s", text.c_str(), error.c_str());
  if (p->tf32Dots)
    return std::string("tf32");
  std::string storage = dtypeName(p->storage);
  // The suites' spellings: fp32/fp16/bf16/fp8_*/fp6_*/fp4_*, accumulators
  // explicit for the 8-bit and packed types (as the seed's policies),
  // implied f32 for the others.
  if (storage == "f32")
    storage = "fp32";
  else if (storage == "f16")
    storage = "fp16";
  if (!isFloatDType(p->storage))
    return invalidArgument("precision '%s': the suites run floating-point "
                           "policies only",
                           text.c_str());
  if (p->accum != DType::F32)
    return invalidArgument("precision '%s': the suites accumulate in fp32",
                           text.c_str());
  if (p->storage == DType::F8E4M3 || p->storage == DType::F8E5M2 ||
      isPackedDType(p->storage))
    return storage + "@accum(fp32)";
  return storage;
}

StatusOr<std::vector<std::map<std::string, int64_t>>>
bench::parseSizeList(const std::string &text) {
  std::vector<std::map<std::string, int64_t>> out;
  std::stringstream groups(text);
  std::string group;
  while (std::getline(groups, group, ';')) {
    if (group.find_first_not_of(" ") == std::string::npos)
      continue;
    std::map<std::string, int64_t> dims;
    std::stringstream items(group);
    std::string item;
    while (std::getline(items, item, ',')) {
      auto trim = [](std::string s) {
        s.erase(0, s.find_first_not_of(' '));
        s.erase(s.find_last_not_of(' ') + 1);
        return s;
      };
      item = trim(item);
      if (item.empty())
        continue;
      auto eq = item.find('=');
      std::string name = trim(item.substr(0, eq));
      if (eq == std::string::npos || name.empty())
        return invalidArgument("--sizes: '%s' is not NAME=VALUE", item.c_str());
      std::string value = trim(item.substr(eq + 1));
      char *end = nullptr;
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || v <= 0)
        return invalidArgument("--sizes: '%s' needs a positive integer",
                               item.c_str());
      dims[name] = v;
    }
    if (!dims.empty())
      out.push_back(std::move(dims));
  }
  if (out.empty())
    return invalidArgument("--sizes: no sizes in '%s'", text.c_str());
  return out;
}

CaseSpec bench::makeCase(const std::string &suite, const std::string &kernel,
                         const std::string &precision, const std::string &label,
                         std::map<std::string, int64_t> dims) {
  CaseSpec c;
  c.suite = suite;
  c.kernel = kernel;
  c.precision = precision;
  c.name = suite + " " + shortPrecision(precision) + " " + label;
  for (const auto &[k, v] : dims)
    c.params[k] = std::to_string(v);
  c.dims = std::move(dims);
  return c;
}

CaseSpec bench::seedSimtVariant(CaseSpec c) {
  c.seedSimt = true;
  c.name += " [seed SIMT]";
  c.params["form"] = "seed SIMT";
  return c;
}

void bench::addSeedSimtVariants(std::vector<CaseSpec> &cases,
                                const CaseRequest &req) {
  if (req.sizes == SizeSet::Full || req.sizes == SizeSet::Gpu)
    return;
  std::vector<CaseSpec> out;
  std::set<std::string> seen;
  for (const CaseSpec &c : cases) {
    out.push_back(c);
    if (req.device != DeviceKind::Cpu || req.sizes == SizeSet::Custom ||
        seen.insert(c.suite + " " + c.kernel + " " + c.precision).second)
      out.push_back(seedSimtVariant(c));
  }
  cases = std::move(out);
}

std::string bench::dimsText(const std::vector<int64_t> &dims) {
  std::string s;
  for (int64_t d : dims)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

std::string bench::bytesText(int64_t bytes) {
  if (bytes >= (int64_t(1) << 20))
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

bool bench::matches(const std::map<std::string, int64_t> &dims,
                    std::initializer_list<const char *> required,
                    std::initializer_list<const char *> optional) {
  size_t seen = 0;
  for (const char *r : required) {
    if (!dims.count(r))
      return false;
    ++seen;
  }
  for (const char *o : optional)
    seen += dims.count(o);
  return seen == dims.size();
}

int64_t bench::dimOr(const std::map<std::string, int64_t> &dims,
                     const std::string &name, int64_t otherwise) {
  auto it = dims.find(name);
  return it == dims.end() ? otherwise : it->second;
}

TensorView bench::spanView(std::vector<float> &v) {
  return TensorView::contiguous(v.data(), DType::F32,
                                {static_cast<int64_t>(v.size())});
}

CaseResult bench::startResult(const RunContext &ctx, const CaseSpec &spec) {
  CaseResult r;
  r.suite = spec.suite;
  r.kernel = spec.kernel;
  r.name = spec.name;
  r.device = deviceKindName(ctx.device);
  r.precision = spec.precision;
  r.params = spec.params;
  return r;
}

namespace {

/// The GPU artifacts of the case's specialisation for `arch`: PTX and
/// cubin compile times, registers, shared memory, spills and occupancy.
/// A failure is recorded as a resource note, not as a case failure (the
/// run device may be cpu, where the GPU path is informative only).
void gpuArtifacts(RunContext &ctx, const Program &prog, const Kernel &kernel,
                  const std::vector<Arg> &args, CaseResult &r) {
  Specialization spec = kernel.specialization();
  const KernelInfo &info = kernel.info();
  size_t argIndex = 0;
  for (const ParamInfo &p : info.params) {
    if (p.kind == ParamKind::Constexpr)
      continue;
    if (argIndex >= args.size())
      break;
    const Arg &a = args[argIndex++];
    if (p.kind != ParamKind::Tensor)
      continue;
    if (const TensorView *t = a.tensor())
      if (t->strides.empty() || t->strides.back() == 1)
        spec.unitStrideTensors.push_back(p.name);
  }
  // The kernel compiled (a case's seed SIMT form is another kernel).
  const std::string &name = info.name;
  std::string key =
      prog.name() + "\n" + name + "\n" + spec.canonical() + "\n" + ctx.gpuArch;
  auto [it, fresh] = ctx.gpuArtifacts.try_emplace(key);
  RunContext::GpuArtifacts &g = it->second;
  if (fresh) {
    driver::StageTimes times;
    driver::GpuEmitOptions gpu;
    gpu.arch = ctx.gpuArch;
    driver::GpuResources res;
    // The compiler's own view of the source (the runtime's is internal).
    auto module =
        driver::SourceModule::parse(prog.name(), std::string(prog.source()));
    auto cubin = module.ok()
                     ? driver::emit(**module, name, spec,
                                    driver::EmitKind::Cubin, &times, gpu, &res)
                     : StatusOr<std::string>(module.status());
    if (!cubin.ok()) {
      g.note = ctx.gpuArch + ": " + firstLine(cubin.status().message());
    } else {
      g.ptxMs = times.lowering + times.codegen;
      g.cubinMs = times.assemble;
      int64_t shared = res.sharedBytes + res.tileSharedBytes;
      g.resources = {{"registers", res.registers},
                     {"sharedBytes", double(shared)},
                     {"localBytes", double(res.localBytes)},
                     {"spillBytes", double(res.spillStores + res.spillLoads)},
                     {"threadsPerBlock", res.blockSize}};
      if (auto limits = cuda::smLimits(ctx.gpuArch)) {
        cuda::Occupancy o =
            cuda::occupancy(*limits, res.blockSize, res.registers, shared);
        g.resources["occupancy"] = o.occupancy;
        g.resources["blocksPerSm"] = o.blocksPerSm;
      }
    }
  }
  if (!g.note.empty()) {
    r.resourcesNote = g.note;
    return;
  }
  r.compile.ptx = g.ptxMs;
  r.compile.cubin = g.cubinMs;
  r.resources = g.resources;
  r.resourcesArch = ctx.gpuArch;
}

/// One launch of `kernel` with the sim counters; its figures go to
/// `r.counters`.
Status countCase(Kernel &kernel, const std::vector<Arg> &args, CaseResult &r) {
  LaunchOptions counting;
  counting.counters = true;
  // The time of the grid alone (the counting variant is compiled first).
  TESSERA_ASSIGN_OR_RETURN(double ms,
                           kernel.launchTimed(args, counting, false));
  TESSERA_ASSIGN_OR_RETURN(SimCounters c, kernel.lastCounters());
  CaseCounters k;
  k.launchMs = ms;
  k.globalRequests = c.globalRequests;
  k.globalSectors = c.globalSectors;
  k.globalIdealSectors = c.globalIdealSectors;
  k.globalBytesMoved = c.globalBytesMoved;
  k.globalUsefulBytes = c.globalUsefulBytes;
  k.coalescingEfficiency = c.coalescingEfficiency;
  k.sharedRequests = c.sharedRequests;
  k.sharedWavefronts = c.sharedWavefronts;
  k.sharedIdealWavefronts = c.sharedIdealWavefronts;
  k.barriersPerBlock = c.barriersPerBlock;
  k.maxBarriersPerBlock = c.maxBarriersPerBlock;
  k.divergentBranches = c.divergentBranches;
  k.warpBranchInstances = c.warpBranchInstances;
  for (const SimAccessCounters &a : c.accesses) {
    CaseCounters::Site s;
    s.space = a.space == SimAccessCounters::Space::Shared ? "shared" : "global";
    s.kind = a.kind == SimAccessCounters::Kind::Store    ? "store"
             : a.kind == SimAccessCounters::Kind::Atomic ? "atomic"
                                                         : "load";
    s.op = a.op;
    s.location = a.location;
    s.widthBytes = a.widthBytes;
    s.requests = a.requests;
    s.sectors = a.sectors;
    s.idealSectors = a.idealSectors;
    s.usefulBytes = a.usefulBytes;
    s.wavefronts = a.wavefronts;
    s.idealWavefronts = a.idealWavefronts;
    k.sites.push_back(std::move(s));
  }
  for (const SimBranchCounters &b : c.branches)
    k.branches.push_back({b.op, b.location, b.instances, b.divergent});
  r.counters = std::move(k);
  return okStatus();
}

} // namespace

int bench::launchesFor(double oneLaunchMs) {
  if (!(oneLaunchMs > 0) || !std::isfinite(oneLaunchMs))
    return kMaxLaunchesPerSample;
  double n = std::ceil(kBatchTargetMs / oneLaunchMs);
  return int(std::clamp(n, 1.0, double(kMaxLaunchesPerSample)));
}

namespace {
/// The host bytes [begin, end) a strided view touches; nullopt for an
/// empty view.
std::optional<std::pair<uintptr_t, uintptr_t>> hostRange(const TensorView &t) {
  std::vector<int64_t> strides = t.strides;
  if (strides.size() != t.shape.size())
    strides = TensorView::contiguous(nullptr, t.dtype, t.shape).strides;
  int64_t lo = 0, hi = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] <= 0)
      return std::nullopt;
    int64_t span = (t.shape[d] - 1) * strides[d];
    (span < 0 ? lo : hi) += span;
  }
  // Bytes, rounded out to whole bytes for the packed types.
  const int64_t bits = int64_t(dtypeBits(t.dtype));
  uintptr_t base = reinterpret_cast<uintptr_t>(t.data);
  return std::make_pair(base + uintptr_t(lo * bits / 8),
                        base + uintptr_t(((hi + 1) * bits + 7) / 8));
}
} // namespace

StatusOr<std::unique_ptr<DeviceMirror>>
DeviceMirror::create(Runtime &rt, DeviceKind device,
                     const std::vector<const std::vector<Arg> *> &hostLists) {
  std::unique_ptr<DeviceMirror> m(new DeviceMirror());
  // The host ranges of every host tensor, merged where they overlap.
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (const std::vector<Arg> *list : hostLists)
    for (const Arg &a : *list)
      if (const TensorView *t = a.tensor(); t && !t->device && t->data)
        if (auto r = hostRange(*t))
          ranges.push_back(*r);
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uintptr_t, uintptr_t>> merged;
  for (const auto &r : ranges) {
    if (!merged.empty() && r.first < merged.back().second)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  for (const auto &[begin, end] : merged) {
    Copy c;
    c.host = reinterpret_cast<char *>(begin);
    c.bytes = size_t(end - begin);
    TESSERA_ASSIGN_OR_RETURN(c.buffer, rt.allocate(device, c.bytes));
    m->copies_.push_back(std::move(c));
  }
  // The same lists, on the copies.
  for (const std::vector<Arg> *list : hostLists) {
    std::vector<Arg> out = *list;
    for (Arg &a : out) {
      const TensorView *t = a.tensor();
      if (!t || t->device || !t->data)
        continue;
      auto r = hostRange(*t);
      if (!r)
        continue;
      // The merged range that holds this view: the last starting at or
      // before its first byte.
      auto it = std::upper_bound(
          merged.begin(), merged.end(), r->first,
          [](uintptr_t x, const auto &range) { return x < range.first; });
      const Copy &c = m->copies_[size_t(it - merged.begin()) - 1];
      TensorView dv = *t;
      uintptr_t offset = reinterpret_cast<uintptr_t>(t->data) -
                         reinterpret_cast<uintptr_t>(c.host);
      dv.data = reinterpret_cast<void *>(
          reinterpret_cast<uintptr_t>(c.buffer.data()) + offset);
      dv.device = device;
      a = Arg(dv);
    }
    m->lists_.push_back(std::move(out));
  }
  TESSERA_RETURN_IF_ERROR(m->upload());
  return m;
}

Status DeviceMirror::upload() {
  for (Copy &c : copies_)
    TESSERA_RETURN_IF_ERROR(c.buffer.copyFrom(c.host, c.bytes));
  return okStatus();
}

Status DeviceMirror::download() {
  for (Copy &c : copies_)
    TESSERA_RETURN_IF_ERROR(c.buffer.copyTo(c.host, c.bytes));
  return okStatus();
}

std::function<StatusOr<Plan::TimedBatch>()>
bench::nvrtcBaseline(RunContext &ctx, CudaKernelSource source,
                     std::vector<Arg> args, std::array<int64_t, 3> grid) {
  return [&ctx, source = std::move(source), args = std::move(args),
          grid]() -> StatusOr<Plan::TimedBatch> {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Kernel> k,
                             ctx.rt->compileCuda(source, DeviceKind::Cuda));
    TESSERA_ASSIGN_OR_RETURN(
        std::unique_ptr<DeviceMirror> m,
        DeviceMirror::create(*ctx.rt, DeviceKind::Cuda, {&args}));
    std::shared_ptr<DeviceMirror> mirror = std::move(m);
    LaunchOptions lo;
    lo.grid = grid;
    const bool flush = ctx.flushCaches;
    return Plan::TimedBatch([k, mirror, lo, flush](int launches) {
      return k->launchTimedBatch(mirror->args(0), lo, launches, flush);
    });
  };
}

void bench::runPlan(RunContext &ctx, const CaseSpec &spec, Plan &plan,
                    CaseResult &r) {
  auto fail = [&](const std::string &why) {
    r.passed = false;
    r.failure = why;
  };
  auto prog = ctx.program(plan.family);
  if (!prog.ok())
    return fail(firstLine(prog.status().toString()));
  // On cuda (and sim, which runs the same path on host memory) the data
  // live on the device for the whole case: copied there once from their
  // initial state, copied back once after the validation run, and launched
  // on in place by every sample.
  const bool onDevice = ctx.device != DeviceKind::Cpu;
  std::vector<const std::vector<Arg> *> lists{&plan.args};
  for (auto &[name, args] : plan.after)
    lists.push_back(&args);
  std::unique_ptr<DeviceMirror> mirror;
  if (onDevice) {
    plan.reset();
    auto m = DeviceMirror::create(*ctx.rt, ctx.device, lists);
    if (!m.ok())
      return fail("device buffers: " + firstLine(m.status().toString()));
    mirror = std::move(*m);
  }
  auto argsOf = [&](size_t list) -> const std::vector<Arg> & {
    return mirror ? mirror->args(list) : *lists[list];
  };
  // The configuration: a point of the autotune space (--configs all), the
  // tuning cache (cached), tuned now (on), or the kernel's defaults (off);
  // the case's fixed constants always apply.
  std::map<std::string, ConstValue> consts;
  r.configSource = "default";
  const KernelInfo *info = (*prog)->findKernel(plan.kernel);
  if (!info)
    return fail("no kernel '" + plan.kernel + "' in " + plan.family);
  if (!spec.config.empty()) {
    consts = spec.config;
    r.configSource = "space";
  } else if (ctx.tune != TuneMode::Off && info->autotune) {
    autotune::TunedKernelOptions ko;
    ko.tune.device = ctx.device;
    ko.tune.cacheDir = ctx.cacheDir;
    ko.tune.precision = plan.precision;
    ko.tune.fixed = plan.fixed;
    ko.tune.budget.evaluations = 16;
    ko.onMiss = ctx.tune == TuneMode::On && ctx.device != DeviceKind::Sim
                    ? autotune::MissPolicy::Tune
                    : autotune::MissPolicy::Nearest;
    auto tk = autotune::TunedKernel::create(*ctx.rt, *prog, plan.kernel, ko);
    if (!tk.ok())
      return fail(firstLine(tk.status().toString()));
    auto t0 = std::chrono::steady_clock::now();
    auto how = (*tk)->resolve(argsOf(0));
    if (!how.ok())
      return fail("tuning: " + firstLine(how.status().toString()));
    if (how->second == "tuned")
      r.compile.tuning = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
    consts = how->first;
    r.configSource = how->second;
  }
  for (const auto &[n, v] : plan.fixed)
    consts[n] = v;
  for (const auto &[n, v] : consts)
    if (!plan.fixed.count(n))
      r.config[n] = v.toString();
  CompileOptions co;
  co.constants = consts;
  co.precision = plan.precision;
  auto kernel = ctx.rt->compile(**prog, plan.kernel, co, ctx.device);
  if (!kernel.ok() && !spec.config.empty() &&
      kernel.status().code() == StatusCode::kResourceExhausted) {
    // A point of the space whose tiles do not fit the device (its shared
    // memory): no fault of the kernel, reported but not counted as failed.
    r.skipped = true;
    r.failure = "the configuration does not fit the device: " +
                firstLine(kernel.status().message());
    return;
  }
  if (!kernel.ok())
    return fail(firstLine(kernel.status().toString()));
  const CompileTimes &ct = (*kernel)->compileTimes();
  r.compile.parse = ct.parse;
  r.compile.sema = ct.sema;
  r.compile.tilePasses = ct.tilePasses;
  r.compile.lowering = ct.lowering;
  r.compile.codegen = ct.codegen;
  if (!ctx.gpuArch.empty())
    gpuArtifacts(ctx, **prog, **kernel, plan.args, r);
  std::vector<std::pair<std::shared_ptr<Kernel>, size_t>> extra;
  for (size_t i = 0; i < plan.after.size(); ++i) {
    CompileOptions eo;
    eo.precision = plan.precision;
    auto k = ctx.rt->compile(**prog, plan.after[i].first, eo, ctx.device);
    if (!k.ok())
      return fail(firstLine(k.status().toString()));
    extra.push_back({*k, i + 1});
  }
  // `launches` launches of the kernel back to back, then as many of each
  // extra kernel; the time of one of each, summed. On cuda the L2 is
  // flushed before the kernel's batch (the cpu cache is flushed by the
  // sampler's callback).
  const bool flushGpu = ctx.flushCaches && ctx.device == DeviceKind::Cuda;
  auto launchBatch = [&](int launches) -> StatusOr<double> {
    TESSERA_ASSIGN_OR_RETURN(double ms, (*kernel)->launchTimedBatch(
                                            argsOf(0), {}, launches, flushGpu));
    for (auto &[k, list] : extra) {
      TESSERA_ASSIGN_OR_RETURN(
          double more, k->launchTimedBatch(argsOf(list), {}, launches, false));
      ms += more;
    }
    return ms;
  };

  // Validation: one run from the initial state against the reference.
  plan.reset();
  if (mirror && r.configSource == "tuned") // tuning launched on the data
    if (Status s = mirror->upload(); !s.ok())
      return fail("device buffers: " + firstLine(s.toString()));
  if (auto s = launchBatch(1); !s.ok())
    return fail("launch failed: " + firstLine(s.status().toString()));
  if (mirror)
    if (Status s = mirror->download(); !s.ok())
      return fail("device buffers: " + firstLine(s.toString()));
  std::vector<double> got = plan.result();
  plan.reset();
  std::vector<double> want = plan.expected();
  for (double &w : want)
    w = roundTo(plan.outDType, w);
  Tolerance tol = plan.tolerance ? *plan.tolerance
                                 : toleranceFor(plan.outDType, plan.op,
                                                plan.reductionLength);
  int64_t bad = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    double e = std::fabs(got[i] - want[i]);
    if (std::isfinite(e)) {
      r.maxAbsError = std::max(r.maxAbsError, e);
      if (want[i] != 0)
        r.maxRelError = std::max(r.maxRelError, e / std::fabs(want[i]));
    }
    if (!isClose(got[i], want[i], tol))
      ++bad;
  }
  if (got.size() != want.size() || bad) {
    char msg[200];
    std::snprintf(msg, sizeof(msg),
                  "wrong result: %lld of %zu elements outside atol %.3g / "
                  "rtol %.3g (max abs error %.3g)",
                  static_cast<long long>(bad), want.size(), tol.atol, tol.rtol,
                  r.maxAbsError);
    return fail(msg);
  }
  if (ctx.counters) {
    plan.reset();
    if (Status s = countCase(**kernel, plan.args, r); !s.ok())
      return fail("counting launch failed: " + firstLine(s.toString()));
  }

  auto flush = [&] {
    if (ctx.flushCaches && ctx.cpuFlusher)
      ctx.cpuFlusher->flush();
  };
  // On cuda (and sim) a sample is a batch of launches lasting
  // kBatchTargetMs or more, sized from one timed launch; on cpu one launch
  // after a flush of the last-level cache.
  int launches = 1;
  if (onDevice) {
    auto one = launchBatch(1);
    if (!one.ok())
      return fail(firstLine(one.status().toString()));
    launches = launchesFor(*one);
  }
  auto run = sample(
      ctx.sampler, [&] { return launchBatch(launches); }, flush);
  if (!run.ok())
    return fail(firstLine(run.status().toString()));
  r.launchesPerSample = launches;
  r.samples = run->samples;
  r.stopReason = run->stopReason;
  r.stats = computeStats(r.samples);
  r.work = plan.work;
  r.tflops = achievedTflops(r.work, r.stats.median);
  r.gbs = achievedGBs(r.work, r.stats.median);
  if (ctx.peaks) {
    Roofline rl = roofline(r.work, r.stats.median, *ctx.peaks, plan.path);
    if (rl.valid)
      r.rooflineEfficiency = rl.efficiency;
    r.computePath = std::string(computePathName(plan.path));
  }
  // Host baselines beside cpu results, device baselines beside cuda ones.
  auto addBaseline = [&](const std::string &name, const SampleRun &b,
                         int launchesPerSample) {
    CaseResult::Baseline base;
    base.name = name;
    base.launchesPerSample = launchesPerSample;
    base.samples = b.samples;
    base.stats = computeStats(base.samples);
    base.speedup = r.stats.median > 0 ? base.stats.median / r.stats.median : 0;
    r.baseline = base;
  };
  if (plan.deviceBaseline && ctx.device == DeviceKind::Cuda &&
      ctx.baseline != BaselineChoice::None) {
    // Timed like the kernel: batches sized from one timed call, made after
    // a first call (which may load code or set up the library).
    auto call = plan.deviceBaseline();
    StatusOr<SampleRun> b = call.status();
    int baseLaunches = 1;
    if (call.ok()) {
      auto one = (*call)(1);
      if (one.ok())
        one = (*call)(1);
      if (one.ok()) {
        baseLaunches = launchesFor(*one);
        b = sample(
            ctx.sampler, [&] { return (*call)(baseLaunches); }, [] {});
      } else {
        b = one.status();
      }
    }
    if (b.ok())
      addBaseline(plan.deviceBaselineName, *b, baseLaunches);
    else
      std::fprintf(stderr, "tessera-bench: note: %s: no %s baseline: %s\n",
                   r.name.c_str(), plan.deviceBaselineName.c_str(),
                   firstLine(b.status().toString()).c_str());
  }
  if (plan.baseline && ctx.device == DeviceKind::Cpu &&
      ctx.baseline != BaselineChoice::None) {
    auto timeBaseline = [&]() -> StatusOr<double> {
      auto t0 = std::chrono::steady_clock::now();
      plan.baseline();
      return std::chrono::duration<double, std::milli>(
                 std::chrono::steady_clock::now() - t0)
          .count();
    };
    auto b = sample(ctx.sampler, timeBaseline, flush);
    if (b.ok())
      addBaseline(plan.baselineName, *b, 1);
  }
  r.passed = true;
}

std::vector<CaseSpec> bench::withEveryConfig(RunContext &ctx,
                                             const Suite &suite,
                                             std::vector<CaseSpec> cases) {
  if (suite.family.empty())
    return cases;
  auto prog = ctx.program(suite.family);
  if (!prog.ok())
    return cases;
  std::vector<CaseSpec> out;
  for (CaseSpec &c : cases) {
    const KernelInfo *info = (*prog)->findKernel(c.kernel);
    if (!info || !info->autotune || info->autotune->space.empty() ||
        std::any_of(info->autotune->space.begin(), info->autotune->space.end(),
                    [](const auto &p) { return p.second.empty(); })) {
      out.push_back(std::move(c));
      continue;
    }
    const auto &space = info->autotune->space;
    std::vector<size_t> index(space.size(), 0);
    for (bool more = true; more;) {
      std::map<std::string, ConstValue> point;
      std::string label;
      for (size_t d = 0; d < space.size(); ++d) {
        const ConstValue &v = space[d].second[index[d]];
        point[space[d].first] = v;
        label += (d ? "," : "") + space[d].first + "=" + v.toString();
      }
      auto ok = (*prog)->satisfiesRestrictions(c.kernel, point);
      if (ok.ok() && *ok) {
        CaseSpec e = c;
        e.name += " [" + label + "]";
        e.config = std::move(point);
        out.push_back(std::move(e));
      }
      // The next point, last parameter fastest.
      size_t d = space.size();
      while (d > 0 && ++index[d - 1] == space[d - 1].second.size())
        index[--d] = 0;
      more = d > 0;
    }
  }
  return out;
}

const std::vector<Suite> &bench::allSuites() {
  static const std::vector<Suite> suites = {
      gemmSuite(),      vectorOpsSuite(),       layerNormSuite(),
      softmaxSuite(),   memoryBandwidthSuite(), attentionSuite(),
      allReduceSuite(),
  };
  return suites;
}
