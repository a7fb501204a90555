//===- Runtime.cpp - Tessera runtime --------------------------------------===//
//
// The Runtime: programs loaded, kernels compiled through the in-process
// cache for a device, device memory, batch timing. Every device-specific
// step goes through hal::Device.
//
//===----------------------------------------------------------------------===//

#include "tessera/runtime/Runtime.h"

#include "Cache/Bundle.h"
#include "Cache/CodeCache.h"
#include "Cache/CompileCache.h"
#include "Cache/KernelArtifact.h"
#include "Core/ThreadPool.h"
#include "DeviceBufferImpl.h"
#include "Hal/Device.h"
#include "Kernel/KernelImpl.h"
#include "StreamImpl.h"
#include "tessera/Driver/Driver.h"

#include <array>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace tessera;

struct Runtime::Impl {
  explicit Impl(RuntimeOptions o) : options(o), pool(o.numThreads) {
    for (DeviceKind k : {DeviceKind::Cpu, DeviceKind::Sim, DeviceKind::Cuda})
      devices[size_t(k)] = hal::createDevice(k, pool);
  }
  RuntimeOptions options;
  ThreadPool pool;
  std::array<std::unique_ptr<hal::Device>, 3> devices;
  CompileCache cache;
  CodeCache code;

  hal::Device &device(DeviceKind k) { return *devices[size_t(k)]; }
};

namespace {
/// Makes `sig` the launch signature of kernel `kernel` of `module` compiled
/// for `spec` (its parameters' dtypes bound by the constants and the
/// precision).
Status fillSignature(launch::Signature &sig,
                     std::shared_ptr<const driver::SourceModule> module,
                     const std::string &kernel, const Specialization &spec) {
  const KernelInfo *info = module->findKernel(kernel);
  if (!info) {
    std::string names;
    for (const KernelInfo *k : module->kernels())
      names += (names.empty() ? "" : ", ") + k->name;
    return notFound("no kernel '%s' in %s (kernels: %s)", kernel.c_str(),
                    module->name().c_str(),
                    names.empty() ? "none" : names.c_str());
  }
  sig.name = kernel;
  sig.info = info;
  sig.spec = spec;
  // Keep the module alive as long as the kernel.
  sig.module = std::move(module);
  std::string policyError;
  auto policy = PrecisionPolicy::parse(spec.precision, &policyError);
  if (!policy)
    return invalidArgument("%s", policyError.c_str());
  sig.paramDTypes.assign(info->params.size(), DType::F32);
  for (size_t i = 0; i < info->params.size(); ++i) {
    const ParamInfo &p = info->params[i];
    if (p.kind != ParamKind::Constexpr)
      sig.launchParams.push_back((int)i);
    if (p.kind != ParamKind::Tensor)
      continue;
    if (auto d = parseDType(p.dtype)) {
      sig.paramDTypes[i] = *d;
    } else if (auto it = spec.constants.find(p.dtype);
               it != spec.constants.end() && it->second.isDType()) {
      sig.paramDTypes[i] = it->second.getDType();
    } else if (p.dtype == "dtype") {
      sig.paramDTypes[i] = policy->storage;
    } else if (p.dtype == "accum_dtype") {
      sig.paramDTypes[i] = policy->accum;
    } else {
      return invalidArgument("generic dtype '%s' of parameter '%s' is not "
                             "bound; pass it in the constants",
                             p.dtype.c_str(), p.name.c_str());
    }
  }
  return okStatus();
}
} // namespace

Runtime::Runtime(RuntimeOptions options)
    : impl_(std::make_unique<Impl>(options)) {}
Runtime::~Runtime() = default;
unsigned Runtime::numThreads() const { return impl_->pool.size(); }

StatusOr<std::shared_ptr<Program>> Runtime::loadSource(std::string name,
                                                       std::string text) {
  TESSERA_ASSIGN_OR_RETURN(
      auto m, driver::SourceModule::parse(std::move(name), std::move(text)));
  return std::shared_ptr<Program>(new Program(std::move(m)));
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
  return impl_->device(kind).status();
}

StatusOr<DeviceInfo> Runtime::deviceInfo(DeviceKind kind) const {
  return impl_->device(kind).info();
}

StatusOr<std::shared_ptr<Kernel>>
Runtime::compile(const Program &program, const std::string &kernel,
                 const CompileOptions &options, DeviceKind device) {
  hal::Device &dev = impl_->device(device);
  TESSERA_RETURN_IF_ERROR(dev.status());
  Specialization spec;
  spec.constants = options.constants;
  spec.precision = options.precision;
  std::string key = CompileCache::key(program, kernel, spec, device);
  if (std::shared_ptr<Kernel> cached = impl_->cache.find(key))
    return cached;
  auto impl = std::make_unique<Kernel::Impl>();
  impl->device = &dev;
  impl->code = &impl_->code;
  TESSERA_RETURN_IF_ERROR(
      fillSignature(impl->signature, program.module_, kernel, spec));
  // Compile the all-contiguous variant now (reports source errors early).
  const uint64_t unitMask = Kernel::Impl::contiguousMask(impl->signature);
  TESSERA_RETURN_IF_ERROR(impl->compileFirst(unitMask));
  return impl_->cache.insert(
      key, std::shared_ptr<Kernel>(new Kernel(std::move(impl))));
}

