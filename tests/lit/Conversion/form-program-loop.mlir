// RUN: tessera-opt %s -tessera-form-program-loop | FileCheck %s
// Every tile.kernel function gets six trailing i64 arguments (program id and
// grid extent per axis) and a @<name>_chunk driver that runs the linear
// program ids [begin, end) of a g0 x g1 x g2 grid, axis 0 fastest.

// CHECK-LABEL: func.func private @k(
// CHECK-SAME: %[[X:[^:]*]]: memref<?xf32, strided<[?], offset: ?>>, %[[S:[^:]*]]: f32,
// CHECK-SAME: %[[P0:[^:]*]]: i64, %[[P1:[^:]*]]: i64, %[[P2:[^:]*]]: i64, %[[G0:[^:]*]]: i64, %[[G1:[^:]*]]: i64, %[[G2:[^:]*]]: i64)
// CHECK-SAME: attributes {tile.kernel}
// CHECK-NOT: tile.program_id
// CHECK-NOT: tile.num_programs
// CHECK: %[[A:.*]] = arith.addi %[[P0]], %[[P2]] : i64
// CHECK-NEXT: %[[B:.*]] = arith.addi %[[A]], %[[G1]] : i64
// CHECK-NEXT: tile.atomic_rmw add %[[S]], %[[X]][%[[B]]]
func.func @k(%x: memref<?xf32, strided<[?], offset: ?>>, %s: f32) attributes {tile.kernel} {
  %p0 = tile.program_id 0 : i64
  %p2 = tile.program_id 2 : i64
  %n1 = tile.num_programs 1 : i64
  %a = arith.addi %p0, %p2 : i64
  %b = arith.addi %a, %n1 : i64
  tile.atomic_rmw add %s, %x[%b] : f32, memref<?xf32, strided<[?], offset: ?>>
  return
}

// CHECK-LABEL: func.func @k_chunk(
// CHECK-SAME: %[[X:[^:]*]]: memref<?xf32, strided<[?], offset: ?>>, %[[S:[^:]*]]: f32,
// CHECK-SAME: %[[BEGIN:[^:]*]]: i64, %[[END:[^:]*]]: i64, %[[G0:[^:]*]]: i64, %[[G1:[^:]*]]: i64, %[[G2:[^:]*]]: i64)
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK: scf.for %[[LIN:.*]] = %[[BEGIN]] to %[[END]] step %{{.*}} : i64 {
// CHECK-NEXT: %[[PLANE:.*]] = arith.muli %[[G0]], %[[G1]] : i64
// CHECK-NEXT: %[[Q2:.*]] = arith.divsi %[[LIN]], %[[PLANE]] : i64
// CHECK-NEXT: %[[REM:.*]] = arith.remsi %[[LIN]], %[[PLANE]] : i64
// CHECK-NEXT: %[[Q1:.*]] = arith.divsi %[[REM]], %[[G0]] : i64
// CHECK-NEXT: %[[Q0:.*]] = arith.remsi %[[REM]], %[[G0]] : i64
// CHECK-NEXT: func.call @k(%[[X]], %[[S]], %[[Q0]], %[[Q1]], %[[Q2]], %[[G0]], %[[G1]], %[[G2]])
// CHECK-NEXT: }
// CHECK-NEXT: return

// Functions that are not kernels are untouched.
// CHECK-LABEL: func.func @helper(%{{.*}}: i64) -> i64 {
// CHECK-NOT: func.func @helper_chunk
func.func @helper(%i: i64) -> i64 {
  return %i : i64
}
