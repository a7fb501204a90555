//===- Device.h - The runtime's device interface ----------------*- C++ -*-===//
//
// What the runtime asks of a device kind (IREE's HAL is the model): compile
// a kernel variant into an executable, run launches of it, own memory, time
// batches of work. `cpu`, `sim` and `cuda` implement it, each in its own
// folder (Cpu/, Sim/, Cuda/); createDevice() is the one place that maps a
// DeviceKind to an implementation. Internal to the runtime.
//
// Thread-safety: every method may be called from any thread.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_HAL_DEVICE_H
#define TESSERA_RUNTIME_HAL_DEVICE_H

#include "Launch/LaunchChecks.h"
#include "tessera/Driver/Driver.h"
#include "tessera/runtime/Runtime.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {
class ThreadPool;
} // namespace tessera

namespace tessera::hal {

/// The compiled code of one kernel variant on one device.
class Executable {
public:
  virtual ~Executable();
  /// Per-stage compile times (zero for code that was not compiled here).
  driver::StageTimes times;
  /// A hash of the generated code (0 when unknown).
  uint64_t fingerprint = 0;
};

/// Memory a device owns (DeviceBuffer's storage).
class Memory {
public:
  virtual ~Memory();
  /// The address kernels of the device use.
  virtual void *address() const = 0;
  virtual Status copyFrom(const void *host, size_t bytes, size_t offset) = 0;
  virtual Status copyTo(void *host, size_t bytes, size_t offset) const = 0;
};

/// An ordered queue of device work (Stream's implementation).
class Queue {
public:
  virtual ~Queue();
  /// Waits for the work queued so far; returns (and forgets) the first
  /// error queued work met.
  virtual Status synchronize() = 0;
  /// Queues `fn` to run on the host after the work queued before it.
  virtual Status enqueueHostFunction(std::function<void()> fn) = 0;
  /// The device's own handle (a CUstream), null for host queues.
  virtual void *native() const { return nullptr; }
};

/// A point in a queue (Event's implementation).
class Marker {
public:
  virtual ~Marker();
  virtual Status record(Queue &queue) = 0;
  virtual Status synchronize() = 0;
  /// Milliseconds from `start` (a marker of the same device) to this one.
  virtual StatusOr<double> elapsedSince(const Marker &start) const = 0;
};

/// One launch (or batch of back-to-back launches) as a device runs it,
/// after the launch checks.
struct KernelLaunch {
  const launch::Signature &signature;
  const std::vector<Arg> &args;
  const launch::Plan &plan;
  /// Launches of the batch; with `ms`, the mean time of one is written
  /// there (the device's clock; see Kernel::launchTimedBatch), after a
  /// cache flush when `flushCaches`.
  int launches = 1;
  double *ms = nullptr;
  bool flushCaches = false;
  /// Count the launch's memory accesses (devices that count only).
  bool counters = false;
  /// The queue to put the launch on (no timing, no counters); null: run it
  /// to completion now.
  Queue *queue = nullptr;
  /// Where the counts go when `counters`.
  std::optional<SimCounters> *counted = nullptr;
  /// The executable for a variant key (compiled on first use).
  std::function<StatusOr<std::shared_ptr<Executable>>(
      const launch::VariantKey &, bool counters)>
      variant;
};

class Device {
public:
  virtual ~Device();
  virtual DeviceKind kind() const = 0;
  /// OK when kernels can run here; otherwise why not (UNAVAILABLE without
  /// a driver or a GPU).
  virtual Status status() const = 0;
  virtual StatusOr<DeviceInfo> info() const = 0;

