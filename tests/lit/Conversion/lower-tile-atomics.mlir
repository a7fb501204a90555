// RUN: tessera-opt %s -tessera-lower-tile-atomics | FileCheck %s
// tile.atomic_rmw becomes a bounds-checked memref.atomic_rmw: addf/addi,
// NaN-propagating maximumf/minimumf for floats, signed maxs/mins for integers.

// CHECK-LABEL: func.func @atomics(
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[I:.*]] = arith.index_cast %arg2 : i64 to index
// CHECK-NEXT: %[[D:.*]] = memref.dim %arg0, %[[C0]]
// CHECK-NEXT: %[[GE:.*]] = arith.cmpi sge, %[[I]], %[[C0]] : index
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi slt, %[[I]], %[[D]] : index
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK-NEXT: memref.atomic_rmw addf %arg4, %arg0[%[[I]]] : (f32, memref<?xf32, strided<[?], offset: ?>>) -> f32
// CHECK-NEXT: }
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw maximumf %arg4, %arg0[%{{.*}}]
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw minimumf %arg4, %arg0[%{{.*}}]
// Two indices: both dimensions are checked.
// CHECK: %[[I0:.*]] = arith.index_cast %arg2 : i64 to index
// CHECK-NEXT: %[[I1:.*]] = arith.index_cast %arg3 : i64 to index
// CHECK-NEXT: %[[D0:.*]] = memref.dim %arg1, %[[C0]]
// CHECK: %[[OK0:.*]] = arith.andi
// CHECK-NEXT: %[[D1:.*]] = memref.dim %arg1, %[[C1]]
// CHECK: %[[OK1:.*]] = arith.andi
// CHECK-NEXT: %[[OK2:.*]] = arith.andi %[[OK0]], %[[OK1]] : i1
// CHECK-NEXT: scf.if %[[OK2]] {
// CHECK-NEXT: memref.atomic_rmw addi %arg5, %arg1[%[[I0]], %[[I1]]] : (i32, memref<?x?xi32, strided<[?, ?], offset: ?>>) -> i32
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw maxs %arg5, %arg1
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw mins %arg5, %arg1
// CHECK-NOT: tile.atomic_rmw
func.func @atomics(%x: memref<?xf32, strided<[?], offset: ?>>, %y: memref<?x?xi32, strided<[?, ?], offset: ?>>, %i: i64, %j: i64, %s: f32, %t: i32) {
  tile.atomic_rmw add %s, %x[%i] : f32, memref<?xf32, strided<[?], offset: ?>>
  tile.atomic_rmw max %s, %x[%i] : f32, memref<?xf32, strided<[?], offset: ?>>
  tile.atomic_rmw min %s, %x[%i] : f32, memref<?xf32, strided<[?], offset: ?>>
  tile.atomic_rmw add %t, %y[%i, %j] : i32, memref<?x?xi32, strided<[?, ?], offset: ?>>
  tile.atomic_rmw max %t, %y[%i, %j] : i32, memref<?x?xi32, strided<[?, ?], offset: ?>>
  tile.atomic_rmw min %t, %y[%i, %j] : i32, memref<?x?xi32, strided<[?, ?], offset: ?>>
  return
}

// Other tile ops are not touched by this pass.
// CHECK-LABEL: func.func @others(
// CHECK-NEXT: tile.program_id 0 : i64
// CHECK-NEXT: tile.load
func.func @others(%x: memref<?xf32, strided<[?], offset: ?>>) -> tensor<8xf32> {
  %p = tile.program_id 0 : i64
  %v = tile.load %x[%p] : memref<?xf32, strided<[?], offset: ?>> -> tensor<8xf32>
  return %v : tensor<8xf32>
}
