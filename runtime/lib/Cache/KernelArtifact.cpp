//===- KernelArtifact.cpp - A compiled GPU kernel as bytes ----------------===//

#include "Cache/KernelArtifact.h"

#include "tessera/runtime/Device.h"

#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <sys/stat.h>

using namespace tessera;

namespace {
constexpr int kVersion = 1;
} // namespace

std::string KernelArtifact::pack() const {
  nlohmann::json maps = nlohmann::json::array();
  for (const driver::TensorMapArg &m : tensorMaps)
    maps.push_back({{"arg", m.arg},
                    {"param", m.param},
                    {"box", m.box},
                    {"swizzle", m.swizzle}});
  nlohmann::json meta = {{"version", kVersion},
                         {"blockSize", blockSize},
                         {"tileSharedBytes", tileSharedBytes},
                         {"staticSharedBytes", staticSharedBytes},
                         {"tensorMaps", maps},
                         {"logicalGrid", schedule.logicalGrid},
                         {"persistent", schedule.persistent},
                         {"group", schedule.group}};
  std::string text = meta.dump();
  std::string out = std::to_string(text.size()) + "\n" + text;
  out += image;
  return out;
}

std::optional<KernelArtifact> KernelArtifact::unpack(std::string_view bytes) {
  size_t nl = bytes.find('\n');
  if (nl == std::string_view::npos || nl > 12)
    return std::nullopt;
  size_t len = 0;
  for (char c : bytes.substr(0, nl)) {
    if (c < '0' || c > '9')
      return std::nullopt;
    len = len * 10 + size_t(c - '0');
  }
  if (len > bytes.size() - nl - 1)
    return std::nullopt;
  nlohmann::json meta =
      nlohmann::json::parse(bytes.substr(nl + 1, len), nullptr, false);
  if (!meta.is_object() || meta.value("version", 0) != kVersion)
    return std::nullopt;
  KernelArtifact a;
  try {
    a.blockSize = meta.at("blockSize").get<int>();
    a.tileSharedBytes = meta.at("tileSharedBytes").get<int64_t>();
    a.staticSharedBytes = meta.at("staticSharedBytes").get<int64_t>();
    for (const nlohmann::json &m : meta.at("tensorMaps")) {
      driver::TensorMapArg t;
      t.arg = m.at("arg").get<int>();
      t.param = m.at("param").get<int>();
      t.box = m.at("box").get<std::vector<int64_t>>();
      t.swizzle = m.at("swizzle").get<int>();
      a.tensorMaps.push_back(std::move(t));
    }
    a.schedule.logicalGrid = meta.at("logicalGrid").get<bool>();
    a.schedule.persistent = meta.at("persistent").get<bool>();
    a.schedule.group = meta.at("group").get<int64_t>();
  } catch (const nlohmann::json::exception &) {
    return std::nullopt;
  }
  a.image = std::string(bytes.substr(nl + 1 + len));
  if (a.image.empty() || a.blockSize <= 0)
    return std::nullopt;
  return a;
}

const std::string &tessera::buildIdentity() {
  static const std::string id = [] {
    Dl_info info{};
    std::string file = "?";
    if (::dladdr(reinterpret_cast<void *>(&tessera::compilerVersion), &info) &&
        info.dli_fname)
      file = info.dli_fname;
    struct stat st {};
    // The main program may be named as it was started (or not at all):
    // then the executable itself.
    if (::stat(file.c_str(), &st) != 0) {
      file = "/proc/self/exe";
      if (::stat(file.c_str(), &st) != 0)
        return file;
    }
    return file + ":" + std::to_string(st.st_size) + ":" +
           std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  }();
  return id;
}

std::string
tessera::kernelArtifactKey(std::string_view device, std::string_view target,
                           uint64_t sourceHash, std::string_view kernel,
                           const Specialization &spec, bool thisBuild) {
  std::string key = "tessera-kernel\n";
  key += compilerVersion();
  key += "\n";
  key += thisBuild ? buildIdentity() : std::string("any build");
  key += "\n";
  key += device;
  key += "\n";
  key += target;
  key += "\n";
  key += std::to_string(sourceHash);
  key += "\n";
  key += kernel;
  key += "\n";
  key += spec.canonical();
  return key;
}
