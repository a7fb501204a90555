//===- Program.h - Loaded tile-language source ------------------*- C++ -*-===//
//
// A Program is a parsed source module (Runtime::loadFile/loadSource): its
// kernels, their signatures and autotune spaces. Plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_PROGRAM_H
#define TESSERA_RUNTIME_PROGRAM_H

#include "tessera/Support/KernelInfo.h"
#include "tessera/Support/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

namespace driver {
class SourceModule;
}

class Runtime;

/// A parsed source module.
class Program {
public:
  ~Program();
  const std::string &name() const;
  std::vector<const KernelInfo *> kernels() const;
  const KernelInfo *findKernel(const std::string &name) const;
  uint64_t sourceHash() const;
  /// The source text the program was loaded from.
  std::string_view source() const;
  /// Whether `constants` (an autotune configuration) satisfies kernel
  /// `kernel`'s `restrict=[...]` expressions.
  StatusOr<bool> satisfiesRestrictions(
      const std::string &kernel,
      const std::map<std::string, ConstValue> &constants) const;

private:
  friend class Runtime;
  explicit Program(std::shared_ptr<const driver::SourceModule> module);
  std::shared_ptr<const driver::SourceModule> module_;
};

} // namespace tessera

#endif // TESSERA_RUNTIME_PROGRAM_H
