//===- Program.cpp - Programs and the small public types ------------------===//

#include "tessera/runtime/Runtime.h"

#include "tessera/Driver/Driver.h"

#include <algorithm>

using namespace tessera;

//===----------------------------------------------------------------------===//
// Small types
//===----------------------------------------------------------------------===//

const char *tessera::deviceKindName(DeviceKind kind) {
  switch (kind) {
  case DeviceKind::Cpu:
    return "cpu";
  case DeviceKind::Sim:
    return "sim";
  case DeviceKind::Cuda:
    return "cuda";
  }
  return "?";
}

std::optional<DeviceKind> tessera::parseDeviceKind(std::string_view name) {
  if (name == "cpu")
    return DeviceKind::Cpu;
  if (name == "sim")
    return DeviceKind::Sim;
  if (name == "cuda" || name == "gpu")
    return DeviceKind::Cuda;
  return std::nullopt;
}

TensorView TensorView::contiguous(void *data, DType dtype,
                                  std::vector<int64_t> shape) {
  TensorView t;
  t.data = data;
  t.dtype = dtype;
  t.strides.assign(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    t.strides[i] = t.strides[i + 1] * std::max<int64_t>(shape[i + 1], 1);
  t.shape = std::move(shape);
  return t;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string Arg::describe() const {
  if (isNone())
    return "None";
  if (auto *t = tensor()) {
    std::string s = std::string(dtypeName(t->dtype)) + " tensor of shape (";
    for (size_t i = 0; i < t->shape.size(); ++i)
      s += (i ? ", " : "") + std::to_string(t->shape[i]);
    return s + ")";
  }
  if (auto *d = floating())
    return "float " + std::to_string(*d);
  if (auto *i = integer())
    return "int " + std::to_string(*i);
  return std::string("bool ") + (*boolean() ? "True" : "False");
}

std::string SimAccessCounters::description() const {
  std::string s = space == Space::Shared ? "shared " : "global ";
  s += kind == Kind::Store    ? "store "
       : kind == Kind::Atomic ? "atomic "
                              : "load ";
  s += std::to_string(widthBytes) + "B";
  if (!location.empty())
    s += " at " + location;
  return s;
}

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

Program::Program(std::shared_ptr<const driver::SourceModule> module)
    : module_(std::move(module)) {}
Program::~Program() = default;
const std::string &Program::name() const { return module_->name(); }
std::vector<const KernelInfo *> Program::kernels() const {
  return module_->kernels();
}
const KernelInfo *Program::findKernel(const std::string &name) const {
  return module_->findKernel(name);
}
uint64_t Program::sourceHash() const { return module_->sourceHash(); }
std::string_view Program::source() const { return module_->text(); }
StatusOr<bool> Program::satisfiesRestrictions(
    const std::string &kernel,
    const std::map<std::string, ConstValue> &constants) const {
  Specialization spec;
  spec.constants = constants;
  return module_->satisfiesRestrictions(kernel, spec);
}

const char *tessera::compilerVersion() {
  return "tessera " TESSERA_VERSION_STRING;
}
