// RUN: tessera-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tessera-assign-layouts{warpgroup-mma=true}))' | FileCheck %s

// With warpgroup-mma (sm_90a), an f32 dot of a kernel of precision "tf32"
// whose operands are loads with K innermost (B stored [N, K]) has a
// register lowering: wgmma k8 reads both K-major from shared memory. The
// warps lie along M.
// CHECK: #[[MMA:.*]] = #tile.mma<warpsPerCTA = [4, 1]>
// CHECK-LABEL: func.func @tf32_k_major
// CHECK: tile.dot {{.*}} -> tensor<64x128xf32, #[[MMA]]>
func.func @tf32_k_major(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %b: memref<?x?xf32, strided<[?, 1], offset: ?>>, %c: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.dot_precision = "tf32"} {
  %c0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<64x32xf32>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<128x32xf32>
  %yt = tile.trans %y [1, 0] : tensor<128x32xf32> -> tensor<32x128xf32>
  %d = tile.dot %x, %yt, %zero : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// B stored [K, N] (MN-major) is covered too: the register lowering stores
// it transposed for wgmma, which reads tf32 operands K-major only.
// CHECK-LABEL: func.func @tf32_mn_major
// CHECK: tile.dot {{.*}} -> tensor<64x128xf32, #[[MMA]]>
func.func @tf32_mn_major(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %b: memref<?x?xf32, strided<[?, 1], offset: ?>>, %c: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.dot_precision = "tf32"} {
  %c0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<64x32xf32>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<32x128xf32>
  %d = tile.dot %x, %y, %zero : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// A stored [K, M] (MN-major) is not.
// expected-error @+1 {{has no register lowering: a dot of f32 into f32}}
func.func @tf32_a_mn_major(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %b: memref<?x?xf32, strided<[?, 1], offset: ?>>, %c: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.dot_precision = "tf32"} {
  %c0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<32x64xf32>
  %xt = tile.trans %x [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<128x32xf32>
  %yt = tile.trans %y [1, 0] : tensor<128x32xf32> -> tensor<32x128xf32>
  %d = tile.dot %xt, %yt, %zero : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// Without precision "tf32" an f32 dot is an IEEE f32 product: no tensor
// cores.
// expected-error @+1 {{has no register lowering: a dot of f32 into f32}}
func.func @f32_ieee(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %b: memref<?x?xf32, strided<[?, 1], offset: ?>>, %c: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<64x32xf32>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<128x32xf32>
  %yt = tile.trans %y [1, 0] : tensor<128x32xf32> -> tensor<32x128xf32>
  %d = tile.dot %x, %yt, %zero : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
