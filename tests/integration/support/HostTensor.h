//===- HostTensor.h - Owning strided host tensor for tests ------*- C++ -*-===//
//
// A tensor in host memory for correctness tests: an element type, a shape and
// strides counted in *elements*, a storage offset, and reference-counted byte
// storage. Views (transpose, slice, reshape, broadcast) share the storage and
// keep it alive. Element access goes through tessera::loadAsDouble and
// tessera::storeFromDouble, so every write is rounded to the tensor's dtype.
//
// "Logical order" below always means row-major order over the shape, whatever
// the strides are: for a [2, 3] tensor, flat index 4 is element [1, 1].
//
// Misuse (bad dimension, index out of range, size mismatch) aborts with a
// message in every build mode; see Check.h.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_SUPPORT_HOSTTENSOR_H
#define TESSERA_TESTS_SUPPORT_HOSTTENSOR_H

#include "tessera/Support/DType.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tessera::testing {

/// An owning (shared-storage) strided tensor in host memory.
///
/// Copying a HostTensor is cheap and yields another view of the same storage;
/// use clone() for a deep copy. Strides must be non-negative; a stride of 0
/// (from expanded()) makes several logical elements alias one stored element.
class HostTensor {
public:
  /// Byte written over all storage by empty(), padded() and strided(): it
  /// reads as NaN in every floating-point dtype, -1 in the signed integer
  /// dtypes and true in bool, so elements nobody wrote stand out.
  static constexpr unsigned char kPoisonByte = 0xFF;

  /// Alignment in bytes of the start of every storage allocation.
  static constexpr size_t kStorageAlignment = 64;

  /// An undefined tensor: no storage, rank 0, dtype f32; defined() is false.
  /// Useful as "no tensor" for optional arguments (e.g. layerNorm's bias).
  HostTensor() = default;

  /// A contiguous row-major tensor whose storage is filled with kPoisonByte.
  /// All extents must be >= 0; an empty shape gives a rank-0 scalar.
  static HostTensor empty(std::vector<int64_t> shape, DType dtype);

  /// A contiguous row-major tensor of zeros (all bytes 0; false for bool).
  static HostTensor zeros(std::vector<int64_t> shape, DType dtype);

  /// A contiguous tensor with every element set to `value` (rounded).
  static HostTensor full(std::vector<int64_t> shape, DType dtype, double value);

  /// A contiguous tensor holding `values` in logical order, each rounded to
  /// `dtype`. `values.size()` must equal the number of elements of `shape`.
  static HostTensor fromValues(std::vector<int64_t> shape, DType dtype,
                               std::span<const double> values);

  /// A non-contiguous tensor embedded in a larger allocation: dimension `d`
  /// of the allocation has extent `shape[d] + padding[d]`, and the view
  /// starts `leadingPad` elements into the storage. For example shape
  /// {3, 4} with padding {0, 4} gives a row pitch (stride 0) of 8 elements.
  /// `padding` must have one non-negative entry per dimension. The whole
  /// storage, padding included, is filled with kPoisonByte.
  static HostTensor padded(std::vector<int64_t> shape, DType dtype,
                           std::vector<int64_t> padding,
                           int64_t leadingPad = 0);

  /// A tensor with arbitrary non-negative `strides` (in elements) starting at
  /// element `storageOffset`; the storage is just large enough for the view
  /// and filled with kPoisonByte. Overlapping strides are allowed.
  static HostTensor strided(std::vector<int64_t> shape,
                            std::vector<int64_t> strides, DType dtype,
                            int64_t storageOffset = 0);

  /// True unless default-constructed.
  bool defined() const { return storage_ != nullptr; }
  /// The element type.
  DType dtype() const { return dtype_; }
  /// Number of dimensions.
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  /// Extents of all dimensions.
  const std::vector<int64_t> &shape() const { return shape_; }
  /// Strides of all dimensions, in elements.
  const std::vector<int64_t> &strides() const { return strides_; }
  /// Extent of dimension `d`; negative `d` counts from the back.
  int64_t dim(int64_t d) const;
  /// Stride of dimension `d` in elements; negative `d` counts from the back.
  int64_t stride(int64_t d) const;
  /// Index, in elements, of the first logical element within the storage.
  int64_t storageOffset() const { return offset_; }
  /// Number of logical elements (1 for rank 0, 0 if any extent is 0).
  int64_t numel() const;
  /// Size of one element in bytes.
  size_t elementSize() const { return dtypeSize(dtype_); }
  /// True if the logical elements are laid out densely in row-major order
  /// (extent-1 dimensions may have any stride; empty tensors are
  /// contiguous).
  bool isContiguous() const;

