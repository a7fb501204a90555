//===- DynamicLibrary.cpp - dlopen with a search list ---------------------===//

#include "tessera/Target/CUDA/DynamicLibrary.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace tessera;
using namespace tessera::cuda;

StatusOr<DynamicLibrary> DynamicLibrary::open(const LibrarySearch &search) {
  std::vector<std::string> tried;
  std::string lastError;
  auto tryOpen = [&](const std::string &path) -> void * {
    tried.push_back(path);
    // RTLD_LOCAL keeps the CUDA libraries' symbols out of the global scope.
    void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *err = ::dlerror();
      lastError = err ? err : "unknown dlopen error";
    }
    return handle;
  };

  auto failure = [&](const char *why) {
    std::string list;
    for (const std::string &path : tried) {
      if (!list.empty())
        list += ", ";
      list += path;
    }
    return unavailable("%s library not found%s (tried %s; last error: %s)",
                       search.displayName.c_str(), why, list.c_str(),
                       lastError.c_str());
  };

  if (!search.envVar.empty()) {
    if (const char *override = std::getenv(search.envVar.c_str());
        override && *override) {
      if (void *handle = tryOpen(override))
        return DynamicLibrary(handle, override, search.displayName);
      std::string why = " at $" + search.envVar;
      return failure(why.c_str());
    }
  }
  for (const std::string &soname : search.sonames)
    if (void *handle = tryOpen(soname))
      return DynamicLibrary(handle, soname, search.displayName);
  for (const std::string &dir : search.directories) {
    for (const std::string &soname : search.sonames) {
      std::string path = dir + "/" + soname;
      if (void *handle = tryOpen(path))
        return DynamicLibrary(handle, path, search.displayName);
    }
  }
  return failure("");
}

StatusOr<void *> DynamicLibrary::lookup(const char *symbol) const {
  ::dlerror();
  void *address = ::dlsym(handle_, symbol);
  if (!address)
    return unavailable("%s library '%s' lacks the entry point '%s'",
                       displayName_.c_str(), path_.c_str(), symbol);
  return address;
}

std::vector<std::string> tessera::cuda::cudaLibraryDirectories() {
  std::vector<std::string> dirs;
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    dirs.push_back(std::string(home) + "/lib64");
  if (dirs.empty() || dirs.front() != "/usr/local/cuda/lib64")
    dirs.push_back("/usr/local/cuda/lib64");
  return dirs;
}
