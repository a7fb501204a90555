// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-gpu-matmul-to-mma))' | FileCheck %s
// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-gpu-matmul-to-mma{fp8=true}))' | FileCheck %s --check-prefix=FP8

// A 32x32x32 f16 matmul with f32 accumulation on 2 warps: one 32x32 warp
// tile of 2x4 instructions. The warp strides over the warp tiles, reads the
// 8 accumulator fragments once, runs the K loop in steps of 16 with one
// 16x8x16 contraction per (A, B) fragment pair (2 A reads, 4 B reads) and
// writes the fragments back.
// CHECK-LABEL: func.func @mm
// CHECK: scf.execute_region {
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[WARP:.*]] = affine.apply #{{.*}}(%[[TID]])
// CHECK: scf.for %[[T:.*]] = %[[WARP]] to %c1 step %c2 {
// CHECK-COUNT-8: vector.transfer_read %arg2{{.*}} : memref<32x32xf32>, vector<16x8xf32>
// CHECK: scf.for %[[K:.*]] = %c0 to %c32 step %c16 iter_args({{.*}}) -> (vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>) {
// CHECK-COUNT-2: vector.transfer_read %arg0[%{{.*}}, %[[K]]]{{.*}} : memref<32x32xf16>, vector<16x16xf16>
// CHECK-COUNT-4: vector.transfer_read %arg1[%[[K]], %{{.*}}]{{.*}} : memref<32x32xf16>, vector<16x8xf16>
// CHECK-COUNT-8: vector.contract {{.*}} : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
// CHECK: scf.yield
// CHECK-COUNT-8: vector.transfer_write {{.*}} : vector<16x8xf32>, memref<32x32xf32>
// CHECK: } {tile.mma_warp_tiles}
// CHECK: } {tile.distributed}
// CHECK-NOT: linalg.matmul
func.func @mm(%a: memref<32x32xf16>, %b: memref<32x32xf16>, %c: memref<32x32xf32>) attributes {tile.kernel, tile.num_warps = 2 : i32} {
  linalg.matmul ins(%a, %b : memref<32x32xf16>, memref<32x32xf16>) outs(%c : memref<32x32xf32>)
  return
}

// -----

// Extents that are not multiples of the instruction (N = 12), f32 inputs
// without the tf32 precision and mixed input types keep the generic
// lowering.
// CHECK-LABEL: func.func @not_eligible
// CHECK-COUNT-3: linalg.matmul
// CHECK-NOT: vector.contract
func.func @not_eligible(%a: memref<16x16xf16>, %b: memref<16x12xf16>, %c: memref<16x12xf32>,
                        %p: memref<16x16xbf16>, %q: memref<16x8xf16>, %r: memref<16x8xf32>,
                        %x: memref<16x16xf32>, %y: memref<16x8xf32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  linalg.matmul ins(%a, %b : memref<16x16xf16>, memref<16x12xf16>) outs(%c : memref<16x12xf32>)
  linalg.matmul ins(%p, %q : memref<16x16xbf16>, memref<16x8xf16>) outs(%r : memref<16x8xf32>)
  linalg.matmul ins(%x, %y : memref<16x16xf32>, memref<16x8xf32>) outs(%r : memref<16x8xf32>)
  return
}

// -----

// bf16 inputs with f32 accumulation take the tensor-core path too.
// CHECK-LABEL: func.func @bf16
// CHECK: vector.contract {{.*}} : vector<16x16xbf16>, vector<16x8xbf16> into vector<16x8xf32>
// CHECK-NOT: linalg.matmul
func.func @bf16(%a: memref<16x16xbf16>, %b: memref<16x8xbf16>, %c: memref<16x8xf32>) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  linalg.matmul ins(%a, %b : memref<16x16xbf16>, memref<16x8xbf16>) outs(%c : memref<16x8xf32>)
  return
}

// -----