  /// Pointer to the first logical element (storage + offset * elementSize).
  void *data();
  /// Pointer to the first logical element (storage + offset * elementSize).
  const void *data() const;
  /// Pointer to the start of the whole storage allocation.
  void *storageData();
  /// Pointer to the start of the whole storage allocation.
  const void *storageData() const;
  /// Size of the whole storage allocation in bytes.
  size_t storageBytes() const;
  /// True if both tensors are views of the same allocation.
  bool sharesStorageWith(const HostTensor &other) const;

  /// Storage element index (from storageData()) of the element at the
  /// multi-index `index`, which must have rank() in-range entries.
  int64_t storageIndex(std::span<const int64_t> index) const;
  /// Storage element index of the element at logical flat index `flat`.
  int64_t storageIndexOfFlat(int64_t flat) const;
  /// Storage element index of every logical element, in logical order.
  std::vector<int64_t> storageIndices() const;
  /// The multi-index of logical flat index `flat`.
  std::vector<int64_t> unflatten(int64_t flat) const;

  /// Element at multi-index `index`, as a double.
  double get(std::initializer_list<int64_t> index) const;
  /// Element at multi-index `index`, as a double.
  double get(std::span<const int64_t> index) const;
  /// Writes `value`, rounded to dtype(), at multi-index `index`.
  void set(std::initializer_list<int64_t> index, double value);
  /// Writes `value`, rounded to dtype(), at multi-index `index`.
  void set(std::span<const int64_t> index, double value);
  /// Element at logical flat index `flat`, as a double.
  double at(int64_t flat) const;
  /// Writes `value`, rounded to dtype(), at logical flat index `flat`.
  void setAt(int64_t flat, double value);

  /// All elements as doubles, in logical order.
  std::vector<double> toDoubleVector() const;
  /// Writes `values` (logical order, size numel()) rounded to dtype().
  void assignFromDoubles(std::span<const double> values);
  /// Element-wise copy with conversion: shapes must be equal; `src` may have
  /// any dtype and strides. Safe when `src` aliases this tensor exactly.
  void copyFrom(const HostTensor &src);
  /// Writes `value`, rounded to dtype(), to every logical element.
  void fill(double value);

  /// View with dimensions `d0` and `d1` (and their strides) swapped.
  HostTensor transposed(int64_t d0, int64_t d1) const;
  /// View of the elements start, start+step, ... < stop of dimension `dim`.
  /// Negative `start`/`stop` count from the end of the dimension; both are
  /// then clamped to [0, dim(dim)], as in Python. `step` must be > 0.
  HostTensor slice(int64_t dim, int64_t start, int64_t stop,
                   int64_t step = 1) const;
  /// The same elements with shape `newShape` (one entry may be -1: inferred;
  /// the element count must match). Shares storage when isContiguous();
  /// otherwise reshapes a contiguous copy made by clone().
  HostTensor reshapedContiguous(std::vector<int64_t> newShape) const;
  /// Broadcast view: `newShape` has rank() entries; each dimension keeps its
  /// extent or, if its extent is 1, is stretched with stride 0. Writing
  /// through such a view writes the shared element several times.
  HostTensor expanded(std::vector<int64_t> newShape) const;
  /// Deep, contiguous copy with the same dtype and values.
  HostTensor clone() const;
  /// Deep, contiguous copy converted (rounded) to `dtype`.
  HostTensor toDType(DType dtype) const;

  /// Number of storage bytes that this view does not cover and that differ
  /// from kPoisonByte. For a padded()/strided() tensor, a non-zero result
  /// after a kernel ran means the kernel wrote outside the view.
  int64_t countChangedBytesOutsideView() const;

  /// One-line description, e.g. "f16[3, 4] strides [8, 1] offset 2".
  std::string describe() const;

private:
  struct Storage;

  static HostTensor allocate(std::vector<int64_t> shape,
                             std::vector<int64_t> strides, DType dtype,
                             int64_t offset, unsigned char fillByte,
                             int64_t minElements = 0);
  int64_t normalizeDim(int64_t d) const;

  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  int64_t offset_ = 0;
};

/// Row-major strides (in elements) of a dense tensor with `shape`.
std::vector<int64_t> contiguousStrides(std::span<const int64_t> shape);

/// Product of the extents (1 for an empty shape).
int64_t shapeNumel(std::span<const int64_t> shape);

/// "[2, 3, 4]"-style rendering of a shape or index.
std::string formatShape(std::span<const int64_t> shape);

} // namespace tessera::testing

#endif // TESSERA_TESTS_SUPPORT_HOSTTENSOR_H
