//===- Tensor.h - Tensor views and launch arguments -------------*- C++ -*-===//
//
// TensorView (a strided view of host or device memory) and Arg (one launch
// argument: a tensor, a number or None). Plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_TENSOR_H
#define TESSERA_RUNTIME_TENSOR_H

#include "tessera/Support/DType.h"
#include "tessera/runtime/Device.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tessera {

/// A strided view of tensor memory. Strides are in elements. The memory
/// is host memory unless `device` names the device whose buffer
/// (`Runtime::allocate`) holds it; such a view may only be passed to
/// kernels of that device, and for `cuda` `data` is a device address.
struct TensorView {
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::optional<DeviceKind> device;

  /// A row-major contiguous view.
  static TensorView contiguous(void *data, DType dtype,
                               std::vector<int64_t> shape);
  int64_t numel() const;
};

/// One launch argument: a tensor view, a number, or None (an omitted
/// optional tensor).
class Arg {
public:
  Arg() : v_(std::monostate{}) {}
  Arg(TensorView t) : v_(std::move(t)) {}
  Arg(double d) : v_(d) {}
  Arg(float f) : v_(double(f)) {}
  Arg(int64_t i) : v_(i) {}
  Arg(int i) : v_(int64_t(i)) {}
  Arg(bool b) : v_(b) {}
  static Arg none() { return Arg(); }

  bool isNone() const { return std::holds_alternative<std::monostate>(v_); }
  const TensorView *tensor() const { return std::get_if<TensorView>(&v_); }
  const double *floating() const { return std::get_if<double>(&v_); }
  const int64_t *integer() const { return std::get_if<int64_t>(&v_); }
  const bool *boolean() const { return std::get_if<bool>(&v_); }
  std::string describe() const;

private:
  std::variant<std::monostate, TensorView, double, int64_t, bool> v_;
};

} // namespace tessera

#endif // TESSERA_RUNTIME_TENSOR_H
