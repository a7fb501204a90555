// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-vectorize-matmul))' | FileCheck %s
// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-vectorize-matmul{mr=4 nr=16}))' | FileCheck %s --check-prefix=SMALL

// An 8x32 micro-tile: loops over M and N; the accumulator's eight rows are
// read once before the K loop, carried in registers (one loop-carried vector
// per row) and written once after it; each K step is one broadcast-FMA per
// row.
// CHECK-LABEL: func.func @f32
// CHECK: scf.for %[[I:.*]] = %c0 to %c16 step %c8
// CHECK: scf.for %[[J:.*]] = %c0 to %c64 step %c32
// CHECK-COUNT-8: vector.transfer_read %arg2[{{.*}}, %[[J]]]{{.*}} : memref<16x64xf32>, vector<1x32xf32>
// CHECK-NEXT: %[[R:.*]]:8 = scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args({{.*}}) -> (vector<1x32xf32>, vector<1x32xf32>, vector<1x32xf32>, vector<1x32xf32>, vector<1x32xf32>, vector<1x32xf32>, vector<1x32xf32>, vector<1x32xf32>)
// CHECK-NOT: vector.transfer_read %arg2
// CHECK-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// CHECK: scf.yield
// CHECK-COUNT-8: vector.transfer_write %[[R]]#{{[0-7]}}, %arg2[{{.*}}, %[[J]]]
// CHECK-NOT: linalg.matmul
// SMALL-LABEL: func.func @f32
// SMALL: scf.for %{{.*}} = %c0 to %c16 step %c4
// SMALL: scf.for %{{.*}} = %c0 to %c64 step %c16
// SMALL-COUNT-4: vector.fma {{.*}} : vector<16xf32>
func.func @f32(%a: memref<16x8xf32>, %b: memref<8x64xf32>, %c: memref<16x64xf32>) {
  linalg.matmul ins(%a, %b : memref<16x8xf32>, memref<8x64xf32>) outs(%c : memref<16x64xf32>)
  return
}

// -----

// bf16 operands are widened to f32 before the FMAs.
// CHECK-LABEL: func.func @bf16
// CHECK: arith.extf {{.*}} : vector<32xbf16> to vector<32xf32>
// CHECK: vector.fma {{.*}} : vector<32xf32>
func.func @bf16(%a: memref<8x4xbf16>, %b: memref<4x32xbf16>, %c: memref<8x32xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x32xbf16>) outs(%c : memref<8x32xf32>)
  return
}

// -----

// Tiles shrink to divisors of the extents: M = 6 takes rows of 2, N = 24
// columns of 8.
// CHECK-LABEL: func.func @odd
// CHECK: scf.for %{{.*}} = %c0 to %c6 step %c2
// CHECK: scf.for %{{.*}} = %c0 to %c24 step %c8
// CHECK-COUNT-2: vector.fma {{.*}} : vector<8xf32>
func.func @odd(%a: memref<6x4xf32>, %b: memref<4x24xf32>, %c: memref<6x24xf32>) {
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x24xf32>) outs(%c : memref<6x24xf32>)
  return
}

// -----

// Left alone: integer operands, an N extent without a divisor >= 8, and
// dynamic shapes.
// CHECK-LABEL: func.func @untouched
// CHECK-COUNT-3: linalg.matmul
// CHECK-NOT: vector.
func.func @untouched(%a: memref<8x4xi8>, %b: memref<4x32xi8>, %c: memref<8x32xi32>,
                     %d: memref<8x4xf32>, %e: memref<4x12xf32>, %f: memref<8x12xf32>,
                     %g: memref<?x?xf32>, %h: memref<?x?xf32>, %k: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xi8>, memref<4x32xi8>) outs(%c : memref<8x32xi32>)
  linalg.matmul ins(%d, %e : memref<8x4xf32>, memref<4x12xf32>) outs(%f : memref<8x12xf32>)
  linalg.matmul ins(%g, %h : memref<?x?xf32>, memref<?x?xf32>) outs(%k : memref<?x?xf32>)
  return
}

// -----

// An operand that is a reshaped buffer (a (256,) tile split into (16, 16)):
// the transfers through the expand_shape are vectorised like any other
// (the rewrites around them do not reach a fixed point, which is no error).
// CHECK-LABEL: func.func @expanded_operand
// CHECK: vector.transfer_read %{{.*}} : memref<16x16xf32>, vector<1x1xf32>
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: linalg.matmul
func.func @expanded_operand(%flat: memref<256xf32>, %b: memref<16x16xf32>, %c: memref<16x16xf32>) {
  %a = memref.expand_shape %flat [[0, 1]] output_shape [16, 16] : memref<256xf32> into memref<16x16xf32>
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%c : memref<16x16xf32>)
  return
}
