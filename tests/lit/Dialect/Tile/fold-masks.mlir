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

// Masks that repeat the bounds check: `off + arange(0, n) < dim` along the
// axis whose access offset is `off` is dropped (the load keeps `other`).
// CHECK-LABEL: func.func @bounds_mask_2d(
// CHECK-NOT: mask(
// CHECK: tile.load %arg0[%arg1, %arg2] other(%arg3 : f32) : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<16x32xf32>
// CHECK-NOT: mask(
// CHECK: tile.store
func.func @bounds_mask_2d(%x: memref<?x?xf32, strided<[?, ?], offset: ?>>, %r0: i64, %c0: i64, %pad: f32) {
  %c0i = arith.constant 0 : index
  %c1i = arith.constant 1 : index
  %rows = memref.dim %x, %c0i : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cols = memref.dim %x, %c1i : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %rows64 = arith.index_cast %rows : index to i64
  %cols64 = arith.index_cast %cols : index to i64
  %ar = tile.arange 0 to 16 : tensor<16xi32>
  %ac = tile.arange 0 to 32 : tensor<32xi32>
  %arx = arith.extsi %ar : tensor<16xi32> to tensor<16xi64>
  %acx = arith.extsi %ac : tensor<32xi32> to tensor<32xi64>
  %sr = tile.splat %r0 : tensor<16xi64>
  %sc = tile.splat %c0 : tensor<32xi64>
  %ir = arith.addi %sr, %arx : tensor<16xi64>
  %ic = arith.addi %sc, %acx : tensor<32xi64>
  %br = tile.splat %rows64 : tensor<16xi64>
  %bc = tile.splat %cols64 : tensor<32xi64>
  %mr = arith.cmpi slt, %ir, %br : tensor<16xi64>
  %mc = arith.cmpi sgt, %bc, %ic : tensor<32xi64>
  %mr2 = tile.reshape %mr : tensor<16xi1> -> tensor<16x1xi1>
  %mc2 = tile.reshape %mc : tensor<32xi1> -> tensor<1x32xi1>
  %mrb = tile.broadcast %mr2 : tensor<16x1xi1> -> tensor<16x32xi1>
  %mcb = tile.broadcast %mc2 : tensor<1x32xi1> -> tensor<16x32xi1>
  %m = arith.andi %mrb, %mcb : tensor<16x32xi1>
  %v = tile.load %x[%r0, %c0] mask(%m : tensor<16x32xi1>) other(%pad : f32) : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<16x32xf32>
  tile.store %v, %x[%r0, %c0] mask(%m : tensor<16x32xi1>) : tensor<16x32xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}

// The bound may be another argument's dimension with the same shape symbol.
// CHECK-LABEL: func.func @bounds_mask_shared_symbol(
// CHECK: tile.load %arg0[%arg2] :
func.func @bounds_mask_shared_symbol(%x: memref<?xf32, strided<[?], offset: ?>> {tile.dim_symbols = ["N"]}, %y: memref<?xf32, strided<[?], offset: ?>> {tile.dim_symbols = ["N"]}, %i: i64) -> tensor<64xf32> {
  %c0i = arith.constant 0 : index
  %n = memref.dim %y, %c0i : memref<?xf32, strided<[?], offset: ?>>
  %n64 = arith.index_cast %n : index to i64
  %a = tile.arange 0 to 64 : tensor<64xi64>
  %s = tile.splat %i : tensor<64xi64>
  %idx = arith.addi %a, %s : tensor<64xi64>
  %b = tile.splat %n64 : tensor<64xi64>
  %m = arith.cmpi slt, %idx, %b : tensor<64xi64>
  %v = tile.load %x[%i] mask(%m : tensor<64xi1>) : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  return %v : tensor<64xf32>
}

// Kept: the mask tests a different bound (a causal end), another offset, a
// different symbol, or the wrong axis.
// CHECK-LABEL: func.func @masks_kept(
// CHECK-COUNT-4: mask(
func.func @masks_kept(%x: memref<?x?xf32, strided<[?, ?], offset: ?>> {tile.dim_symbols = ["M", "N"]}, %y: memref<?xf32, strided<[?], offset: ?>> {tile.dim_symbols = ["K"]}, %i: i64, %j: i64, %end: i64) -> (tensor<1x64xf32>, tensor<1x64xf32>, tensor<1x64xf32>, tensor<1x64xf32>) {
  %c0i = arith.constant 0 : index
  %c1i = arith.constant 1 : index
  %cols = memref.dim %x, %c1i : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cols64 = arith.index_cast %cols : index to i64
  %rows = memref.dim %x, %c0i : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %rows64 = arith.index_cast %rows : index to i64
  %k = memref.dim %y, %c0i : memref<?xf32, strided<[?], offset: ?>>
  %k64 = arith.index_cast %k : index to i64
  %a = tile.arange 0 to 64 : tensor<64xi64>
  %sj = tile.splat %j : tensor<64xi64>
  %si = tile.splat %i : tensor<64xi64>
  %idx = arith.addi %sj, %a : tensor<64xi64>
  %idxi = arith.addi %si, %a : tensor<64xi64>
  %bend = tile.splat %end : tensor<64xi64>
  %bcols = tile.splat %cols64 : tensor<64xi64>
  %brows = tile.splat %rows64 : tensor<64xi64>
  %bk = tile.splat %k64 : tensor<64xi64>
  %m1 = arith.cmpi slt, %idx, %bend : tensor<64xi64>
  %m2 = arith.cmpi slt, %idxi, %bcols : tensor<64xi64>
  %m3 = arith.cmpi slt, %idx, %bk : tensor<64xi64>
  %m4 = arith.cmpi slt, %idx, %brows : tensor<64xi64>
  %r1 = tile.reshape %m1 : tensor<64xi1> -> tensor<1x64xi1>
  %r2 = tile.reshape %m2 : tensor<64xi1> -> tensor<1x64xi1>
  %r3 = tile.reshape %m3 : tensor<64xi1> -> tensor<1x64xi1>
  %r4 = tile.reshape %m4 : tensor<64xi1> -> tensor<1x64xi1>
  %v1 = tile.load %x[%i, %j] mask(%r1 : tensor<1x64xi1>) : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<1x64xf32>
  %v2 = tile.load %x[%i, %j] mask(%r2 : tensor<1x64xi1>) : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<1x64xf32>
  %v3 = tile.load %x[%i, %j] mask(%r3 : tensor<1x64xi1>) : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<1x64xf32>
  %v4 = tile.load %x[%i, %j] mask(%r4 : tensor<1x64xi1>) : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<1x64xf32>
  return %v1, %v2, %v3, %v4 : tensor<1x64xf32>, tensor<1x64xf32>, tensor<1x64xf32>, tensor<1x64xf32>
}
