//===- Host.cpp - Facts about the host machine
//-----------------------------===//

#include "tessera/Support/Host.h"

#include <fstream>
#include <sstream>

std::string tessera::cpuModelNameFromCpuinfo(std::string_view cpuinfo) {
  size_t pos = 0;
  while (pos < cpuinfo.size()) {
    size_t end = cpuinfo.find('\n', pos);
    std::string_view line = cpuinfo.substr(pos, end == std::string_view::npos
                                                    ? std::string_view::npos
                                                    : end - pos);
    pos = end == std::string_view::npos ? cpuinfo.size() : end + 1;
    if (line.substr(0, 10) != "model name")
      continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      continue;
    std::string_view v = line.substr(colon + 1);
    size_t b = v.find_first_not_of(" \t");
    size_t e = v.find_last_not_of(" \t\r");
    if (b == std::string_view::npos)
      return "";
    return std::string(v.substr(b, e - b + 1));
  }
  return "";
}

std::string tessera::hostCpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::stringstream ss;
  ss << in.rdbuf();
  return cpuModelNameFromCpuinfo(ss.str());
}
