//===- ScopedEnv.h - An environment variable set for a scope ----*- C++ -*-===//
//
// Sets (or unsets) a variable until the end of the scope, then restores
// what it was, also when a failed ASSERT leaves the test early.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_SUPPORT_SCOPEDENV_H
#define TESSERA_TESTS_SUPPORT_SCOPEDENV_H

#include <cstdlib>
#include <optional>
#include <string>

namespace tessera::test {

class ScopedEnv {
public:
  /// Sets `name` to `value`; unsets it when `value` is nullopt.
  ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name_;
  std::optional<std::string> old_;
};

} // namespace tessera::test

#endif // TESSERA_TESTS_SUPPORT_SCOPEDENV_H
