// RUN: tessera-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tessera-assign-layouts{warpgroup-mma=true}),tessera-distribute-tiles)'

// fp8 operands left as they are for wgmma k32 (laid out for warpgroup
// products) meet a lowering without warpgroup products: an error, not
// an mma.sync on 8-bit operands.
func.func @fp8_without_wgmma(%a: memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>> -> tensor<64x32xf8E4M3FN>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>> -> tensor<64x32xf8E4M3FN>
  %yt = tile.trans %y [1, 0] : tensor<64x32xf8E4M3FN> -> tensor<32x64xf8E4M3FN>
  // expected-error @+1 {{has fp8 operands, which only wgmma reads, and cannot be lowered to wgmma}}
  %d = tile.dot %x, %yt, %zero : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// The same for tf32 operands left in f32 for wgmma k8: without warpgroup
// products the register lowering has no tf32 fragments, and says so.
func.func @tf32_without_wgmma(%a: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.dot_precision = "tf32"} {
  %c0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<64x32xf32>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<64x32xf32>
  %yt = tile.trans %y [1, 0] : tensor<64x32xf32> -> tensor<32x64xf32>
  // expected-error @+1 {{has tf32 operands, which only wgmma reads, and cannot be lowered to wgmma}}
  %d = tile.dot %x, %yt, %zero : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
