//===- Inputs.cpp - Generated launch arguments for tuning -----------------===//

#include "tessera/autotune/Inputs.h"

#include <random>

using namespace tessera;
using namespace tessera::autotune;

StatusOr<std::vector<std::pair<std::string, std::string>>>
autotune::parseAssignments(const std::string &text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos)
      end = text.size();
    std::string part = text.substr(pos, end - pos);
    pos = end + 1;
    if (part.empty())
      continue;
    size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status(StatusCode::kInvalidArgument,
                    "'" + part + "' is not NAME=VALUE");
    out.push_back({part.substr(0, eq), part.substr(eq + 1)});
  }
  return out;
}

StatusOr<std::map<std::string, int64_t>>
autotune::parseShapes(const std::string &text) {
  TESSERA_ASSIGN_OR_RETURN(auto parts, parseAssignments(text));
  std::map<std::string, int64_t> out;
  for (const auto &[name, value] : parts) {
    char *rest = nullptr;
    long long v = std::strtoll(value.c_str(), &rest, 10);
    if (value.empty() || *rest || v < 0)
      return Status(StatusCode::kInvalidArgument,
                    "shape '" + name + "=" + value +
                        "' needs a non-negative integer");
    out[name] = v;
  }
  return out;
}

StatusOr<GeneratedArgs> autotune::generateArgs(
    const KernelInfo &info, const std::map<std::string, int64_t> &shapes,
    const std::string &precision, const std::map<std::string, double> &scalars,
    uint64_t seed) {
  std::string err;
  auto policy = PrecisionPolicy::parse(precision, &err);
  if (!policy)
    return Status(StatusCode::kInvalidArgument, err);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 15);
  GeneratedArgs out;
  for (const ParamInfo &p : info.params) {
    if (p.kind == ParamKind::Constexpr)
      continue;
    if (p.kind == ParamKind::Scalar) {
      double v = 1.0;
      if (auto it = scalars.find(p.name); it != scalars.end())
        v = it->second;
      else if (p.defaultValue && p.defaultValue->isNumber())
        v = p.defaultValue->asDouble();
      if (p.scalarKind == ScalarKind::Int)
        out.args.push_back(Arg(int64_t(v)));
      else if (p.scalarKind == ScalarKind::Bool)
        out.args.push_back(Arg(v != 0));
      else
        out.args.push_back(Arg(v));
      continue;
    }
    DType dt;
    if (auto d = parseDType(p.dtype))
      dt = *d;
    else if (p.dtype == "accum_dtype")
      dt = policy->accum;
    else
      dt = policy->storage;
    std::vector<int64_t> shape;
    for (const DimInfo &d : p.dims) {
      if (d.symbol.empty()) {
        shape.push_back(d.fixed);
        continue;
      }
      auto it = shapes.find(d.symbol);
      if (it == shapes.end())
        return Status(StatusCode::kInvalidArgument,
                      "kernel '" + info.name + "' needs a value for shape '" +
                          d.symbol + "' (parameter " + p.name + ")");
      shape.push_back(it->second);
    }
    int64_t n = 1;
    for (int64_t e : shape)
      n *= e;
    auto buf = std::make_shared<std::vector<unsigned char>>(
        storageBytes(dt, size_t(n)) + 64);
    // 64-byte aligned start inside the buffer.
    auto base = reinterpret_cast<uintptr_t>(buf->data());
    void *data = reinterpret_cast<void *>((base + 63) / 64 * 64);
    for (int64_t i = 0; i < n; ++i)
      storeFromDouble(data, dt, size_t(i),
                      isFloatDType(dt) ? uni(rng) : double(small(rng)));
    out.storage.push_back(buf);
    out.args.push_back(Arg(TensorView::contiguous(data, dt, shape)));
  }
  return out;
}
