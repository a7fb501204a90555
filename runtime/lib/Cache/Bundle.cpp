//===- Bundle.cpp - Deployment bundles: tuned configurations and code -----===//

#include "Cache/Bundle.h"

#include "tessera/Support/Files.h"
#include "tessera/Support/Hash.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdint>
#include <filesystem>

using namespace tessera;

namespace {
constexpr const char *kFormat = "tessera-bundle";
constexpr int kVersion = 1;
} // namespace

std::string tessera::encodeBundle(const BundleContents &bundle) {
  nlohmann::json code = nlohmann::json::array();
  for (const BundleCode &c : bundle.code)
    code.push_back({{"device", c.device},
                    {"target", c.target},
                    {"kernel", c.kernel},
                    {"key", c.key},
                    {"hash", fnv1a(c.code)},
                    {"code", nlohmann::json::binary(std::vector<std::uint8_t>(
                                 c.code.begin(), c.code.end()))}});
  nlohmann::json doc = {{"format", kFormat},
                        {"version", kVersion},
                        {"compiler", bundle.compiler},
                        {"tuning", bundle.tuningRecords},
                        {"code", code}};
  std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(doc);
  return std::string(bytes.begin(), bytes.end());
}

StatusOr<BundleContents> tessera::decodeBundle(const std::string &bytes,
                                               const std::string &origin) {
  nlohmann::json doc = nlohmann::json::from_cbor(bytes, /*strict=*/true,
                                                 /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return dataLoss("'%s' is not a Tessera bundle (or it is damaged)",
                    origin.c_str());
  if (doc.value("format", "") != kFormat)
    return dataLoss("'%s' is not a Tessera bundle", origin.c_str());
  if (doc.value("version", 0) != kVersion)
    return failedPrecondition("bundle '%s' has format version %d; this "
                              "Tessera reads version %d",
                              origin.c_str(), doc.value("version", 0),
                              kVersion);
  BundleContents b;
  try {
    b.compiler = doc.at("compiler").get<std::string>();
    b.tuningRecords = doc.at("tuning").get<std::string>();
    for (const nlohmann::json &c : doc.at("code")) {
      BundleCode e;
      e.device = c.at("device").get<std::string>();
      e.target = c.at("target").get<std::string>();
      e.kernel = c.at("kernel").get<std::string>();
      e.key = c.at("key").get<std::string>();
      const auto &bin = c.at("code").get_binary();
      e.code.assign(bin.begin(), bin.end());
      if (fnv1a(e.code) != c.at("hash").get<uint64_t>())
        return dataLoss("bundle '%s' is damaged: the code of kernel '%s' "
                        "for %s does not match its hash",
                        origin.c_str(), e.kernel.c_str(), e.target.c_str());
      b.code.push_back(std::move(e));
    }
  } catch (const nlohmann::json::exception &e) {
    return dataLoss("bundle '%s' is damaged: %s", origin.c_str(), e.what());
  }
  return b;
}

Status tessera::writeBundle(const std::string &path,
                            const BundleContents &bundle) {
  return writeFileAtomically(path, {encodeBundle(bundle)}, 0644);
}

StatusOr<BundleContents> tessera::readBundle(const std::string &path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return notFound("no bundle '%s'", path.c_str());
  TESSERA_ASSIGN_OR_RETURN(std::string bytes, readFile(path));
  return decodeBundle(bytes, path);
}
