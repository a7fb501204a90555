//===- HostTensorTest.cpp - Tests of the strided host tensor --------------===//

#include "HostTensor.h"

#include "DataGen.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using tessera::DType;
using tessera::testing::contiguousStrides;
using tessera::testing::fillArange;
using tessera::testing::HostTensor;

namespace {

using Shape = std::vector<int64_t>;

TEST(HostTensorTest, ZerosHasRowMajorLayout) {
  HostTensor t = HostTensor::zeros({2, 3, 4}, DType::F16);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.elementSize(), 2u);
  EXPECT_EQ(t.storageBytes(), 48u);
  EXPECT_EQ(t.storageOffset(), 0);
  EXPECT_TRUE(t.isContiguous());
  EXPECT_EQ(t.dim(-1), 4);
  EXPECT_EQ(t.stride(-3), 12);
  for (int64_t i = 0; i < t.numel(); ++i)
    EXPECT_EQ(t.at(i), 0.0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.storageData()) %
                HostTensor::kStorageAlignment,
            0u);
}

TEST(HostTensorTest, DefaultIsUndefined) {
  HostTensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(t.storageBytes(), 0u);
  EXPECT_EQ(t.describe(), "undefined");
}

TEST(HostTensorTest, EmptyIsPoisoned) {
  HostTensor t = HostTensor::empty({3}, DType::F32);
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_TRUE(std::isnan(t.at(i)));
  HostTensor ints = HostTensor::empty({2}, DType::I32);
  EXPECT_EQ(ints.at(0), -1.0);
}

TEST(HostTensorTest, ScalarAndZeroSizedShapes) {
  HostTensor scalar = HostTensor::full({}, DType::F32, 2.5);
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.get({}), 2.5);
  EXPECT_EQ(scalar.at(0), 2.5);

  HostTensor none = HostTensor::zeros({0, 5}, DType::F16);
  EXPECT_EQ(none.numel(), 0);
  EXPECT_TRUE(none.isContiguous());
  EXPECT_TRUE(none.toDoubleVector().empty());
  none.fill(1.0); // no-op, must not crash
  EXPECT_EQ(none.slice(1, 1, 3).shape(), (Shape{0, 2}));
}

TEST(HostTensorTest, GetSetAndFlatOrder) {
  HostTensor t = HostTensor::zeros({2, 3}, DType::F32);
  t.set({1, 2}, 7.0);
  t.set({0, 1}, -3.0);
  EXPECT_EQ(t.get({1, 2}), 7.0);
  EXPECT_EQ(t.at(5), 7.0); // [1, 2] is flat 1 * 3 + 2
  EXPECT_EQ(t.at(1), -3.0);
  t.setAt(3, 4.0);
  EXPECT_EQ(t.get({1, 0}), 4.0);
  EXPECT_EQ(t.unflatten(4), (Shape{1, 1}));
  EXPECT_EQ(t.toDoubleVector(), (std::vector<double>{0, -3, 0, 4, 0, 7}));
}

TEST(HostTensorTest, WritesAreRoundedToDType) {
  HostTensor t = HostTensor::zeros({3}, DType::F16);
  t.setAt(0, 1.0 + 0x1p-12); // below half an f16 ulp at 1.0: rounds to 1
  t.setAt(1, 1.0 + 0x1p-10); // exactly representable
  t.setAt(2, 70000.0);       // beyond f16 max: +inf
  EXPECT_EQ(t.at(0), 1.0);
  EXPECT_EQ(t.at(1), 1.0 + 0x1p-10);
  EXPECT_TRUE(std::isinf(t.at(2)));

  HostTensor i8 = HostTensor::zeros({1}, DType::I8);
  i8.setAt(0, -2.7);
  EXPECT_EQ(i8.at(0), -2.0); // truncation toward zero
}

TEST(HostTensorTest, FromValuesAndDataPointer) {
  std::vector<double> values{1, 2, 3, 4, 5, 6};
  HostTensor t = HostTensor::fromValues({2, 3}, DType::F32, values);
  EXPECT_EQ(t.toDoubleVector(), values);
  const float *p = static_cast<const float *>(t.data());
  EXPECT_EQ(p[4], 5.0f);
  EXPECT_EQ(t.data(), t.storageData());
}

