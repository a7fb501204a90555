//===- KernelArtifact.h - A compiled GPU kernel as bytes --------*- C++ -*-===//
//
// What the cuda device needs to launch a kernel without compiling it: the
// module image (cubin, or PTX the driver compiles) and the launch facts the
// compiler worked out (block size, shared memory, tensor maps, program
// schedule), packed into one byte string for the disk cache, and the key
// it is stored under. Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_CACHE_KERNELARTIFACT_H
#define TESSERA_RUNTIME_CACHE_KERNELARTIFACT_H

#include "tessera/Driver/Driver.h"

#include <optional>
#include <string>
#include <string_view>

namespace tessera {

struct KernelArtifact {
  std::string image;
  int blockSize = 0;
  int64_t tileSharedBytes = 0;
  int64_t staticSharedBytes = 0;
  std::vector<driver::TensorMapArg> tensorMaps;
  driver::ProgramSchedule schedule;

  std::string pack() const;
  /// Nothing when `bytes` is not a packed artifact of this version.
  static std::optional<KernelArtifact> unpack(std::string_view bytes);
};

/// The key of kernel `kernel` of a source with hash `sourceHash` compiled
/// for `spec` on `device` for code target `target` (Device::codeTarget) by
/// this version of Tessera (compilerVersion()) and, with `thisBuild`, by
/// this build of it (the disk cache's keys: a rebuilt library does not
/// reuse what an earlier one compiled; bundles travel between builds of a
/// version).
std::string kernelArtifactKey(std::string_view device, std::string_view target,
                              uint64_t sourceHash, std::string_view kernel,
                              const Specialization &spec, bool thisBuild);

/// This build's identity: the file that holds the running runtime code
/// (the shared library or the executable), with its size and modification
/// time.
const std::string &buildIdentity();

} // namespace tessera

#endif // TESSERA_RUNTIME_CACHE_KERNELARTIFACT_H