// f32 inputs under the "tf32" precision (tile.dot_precision) take the
// tensor-core path with 16x8x8 contractions; K = 24 is a multiple of 8 but
// not of 16.
// CHECK-LABEL: func.func @tf32
// CHECK: scf.for %{{.*}} = %c0 to %c24 step %c8 iter_args
// CHECK: vector.contract {{.*}} : vector<16x8xf32>, vector<8x8xf32> into vector<16x8xf32>
// CHECK-NOT: linalg.matmul
func.func @tf32(%a: memref<16x24xf32>, %b: memref<24x8xf32>, %c: memref<16x8xf32>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.dot_precision = "tf32"} {
  linalg.matmul ins(%a, %b : memref<16x24xf32>, memref<24x8xf32>) outs(%c : memref<16x8xf32>)
  return
}

// -----

// fp8 inputs (one format) use m16n8k32 contractions only on targets with
// fp8 tensor cores (the fp8 option, sm_89+); otherwise the generic lowering.
// CHECK-LABEL: func.func @fp8
// CHECK: linalg.matmul
// FP8-LABEL: func.func @fp8
// FP8: scf.for %{{.*}} = %c0 to %c64 step %c32 iter_args
// FP8: vector.contract {{.*}} : vector<16x32xf8E4M3FN>, vector<32x8xf8E4M3FN> into vector<16x8xf32>
// FP8-NOT: linalg.matmul
func.func @fp8(%a: memref<16x64xf8E4M3FN>, %b: memref<64x8xf8E4M3FN>, %c: memref<16x8xf32>) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  linalg.matmul ins(%a, %b : memref<16x64xf8E4M3FN>, memref<64x8xf8E4M3FN>) outs(%c : memref<16x8xf32>)
  return
}

// -----

// Mixed fp8 formats keep the generic lowering.
// FP8-LABEL: func.func @fp8_mixed
// FP8: linalg.matmul
func.func @fp8_mixed(%a: memref<16x32xf8E4M3FN>, %b: memref<32x8xf8E5M2>, %c: memref<16x8xf32>) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  linalg.matmul ins(%a, %b : memref<16x32xf8E4M3FN>, memref<32x8xf8E5M2>) outs(%c : memref<16x8xf32>)
  return
}

// -----

// The kernel's K loop around `acc = dot(a, b, acc)`: the accumulator buffer
// is made outside the loop and used in it by the matmul alone. With every
// warp owning the same number of warp tiles (64x64 on 4 warps: one each),
// the tiles are unrolled in a loop that runs once per warp and marked for
// register-resident accumulators.
// CHECK-LABEL: func.func @k_loop
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1 {
// CHECK: %[[W:.*]] = affine.apply
// CHECK: scf.for %[[T:.*]] = %[[W]] to %c4{{.*}} step %c4 {
// CHECK: } {tile.mma_hoist_accumulators, tile.mma_warp_tiles}
func.func @k_loop(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %n: index) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc = memref.alloc() : memref<64x64xf32>
  scf.for %k = %c0 to %n step %c1 {
    linalg.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%acc : memref<64x64xf32>)
  }
  return
}

// -----

// Not marked: the accumulator is also read in the loop (attention's
// rescaled accumulator), or there are too many fragments for the registers
// of 16 warps (256x256: 32 fragments of 4 registers per thread, cap 128).
// CHECK-LABEL: func.func @acc_used_in_loop
// CHECK-NOT: tile.mma_hoist_accumulators
// CHECK-LABEL: func.func @too_many_fragments
// CHECK-NOT: tile.mma_hoist_accumulators
// CHECK: tile.mma_warp_tiles
func.func @acc_used_in_loop(%a: memref<64x32xf16>, %b: memref<32x64xf16>, %n: index, %o: memref<64x64xf32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc = memref.alloc() : memref<64x64xf32>
  scf.for %k = %c0 to %n step %c1 {
    linalg.matmul ins(%a, %b : memref<64x32xf16>, memref<32x64xf16>) outs(%acc : memref<64x64xf32>)
    memref.copy %acc, %o : memref<64x64xf32> to memref<64x64xf32>
  }
  return
}
func.func @too_many_fragments(%a: memref<256x32xf16>, %b: memref<32x256xf16>, %n: index) attributes {tile.kernel, tile.num_warps = 16 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc = memref.alloc() : memref<256x256xf32>
  scf.for %k = %c0 to %n step %c1 {
    linalg.matmul ins(%a, %b : memref<256x32xf16>, memref<32x256xf16>) outs(%acc : memref<256x256xf32>)
  }
  return
}
