// RUN: tessera-opt %s -pass-pipeline='builtin.module(func.func(tessera-vectorize-reductions))' | FileCheck %s
// RUN: tessera-opt %s -pass-pipeline='builtin.module(func.func(tessera-vectorize-reductions{width=16}))' | FileCheck %s --check-prefix=W16

// A 1-D sum: chunks of 64 lanes combined in a vector, then one reduction
// with the reduce's initial value.
// CHECK-LABEL: func.func @sum_1d(
// CHECK: %[[FIRST:.*]] = vector.load %arg0[%{{.*}}] : memref<1024xf32>, vector<64xf32>
// CHECK: %[[ACC:.*]] = scf.for %[[K:.*]] = %c64 to %c1024 step %c64 iter_args(%[[A:.*]] = %[[FIRST]]) -> (vector<64xf32>)
// CHECK-NEXT: %[[V:.*]] = vector.load %arg0[%[[K]]] : memref<1024xf32>, vector<64xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[V]] : vector<64xf32>
// CHECK-NEXT: scf.yield %[[S]]
// CHECK: %[[INIT:.*]] = memref.load %arg1[] : memref<f32>
// CHECK-NEXT: %[[R:.*]] = vector.reduction <add>, %[[ACC]], %[[INIT]] : vector<64xf32> into f32
// CHECK-NEXT: memref.store %[[R]], %arg1[] : memref<f32>
// CHECK-NOT: linalg.reduce
// W16-LABEL: func.func @sum_1d(
// W16: scf.for %{{.*}} = %c16 to %c1024 step %c16 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>)
func.func @sum_1d(%x: memref<1024xf32>, %out: memref<f32>) {
  linalg.reduce ins(%x : memref<1024xf32>) outs(%out : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// A row-wise maximum of a strided 2-D tile: a loop over the rows; a row of
// 32 elements is one chunk (no inner loop). NaN-propagating maximumf stays.
// CHECK-LABEL: func.func @rowmax_2d(
// CHECK: scf.for %[[R:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT: %[[V:.*]] = vector.load %arg0[%[[R]], %c0] : memref<8x32xf32, strided<[64, 1], offset: 4>>, vector<32xf32>
// CHECK-NEXT: %[[I:.*]] = memref.load %arg1[%[[R]]] : memref<8xf32>
// CHECK-NEXT: %[[M:.*]] = vector.reduction <maximumf>, %[[V]], %[[I]] : vector<32xf32> into f32
// CHECK-NEXT: memref.store %[[M]], %arg1[%[[R]]] : memref<8xf32>
func.func @rowmax_2d(%x: memref<8x32xf32, strided<[64, 1], offset: 4>>, %out: memref<8xf32>) {
  linalg.reduce ins(%x : memref<8x32xf32, strided<[64, 1], offset: 4>>) outs(%out : memref<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %acc, %in : f32
      linalg.yield %m : f32
    }
  return
}

// 64-bit elements use half as many lanes; integer minimum.
// CHECK-LABEL: func.func @min_i64(
// CHECK: scf.for %{{.*}} = %c32 to %c256 step %c32 iter_args(%{{.*}} = %{{.*}}) -> (vector<32xi64>)
// CHECK: arith.minsi %{{.*}}, %{{.*}} : vector<32xi64>
// CHECK: vector.reduction <minsi>
func.func @min_i64(%x: memref<256xi64>, %out: memref<i64>) {
  linalg.reduce ins(%x : memref<256xi64>) outs(%out : memref<i64>) dimensions = [0]
    (%in: i64, %acc: i64) {
      %m = arith.minsi %in, %acc : i64
      linalg.yield %m : i64
    }
  return
}

// Left alone: reduction along an outer axis, no chunk width >= 4 dividing
// the extent, a non-unit innermost stride, a body that is not a single
// combiner, and a dynamic shape.
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-5: linalg.reduce
// CHECK-NOT: vector.
func.func @left_alone(%a: memref<16x8xf32>, %b: memref<6xf32>, %c: memref<64xf32, strided<[2]>>, %d: memref<64xf32>, %e: memref<?xf32>,
                      %o8: memref<8xf32>, %o: memref<f32>) {
  linalg.reduce ins(%a : memref<16x8xf32>) outs(%o8 : memref<8xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%b : memref<6xf32>) outs(%o : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%c : memref<64xf32, strided<[2]>>) outs(%o : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%d : memref<64xf32>) outs(%o : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %sq = arith.mulf %in, %in : f32
      %s = arith.addf %sq, %acc : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%e : memref<?xf32>) outs(%o : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}
