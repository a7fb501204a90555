// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-narrow-index-loops))' | FileCheck %s

// A grid-stride loop over a tensor: from program_id * 1024 (at most 1023
// programs of 1024) to the extent (31 bits) by num_programs * 1024 (at most
// 2^20). It counts in i32, compared unsigned; the body sees the same i64.
// CHECK-LABEL: func.func @grid_stride
// CHECK: %[[LB:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: %[[UB:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: %[[STEP:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: scf.for unsigned %[[IV:.*]] = %[[LB]] to %[[UB]] step %[[STEP]]
// CHECK-SAME: : i32
// CHECK: %[[WIDE:.*]] = arith.extui %[[IV]] : i32 to i64
// CHECK: tile.load %arg0[%[[WIDE]]]
func.func @grid_stride(%x: memref<?xf32>) -> tensor<1024xf32> attributes {tile.kernel, tile.index32, tile.grid_bound = array<i64: 1024, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : i64
  %zero = arith.constant dense<0.0> : tensor<1024xf32>
  %dim = memref.dim %x, %c0 : memref<?xf32>
  %n = arith.index_cast %dim : index to i64
  %np = tile.num_programs 0 : i64
  %step = arith.muli %np, %c1024 : i64
  %pid = tile.program_id 0 : i64
  %lb = arith.muli %pid, %c1024 : i64
  %r = scf.for %i = %lb to %n step %step iter_args(%acc = %zero) -> (tensor<1024xf32>) : i64 {
    %t = tile.load %x[%i] : memref<?xf32> -> tensor<1024xf32>
    %s = arith.addf %acc, %t : tensor<1024xf32>
    scf.yield %s : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}

// -----

// Bounds that are not known to be non-negative and within 31 bits, or a
// kernel without tile.index32: the loops stay i64.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: unsigned
// CHECK: scf.for %{{.*}} = %arg1 to %{{.*}} step %{{.*}} : i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %arg2 : i64
func.func @kept(%x: memref<?xf32>, %start: i64, %by: i64) attributes {tile.kernel, tile.index32, tile.grid_bound = array<i64: 1024, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c0_i64 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c1024 = arith.constant 1024 : i64
  %dim = memref.dim %x, %c0 : memref<?xf32>
  %n = arith.index_cast %dim : index to i64
  // A scalar argument as the lower bound: unknown.
  scf.for %i = %start to %n step %c1 : i64 {
  }
  // A lower bound that may be negative.
  %neg = arith.subi %c0_i64, %c1024 : i64
  scf.for %i = %neg to %n step %c1 : i64 {
  }
  // A step of unknown size.
  scf.for %i = %c0_i64 to %n step %by : i64 {
  }
  return
}

// -----

// CHECK-LABEL: func.func @wide_kernel
// CHECK-NOT: unsigned
// CHECK: scf.for %{{.*}} : i64
func.func @wide_kernel(%x: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c0_i64 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %dim = memref.dim %x, %c0 : memref<?xf32>
  %n = arith.index_cast %dim : index to i64
  scf.for %i = %c0_i64 to %n step %c1 : i64 {
  }
  return
}