TEST(HostTensorTest, TransposedAddressesSwappedElements) {
  HostTensor t = HostTensor::zeros({2, 3}, DType::F32);
  fillArange(t); // t[i][j] = 3i + j
  HostTensor tt = t.transposed(0, 1);
  EXPECT_EQ(tt.shape(), (Shape{3, 2}));
  EXPECT_EQ(tt.strides(), (Shape{1, 3}));
  EXPECT_FALSE(tt.isContiguous());
  EXPECT_TRUE(tt.sharesStorageWith(t));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(tt.get({j, i}), t.get({i, j}));
  EXPECT_EQ(tt.toDoubleVector(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // Writing through the view changes the base tensor.
  tt.set({2, 1}, 42.0);
  EXPECT_EQ(t.get({1, 2}), 42.0);
  EXPECT_EQ(tt.transposed(-1, -2).strides(), t.strides());
}

TEST(HostTensorTest, SliceWithStep) {
  HostTensor t = HostTensor::zeros({4, 10}, DType::F32);
  fillArange(t);                      // t[i][j] = 10i + j
  HostTensor s = t.slice(1, 1, 8, 3); // columns 1, 4, 7
  EXPECT_EQ(s.shape(), (Shape{4, 3}));
  EXPECT_EQ(s.strides(), (Shape{10, 3}));
  EXPECT_EQ(s.storageOffset(), 1);
  EXPECT_EQ(s.get({2, 0}), 21.0);
  EXPECT_EQ(s.get({2, 1}), 24.0);
  EXPECT_EQ(s.get({3, 2}), 37.0);
  EXPECT_EQ(s.storageIndex(std::vector<int64_t>{3, 2}), 37);
  EXPECT_EQ(s.storageIndexOfFlat(5), 17);
  EXPECT_EQ(*static_cast<const float *>(s.data()), 1.0f);

  // Python-style negative bounds and clamping.
  HostTensor rows = t.slice(0, -2, 100);
  EXPECT_EQ(rows.shape(), (Shape{2, 10}));
  EXPECT_EQ(rows.get({0, 0}), 20.0);
  EXPECT_EQ(t.slice(1, 5, 5).numel(), 0);
  EXPECT_EQ(t.slice(1, 0, 10, 4).dim(1), 3); // 0, 4, 8

  // Nested slice of a slice.
  HostTensor ss = s.slice(0, 1, 4, 2); // rows 1, 3
  EXPECT_EQ(ss.toDoubleVector(), (std::vector<double>{11, 14, 17, 31, 34, 37}));
}

TEST(HostTensorTest, PaddedPitch) {
  HostTensor t = HostTensor::padded({3, 4}, DType::F32, {0, 4}, 2);
  EXPECT_EQ(t.strides(), (Shape{8, 1}));
  EXPECT_EQ(t.storageOffset(), 2);
  EXPECT_FALSE(t.isContiguous());
  EXPECT_EQ(t.storageBytes(), (2u + 3 * 8) * 4);
  fillArange(t, 100.0);
  const float *storage = static_cast<const float *>(t.storageData());
  EXPECT_EQ(storage[2], 100.0f);           // [0, 0]
  EXPECT_EQ(storage[2 + 8 + 3], 107.0f);   // [1, 3]
  EXPECT_EQ(storage[2 + 16 + 1], 109.0f);  // [2, 1]
  EXPECT_TRUE(std::isnan(storage[2 + 4])); // padding untouched (poison)
  EXPECT_TRUE(std::isnan(storage[0]));
  EXPECT_EQ(t.data(), static_cast<const void *>(storage + 2));
  EXPECT_EQ(t.countChangedBytesOutsideView(), 0);

  // A stray write into the padding is detected.
  static_cast<float *>(t.storageData())[2 + 8 + 5] = 0.0f;
  EXPECT_EQ(t.countChangedBytesOutsideView(), 4);
}

TEST(HostTensorTest, ArbitraryStrides) {
  HostTensor t = HostTensor::strided({2, 3}, {1, 2}, DType::F16, 1);
  EXPECT_EQ(t.storageBytes(), (1u + 1 + 2 * 2 + 1) * 2);
  t.set({1, 2}, 5.0);
  EXPECT_EQ(t.storageIndex(std::vector<int64_t>{1, 2}), 1 + 1 + 4);
  EXPECT_EQ(tessera::loadAsDouble(t.storageData(), DType::F16, 6), 5.0);
  EXPECT_EQ(t.storageIndices(), (Shape{1, 3, 5, 2, 4, 6}));
}

TEST(HostTensorTest, ReshapeSharesWhenContiguousElseCopies) {
  HostTensor t = HostTensor::zeros({2, 6}, DType::F32);
  fillArange(t);
  HostTensor r = t.reshapedContiguous({3, -1});
  EXPECT_EQ(r.shape(), (Shape{3, 4}));
  EXPECT_TRUE(r.sharesStorageWith(t));
  EXPECT_EQ(r.get({2, 1}), 9.0);

  HostTensor tt = t.transposed(0, 1); // [6, 2], non-contiguous
  HostTensor rc = tt.reshapedContiguous({12});
  EXPECT_FALSE(rc.sharesStorageWith(t));
  EXPECT_TRUE(rc.isContiguous());
  EXPECT_EQ(rc.toDoubleVector(), tt.toDoubleVector());

  // Slicing a contiguous tensor along the leading dim keeps it contiguous.
  HostTensor rows = t.slice(0, 1, 2);
  EXPECT_TRUE(rows.isContiguous());
  EXPECT_TRUE(rows.reshapedContiguous({6}).sharesStorageWith(t));
}

TEST(HostTensorTest, ExpandedBroadcastsWithStrideZero) {
  HostTensor row =
      HostTensor::fromValues({1, 3}, DType::F32, std::vector<double>{1, 2, 3});
  HostTensor b = row.expanded({4, 3});
  EXPECT_EQ(b.strides(), (Shape{0, 1}));
  EXPECT_EQ(b.get({3, 2}), 3.0);
  EXPECT_FALSE(b.isContiguous());
  EXPECT_EQ(b.numel(), 12);
}

TEST(HostTensorTest, ViewsKeepStorageAlive) {
  HostTensor view;
  {
    HostTensor base = HostTensor::zeros({4, 4}, DType::F32);
    fillArange(base);
    view = base.slice(0, 2, 4).transposed(0, 1);
  }
  EXPECT_EQ(view.get({1, 0}), 9.0); // base[2][1]
  EXPECT_EQ(view.get({3, 1}), 15.0);
}

TEST(HostTensorTest, CopyFromConvertsAndRespectsStrides) {
  HostTensor src = HostTensor::fromValues(
      {2, 2}, DType::F32, std::vector<double>{1.0 + 0x1p-20, 2, 3, 4});
  HostTensor dst = HostTensor::padded({2, 2}, DType::F16, {0, 1});
  dst.copyFrom(src.transposed(0, 1));
  EXPECT_EQ(dst.toDoubleVector(), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(dst.countChangedBytesOutsideView(), 0);

  HostTensor back = dst.toDType(DType::F32);
  EXPECT_TRUE(back.isContiguous());
  EXPECT_EQ(back.dtype(), DType::F32);
  EXPECT_EQ(back.toDoubleVector(), dst.toDoubleVector());

  HostTensor c = src.clone();
  EXPECT_FALSE(c.sharesStorageWith(src));
  c.setAt(0, 9.0);
  EXPECT_NE(src.at(0), 9.0);
}

TEST(HostTensorTest, CopyFromOverlappingView) {
  // In-place transpose of a square matrix through an aliasing view.
  HostTensor t = HostTensor::zeros({2, 2}, DType::F32);
  fillArange(t);
  t.copyFrom(t.transposed(0, 1));
  EXPECT_EQ(t.toDoubleVector(), (std::vector<double>{0, 2, 1, 3}));
}

TEST(HostTensorTest, Describe) {
  HostTensor t = HostTensor::padded({3, 4}, DType::BF16, {0, 4}, 2);
  EXPECT_EQ(t.describe(), "bf16[3, 4] strides [8, 1] offset 2");
  EXPECT_EQ(contiguousStrides(Shape{2, 0, 3}), (Shape{3, 3, 1}));
}

TEST(HostTensorDeathTest, MisuseAborts) {
  HostTensor t = HostTensor::zeros({2, 3}, DType::F32);
  EXPECT_DEATH(t.get({2, 0}), "index out of range");
  EXPECT_DEATH(t.slice(0, 0, 1, 0), "step must be positive");
  EXPECT_DEATH(t.reshapedContiguous({4, 2}), "element count");
  EXPECT_DEATH(t.transposed(0, 2), "dimension out of range");
}

} // namespace