  /// The part of a variant key this device's code depends on (cpu code
  /// ignores the GPU's alignment, 32-bit indexing and grid facts).
  virtual launch::VariantKey codeKey(const launch::VariantKey &key) const {
    return key;
  }
  /// Compiles kernel `kernel` of `module` for `spec`; with `counters`, the
  /// code reports what the device's counters need.
  virtual StatusOr<std::shared_ptr<Executable>>
  compile(const driver::SourceModule &module, const std::string &kernel,
          const Specialization &spec, bool counters) = 0;
  /// Names the code compile() produces here (a GPU's architecture, the
  /// host's instruction set); empty when executables cannot be stored and
  /// loaded again. Stored code is loaded only where this is the same.
  virtual StatusOr<std::string> codeTarget() const { return std::string(); }
  /// `exe` (an executable of this device) as bytes load() takes back.
  virtual StatusOr<std::string> pack(const Executable &exe) const;
  /// An executable from bytes pack() wrote on a device with the same
  /// codeTarget(): no compile. An error for bytes that are not one.
  virtual StatusOr<std::shared_ptr<Executable>> load(const std::string &kernel,
                                                     std::string_view bytes);
  /// Kernel `kernel` of `module` compiled for code target `target` (another
  /// machine's: say, a GPU architecture that is not here) as bytes load()
  /// takes on such a machine. UNIMPLEMENTED where a device cannot.
  virtual StatusOr<std::string> compileFor(const std::string &target,
                                           const driver::SourceModule &module,
                                           const std::string &kernel,
                                           const Specialization &spec);
  /// Compiles a CUDA C++ kernel (NVRTC). UNIMPLEMENTED on devices that do
  /// not run CUDA C++.
  virtual StatusOr<std::shared_ptr<Executable>>
  compileCudaSource(const CudaKernelSource &source);
  /// Whether LaunchOptions::counters is honoured.
  virtual bool countsAccesses() const { return false; }
  /// Runs `launch` (its grid is non-empty).
  virtual Status run(const KernelLaunch &launch) = 0;

  /// A new queue; an adopted native one (UNIMPLEMENTED where there are
  /// none); a marker. The host's are served by a thread of their own.
  virtual StatusOr<std::shared_ptr<Queue>> createQueue();
  virtual StatusOr<std::shared_ptr<Queue>> wrapQueue(void *native);
  virtual StatusOr<std::shared_ptr<Marker>> createMarker();

  /// `bytes` bytes of the device's memory.
  virtual StatusOr<std::unique_ptr<Memory>> allocate(size_t bytes) = 0;
  /// Calls `enqueue` `launches` times and returns the mean time of one
  /// call, in ms (see Runtime::timeBatch): the steady clock here; a GPU
  /// times the work the calls queued with its events.
  virtual StatusOr<double> timeBatch(int launches, bool flushCaches,
                                     const std::function<Status()> &enqueue);
};

/// The device of kind `kind`, which launches CPU work on `pool` (a cuda
/// device opens the GPU on first use; its status says when it cannot).
std::unique_ptr<Device> createDevice(DeviceKind kind, ThreadPool &pool);

/// The implementations createDevice chooses from (Cpu/, Sim/, Cuda/).
std::unique_ptr<Device> createCpuDevice(ThreadPool &pool);
std::unique_ptr<Device> createSimDevice(ThreadPool &pool);
std::unique_ptr<Device> createCudaDevice();

/// The executable of a device that runs on the host: driver code (a
/// driver::CpuExecutable or driver::SimExecutable) with its compile times
/// and fingerprint.
template <typename Code> class HostExecutable final : public Executable {
public:
  explicit HostExecutable(std::unique_ptr<Code> compiled)
      : code(std::move(compiled)) {
    times = code->times();
    fingerprint = code->codeFingerprint();
  }
  std::unique_ptr<Code> code;
};

/// What the devices that run on the host share: always available, host
/// memory, the runtime's thread pool, host queues and markers.
class HostDevice : public Device {
public:
  HostDevice(DeviceKind kind, ThreadPool &pool) : pool_(pool), kind_(kind) {}
  DeviceKind kind() const override { return kind_; }
  Status status() const override { return okStatus(); }
  StatusOr<DeviceInfo> info() const override;
  StatusOr<std::unique_ptr<Memory>> allocate(size_t bytes) override;

protected:
  ThreadPool &pool_;

private:
  DeviceKind kind_;
};

/// Whether any tensor argument is host memory (not a device buffer's view).
bool hasHostTensors(const std::vector<Arg> &args);

/// Queues `work` on host queue `queue` (a queue createQueue made on a host
/// device); the first error it returns is reported by synchronize().
Status enqueueOnHost(Queue &queue, std::function<Status()> work);

/// The steady-clock time of `launches` calls of `enqueue`, per call (ms).
StatusOr<double> timeOnHost(int launches,
                            const std::function<Status()> &enqueue);

} // namespace tessera::hal

#endif // TESSERA_RUNTIME_HAL_DEVICE_H
