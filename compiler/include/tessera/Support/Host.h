//===- Host.h - Facts about the host machine ----------------------*- C++
//-*-===//
//
// Plain C++ (no LLVM): usable from the runtime and the benchmark libraries.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SUPPORT_HOST_H
#define TESSERA_SUPPORT_HOST_H

#include <string>
#include <string_view>

namespace tessera {

/// The CPU's model name from the first "model name" line of `cpuinfo` (the
/// text of /proc/cpuinfo), trimmed; "" when there is none.
std::string cpuModelNameFromCpuinfo(std::string_view cpuinfo);

/// The host CPU's model name from /proc/cpuinfo; "" when unknown.
std::string hostCpuModelName();

} // namespace tessera

#endif // TESSERA_SUPPORT_HOST_H
