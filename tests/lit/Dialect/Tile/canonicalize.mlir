// RUN: tessera-opt %s -canonicalize | FileCheck %s
// Folders and canonicalization patterns of the tile dialect.

// A splat of a constant folds to a splat attribute.
// CHECK-LABEL: func.func @splat_const(
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<2.500000e+00> : tensor<8x8xf32>
// CHECK-NEXT: return %[[C]]
func.func @splat_const() -> tensor<8x8xf32> {
  %c = arith.constant 2.5 : f32
  %s = tile.splat %c : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

// CHECK-LABEL: func.func @splat_dynamic(
// CHECK-NEXT: %[[S:.*]] = tile.splat %arg0 : tensor<8xf32>
// CHECK-NEXT: return %[[S]]
func.func @splat_dynamic(%x: f32) -> tensor<8xf32> {
  %s = tile.splat %x : tensor<8xf32>
  return %s : tensor<8xf32>
}

// CHECK-LABEL: func.func @broadcast_identity(
// CHECK-NEXT: return %arg0
func.func @broadcast_identity(%t: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %b = tile.broadcast %t : tensor<4x8xf32> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @broadcast_const(
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<7> : tensor<4x8xi32>
// CHECK-NEXT: return %[[C]]
func.func @broadcast_const() -> tensor<4x8xi32> {
  %c = arith.constant dense<7> : tensor<1x8xi32>
  %b = tile.broadcast %c : tensor<1x8xi32> -> tensor<4x8xi32>
  return %b : tensor<4x8xi32>
}

// CHECK-LABEL: func.func @broadcast_of_splat(
// CHECK-NEXT: %[[S:.*]] = tile.splat %arg0 : tensor<4x8xf32>
// CHECK-NEXT: return %[[S]]
func.func @broadcast_of_splat(%x: f32) -> tensor<4x8xf32> {
  %s = tile.splat %x : tensor<1x8xf32>
  %b = tile.broadcast %s : tensor<1x8xf32> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @broadcast_of_broadcast(
// CHECK-NEXT: %[[B:.*]] = tile.broadcast %arg0 : tensor<1x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT: return %[[B]]
func.func @broadcast_of_broadcast(%t: tensor<1x1xf32>) -> tensor<4x8xf32> {
  %a = tile.broadcast %t : tensor<1x1xf32> -> tensor<1x8xf32>
  %b = tile.broadcast %a : tensor<1x8xf32> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @reshape_identity(
// CHECK-NEXT: return %arg0
func.func @reshape_identity(%t: tensor<64xf32>) -> tensor<64xf32> {
  %r = tile.reshape %t : tensor<64xf32> -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// CHECK-LABEL: func.func @reshape_of_reshape(
// CHECK-NEXT: %[[R:.*]] = tile.reshape %arg0 : tensor<1x1x64xf16> -> tensor<8x8xf16>
// CHECK-NEXT: return %[[R]]
func.func @reshape_of_reshape(%t: tensor<1x1x64xf16>) -> tensor<8x8xf16> {
  %a = tile.reshape %t : tensor<1x1x64xf16> -> tensor<64xf16>
  %b = tile.reshape %a : tensor<64xf16> -> tensor<8x8xf16>
  return %b : tensor<8x8xf16>
}

// CHECK-LABEL: func.func @reshape_roundtrip(
// CHECK-NEXT: return %arg0
func.func @reshape_roundtrip(%t: tensor<64xf32>) -> tensor<64xf32> {
  %a = tile.reshape %t : tensor<64xf32> -> tensor<1x64xf32>
  %b = tile.reshape %a : tensor<1x64xf32> -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// CHECK-LABEL: func.func @reshape_const(
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<2x4xf32>
// CHECK-NEXT: return %[[C]]
func.func @reshape_const() -> tensor<2x4xf32> {
  %c = arith.constant dense<1.0> : tensor<8xf32>
  %r = tile.reshape %c : tensor<8xf32> -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @trans_identity(
// CHECK-NEXT: return %arg0
func.func @trans_identity(%t: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tile.trans %t [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @trans_of_trans(
// CHECK-NEXT: return %arg0
func.func @trans_of_trans(%t: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = tile.trans %t [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %b = tile.trans %a [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// trans(trans(x, p), q) = trans(x, [p[q[0]], p[q[1]], ...]).
// CHECK-LABEL: func.func @trans_compose(
// CHECK-NEXT: %[[T:.*]] = tile.trans %arg0 [0, 2, 1] : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
// CHECK-NEXT: return %[[T]]
func.func @trans_compose(%t: tensor<2x4x8xf32>) -> tensor<2x8x4xf32> {
  %a = tile.trans %t [2, 0, 1] : tensor<2x4x8xf32> -> tensor<8x2x4xf32>
  %b = tile.trans %a [1, 0, 2] : tensor<8x2x4xf32> -> tensor<2x8x4xf32>
  return %b : tensor<2x8x4xf32>
}

// CHECK-LABEL: func.func @trans_const(
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<3.000000e+00> : tensor<8x4xf32>
// CHECK-NEXT: return %[[C]]
func.func @trans_const() -> tensor<8x4xf32> {
  %c = arith.constant dense<3.0> : tensor<4x8xf32>
  %r = tile.trans %c [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// Pure tile ops without uses are erased.
// CHECK-LABEL: func.func @dead_pure_ops(
// CHECK-NEXT: return
func.func @dead_pure_ops(%t: tensor<16x32xf16>, %u: tensor<32x8xf16>, %acc: tensor<16x8xf32>) {
  %d = tile.dot %t, %u, %acc : tensor<16x32xf16>, tensor<32x8xf16> -> tensor<16x8xf32>
  %r = tile.reduce sum %acc {axis = 0 : i32} : tensor<16x8xf32> -> tensor<8xf32>
  %p = tile.program_id 0 : i64
  %a = tile.arange 0 to 16 : tensor<16xi32>
  return
}

// An unused load only reads, so it goes too; the atomic stays.
// CHECK-LABEL: func.func @live_side_effects(
// CHECK-NOT: tile.load
// CHECK: tile.atomic_rmw add %arg2, %arg0[%arg1] : f32, memref<?xf32, strided<[?], offset: ?>>
// CHECK-NEXT: return
func.func @live_side_effects(%x: memref<?xf32, strided<[?], offset: ?>>, %i: i64, %s: f32) {
  %v = tile.load %x[%i] : memref<?xf32, strided<[?], offset: ?>> -> tensor<16xf32>
  tile.atomic_rmw add %s, %x[%i] : f32, memref<?xf32, strided<[?], offset: ?>>
  return
}