StatusOr<std::shared_ptr<Kernel>>
Runtime::compileCuda(const CudaKernelSource &src, DeviceKind device) {
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

  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<hal::Executable> exe,
                           impl_->device(device).compileCudaSource(src));

  auto impl = std::make_unique<Kernel::Impl>();
  impl->device = &impl_->device(device);
  impl->code = &impl_->code;
  launch::Signature &sig = impl->signature;
  sig.name = ident;
  sig.info = info;
  sig.module = module;
  sig.barePointers = true;
  sig.paramDTypes.assign(info->params.size(), DType::F32);
  for (size_t i = 0; i < info->params.size(); ++i) {
    const ParamInfo &p = info->params[i];
    if (p.kind == ParamKind::Constexpr)
      return invalidArgument("signature of CUDA kernel '%s': constexpr "
                             "parameter '%s' (pass it as an NVRTC -D option)",
                             src.kernel.c_str(), p.name.c_str());
    sig.launchParams.push_back(int(i));
    if (p.kind != ParamKind::Tensor)
      continue;
    auto d = parseDType(p.dtype);
    if (!d)
      return invalidArgument("signature of CUDA kernel '%s': parameter '%s' "
                             "needs a concrete dtype, not '%s'",
                             src.kernel.c_str(), p.name.c_str(),
                             p.dtype.c_str());
    sig.paramDTypes[i] = *d;
  }
  impl->times.codegen = exe->times.codegen;
  impl->fixed = std::move(exe);
  return std::shared_ptr<Kernel>(new Kernel(std::move(impl)));
}

StatusOr<Stream> Runtime::createStream(DeviceKind device) {
  auto impl = std::make_shared<Stream::Impl>();
  impl->device = device;
  TESSERA_ASSIGN_OR_RETURN(impl->queue, impl_->device(device).createQueue());
  return Stream(std::move(impl));
}

StatusOr<Stream> Runtime::wrapStream(DeviceKind device, void *nativeStream) {
  auto impl = std::make_shared<Stream::Impl>();
  impl->device = device;
  TESSERA_ASSIGN_OR_RETURN(impl->queue,
                           impl_->device(device).wrapQueue(nativeStream));
  return Stream(std::move(impl));
}

StatusOr<Event> Runtime::createEvent(DeviceKind device) {
  auto impl = std::make_shared<Event::Impl>();
  impl->device = device;
  TESSERA_ASSIGN_OR_RETURN(impl->marker, impl_->device(device).createMarker());
  return Event(std::move(impl));
}

CompileCacheStats Runtime::cacheStats() const {
  CompileCacheStats s = impl_->cache.stats();
  CodeCache::Counts c = impl_->code.counts();
  s.compiles = c.compiles;
  s.diskLoads = c.diskLoads;
  s.bundleLoads = c.bundleLoads;
  return s;
}

StatusOr<BundleInfo> Runtime::loadBundle(const std::string &path) {
  TESSERA_ASSIGN_OR_RETURN(BundleContents bundle, readBundle(path));
  if (bundle.compiler != compilerVersion())
    return failedPrecondition(
        "bundle '%s' was written by Tessera %s; this is Tessera %s: its "
        "kernels compile on first use instead",
        path.c_str(), bundle.compiler.c_str(), compilerVersion());
  // Each device's code target, or why it has none.
  std::map<std::string, StatusOr<std::string>> targets;
  BundleInfo info;
  std::vector<std::pair<std::string, std::string>> usable;
  std::set<std::string> skipped;
  for (BundleCode &c : bundle.code) {
    std::optional<DeviceKind> kind = parseDeviceKind(c.device);
    if (!kind) {
      skipped.insert(formatString("code for device '%s' (unknown here)",
                                  c.device.c_str()));
      continue;
    }
    auto it = targets.find(c.device);
    if (it == targets.end()) {
      hal::Device &dev = impl_->device(*kind);
      Status st = dev.status();
      it = targets
               .emplace(c.device,
                        st.ok() ? dev.codeTarget() : StatusOr<std::string>(st))
               .first;
    }
    if (!it->second.ok()) {
      skipped.insert(formatString("%s code for %s (%s)", c.device.c_str(),
                                  c.target.c_str(),
                                  it->second.status().message().c_str()));
      continue;
    }
    if (*it->second != c.target) {
      skipped.insert(formatString("%s code for %s (this machine's %s code "
                                  "is for %s)",
                                  c.device.c_str(), c.target.c_str(),
                                  c.device.c_str(), it->second->c_str()));
      continue;
    }
    usable.emplace_back(std::move(c.key), std::move(c.code));
  }
  info.skipped.assign(skipped.begin(), skipped.end());
  if (usable.empty() && !bundle.code.empty()) {
    std::string why;
    for (const std::string &s : info.skipped)
      why += (why.empty() ? "" : "; ") + s;
    return failedPrecondition("bundle '%s' holds no code this machine can "
                              "use: %s. Its kernels compile on first use "
                              "instead",
                              path.c_str(), why.c_str());
  }
  for (auto &[key, code] : usable)
    impl_->code.addBundled(std::move(key), std::move(code));
  info.kernels = usable.size();
  info.tuningRecords = std::move(bundle.tuningRecords);
  return info;
}

