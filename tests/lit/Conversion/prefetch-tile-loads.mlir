// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-prefetch-tile-loads))' | FileCheck %s

// num_stages = 2: the first chunk is loaded before the loop, each
// iteration loads the next one (at min(iv + step, ub)) first and computes
// on the one carried in.
// CHECK-LABEL: func.func @row_sum
// CHECK: %[[LB:.*]] = arith.constant 0 : i64
// CHECK: %[[PRE:.*]] = tile.load %{{.*}}[%[[LB]]]
// CHECK: scf.for %[[IV:.*]] = %[[LB]] to %[[N:.*]] step %[[STEP:.*]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[CUR:.*]] = %[[PRE]])
// CHECK: %[[NEXT:.*]] = arith.addi %[[IV]], %{{.*}} : i64
// CHECK-NEXT: %[[AT:.*]] = arith.minsi %[[NEXT]], %[[N]] : i64
// CHECK-NEXT: %[[LD:.*]] = tile.load %{{.*}}[%[[AT]]]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[ACC]], %[[CUR]]
// CHECK-NEXT: scf.yield %[[SUM]], %[[LD]]
func.func @row_sum(%x: memref<?xf32>, %n: i64) -> tensor<256xf32> attributes {tile.kernel, tile.num_stages = 2 : i32} {
  %c0 = arith.constant 0 : i64
  %c256 = arith.constant 256 : i64
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %r = scf.for %i = %c0 to %n step %c256 iter_args(%acc = %zero) -> (tensor<256xf32>) : i64 {
    %t = tile.load %x[%i] : memref<?xf32> -> tensor<256xf32>
    %s = arith.addf %acc, %t : tensor<256xf32>
    scf.yield %s : tensor<256xf32>
  }
  return %r : tensor<256xf32>
}

// -----

// num_stages = 3: two chunks ahead; the masks computed from the induction
// variable are computed again for the later iteration.
// CHECK-LABEL: func.func @masked_three_stages
// CHECK-COUNT-2: tile.load
// CHECK: scf.for %[[IV:.*]] = {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[A:.*]] = %{{.*}}, %[[B:.*]] = %{{.*}})
// CHECK: %[[M:.*]] = arith.cmpi slt
// CHECK: %[[LD:.*]] = tile.load %{{.*}}[%{{.*}}] mask(%[[M]] : tensor<256xi1>)
// CHECK: arith.addf %{{.*}}, %[[A]]
// CHECK: scf.yield %{{.*}}, %[[B]], %[[LD]]
func.func @masked_three_stages(%x: memref<?xf32>, %n: i64, %end: i64) -> tensor<256xf32> attributes {tile.kernel, tile.num_stages = 3 : i32} {
  %c0 = arith.constant 0 : i64
  %c256 = arith.constant 256 : i64
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %cols = tile.arange 0 to 256 : tensor<256xi64>
  %e = tile.splat %end : tensor<256xi64>
  %r = scf.for %i = %c0 to %n step %c256 iter_args(%acc = %zero) -> (tensor<256xf32>) : i64 {
    %s = tile.splat %i : tensor<256xi64>
    %idx = arith.addi %s, %cols : tensor<256xi64>
    %keep = arith.cmpi slt, %idx, %e : tensor<256xi64>
    %t = tile.load %x[%i] mask(%keep : tensor<256xi1>) : memref<?xf32> -> tensor<256xf32>
    %a = arith.addf %acc, %t : tensor<256xf32>
    scf.yield %a : tensor<256xf32>
  }
  return %r : tensor<256xf32>
}

// -----

// Left alone: a loop that stores (the store could write what a load ahead
// read), a grid-stride loop (its step is not a constant), a loop with a
// product, a load whose offset is loop-carried, and num_stages = 1.
// CHECK-LABEL: func.func @stores
// CHECK: scf.for
// CHECK-NEXT: tile.load
// CHECK-LABEL: func.func @grid_stride
// CHECK: scf.for
// CHECK-NEXT: tile.load
// CHECK-LABEL: func.func @carried_offset
// CHECK: scf.for
// CHECK-NEXT: tile.load
func.func @stores(%x: memref<?xf32>, %y: memref<?xf32>, %n: i64) attributes {tile.kernel, tile.num_stages = 2 : i32} {
  %c0 = arith.constant 0 : i64
  %c256 = arith.constant 256 : i64
  scf.for %i = %c0 to %n step %c256 : i64 {
    %t = tile.load %x[%i] : memref<?xf32> -> tensor<256xf32>
    tile.store %t, %y[%i] : tensor<256xf32>, memref<?xf32>
  }
  return
}
func.func @grid_stride(%x: memref<?xf32>, %n: i64) -> tensor<256xf32> attributes {tile.kernel, tile.num_stages = 2 : i32} {
  %c256 = arith.constant 256 : i64
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %p = tile.program_id 0 : i64
  %np = tile.num_programs 0 : i64
  %start = arith.muli %p, %c256 : i64
  %step = arith.muli %np, %c256 : i64
  %r = scf.for %i = %start to %n step %step iter_args(%acc = %zero) -> (tensor<256xf32>) : i64 {
    %t = tile.load %x[%i] : memref<?xf32> -> tensor<256xf32>
    %s = arith.addf %acc, %t : tensor<256xf32>
    scf.yield %s : tensor<256xf32>
  }
  return %r : tensor<256xf32>
}
func.func @carried_offset(%x: memref<?xf32>, %n: i64) -> i64 attributes {tile.kernel, tile.num_stages = 2 : i32} {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%o = %c0) -> (i64) : i64 {
    %t = tile.load %x[%o] : memref<?xf32> -> tensor<256xf32>
    %d = tile.reduce sum %t {axis = 0 : i32} : tensor<256xf32> -> tensor<f32>
    %e = tensor.extract %d[] : tensor<f32>
    %k = arith.fptosi %e : f32 to i64
    scf.yield %k : i64
  }
  return %r : i64
}

// -----

// CHECK-LABEL: func.func @one_stage
// CHECK: scf.for
// CHECK-NEXT: tile.load
func.func @one_stage(%x: memref<?xf32>, %n: i64) -> tensor<256xf32> attributes {tile.kernel, tile.num_stages = 1 : i32} {
  %c0 = arith.constant 0 : i64
  %c256 = arith.constant 256 : i64
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %r = scf.for %i = %c0 to %n step %c256 iter_args(%acc = %zero) -> (tensor<256xf32>) : i64 {
    %t = tile.load %x[%i] : memref<?xf32> -> tensor<256xf32>
    %s = arith.addf %acc, %t : tensor<256xf32>
    scf.yield %s : tensor<256xf32>
  }
  return %r : tensor<256xf32>
}
