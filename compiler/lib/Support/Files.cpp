//===- Files.cpp - Files, temporary folders and executables ---------------===//

#include "tessera/Support/Files.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
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

Status
tessera::writeFileAtomically(const std::string &path,
                             std::initializer_list<std::string_view> parts,
                             unsigned mode) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                  mode_t(mode));
  if (fd < 0)
    return unavailable("cannot create '%s': %s", tmp.c_str(),
                       std::strerror(errno));
  Status s = okStatus();
  for (std::string_view bytes : parts) {
    while (s.ok() && !bytes.empty()) {
      ssize_t n = ::write(fd, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        s = unavailable("cannot write '%s': %s", tmp.c_str(),
                        std::strerror(n < 0 ? errno : ENOSPC));
      else
        bytes.remove_prefix(size_t(n));
    }
  }
  if (s.ok() && ::fsync(fd) != 0)
    s = unavailable("cannot sync '%s': %s", tmp.c_str(), std::strerror(errno));
  if (::close(fd) != 0 && s.ok())
    s = unavailable("cannot close '%s': %s", tmp.c_str(), std::strerror(errno));
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    s = unavailable("cannot rename '%s' to '%s': %s", tmp.c_str(), path.c_str(),
                    std::strerror(errno));
  if (!s.ok())
    ::unlink(tmp.c_str());
  return s;
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
