//===- DynamicLibrary.h - dlopen with a search list -------------*- C++ -*-===//
//
// Finds and opens a shared library at run time and binds entry points from an
// X-macro symbol table. Used for every CUDA library (nvJitLink, NVRTC and the
// driver) so that Tessera links none of them and runs where they are absent.
// Plain C++: no CUDA header is included anywhere in Tessera.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_CUDA_DYNAMICLIBRARY_H
#define TESSERA_TARGET_CUDA_DYNAMICLIBRARY_H

#include "tessera/Support/Status.h"

#include <string>
#include <vector>

namespace tessera::cuda {

/// Where to look for a library, in order: the file named by `envVar` (when the
/// variable is set, only that file is tried), then each of `sonames` through
/// the dynamic loader's own search, then each soname inside each of
/// `directories`. A directory of "$CUDA_HOME/lib64" style is written here
/// already expanded by the caller (see `cudaLibraryDirectories`).
struct LibrarySearch {
  std::string displayName; ///< e.g. "nvJitLink", used in messages.
  std::string envVar;      ///< e.g. "TESSERA_NVJITLINK_PATH"; may be empty.
  std::vector<std::string> sonames;
  std::vector<std::string> directories;
};

/// A handle to a library opened with dlopen. The library stays loaded for the
/// life of the process (it is never dlclose'd), so function pointers bound
/// from it never dangle. Copyable; thread-safe once opened.
class DynamicLibrary {
public:
  /// Opens the first candidate of `search` that loads. Returns UNAVAILABLE
  /// naming the library, every path tried and the last dlerror() when none
  /// does.
  static StatusOr<DynamicLibrary> open(const LibrarySearch &search);

  /// The address of `symbol`, or UNAVAILABLE naming the symbol and library.
  StatusOr<void *> lookup(const char *symbol) const;

  /// Binds `symbol` into the function pointer `fn`.
  template <typename Fn> Status bind(const char *symbol, Fn *&fn) const {
    TESSERA_ASSIGN_OR_RETURN(void *address, lookup(symbol));
    fn = reinterpret_cast<Fn *>(address);
    return okStatus();
  }

  /// The path or soname the library was opened with.
  const std::string &path() const { return path_; }
  const std::string &displayName() const { return displayName_; }

private:
  DynamicLibrary(void *handle, std::string path, std::string displayName)
      : handle_(handle), path_(std::move(path)),
        displayName_(std::move(displayName)) {}
  void *handle_ = nullptr;
  std::string path_;
  std::string displayName_;
};

/// The directories the CUDA toolkit installs libraries into:
/// "$CUDA_HOME/lib64" (when CUDA_HOME is set) and "/usr/local/cuda/lib64".
std::vector<std::string> cudaLibraryDirectories();

} // namespace tessera::cuda

#endif // TESSERA_TARGET_CUDA_DYNAMICLIBRARY_H
