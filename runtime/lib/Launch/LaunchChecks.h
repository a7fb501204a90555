//===- LaunchChecks.h - Launch-time checks and argument packing -*- C++ -*-===//
//
// What every device does with a launch before its own work: the arguments
// checked against the kernel's signature (kinds, dtypes, ranks, shape
// symbols, strides, grid), the variant of the code they allow (unit
// strides, alignment, 32-bit indexing, declared grid, @heuristics values),
// and the arguments flattened into the slots compiled kernels take.
// Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_LAUNCH_LAUNCHCHECKS_H
#define TESSERA_RUNTIME_LAUNCH_LAUNCHCHECKS_H

#include "tessera/Driver/Driver.h"
#include "tessera/runtime/Runtime.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tessera::launch {

/// What a launch guarantees that its compiled variant relies on; the masks
/// have one bit per parameter.
struct VariantKey {
  uint64_t unitMask = 0, absentMask = 0;
  /// Tensors 16-byte aligned (cpu code ignores it).
  uint64_t alignedMask = 0;
  /// Every dimension and element offset of every tensor fits in 31 bits.
  bool index32 = false;
  /// The grid is within the one the kernel declares for these shapes, axis
  /// by axis (Specialization::declaredGrid).
  bool declaredGrid = false;
  /// The `@heuristics` values ("NAME=VALUE;...").
  std::string heuristics;
  auto operator<=>(const VariantKey &) const = default;
};

/// A checked launch: its grid of program instances and the variant it
/// takes. The aligned mask is left to the device (Signature::alignedMask of
/// the tensors its code receives): host code ignores it, cuda tests its
/// staged copies.
struct Plan {
  std::array<int64_t, 3> grid{1, 1, 1};
  VariantKey key;
};

/// The specialisation variant `key` of `spec` is compiled with.
Specialization variantSpec(const Specialization &spec, const KernelInfo &info,
                           const VariantKey &key);

/// A kernel's launch interface: its parameters, their resolved dtypes and
/// which are passed at launch.
class Signature {
public:
  std::string name;
  std::shared_ptr<const driver::SourceModule> module;
  const KernelInfo *info = nullptr;
  Specialization spec;
  /// Element type of every tensor parameter (generic dtypes resolved).
  std::vector<DType> paramDTypes;
  /// Indices of the parameters passed at launch (tensors and scalars).
  std::vector<int> launchParams;
  /// A CUDA C++ kernel: tensors are passed as one pointer each.
  bool barePointers = false;

  /// Checks `args` for a launch on `device`.
  StatusOr<Plan> check(const std::vector<Arg> &args, const LaunchOptions &opts,
                       DeviceKind device) const;
  /// The `@heuristics` values a compile without a launch uses: the
  /// specialisation's, else the parameters' defaults.
  std::string defaultHeuristics() const;
  /// Tensors whose first element, outer strides and rows are multiples of
  /// 16 bytes (with a unit innermost stride) and that a TMA tensor map can
  /// describe: GPU code reads them with 16-byte vectors or TMA copies
  /// without testing alignment at run time.
  uint64_t alignedMask(const std::vector<Arg> &args) const;
  /// The argument slots: tensors as (allocated, aligned, offset, sizes...,
  /// strides...), absent ones omitted -- with barePointers a tensor is one
  /// pointer (null when absent) -- and scalars as one slot each (value in
  /// the low bytes).
  std::vector<int64_t> flatten(const std::vector<Arg> &args) const;
  /// The tensor of parameter `param` in `args`, with the parameter's name.
  StatusOr<std::pair<const TensorView *, std::string>>
  tensorOfParam(const std::vector<Arg> &args, int param) const;

private:
  /// What one binding of the shape symbols (sorted by name) decides.
  struct ShapeFacts {
    std::vector<std::pair<const std::string *, int64_t>> binding;
    Status heuristicsStatus;
    std::string heuristics;
    StatusOr<std::vector<int64_t>> grid = internalError("no grid evaluated");
  };
  /// The last binding's facts (most launches repeat their shapes).
  mutable std::mutex shapeMutex_;
  mutable std::shared_ptr<const ShapeFacts> lastShapes_;
  /// SourceModule::index32GridBound for the index32 variant of a launch,
  /// cached by its `@heuristics` values.
  std::array<int64_t, 3> index32GridBound(const VariantKey &key) const;
  mutable std::mutex gridBoundMutex_;
  mutable std::map<std::string, std::array<int64_t, 3>> gridBounds_;
};

/// A tensor map's geometry as cuTensorMapEncodeTiled takes it: dimensions
/// innermost first, byte strides (strides[0] the element size) and box.
struct TensorMapGeometry {
  int rank = 0;
  uint64_t dims[5] = {0, 0, 0, 0, 0}, strides[5] = {0, 0, 0, 0, 0};
  unsigned box[5] = {0, 0, 0, 0, 0};
  int64_t elementBytes = 0;
};

/// The geometry of the tensor map `m` over `t` (INTERNAL when a TMA copy
/// cannot read `t`: the launch takes a TMA variant only for tensors that
/// Signature::alignedMask accepts).
StatusOr<TensorMapGeometry> tensorMapGeometry(const TensorView &t,
                                              const driver::TensorMapArg &m,
                                              const std::string &kernel,
                                              const std::string &param);

/// The launch grid of a kernel with program schedule `s` for the grid of
/// programs `grid`: that grid for an unscheduled kernel, one block per
/// program along x for a grouped one, and at most `resident` blocks for a
/// persistent one.
std::array<int64_t, 3> launchGridOf(const driver::ProgramSchedule &s,
                                    const std::array<int64_t, 3> &grid,
                                    int64_t resident);

} // namespace tessera::launch

#endif // TESSERA_RUNTIME_LAUNCH_LAUNCHCHECKS_H
