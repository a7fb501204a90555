// RUN: tessera-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tessera-assign-layouts))'

// A 16x16 product cannot give 4 warps an m16n8 instruction tile each.
// expected-error @+1 {{has no register lowering: a dot whose tile does not fit tensor-core instructions on 4 warps}}
func.func @dot(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf32>) attributes {tile.kernel} {
  %d = tile.dot %a, %b, %c : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  return
}

// -----

// Only 16-bit inputs into f32 have tensor-core fragments in registers.
// expected-error @+1 {{has no register lowering: a dot of f32 into f32}}
func.func @dot_f32(%a: tensor<64x16xf32>, %b: tensor<16x64xf32>, %c: tensor<64x64xf32>) attributes {tile.kernel} {
  %d = tile.dot %a, %b, %c : tensor<64x16xf32>, tensor<16x64xf32> -> tensor<64x64xf32>
  return
}

// -----

// expected-error @+1 {{threadsPerWarp multiplies to 16, not 32}}
#bad = #tile.blocked<sizePerThread = [1], threadsPerWarp = [16], warpsPerCTA = [4], order = [0]>
func.func @lanes(%x: tensor<64xf32, #bad>) {
  return
}

// -----

// A reduction of another reduction's result has no register lowering yet.
// expected-error @+1 {{has no register lowering: a reduction of another reduction's result}}
func.func @reduce_twice(%x: tensor<16x64xf32>) attributes {tile.kernel} {
  %r = tile.reduce sum %x {axis = 1 : i32} : tensor<16x64xf32> -> tensor<16xf32>
  %s = tile.reduce sum %r {axis = 0 : i32} : tensor<16xf32> -> tensor<f32>
  return
}

// -----

// Tiles whose extents are not powers of two keep the shared-memory lowering.
// expected-error @+1 {{has no register lowering: a tile dimension that is not a power of two}}
func.func @odd_tile(%a: memref<?xf32, strided<[1]>>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf32, strided<[1]>> -> tensor<96xf32>
  tile.store %x, %a[%c0] : tensor<96xf32>, memref<?xf32, strided<[1]>>
  return
}

// -----

// Shuffles move 32 bits: a reduction of f64 elements has no register
// lowering yet.
// expected-error @+1 {{has no register lowering: a reduction of elements wider than 32 bits}}
func.func @f64_sum(%x: tensor<64xf64>) attributes {tile.kernel} {
  %s = tile.reduce sum %x {axis = 0 : i32} : tensor<64xf64> -> tensor<f64>
  return
}

// -----

// expected-error @+1 {{mma layout needs a warp grid of rank 2}}
#bad = #tile.mma<warpsPerCTA = [4]>
func.func @mma_rank(%x: tensor<64x64xf32, #bad>) {
  return
}

// -----

// expected-error @+1 {{dot operand index must be 0 or 1}}
#bad = #tile.dot_operand<opIdx = 2, parent = #tile.mma<warpsPerCTA = [2, 2]>>
func.func @operand_index(%x: tensor<64x64xf16, #bad>) {
  return
}

// -----

// fp8 operands are widened to f16 first (tessera-widen-float8-dots).
func.func @dot_fp8(%a: tensor<64x32xf8E4M3FN>, %b: tensor<32x64xf8E4M3FN>, %c: tensor<64x64xf32>) attributes {tile.kernel} {
  // expected-error @+1 {{has fp8 operands that no tensor-core product takes: tessera-widen-float8-dots makes them f16 before layouts are assigned}}
  %d = tile.dot %a, %b, %c : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xf32>
  return
}
