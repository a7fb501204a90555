//===- Check.h - Always-on precondition checks for test support -*- C++ -*-===//
//
// The test-support library reports misuse (shape mismatches, out-of-range
// indices) by printing a message and aborting, also in release builds: a test
// helper that silently computes the wrong thing is worse than a crash, and
// Tessera code throws no exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_SUPPORT_CHECK_H
#define TESSERA_TESTS_SUPPORT_CHECK_H

namespace tessera::testing::detail {

/// Prints "file:line: test-support check failed: `cond`: message" to stderr
/// and aborts. Never returns.
[[noreturn]] void checkFailed(const char *file, int line, const char *cond,
                              const char *message);

} // namespace tessera::testing::detail

/// Aborts with `msg` (a C string) when `cond` is false, in every build mode.
#define TESSERA_TEST_CHECK(cond, msg)                                          \
  do {                                                                         \
    if (!(cond))                                                               \
      ::tessera::testing::detail::checkFailed(__FILE__, __LINE__, #cond, msg); \
  } while (false)

#endif // TESSERA_TESTS_SUPPORT_CHECK_H
