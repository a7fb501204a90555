//===- Files.cpp - Files, temporary folders and executables ---------------===//

#include "tessera/Support/Files.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

using namespace tessera;

StatusOr<std::string> tessera::readFile(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return internalError("cannot read '%s': %s", path.c_str(),
                         std::strerror(errno));
  std::string contents;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0)
    contents.append(buffer, n);
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed)
    return internalError("cannot read '%s'", path.c_str());
  return contents;
}

Status tessera::writeFile(const std::string &path, std::string_view contents) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return internalError("cannot write '%s': %s", path.c_str(),
                         std::strerror(errno));
  size_t written = std::fwrite(contents.data(), 1, contents.size(), f);
  bool ok = written == contents.size();
  ok &= std::fclose(f) == 0;
  if (!ok)
    return internalError("cannot write '%s'", path.c_str());
  return okStatus();
}

bool tessera::isExecutable(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

StatusOr<TempDir> TempDir::create(std::string_view prefix) {
  const char *base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/" +
                        std::string(prefix) + "-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    return internalError("cannot create a temporary directory '%s': %s",
                         pattern.c_str(), std::strerror(errno));
  return TempDir(std::move(pattern));
}

TempDir::TempDir(TempDir &&other) noexcept : dir(std::move(other.dir)) {
  other.dir.clear();
}

TempDir::~TempDir() {
  if (dir.empty())
    return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

std::string TempDir::file(std::string_view name) const {
  return dir + "/" + std::string(name);
}