Status Runtime::saveBundle(const std::string &path,
                           const std::vector<std::shared_ptr<Kernel>> &kernels,
                           const std::string &tuningRecords,
                           const std::vector<CrossCompile> &crossCompiled) {
  BundleContents bundle;
  bundle.compiler = compilerVersion();
  bundle.tuningRecords = tuningRecords;
  std::set<std::string> keys;
  for (const std::shared_ptr<Kernel> &k : kernels) {
    if (!k)
      return invalidArgument("saveBundle: a null kernel");
    Kernel::Impl &impl = *k->impl_;
    if (impl.fixed)
      return invalidArgument("kernel '%s' is CUDA C++: bundles hold "
                             "tile-language kernels",
                             impl.name().c_str());
    hal::Device &dev = *impl.device;
    TESSERA_ASSIGN_OR_RETURN(std::string target, dev.codeTarget());
    if (target.empty())
      return invalidArgument("kernel '%s': %s code cannot be stored in a "
                             "bundle",
                             impl.name().c_str(), deviceKindName(dev.kind()));
    std::lock_guard<std::mutex> lock(impl.mutex);
    const launch::Signature &sig = impl.signature;
    for (const auto &[codeKey, exe] : impl.variants) {
      BundleCode c;
      c.device = deviceKindName(dev.kind());
      c.target = target;
      c.kernel = impl.name();
      c.key = kernelArtifactKey(
          c.device, target, sig.module->sourceHash(), c.kernel,
          launch::variantSpec(sig.spec, *sig.info, codeKey),
          /*thisBuild=*/false);
      if (!keys.insert(c.key).second)
        continue;
      auto packed = dev.pack(*exe);
      // Code with no stored form on this device (SIMT programs on cpu) is
      // compiled where the bundle is loaded.
      if (!packed.ok() && packed.status().code() == StatusCode::kUnimplemented)
        continue;
      TESSERA_ASSIGN_OR_RETURN(c.code, std::move(packed));
      bundle.code.push_back(std::move(c));
    }
  }
  for (const CrossCompile &cc : crossCompiled) {
    if (!cc.program)
      return invalidArgument("saveBundle: a cross-compile without a program");
    Specialization spec;
    spec.constants = cc.options.constants;
    spec.precision = cc.options.precision;
    launch::Signature sig;
    TESSERA_RETURN_IF_ERROR(
        fillSignature(sig, cc.program->module_, cc.kernel, spec));
    hal::Device &dev = impl_->device(cc.device);
    Specialization variant =
        launch::variantSpec(sig.spec, *sig.info,
                            dev.codeKey(Kernel::Impl::firstKey(
                                sig, Kernel::Impl::contiguousMask(sig))));
    BundleCode c;
    c.device = deviceKindName(cc.device);
    c.target = cc.target;
    c.kernel = cc.kernel;
    c.key = kernelArtifactKey(c.device, cc.target, sig.module->sourceHash(),
                              c.kernel, variant, /*thisBuild=*/false);
    if (!keys.insert(c.key).second)
      continue;
    auto code = dev.compileFor(cc.target, *sig.module, cc.kernel, variant);
    TESSERA_RETURN_IF_ERROR(code.status(), "kernel '%s' for %s",
                            cc.kernel.c_str(), cc.target.c_str());
    c.code = std::move(*code);
    bundle.code.push_back(std::move(c));
  }
  return writeBundle(path, bundle);
}

StatusOr<double> Runtime::timeBatch(DeviceKind device,
                                    const std::function<Status()> &enqueue,
                                    int launches, bool flushCaches) {
  if (launches < 1)
    return invalidArgument("timeBatch: a batch needs at least one call, got %d",
                           launches);
  if (!enqueue)
    return invalidArgument("timeBatch: nothing to time");
  return impl_->device(device).timeBatch(launches, flushCaches, enqueue);
}

StatusOr<DeviceBuffer> Runtime::allocate(DeviceKind device, size_t bytes) {
  auto impl = std::make_unique<DeviceBuffer::Impl>();
  impl->device = device;
  impl->bytes = bytes;
  TESSERA_ASSIGN_OR_RETURN(impl->memory, impl_->device(device).allocate(bytes));
  return DeviceBuffer(std::move(impl));
}
