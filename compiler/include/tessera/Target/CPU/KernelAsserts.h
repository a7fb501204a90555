//===- KernelAsserts.h - Failed kernel assertions on the host ---*- C++ -*-===//
//
// A kernel's run-time assertions (`cf.assert`, e.g. a `range` whose step is
// zero at run time) call `tessera_kernel_assert_failed(message)` when they
// fail in code that runs on the host (the cpu and sim devices; on a GPU they
// become the driver's device assertion). The routine records the message in
// the sink the running thread has made current, and the kernel goes on
// (code after an assertion never depends on it holding to terminate); the
// device then fails the launch with the first message.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_CPU_KERNELASSERTS_H
#define TESSERA_TARGET_CPU_KERNELASSERTS_H

#include <atomic>
#include <mutex>
#include <string>

namespace tessera::cpu {

/// The failed assertions of one launch (shared by the threads running it).
class AssertSink {
public:
  void record(const char *message);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  /// The first recorded message.
  std::string message() const;

private:
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  std::string first_;
};

/// Makes `sink` the calling thread's sink while in scope (restoring the
/// previous one after).
class ScopedAssertSink {
public:
  explicit ScopedAssertSink(AssertSink &sink);
  ~ScopedAssertSink();
  ScopedAssertSink(const ScopedAssertSink &) = delete;
  ScopedAssertSink &operator=(const ScopedAssertSink &) = delete;

private:
  AssertSink *previous_;
};

/// The name JIT'd code calls (resolved by the process JIT).
inline constexpr const char *kAssertFailedRoutine =
    "tessera_kernel_assert_failed";

} // namespace tessera::cpu

/// Records `message` in the current thread's sink (or prints it to stderr
/// when the thread has none).
extern "C" void tessera_kernel_assert_failed(const char *message);

#endif // TESSERA_TARGET_CPU_KERNELASSERTS_H
