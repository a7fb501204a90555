//===- HostTensor.cpp - Owning strided host tensor for tests --------------===//

#include "HostTensor.h"

#include "Check.h"

#include <cstring>
#include <new>
#include <utility>

namespace tessera::testing {

/// One aligned byte allocation shared by all views of a tensor.
struct HostTensor::Storage {
  explicit Storage(size_t byteCount)
      : size(byteCount), bytes(static_cast<unsigned char *>(::operator new(
                             byteCount == 0 ? 1 : byteCount,
                             std::align_val_t(kStorageAlignment)))) {}
  ~Storage() { ::operator delete(bytes, std::align_val_t(kStorageAlignment)); }
  Storage(const Storage &) = delete;
  Storage &operator=(const Storage &) = delete;

  size_t size;
  unsigned char *bytes;
};

namespace {

/// Calls `fn(flat, storageIndex)` for every logical element in logical order,
/// walking the strides like an odometer.
template <typename Fn>
void forEachElement(const std::vector<int64_t> &shape,
                    const std::vector<int64_t> &strides, int64_t offset,
                    Fn &&fn) {
  int64_t n = shapeNumel(shape);
  if (n == 0)
    return;
  size_t rank = shape.size();
  std::vector<int64_t> index(rank, 0);
  int64_t pos = offset;
  for (int64_t flat = 0; flat < n; ++flat) {
    fn(flat, pos);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) {
        pos += strides[d];
        break;
      }
      pos -= (shape[d] - 1) * strides[d];
      index[d] = 0;
    }
  }
}

void checkShape(std::span<const int64_t> shape) {
  for (int64_t extent : shape)
    TESSERA_TEST_CHECK(extent >= 0, "tensor extents must be non-negative");
}

} // namespace

std::vector<int64_t> contiguousStrides(std::span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t running = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = running;
    running *= shape[d] > 0 ? shape[d] : 1;
  }
  return strides;
}

int64_t shapeNumel(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t extent : shape)
    n *= extent;
  return n;
}

std::string formatShape(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i != 0)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

HostTensor HostTensor::allocate(std::vector<int64_t> shape,
                                std::vector<int64_t> strides, DType dtype,
                                int64_t offset, unsigned char fillByte,
                                int64_t minElements) {
  checkShape(shape);
  TESSERA_TEST_CHECK(strides.size() == shape.size(),
                     "need exactly one stride per dimension");
  TESSERA_TEST_CHECK(offset >= 0, "storage offset must be non-negative");
  for (int64_t s : strides)
    TESSERA_TEST_CHECK(s >= 0, "strides must be non-negative");
  int64_t elements = offset;
  if (shapeNumel(shape) > 0) {
    elements += 1;
    for (size_t d = 0; d < shape.size(); ++d)
      elements += (shape[d] - 1) * strides[d];
  }
  if (elements < minElements)
    elements = minElements;
  HostTensor t;
  size_t bytes = tessera::storageBytes(dtype, static_cast<size_t>(elements));
  t.storage_ = std::make_shared<Storage>(bytes);
  std::memset(t.storage_->bytes, fillByte, bytes);
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.offset_ = offset;
  return t;
}

HostTensor HostTensor::empty(std::vector<int64_t> shape, DType dtype) {
  checkShape(shape);
  std::vector<int64_t> strides = contiguousStrides(shape);
  return allocate(std::move(shape), std::move(strides), dtype, 0, kPoisonByte);
}

HostTensor HostTensor::zeros(std::vector<int64_t> shape, DType dtype) {
  checkShape(shape);
  std::vector<int64_t> strides = contiguousStrides(shape);
  return allocate(std::move(shape), std::move(strides), dtype, 0, 0);
}

HostTensor HostTensor::full(std::vector<int64_t> shape, DType dtype,
                            double value) {
  HostTensor t = empty(std::move(shape), dtype);
  t.fill(value);
  return t;
}

HostTensor HostTensor::fromValues(std::vector<int64_t> shape, DType dtype,
                                  std::span<const double> values) {
  HostTensor t = empty(std::move(shape), dtype);
  t.assignFromDoubles(values);
  return t;
}

HostTensor HostTensor::padded(std::vector<int64_t> shape, DType dtype,
                              std::vector<int64_t> padding,
                              int64_t leadingPad) {
  checkShape(shape);
  TESSERA_TEST_CHECK(padding.size() == shape.size(),
                     "need exactly one padding entry per dimension");
  std::vector<int64_t> extents(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    TESSERA_TEST_CHECK(padding[d] >= 0, "padding must be non-negative");
    extents[d] = shape[d] + padding[d];
  }
  TESSERA_TEST_CHECK(leadingPad >= 0, "leadingPad must be non-negative");
  std::vector<int64_t> strides = contiguousStrides(extents);
  // Allocate the whole padded block, not just the span of the view, so that
  // writes past the last row land in (checkable) padding.
  return allocate(std::move(shape), std::move(strides), dtype, leadingPad,
                  kPoisonByte, leadingPad + shapeNumel(extents));
}

