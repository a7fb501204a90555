//===- Bundle.h - Deployment bundles: tuned configurations and code -*- C++
//-*-===//
//
// One file a deployment ships: the tuning records of its kernels (the
// tuning cache's export format) and their compiled code for one or more
// code targets (Device::codeTarget), written by one version of Tessera.
// A CBOR document (nlohmann::json's binary format) with the code as byte
// strings, each with its length and content hash; a file that does not
// decode, or whose code does not match its hash, is DATA_LOSS. Internal
// to the runtime (Runtime::loadBundle / saveBundle are the API).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_CACHE_BUNDLE_H
#define TESSERA_RUNTIME_CACHE_BUNDLE_H

#include "tessera/Support/Status.h"

#include <string>
#include <vector>

namespace tessera {

struct BundleCode {
  std::string device; ///< "cpu", "cuda"
  std::string target; ///< Device::codeTarget(), e.g. "sm_90a"
  std::string kernel; ///< The kernel's name.
  std::string key;    ///< kernelArtifactKey(..., thisBuild = false)
  std::string code;   ///< Device::pack()
};

struct BundleContents {
  /// compilerVersion() of the writer.
  std::string compiler;
  /// Tuning records, as TuningCache::exportTo writes them ("" for none).
  std::string tuningRecords;
  std::vector<BundleCode> code;
};

/// The bytes of a bundle (a CBOR document).
std::string encodeBundle(const BundleContents &bundle);
/// A bundle from its bytes; DATA_LOSS when they are not a whole one, naming
/// `origin`.
StatusOr<BundleContents> decodeBundle(const std::string &bytes,
                                      const std::string &origin);

/// Writes `bundle` to `path` atomically.
Status writeBundle(const std::string &path, const BundleContents &bundle);
/// Reads the bundle at `path` (NOT_FOUND when there is none).
StatusOr<BundleContents> readBundle(const std::string &path);

} // namespace tessera

#endif // TESSERA_RUNTIME_CACHE_BUNDLE_H
