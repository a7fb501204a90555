//===- CudaHalDevice.cpp - The cuda device: NVIDIA GPUs -------------------===//
//
// Kernels emitted as cubins (PTX when no assembler is found) for the GPU's
// architecture, loaded and launched through the CUDA driver (CudaDevice,
// opened on first use); CUDA C++ kernels through NVRTC. Host tensors are
// staged through device memory around each launch; views of device buffers
// are used in place. Timing uses CUDA events after an L2 flush.
//
//===----------------------------------------------------------------------===//

#include "Hal/Device.h"

#include "Cache/KernelArtifact.h"

#include "Cuda/CudaDevice.h"
#include "Cuda/CudaDriver.h"
#include "tessera/Support/Hash.h"
#include "tessera/Target/CUDA/Nvrtc.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <optional>

using namespace tessera;
using namespace tessera::hal;

namespace {

/// A kernel loaded on the GPU: its module and entry, the block shape and
/// dynamic shared memory of its configuration.
class CudaExecutable final : public Executable {
public:
  cuda::CudaModule module;
  cuda::CudaKernel function;
  std::array<int, 3> block = {1, 1, 1};
  int64_t sharedBytes = 0;
  /// The tensor maps passed after the arguments.
  std::vector<driver::TensorMapArg> tensorMaps;
  driver::ProgramSchedule schedule;
  /// Blocks of this kernel resident at once on the device (persistent
  /// kernels launch that many at most).
  int64_t residentBlocks = 0;
  /// What it was loaded from (for the disk cache and bundles).
  KernelArtifact artifact;
};

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

/// Device memory and the device that copies to and from it.
class CudaMemory final : public Memory {
public:
  CudaMemory(cuda::CudaDevice *dev, cuda::DeviceBuffer buffer)
      : dev_(dev), buffer_(std::move(buffer)) {}
  void *address() const override {
    return reinterpret_cast<void *>(uintptr_t(buffer_.address()));
  }
  Status copyFrom(const void *host, size_t bytes, size_t offset) override {
    return dev_->copyToDevice(buffer_.address() + offset, host, bytes);
  }
  Status copyTo(void *host, size_t bytes, size_t offset) const override {
    return dev_->copyToHost(host, buffer_.address() + offset, bytes);
  }

private:
  cuda::CudaDevice *dev_;
  cuda::DeviceBuffer buffer_;
};

/// A CUstream: one the queue created (destroyed with it) or the
/// application's (never destroyed here).
class CudaQueue final : public Queue {
public:
  explicit CudaQueue(cuda::CudaStream stream) : stream_(std::move(stream)) {}
  Status synchronize() override { return stream_.synchronize(); }
  Status enqueueHostFunction(std::function<void()> fn) override {
    if (!fn)
      return invalidArgument("enqueueHostFunction: no function");
    const cuda::CudaDevice *dev = stream_.device();
    TESSERA_RETURN_IF_ERROR(dev->makeCurrent());
    auto *owned = new std::function<void()>(std::move(fn));
    auto call = [](void *p) {
      std::unique_ptr<std::function<void()>> f(
          static_cast<std::function<void()> *>(p));
      (*f)();
    };
    const cuda::CudaDriverApi &api = dev->api();
    cuda::CuResult r = api.cuLaunchHostFunc(stream_.get(), call, owned);
    if (r != 0) {
      // Not queued: the function is ours to free.
      delete owned;
      return cuda::cudaResultToStatus(api, r, "cuLaunchHostFunc", __FILE__,
                                      __LINE__);
    }
    return okStatus();
  }
  void *native() const override { return stream_.get(); }

private:
  cuda::CudaStream stream_;
};

/// A CUDA event with timing.
class CudaMarker final : public Marker {
public:
  explicit CudaMarker(cuda::CudaEvent event) : event_(std::move(event)) {}
  Status record(Queue &queue) override {
    recorded_ = true;
    return event_.record(static_cast<cuda::CuStream>(queue.native()));
  }
  Status synchronize() override {
    if (!recorded_)
      return failedPrecondition("the event was never recorded");
    return event_.synchronize();
  }
  StatusOr<double> elapsedSince(const Marker &startMarker) const override {
    const auto *start = dynamic_cast<const CudaMarker *>(&startMarker);
    if (!start)
      return invalidArgument("events of different devices");
    TESSERA_ASSIGN_OR_RETURN(float ms,
                             cuda::CudaEvent::elapsedMs(start->event_, event_));
    return double(ms);
  }

private:
  cuda::CudaEvent event_;
  bool recorded_ = false;
};

class CudaHalDevice final : public Device {
public:
  DeviceKind kind() const override { return DeviceKind::Cuda; }
  Status status() const override {
    auto dev = open();
    return dev.ok() ? okStatus() : dev.status();
  }
  StatusOr<DeviceInfo> info() const override {
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, open());
    const cuda::CudaDeviceProperties &p = dev->properties();
    DeviceInfo d;
    d.kind = DeviceKind::Cuda;
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

