//===- KernelAsserts.cpp - Failed kernel assertions on the host -----------===//

#include "tessera/Target/CPU/KernelAsserts.h"

#include <cstdio>

using namespace tessera::cpu;

namespace {
thread_local AssertSink *tlsSink = nullptr;
} // namespace

void AssertSink::record(const char *message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_.load(std::memory_order_relaxed))
    first_ = message ? message : "kernel assertion failed";
  failed_.store(true, std::memory_order_release);
}

std::string AssertSink::message() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_;
}

ScopedAssertSink::ScopedAssertSink(AssertSink &sink) : previous_(tlsSink) {
  tlsSink = &sink;
}

ScopedAssertSink::~ScopedAssertSink() { tlsSink = previous_; }

extern "C" void tessera_kernel_assert_failed(const char *message) {
  if (tlsSink) {
    tlsSink->record(message);
    return;
  }
  std::fprintf(stderr, "tessera: kernel assertion failed: %s\n",
               message ? message : "");
}
