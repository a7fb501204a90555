//===- Check.cpp - Always-on precondition checks --------------------------===//

#include "Check.h"

#include <cstdio>
#include <cstdlib>

namespace tessera::testing::detail {

void checkFailed(const char *file, int line, const char *cond,
                 const char *message) {
  std::fprintf(stderr, "%s:%d: test-support check failed: `%s`: %s\n", file,
               line, cond, message);
  std::fflush(stderr);
  std::abort();
}

} // namespace tessera::testing::detail