  StatusOr<std::shared_ptr<Executable>>
  compile(const driver::SourceModule &module, const std::string &name,
          const Specialization &s, bool) override {
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, open());
    driver::StageTimes times;
    TESSERA_ASSIGN_OR_RETURN(
        KernelArtifact art,
        emitArtifact(module, name, s, dev->properties().archName(), &times));
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Executable> exe,
                             load(dev, name, art));
    exe->times = times;
    return exe;
  }

  StatusOr<std::string> compileFor(const std::string &arch,
                                   const driver::SourceModule &module,
                                   const std::string &name,
                                   const Specialization &s) override {
    TESSERA_ASSIGN_OR_RETURN(KernelArtifact art,
                             emitArtifact(module, name, s, arch, nullptr));
    return art.pack();
  }

  StatusOr<std::string> codeTarget() const override {
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, open());
    return dev->properties().archName();
  }
  StatusOr<std::string> pack(const Executable &exe) const override {
    return static_cast<const CudaExecutable &>(exe).artifact.pack();
  }
  StatusOr<std::shared_ptr<Executable>> load(const std::string &name,
                                             std::string_view bytes) override {
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, open());
    std::optional<KernelArtifact> art = KernelArtifact::unpack(bytes);
    if (!art)
      return invalidArgument("kernel '%s': not a stored cuda kernel",
                             name.c_str());
    return load(dev, name, *art);
  }

  StatusOr<std::shared_ptr<Executable>>
  compileCudaSource(const CudaKernelSource &src) override;

  Status run(const KernelLaunch &l) override;

  StatusOr<std::unique_ptr<Memory>> allocate(size_t bytes) override {
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, open());
    TESSERA_ASSIGN_OR_RETURN(cuda::DeviceBuffer b,
                             dev->allocate(std::max<size_t>(bytes, 1)));
    return std::unique_ptr<Memory>(
        std::make_unique<CudaMemory>(dev, std::move(b)));
  }

  StatusOr<std::shared_ptr<Queue>> createQueue() override {
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, open());
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaStream stream, dev->createStream());
    return std::shared_ptr<Queue>(
        std::make_shared<CudaQueue>(std::move(stream)));
  }
  StatusOr<std::shared_ptr<Queue>> wrapQueue(void *native) override {
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, open());
    // No release function: the stream stays the application's.
    cuda::CudaStream stream(dev, static_cast<cuda::CuStream>(native), nullptr);
    return std::shared_ptr<Queue>(
        std::make_shared<CudaQueue>(std::move(stream)));
  }
  StatusOr<std::shared_ptr<Marker>> createMarker() override {
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, open());
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaEvent event, dev->createEvent());
    return std::shared_ptr<Marker>(
        std::make_shared<CudaMarker>(std::move(event)));
  }

  StatusOr<double> timeBatch(int launches, bool flushCaches,
                             const std::function<Status()> &enqueue) override {
    TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, open());
    return timeOnStream(dev, launches, flushCaches, enqueue);
  }

