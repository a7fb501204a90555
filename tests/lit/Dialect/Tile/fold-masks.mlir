// RUN: tessera-opt %s -tessera-fold-masks | FileCheck %s
// RUN: tessera-opt %s -tessera-fold-masks -tessera-fold-masks | FileCheck %s
// Constant masks on tile.load / tile.store / tile.gather / tile.scatter.

// CHECK-LABEL: func.func @load_all_true(
// CHECK-NOT: arith.constant
// CHECK: %[[V:.*]] = tile.load %arg0[%arg1] : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
// CHECK-NEXT: return %[[V]]
func.func @load_all_true(%x: memref<?xf32, strided<[?], offset: ?>>, %i: i64) -> tensor<64xf32> {
  %t = arith.constant dense<true> : tensor<64xi1>
  %v = tile.load %x[%i] mask(%t : tensor<64xi1>) : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  return %v : tensor<64xf32>
}

// A load under an all-false mask reads nothing: it becomes its padding value.
// CHECK-LABEL: func.func @load_all_false(
// CHECK-NOT: tile.load
// CHECK: %[[P:.*]] = tile.splat %arg2 : tensor<64xf32>
// CHECK-NEXT: return %[[P]]
func.func @load_all_false(%x: memref<?xf32, strided<[?], offset: ?>>, %i: i64, %pad: f32) -> tensor<64xf32> {
  %f = arith.constant dense<false> : tensor<64xi1>
  %v = tile.load %x[%i] mask(%f : tensor<64xi1>) other(%pad : f32) : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  return %v : tensor<64xf32>
}

// Without other= the padding is zero.
// CHECK-LABEL: func.func @load_all_false_zero(
// CHECK-NEXT: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64xf32>
// CHECK-NEXT: return %[[Z]]
func.func @load_all_false_zero(%x: memref<?xf32, strided<[?], offset: ?>>, %i: i64) -> tensor<64xf32> {
  %f = arith.constant dense<false> : tensor<64xi1>
  %v = tile.load %x[%i] mask(%f : tensor<64xi1>) : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  return %v : tensor<64xf32>
}

// CHECK-LABEL: func.func @store_masks(
// CHECK-NEXT: tile.store %arg2, %arg0[%arg1] : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>
// CHECK-NEXT: return
func.func @store_masks(%x: memref<?xf32, strided<[?], offset: ?>>, %i: i64, %v: tensor<64xf32>) {
  %t = arith.constant dense<true> : tensor<64xi1>
  %f = arith.constant dense<false> : tensor<64xi1>
  tile.store %v, %x[%i] mask(%t : tensor<64xi1>) : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>
  tile.store %v, %x[%i] mask(%f : tensor<64xi1>) : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>
  return
}

// CHECK-LABEL: func.func @gather_scatter(
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64xf32>
// CHECK-DAG: %[[G:.*]] = tile.gather %arg0[%arg1] : memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32> -> tensor<64xf32>
// CHECK: tile.scatter %arg2, %arg0[%arg1] : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32>
// CHECK-NOT: tile.scatter
// CHECK-NOT: tile.gather
// CHECK: return %[[G]], %[[Z]]
func.func @gather_scatter(%x: memref<?xf32, strided<[?], offset: ?>>, %idx: tensor<64xi32>, %v: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %t = arith.constant dense<true> : tensor<64xi1>
  %f = arith.constant dense<false> : tensor<64xi1>
  %a = tile.gather %x[%idx] mask(%t : tensor<64xi1>) : memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32> -> tensor<64xf32>
  %b = tile.gather %x[%idx] mask(%f : tensor<64xi1>) : memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32> -> tensor<64xf32>
  tile.scatter %v, %x[%idx] mask(%t : tensor<64xi1>) : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32>
  tile.scatter %v, %x[%idx] mask(%f : tensor<64xi1>) : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32>
  return %a, %b : tensor<64xf32>, tensor<64xf32>
}

// Masks that are not constant stay.
// CHECK-LABEL: func.func @dynamic_mask(
// CHECK: tile.load %arg0[%arg1] mask(%arg2 : tensor<64xi1>)
// CHECK: tile.store %{{.*}}, %arg0[%arg1] mask(%arg2 : tensor<64xi1>)
func.func @dynamic_mask(%x: memref<?xf32, strided<[?], offset: ?>>, %i: i64, %m: tensor<64xi1>) -> tensor<64xf32> {
  %v = tile.load %x[%i] mask(%m : tensor<64xi1>) : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  tile.store %v, %x[%i] mask(%m : tensor<64xi1>) : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>
  return %v : tensor<64xf32>
}

// A constant that is not a splat is kept too.
// CHECK-LABEL: func.func @nonsplat_mask(
// CHECK: %[[M:.*]] = arith.constant dense<[true, false, true, true]> : tensor<4xi1>
// CHECK: tile.load %arg0[%arg1] mask(%[[M]] : tensor<4xi1>)
func.func @nonsplat_mask(%x: memref<?xf32, strided<[?], offset: ?>>, %i: i64) -> tensor<4xf32> {
  %m = arith.constant dense<[true, false, true, true]> : tensor<4xi1>
  %v = tile.load %x[%i] mask(%m : tensor<4xi1>) : memref<?xf32, strided<[?], offset: ?>> -> tensor<4xf32>
  return %v : tensor<4xf32>
}

// Masks built by tile.splat / tile.broadcast of constants fold as well.
// CHECK-LABEL: func.func @splat_mask(
// CHECK-NOT: tile.splat
// CHECK: tile.load %arg0[%arg1] : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
func.func @splat_mask(%x: memref<?xf32, strided<[?], offset: ?>>, %i: i64) -> tensor<64xf32> {
  %true = arith.constant true
  %m = tile.splat %true : tensor<64xi1>
  %v = tile.load %x[%i] mask(%m : tensor<64xi1>) : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  return %v : tensor<64xf32>
}

// CHECK-LABEL: func.func @bcast_mask(
// CHECK-NEXT: return
func.func @bcast_mask(%x: memref<?x?xf32, strided<[?, ?], offset: ?>>, %i: i64, %v: tensor<4x8xf32>) {
  %f = arith.constant dense<false> : tensor<1x8xi1>
  %m = tile.broadcast %f : tensor<1x8xi1> -> tensor<4x8xi1>
  tile.store %v, %x[%i, %i] mask(%m : tensor<4x8xi1>) : tensor<4x8xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}
