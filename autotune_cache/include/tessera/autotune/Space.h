//===- Space.h - Autotuning search spaces -----------------------*- C++ -*-===//
//
// A search space is a list of tunable parameters, each with a finite list of
// values, plus a restriction predicate known before any run (for example
// "the work-group tile must be a multiple of the thread tile"). A
// configuration picks one value index per parameter. Configurations are
// linearised in mixed radix (the last parameter varies fastest), which gives
// every configuration of the cartesian product a unique 64-bit index.
// Plain C++: no LLVM, MLIR or CUDA types.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_AUTOTUNE_SPACE_H
#define TESSERA_AUTOTUNE_SPACE_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tessera::autotune {

/// One tunable parameter: its name and value list. `values` are the numeric
/// forms (booleans 0/1; non-numeric values get their index), `labels` the
/// textual forms ("128", "True", "f16"). Both lists have the same length
/// (an empty `labels` is filled from `values`).
struct Parameter {
  std::string name;
  std::vector<double> values;
  std::vector<std::string> labels;
};

/// A configuration: one value index per parameter, in Space order.
using Config = std::vector<uint32_t>;

class Space {
public:
  /// An empty space (no parameters, one empty configuration).
  Space();
  /// `valid`: restrictions known before any run (nullptr = all valid). The
  /// predicate is only called with well-formed configurations (right size,
  /// every index in range). The cartesian size must fit in 64 bits.
  Space(std::vector<Parameter> params,
        std::function<bool(const Config &)> valid = nullptr);

  const std::vector<Parameter> &params() const { return params_; }
  size_t numParams() const { return params_.size(); }
  uint64_t cartesianSize() const { return cartesianSize_; }

  /// True if `config` is well formed and passes the restriction predicate.
  bool isValid(const Config &config) const;

  /// Mixed-radix linearisation: the last parameter varies fastest.
  /// `config` must be well formed.
  uint64_t index(const Config &config) const;
  /// Inverse of index(); `index` must be < cartesianSize().
  Config config(uint64_t index) const;

  /// "BLOCK_M=128,num_warps=4".
  std::string describe(const Config &config) const;

  /// Every valid configuration in index order. Enumerates the cartesian
  /// product on the first call (callers only use it on spaces they know are
  /// small enough) and caches the result; copies of a Space share the cache.
  /// Thread-safe.
  const std::vector<Config> &validConfigs() const;

private:
  struct Cache;
  std::vector<Parameter> params_;
  std::function<bool(const Config &)> valid_;
  uint64_t cartesianSize_ = 1;
  std::shared_ptr<Cache> cache_;
};

} // namespace tessera::autotune

#endif // TESSERA_AUTOTUNE_SPACE_H