private:
  /// Kernel `name` compiled for `arch` (no GPU needed): a cubin when an
  /// assembler is available; otherwise PTX, which the driver compiles when
  /// it loads the module.
  static StatusOr<KernelArtifact>
  emitArtifact(const driver::SourceModule &module, const std::string &name,
               const Specialization &s, const std::string &arch,
               driver::StageTimes *times) {
    driver::GpuEmitOptions gpu;
    gpu.arch = arch;
    driver::GpuResources r;
    auto image =
        driver::emit(module, name, s, driver::EmitKind::Cubin, times, gpu, &r);
    if (!image.ok() && image.status().code() == StatusCode::kUnavailable)
      image =
          driver::emit(module, name, s, driver::EmitKind::PTX, times, gpu, &r);
    if (!image.ok())
      return image.status();
    if (r.blockSize <= 0)
      return internalError("kernel '%s': no block size from the GPU "
                           "mapping",
                           name.c_str());
    KernelArtifact art;
    art.image = std::move(*image);
    art.blockSize = r.blockSize;
    art.tileSharedBytes = r.tileSharedBytes;
    art.staticSharedBytes = r.sharedBytes;
    art.tensorMaps = r.tensorMaps;
    art.schedule = r.schedule;
    return art;
  }

  /// Loads `art` on `dev` as kernel `name`, checking its shared memory
  /// against the device's.
  StatusOr<std::shared_ptr<Executable>> load(cuda::CudaDevice *dev,
                                             const std::string &name,
                                             const KernelArtifact &art) {
    auto exe = std::make_shared<CudaExecutable>();
    exe->artifact = art;
    exe->fingerprint = fnv1a(art.image);
    exe->block = {art.blockSize, 1, 1};
    exe->sharedBytes = art.tileSharedBytes;
    exe->tensorMaps = art.tensorMaps;
    exe->schedule = art.schedule;
    // Dynamic (the tiles) and static (mbarriers) shared memory.
    int64_t shared = art.tileSharedBytes + art.staticSharedBytes;
    if (shared > dev->properties().maxSharedPerBlockOptin)
      return Status(
          StatusCode::kResourceExhausted,
          "kernel '" + name + "' needs " + std::to_string(shared) +
              " bytes of shared memory per block; the device "
              "allows " +
              std::to_string(dev->properties().maxSharedPerBlockOptin));
    TESSERA_ASSIGN_OR_RETURN(exe->module, dev->loadModule(art.image));
    TESSERA_ASSIGN_OR_RETURN(exe->function, exe->module.kernel(name));
    if (exe->sharedBytes > 48 * 1024)
      TESSERA_RETURN_IF_ERROR(
          dev->setMaxDynamicSharedMemory(exe->function, int(exe->sharedBytes)));
    if (exe->schedule.persistent) {
      TESSERA_ASSIGN_OR_RETURN(
          int perSm, dev->activeBlocksPerSm(exe->function, art.blockSize,
                                            size_t(exe->sharedBytes)));
      exe->residentBlocks =
          int64_t(std::max(perSm, 1)) * dev->properties().smCount;
    }
    return std::shared_ptr<Executable>(std::move(exe));
  }
  /// Device 0, opened on first use; the status says why it cannot be used.
  StatusOr<cuda::CudaDevice *> open() const {
    std::lock_guard<std::mutex> lock(openMutex_);
    if (!probed_) {
      probed_ = true;
      auto dev = cuda::CudaDevice::open(0);
      if (dev.ok())
        device_ = std::move(*dev);
      else
        status_ =
            Status(dev.status().code(), "the 'cuda' device is unavailable: " +
                                            dev.status().message());
    }
    if (!device_)
      return status_;
    return device_.get();
  }
  /// Rewrites a buffer the size of the L2 cache so that what runs next
  /// starts with a cold cache.
  Status flushL2(cuda::CudaDevice *dev) {
    std::lock_guard<std::mutex> lock(flushMutex_);
    size_t bytes = size_t(
        std::max<int64_t>(dev->properties().l2CacheBytes, int64_t(1) << 20));
    if (!l2Flush_) {
      TESSERA_ASSIGN_OR_RETURN(cuda::DeviceBuffer b, dev->allocate(bytes));
      l2Flush_ = std::move(b);
    }
    return dev->fill(l2Flush_->address(), ++flushValue_, bytes);
  }
  /// Calls `enqueueOne` `launches` times between two events recorded on the
  /// legacy default stream of `dev` (after the L2 flush when `flush`),
  /// without synchronising between the calls, waits for the end event and
  /// returns the elapsed time / `launches`, in ms. Each call must queue its
  /// work on that stream.
  StatusOr<double> timeOnStream(cuda::CudaDevice *dev, int launches, bool flush,
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

  mutable std::mutex openMutex_;
  mutable bool probed_ = false;
  mutable Status status_ = okStatus();
  mutable std::unique_ptr<cuda::CudaDevice> device_;
  /// The L2 flush buffer (declared after the device: released before it).
  std::mutex flushMutex_;
  std::optional<cuda::DeviceBuffer> l2Flush_;
  uint8_t flushValue_ = 0;
};

