//===- KernelAssertsTest.cpp - The host side of kernel assertions ---------===//

#include "tessera/Target/CPU/KernelAsserts.h"

#include <gtest/gtest.h>

#include <thread>

using namespace tessera::cpu;

namespace {

TEST(KernelAsserts, TheSinkKeepsTheFirstMessage) {
  AssertSink sink;
  EXPECT_FALSE(sink.failed());
  {
    ScopedAssertSink scope(sink);
    tessera_kernel_assert_failed("first");
    tessera_kernel_assert_failed("second");
  }
  EXPECT_TRUE(sink.failed());
  EXPECT_EQ(sink.message(), "first");
}

TEST(KernelAsserts, ScopesNestAndBelongToTheirThread) {
  AssertSink outer, inner, other;
  {
    ScopedAssertSink a(outer);
    {
      ScopedAssertSink b(inner);
      tessera_kernel_assert_failed("inner");
    }
    // Another thread's sink is its own: nothing reaches this thread's.
    std::thread t([&] {
      ScopedAssertSink c(other);
      tessera_kernel_assert_failed("other thread");
    });
    t.join();
    EXPECT_FALSE(outer.failed());
    tessera_kernel_assert_failed("outer");
  }
  EXPECT_EQ(inner.message(), "inner");
  EXPECT_EQ(outer.message(), "outer");
  EXPECT_EQ(other.message(), "other thread");
}

} // namespace