HostTensor HostTensor::strided(std::vector<int64_t> shape,
                               std::vector<int64_t> strides, DType dtype,
                               int64_t storageOffset) {
  return allocate(std::move(shape), std::move(strides), dtype, storageOffset,
                  kPoisonByte);
}

int64_t HostTensor::normalizeDim(int64_t d) const {
  if (d < 0)
    d += rank();
  TESSERA_TEST_CHECK(d >= 0 && d < rank(), "dimension out of range");
  return d;
}

int64_t HostTensor::dim(int64_t d) const { return shape_[normalizeDim(d)]; }

int64_t HostTensor::stride(int64_t d) const {
  return strides_[normalizeDim(d)];
}

int64_t HostTensor::numel() const { return shapeNumel(shape_); }

bool HostTensor::isContiguous() const {
  if (numel() == 0)
    return true;
  int64_t expected = 1;
  for (size_t d = shape_.size(); d-- > 0;) {
    if (shape_[d] == 1)
      continue;
    if (strides_[d] != expected)
      return false;
    expected *= shape_[d];
  }
  return true;
}

void *HostTensor::data() {
  return const_cast<void *>(static_cast<const HostTensor *>(this)->data());
}

const void *HostTensor::data() const {
  TESSERA_TEST_CHECK(defined(), "data() of an undefined tensor");
  // A packed view starts on a byte: its element 0 is bit 0 of data().
  size_t bit = static_cast<size_t>(offset_) * dtypeBits(dtype_);
  TESSERA_TEST_CHECK(bit % 8 == 0,
                     "data() of a packed view that starts inside a byte");
  return storage_->bytes + bit / 8;
}

void *HostTensor::storageData() {
  TESSERA_TEST_CHECK(defined(), "storageData() of an undefined tensor");
  return storage_->bytes;
}

const void *HostTensor::storageData() const {
  TESSERA_TEST_CHECK(defined(), "storageData() of an undefined tensor");
  return storage_->bytes;
}

size_t HostTensor::storageBytes() const {
  return defined() ? storage_->size : 0;
}

bool HostTensor::sharesStorageWith(const HostTensor &other) const {
  return defined() && storage_ == other.storage_;
}

int64_t HostTensor::storageIndex(std::span<const int64_t> index) const {
  TESSERA_TEST_CHECK(defined(), "element access on an undefined tensor");
  TESSERA_TEST_CHECK(static_cast<int64_t>(index.size()) == rank(),
                     "index rank does not match tensor rank");
  int64_t pos = offset_;
  for (size_t d = 0; d < index.size(); ++d) {
    TESSERA_TEST_CHECK(index[d] >= 0 && index[d] < shape_[d],
                       "index out of range");
    pos += index[d] * strides_[d];
  }
  return pos;
}

std::vector<int64_t> HostTensor::unflatten(int64_t flat) const {
  TESSERA_TEST_CHECK(flat >= 0 && flat < numel(), "flat index out of range");
  std::vector<int64_t> index(shape_.size(), 0);
  for (size_t d = shape_.size(); d-- > 0;) {
    index[d] = flat % shape_[d];
    flat /= shape_[d];
  }
  return index;
}

int64_t HostTensor::storageIndexOfFlat(int64_t flat) const {
  return storageIndex(unflatten(flat));
}

std::vector<int64_t> HostTensor::storageIndices() const {
  std::vector<int64_t> result(static_cast<size_t>(numel()));
  forEachElement(shape_, strides_, offset_, [&](int64_t flat, int64_t pos) {
    result[static_cast<size_t>(flat)] = pos;
  });
  return result;
}

double HostTensor::get(std::initializer_list<int64_t> index) const {
  return get(std::span<const int64_t>(index.begin(), index.size()));
}

double HostTensor::get(std::span<const int64_t> index) const {
  return loadAsDouble(storage_->bytes, dtype_,
                      static_cast<size_t>(storageIndex(index)));
}

void HostTensor::set(std::initializer_list<int64_t> index, double value) {
  set(std::span<const int64_t>(index.begin(), index.size()), value);
}

void HostTensor::set(std::span<const int64_t> index, double value) {
  storeFromDouble(storage_->bytes, dtype_,
                  static_cast<size_t>(storageIndex(index)), value);
}

double HostTensor::at(int64_t flat) const { return get(unflatten(flat)); }

void HostTensor::setAt(int64_t flat, double value) {
  set(unflatten(flat), value);
}

std::vector<double> HostTensor::toDoubleVector() const {
  std::vector<double> values(static_cast<size_t>(numel()));
  if (values.empty())
    return values;
  TESSERA_TEST_CHECK(defined(), "reading an undefined tensor");
  forEachElement(shape_, strides_, offset_, [&](int64_t flat, int64_t pos) {
    values[static_cast<size_t>(flat)] =
        loadAsDouble(storage_->bytes, dtype_, static_cast<size_t>(pos));
  });
  return values;
}

