//===- Device.cpp - The runtime's device interface ------------------------===//

#include "Hal/Device.h"

#include "Core/ThreadPool.h"
#include "tessera/Support/Host.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>

using namespace tessera;
using namespace tessera::hal;

Executable::~Executable() = default;
Memory::~Memory() = default;
Device::~Device() = default;
Queue::~Queue() = default;
Marker::~Marker() = default;

namespace {

/// A host queue: tasks run in order on a thread of the queue's own.
class HostQueue final : public Queue {
public:
  HostQueue() : worker_([this] { serve(); }) {}
  ~HostQueue() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
  }

  Status enqueue(std::function<Status()> task) {
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
      // A busy worker takes the task when it is done with the current one:
      // only a waiting worker needs the (system call) wake-up.
      wake = waiting_;
    }
    if (wake)
      wake_.notify_one();
    return okStatus();
  }
  Status synchronize() override {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return tasks_.empty() && !running_; });
    Status first = std::move(firstError_);
    firstError_ = okStatus();
    return first;
  }
  Status enqueueHostFunction(std::function<void()> fn) override {
    if (!fn)
      return invalidArgument("enqueueHostFunction: no function");
    return enqueue([fn = std::move(fn)] {
      fn();
      return okStatus();
    });
  }

private:
  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      waiting_ = true;
      wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      waiting_ = false;
      if (tasks_.empty())
        return; // stopping, nothing left
      std::function<Status()> task = std::move(tasks_.front());
      tasks_.pop_front();
      running_ = true;
      lock.unlock();
      Status s = task();
      lock.lock();
      running_ = false;
      if (!s.ok() && firstError_.ok())
        firstError_ = std::move(s);
      if (tasks_.empty())
        idle_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<Status()>> tasks_;
  bool running_ = false, stopping_ = false, waiting_ = false;
  Status firstError_;
  std::thread worker_; // last: starts after the members it uses
};

/// A host marker: the steady-clock time its queue reached it.
class HostMarker final : public Marker,
                         public std::enable_shared_from_this<HostMarker> {
public:
  Status record(Queue &queue) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      recorded_ = true;
      reached_ = false;
    }
    auto self = shared_from_this();
    return enqueueOnHost(queue, [self] {
      {
        std::lock_guard<std::mutex> lock(self->mutex_);
        self->time_ = std::chrono::steady_clock::now();
        self->reached_ = true;
      }
      self->cv_.notify_all();
      return okStatus();
    });
  }
  Status synchronize() override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!recorded_)
      return failedPrecondition("the event was never recorded");
    cv_.wait(lock, [&] { return reached_; });
    return okStatus();
  }
  StatusOr<double> elapsedSince(const Marker &startMarker) const override {
    const auto *start = dynamic_cast<const HostMarker *>(&startMarker);
    if (!start)
      return invalidArgument("events of different devices");
    std::chrono::steady_clock::time_point t0, t1;
    {
      std::lock_guard<std::mutex> lock(start->mutex_);
      if (!start->reached_)
        return failedPrecondition("the start event has not been reached");
      t0 = start->time_;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!reached_)
        return failedPrecondition("the end event has not been reached");
      t1 = time_;
    }
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
  }

private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool recorded_ = false, reached_ = false;
  std::chrono::steady_clock::time_point time_;
};

} // namespace

Status hal::enqueueOnHost(Queue &queue, std::function<Status()> work) {
  auto *host = dynamic_cast<HostQueue *>(&queue);
  if (!host)
    return internalError("host work queued on a device queue");
  return host->enqueue(std::move(work));
}

bool hal::hasHostTensors(const std::vector<Arg> &args) {
  for (const Arg &a : args)
    if (const TensorView *t = a.tensor(); t && !t->device)
      return true;
  return false;
}

StatusOr<std::shared_ptr<Queue>> Device::createQueue() {
  TESSERA_RETURN_IF_ERROR(status());
  return std::shared_ptr<Queue>(std::make_shared<HostQueue>());
}

StatusOr<std::shared_ptr<Queue>> Device::wrapQueue(void *) {
  return unimplemented("the %s device has no native streams to adopt",
                       deviceKindName(kind()));
}

StatusOr<std::shared_ptr<Marker>> Device::createMarker() {
  TESSERA_RETURN_IF_ERROR(status());
  return std::shared_ptr<Marker>(std::make_shared<HostMarker>());
}

StatusOr<std::shared_ptr<Executable>>
Device::compileCudaSource(const CudaKernelSource &source) {
  return unimplemented("CUDA C++ kernel '%s' (%s) runs on the cuda device "
                       "only, not on %s",
                       source.kernel.c_str(), source.name.c_str(),
                       deviceKindName(kind()));
}

StatusOr<std::string> Device::pack(const Executable &) const {
  return unimplemented("the %s device does not store compiled code",
                       deviceKindName(kind()));
}

StatusOr<std::shared_ptr<Executable>> Device::load(const std::string &,
                                                   std::string_view) {
  return unimplemented("the %s device does not load stored code",
                       deviceKindName(kind()));
}

StatusOr<std::string> Device::compileFor(const std::string &target,
                                         const driver::SourceModule &,
                                         const std::string &,
                                         const Specialization &) {
  return unimplemented("the %s device does not compile for other machines "
                       "(asked for %s)",
                       deviceKindName(kind()), target.c_str());
}

StatusOr<double> Device::timeBatch(int launches, bool,
                                   const std::function<Status()> &enqueue) {
  TESSERA_RETURN_IF_ERROR(status());
  return timeOnHost(launches, enqueue);
}

std::unique_ptr<Device> hal::createDevice(DeviceKind kind, ThreadPool &pool) {
  switch (kind) {
  case DeviceKind::Cpu:
    return createCpuDevice(pool);
  case DeviceKind::Sim:
    return createSimDevice(pool);
  case DeviceKind::Cuda:
    return createCudaDevice();
  }
  return nullptr;
}

namespace {
/// 64-byte aligned host memory.
class HostMemory final : public Memory {
public:
  explicit HostMemory(void *p) : p_(p) {}
  ~HostMemory() override { std::free(p_); }
  void *address() const override { return p_; }
  Status copyFrom(const void *host, size_t bytes, size_t offset) override {
    std::memcpy(static_cast<char *>(p_) + offset, host, bytes);
    return okStatus();
  }
  Status copyTo(void *host, size_t bytes, size_t offset) const override {
    std::memcpy(host, static_cast<const char *>(p_) + offset, bytes);
    return okStatus();
  }

private:
  void *p_;
};
} // namespace

StatusOr<std::unique_ptr<Memory>> HostDevice::allocate(size_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() - 64)
    return resourceExhausted("cannot allocate %zu bytes", bytes);
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded);
  if (!p)
    return resourceExhausted("cannot allocate %zu bytes of %s memory", bytes,
                             deviceKindName(kind_));
  return std::unique_ptr<Memory>(std::make_unique<HostMemory>(p));
}

StatusOr<DeviceInfo> HostDevice::info() const {
  DeviceInfo d;
  d.kind = kind_;
  d.name = hostCpuModelName();
  if (d.name.empty())
    d.name = "unknown CPU";
  d.arch = "host";
  d.computeUnits = int(pool_.size());
  return d;
}

StatusOr<double> hal::timeOnHost(int launches,
                                 const std::function<Status()> &enqueue) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i)
    TESSERA_RETURN_IF_ERROR(enqueue());
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
             .count() /
         double(launches);
}
