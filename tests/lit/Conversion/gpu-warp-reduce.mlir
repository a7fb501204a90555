// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-gpu-warp-reduce))' | FileCheck %s

// A row max over the innermost axis: warps stride over the 8 rows, lanes over
// the 256 columns from -inf, the lanes combine with gpu.subgroup_reduce and
// lane 0 folds the row result into the output.
// CHECK-LABEL: func.func @rowmax
// CHECK: scf.execute_region {
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32{{.*}}
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for %[[ROW:.*]] = %[[WARP]] to %c8 step %c2 {
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %[[LANE]] to %c256 step %c32{{.*}} iter_args(%{{.*}} = %[[NINF]]) -> (f32) {
// CHECK: arith.maximumf
// CHECK: %[[R:.*]] = gpu.subgroup_reduce  maximumf %[[ACC]] uniform : (f32) -> f32
// CHECK: scf.if
// CHECK: memref.store
// CHECK: } {tile.distributed}
// CHECK-NOT: linalg.reduce
func.func @rowmax(%in: memref<8x256xf32>, %out: memref<8xf32>) attributes {tile.kernel, tile.num_warps = 2 : i32} {
  linalg.reduce ins(%in : memref<8x256xf32>) outs(%out : memref<8xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %m = arith.maximumf %x, %acc : f32
      linalg.yield %m : f32
    }
  return
}

// -----

// Not innermost, or not a simple combiner: left to the generic lowering.
// CHECK-LABEL: func.func @columns
// CHECK: linalg.reduce
// CHECK-NOT: gpu.subgroup_reduce
func.func @columns(%in: memref<8x256xf32>, %out: memref<256xf32>) attributes {tile.kernel, tile.num_warps = 2 : i32} {
  linalg.reduce ins(%in : memref<8x256xf32>) outs(%out : memref<256xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return
}