Status CudaHalDevice::run(const KernelLaunch &l) {
  TESSERA_ASSIGN_OR_RETURN(cuda::CudaDevice * dev, open());
  const std::vector<Arg> &args = l.args;
  const launch::Plan &c = l.plan;
  const std::string &name = l.signature.name;
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
    // Whole bytes (the packed types share bytes between elements).
    int64_t bits = dtypeBits(t->dtype);
    int64_t loByte = lo * bits / 8, endByte = ((hi + 1) * bits + 7) / 8;
    size_t bytes = hi >= lo ? size_t(endByte - loByte) : 0;
    Staged st;
    st.bytes = bytes;
    st.host = static_cast<char *>(t->data) + loByte;
    TESSERA_ASSIGN_OR_RETURN(st.buffer,
                             dev->allocate(std::max<size_t>(bytes, 1)));
    if (bytes)
      TESSERA_RETURN_IF_ERROR(
          dev->copyToDevice(st.buffer.address(), st.host, bytes));
    TensorView dv = *t;
    uintptr_t base = uintptr_t(st.buffer.address()) - uintptr_t(loByte);
    dv.data = reinterpret_cast<void *>(base);
    a = Arg(dv);
    staged.push_back(std::move(st));
  }
  // Alignment of what the kernel receives: staged host tensors move.
  launch::VariantKey key = c.key;
  key.alignedMask = l.signature.alignedMask(deviceArgs);
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Executable> code,
                           l.variant(key, false));
  const auto *exe = static_cast<const CudaExecutable *>(code.get());
  // The blocks that run the programs (a scheduled kernel takes its grid
  // of programs after its arguments).
  std::array<int64_t, 3> blocks =
      launch::launchGridOf(exe->schedule, c.grid, exe->residentBlocks);
  if (blocks[0] > std::numeric_limits<int32_t>::max() || blocks[1] > 65535 ||
      blocks[2] > 65535)
    return invalidArgument(
        "kernel '%s': grid (%lld, %lld, %lld) exceeds the CUDA grid limits "
        "(2^31-1, 65535, 65535)",
        name.c_str(), (long long)blocks[0], (long long)blocks[1],
        (long long)blocks[2]);
  std::vector<int64_t> slots = l.signature.flatten(deviceArgs);
  if (exe->schedule.logicalGrid)
    slots.insert(slots.end(), c.grid.begin(), c.grid.end());
  std::vector<void *> params(slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    params[i] = &slots[i];
  // Tensor maps follow, each a 128-byte parameter passed by value.
  std::vector<cuda::CuTensorMap> maps(exe->tensorMaps.size());
  for (size_t i = 0; i < maps.size(); ++i) {
    const driver::TensorMapArg &m = exe->tensorMaps[i];
    TESSERA_ASSIGN_OR_RETURN(auto tensor,
                             l.signature.tensorOfParam(deviceArgs, m.param));
    TESSERA_ASSIGN_OR_RETURN(
        launch::TensorMapGeometry g,
        launch::tensorMapGeometry(*tensor.first, m, name, tensor.second));
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
  cuda::Dim3 block{unsigned(exe->block[0]), unsigned(exe->block[1]),
                   unsigned(exe->block[2])};
  // Launches go to the launch's stream, else the legacy default stream,
  // with no host synchronisation between launches of a batch.
  cuda::CuStream stream =
      l.queue ? static_cast<cuda::CuStream>(l.queue->native()) : nullptr;
  auto launchOnce = [&]() -> Status {
    return dev->launch(exe->function, grid, block, unsigned(exe->sharedBytes),
                       stream, params.data());
  };
  if (l.ms) {
    TESSERA_ASSIGN_OR_RETURN(
        *l.ms, timeOnStream(dev, l.launches, l.flushCaches, launchOnce));
  } else {
    for (int i = 0; i < l.launches; ++i)
      TESSERA_RETURN_IF_ERROR(launchOnce());
    // On a stream, device memory is left to the stream's order: nothing
    // here waits (a CUDA graph may capture the launch). Staged host
    // tensors are copied back once the stream has run the kernel.
    if (l.queue && staged.empty())
      return okStatus();
    TESSERA_RETURN_IF_ERROR(l.queue ? l.queue->synchronize()
                                    : dev->synchronize());
  }
  for (Staged &st : staged)
    if (st.bytes)
      TESSERA_RETURN_IF_ERROR(
          dev->copyToHost(st.host, st.buffer.address(), st.bytes));
  return okStatus();
}

StatusOr<std::shared_ptr<Executable>>
CudaHalDevice::compileCudaSource(const CudaKernelSource &src) {
  // Compile first (for the device's architecture when there is one), so
  // that source errors surface even without a GPU.
  auto dev = open();
  cuda::NvrtcOptions o;
  o.arch = dev.ok() ? (*dev)->properties().archName() : "sm_90a";
  o.options = src.options;
  o.headers = src.headers;
  o.nameExpressions = {src.kernel};
  TESSERA_ASSIGN_OR_RETURN(cuda::NvrtcResult compiled,
                           cuda::compileCuda(src.source, src.name, o));
  if (!dev.ok())
    return dev.status();
  cuda::CudaDevice *device0 = *dev;
  auto exe = std::make_shared<CudaExecutable>();
  exe->times.codegen = compiled.seconds * 1e3;
  const std::string &image =
      compiled.cubin.empty() ? compiled.ptx : compiled.cubin;
  TESSERA_ASSIGN_OR_RETURN(exe->module, device0->loadModule(image));
  std::string lowered = src.kernel;
  if (auto it = compiled.loweredNames.find(src.kernel);
      it != compiled.loweredNames.end())
    lowered = it->second;
  TESSERA_ASSIGN_OR_RETURN(exe->function, exe->module.kernel(lowered));
  exe->block = src.block;
  exe->sharedBytes = src.dynamicSharedBytes;
  if (exe->sharedBytes > 48 * 1024)
    TESSERA_RETURN_IF_ERROR(device0->setMaxDynamicSharedMemory(
        exe->function, int(exe->sharedBytes)));
  return std::shared_ptr<Executable>(std::move(exe));
}

} // namespace

std::unique_ptr<Device> hal::createCudaDevice() {
  return std::make_unique<CudaHalDevice>();
}
