//===- Inputs.h - Generated launch arguments for tuning ---------*- C++ -*-===//
//
// Tuning ahead of deployment (tessera-tune, warmup manifests) has shapes but
// no data: these make host tensors for a kernel's signature at given shape
// symbol values, filled with reproducible random values.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_AUTOTUNE_INPUTS_H
#define TESSERA_AUTOTUNE_INPUTS_H

#include "tessera/runtime/Runtime.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tessera::autotune {

/// Launch arguments and the storage behind their tensors.
struct GeneratedArgs {
  std::vector<Arg> args;
  std::vector<std::shared_ptr<std::vector<unsigned char>>> storage;
};

/// Arguments for `info` with the shape symbols in `shapes` (every symbol
/// the signature uses must be given), tensor dtypes from their declaration
/// or the precision policy, scalars from `scalars` (by name), else their
/// defaults, else 1. Floating tensors hold uniform values in [-1, 1],
/// integer tensors values in [0, 16) (valid indices for small gathers).
StatusOr<GeneratedArgs> generateArgs(
    const KernelInfo &info, const std::map<std::string, int64_t> &shapes,
    const std::string &precision,
    const std::map<std::string, double> &scalars = {}, uint64_t seed = 1);

/// Splits "A=1,B=x" into (name, value) pairs (INVALID_ARGUMENT naming a part
/// that is not NAME=VALUE).
StatusOr<std::vector<std::pair<std::string, std::string>>>
parseAssignments(const std::string &text);

/// Parses "M=1024,N=1024,K=512" (INVALID_ARGUMENT naming the bad part).
StatusOr<std::map<std::string, int64_t>> parseShapes(const std::string &text);

} // namespace tessera::autotune

#endif // TESSERA_AUTOTUNE_INPUTS_H
