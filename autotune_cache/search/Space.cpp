//===- Space.cpp - Autotuning search spaces -------------------------------===//
//
// Mixed-radix linearisation, restriction checks and the cached enumeration
// of valid configurations.
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/Space.h"

#include <cassert>
#include <limits>
#include <mutex>
#include <sstream>

namespace tessera::autotune {

struct Space::Cache {
  std::once_flag once;
  std::vector<Config> valid;
};

static std::string defaultLabel(double value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

Space::Space() : cache_(std::make_shared<Cache>()) {}

Space::Space(std::vector<Parameter> params,
             std::function<bool(const Config &)> valid)
    : params_(std::move(params)), valid_(std::move(valid)),
      cache_(std::make_shared<Cache>()) {
  cartesianSize_ = 1;
  for (Parameter &p : params_) {
    if (p.labels.empty())
      for (double v : p.values)
        p.labels.push_back(defaultLabel(v));
    assert(p.labels.size() == p.values.size() &&
           "parameter labels and values differ in length");
    uint64_t n = p.values.size();
    if (n == 0) {
      cartesianSize_ = 0;
      continue;
    }
    assert(cartesianSize_ <= std::numeric_limits<uint64_t>::max() / n &&
           "cartesian size does not fit in 64 bits");
    cartesianSize_ *= n;
  }
}

bool Space::isValid(const Config &config) const {
  if (config.size() != params_.size())
    return false;
  for (size_t i = 0; i < config.size(); ++i)
    if (config[i] >= params_[i].values.size())
      return false;
  return !valid_ || valid_(config);
}

uint64_t Space::index(const Config &config) const {
  assert(config.size() == params_.size() && "config of the wrong size");
  uint64_t idx = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    assert(config[i] < params_[i].values.size() && "value index out of range");
    idx = idx * params_[i].values.size() + config[i];
  }
  return idx;
}

Config Space::config(uint64_t index) const {
  assert(index < cartesianSize_ && "index out of range");
  Config c(params_.size());
  for (size_t i = params_.size(); i-- > 0;) {
    uint64_t n = params_[i].values.size();
    c[i] = static_cast<uint32_t>(index % n);
    index /= n;
  }
  return c;
}

std::string Space::describe(const Config &config) const {
  std::string out;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (i)
      out += ',';
    out += params_[i].name;
    out += '=';
    if (i < config.size() && config[i] < params_[i].labels.size())
      out += params_[i].labels[config[i]];
    else
      out += '?';
  }
  return out;
}

const std::vector<Config> &Space::validConfigs() const {
  std::call_once(cache_->once, [&] {
    if (cartesianSize_ == 0)
      return;
    Config c(params_.size(), 0);
    // Odometer walk in index order (last parameter fastest).
    while (true) {
      if (!valid_ || valid_(c))
        cache_->valid.push_back(c);
      size_t i = params_.size();
      while (i > 0) {
        --i;
        if (++c[i] < params_[i].values.size())
          break;
        c[i] = 0;
        if (i == 0)
          return;
      }
      if (params_.empty())
        return;
    }
  });
  return cache_->valid;
}

} // namespace tessera::autotune