void HostTensor::assignFromDoubles(std::span<const double> values) {
  TESSERA_TEST_CHECK(static_cast<int64_t>(values.size()) == numel(),
                     "value count does not match the tensor's element count");
  if (values.empty())
    return;
  TESSERA_TEST_CHECK(defined(), "writing an undefined tensor");
  forEachElement(shape_, strides_, offset_, [&](int64_t flat, int64_t pos) {
    storeFromDouble(storage_->bytes, dtype_, static_cast<size_t>(pos),
                    values[static_cast<size_t>(flat)]);
  });
}

void HostTensor::copyFrom(const HostTensor &src) {
  TESSERA_TEST_CHECK(src.shape_ == shape_, "copyFrom: shapes differ");
  // Read everything first so that overlapping source and destination views
  // behave like a copy through a temporary.
  std::vector<double> values = src.toDoubleVector();
  assignFromDoubles(values);
}

void HostTensor::fill(double value) {
  if (numel() == 0)
    return;
  TESSERA_TEST_CHECK(defined(), "writing an undefined tensor");
  forEachElement(shape_, strides_, offset_, [&](int64_t, int64_t pos) {
    storeFromDouble(storage_->bytes, dtype_, static_cast<size_t>(pos), value);
  });
}

HostTensor HostTensor::transposed(int64_t d0, int64_t d1) const {
  HostTensor t = *this;
  d0 = normalizeDim(d0);
  d1 = normalizeDim(d1);
  std::swap(t.shape_[d0], t.shape_[d1]);
  std::swap(t.strides_[d0], t.strides_[d1]);
  return t;
}

HostTensor HostTensor::slice(int64_t d, int64_t start, int64_t stop,
                             int64_t step) const {
  TESSERA_TEST_CHECK(step > 0, "slice step must be positive");
  d = normalizeDim(d);
  int64_t extent = shape_[d];
  auto clampIndex = [extent](int64_t i) {
    if (i < 0)
      i += extent;
    return i < 0 ? 0 : (i > extent ? extent : i);
  };
  start = clampIndex(start);
  stop = clampIndex(stop);
  int64_t count = stop > start ? (stop - start + step - 1) / step : 0;
  HostTensor t = *this;
  t.shape_[d] = count;
  t.strides_[d] = strides_[d] * step;
  if (count > 0)
    t.offset_ = offset_ + start * strides_[d];
  return t;
}

HostTensor HostTensor::reshapedContiguous(std::vector<int64_t> newShape) const {
  int64_t inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < newShape.size(); ++d) {
    if (newShape[d] == -1) {
      TESSERA_TEST_CHECK(inferred < 0, "at most one extent may be -1");
      inferred = static_cast<int64_t>(d);
      continue;
    }
    TESSERA_TEST_CHECK(newShape[d] >= 0, "extents must be >= 0 or -1");
    known *= newShape[d];
  }
  if (inferred >= 0) {
    TESSERA_TEST_CHECK(known > 0 && numel() % known == 0,
                       "cannot infer the -1 extent");
    newShape[static_cast<size_t>(inferred)] = numel() / known;
  }
  TESSERA_TEST_CHECK(shapeNumel(newShape) == numel(),
                     "reshape must keep the element count");
  HostTensor t = isContiguous() ? *this : clone();
  t.strides_ = contiguousStrides(newShape);
  t.shape_ = std::move(newShape);
  return t;
}

HostTensor HostTensor::expanded(std::vector<int64_t> newShape) const {
  TESSERA_TEST_CHECK(static_cast<int64_t>(newShape.size()) == rank(),
                     "expanded() keeps the rank");
  HostTensor t = *this;
  for (size_t d = 0; d < newShape.size(); ++d) {
    if (newShape[d] == shape_[d])
      continue;
    TESSERA_TEST_CHECK(shape_[d] == 1 && newShape[d] >= 0,
                       "only extent-1 dimensions can be expanded");
    t.shape_[d] = newShape[d];
    t.strides_[d] = 0;
  }
  return t;
}

HostTensor HostTensor::clone() const { return toDType(dtype_); }

HostTensor HostTensor::toDType(DType dtype) const {
  TESSERA_TEST_CHECK(defined(), "copying an undefined tensor");
  HostTensor t = empty(shape_, dtype);
  t.copyFrom(*this);
  return t;
}

int64_t HostTensor::countChangedBytesOutsideView() const {
  if (!defined())
    return 0;
  std::vector<bool> covered(storage_->size, false);
  size_t bits = dtypeBits(dtype_);
  forEachElement(shape_, strides_, offset_, [&](int64_t, int64_t pos) {
    size_t first = static_cast<size_t>(pos) * bits;
    for (size_t b = first / 8; b <= (first + bits - 1) / 8; ++b)
      covered[b] = true;
  });
  int64_t changed = 0;
  for (size_t b = 0; b < storage_->size; ++b)
    if (!covered[b] && storage_->bytes[b] != kPoisonByte)
      ++changed;
  return changed;
}

std::string HostTensor::describe() const {
  if (!defined())
    return "undefined";
  return std::string(dtypeName(dtype_)) + formatShape(shape_) + " strides " +
         formatShape(strides_) + " offset " + std::to_string(offset_);
}

} // namespace tessera::testing
