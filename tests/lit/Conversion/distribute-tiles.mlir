// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-assign-layouts),tessera-distribute-tiles,canonicalize,cse)' | FileCheck %s

// Each thread holds 8 of the 1024 elements (two runs of 4): two 16-byte
// loads and stores per thread, bounds-checked per run, in a body that runs
// when the tensors are aligned (tested once at entry); the other copy of
// the body moves element by element.
// CHECK-LABEL: gpu.func @copy
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: scf.if %{{.*}} {
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK: vector.store
// CHECK: } else {
// CHECK-NOT: vector.load
// CHECK: memref.load
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @copy(%a: memref<?xf32, strided<[1], offset: ?>>, %c: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %p = tile.program_id 0 : i64
  %c1024 = arith.constant 1024 : i64
  %i0 = arith.muli %p, %c1024 : i64
  %x = tile.load %a[%i0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32>
  tile.store %x, %c[%i0] : tensor<1024xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// Negative case: an offset the compiler cannot prove a multiple of the
// vector (a scalar argument) keeps the accesses element-wide, with no
// alignment test.
// CHECK-LABEL: gpu.func @unaligned_offset
// CHECK-NOT: vector.load
// CHECK-NOT: extract_aligned_pointer
// CHECK: memref.load
func.func @unaligned_offset(%a: memref<?xf32, strided<[1], offset: ?>>, %c: memref<?xf32, strided<[1], offset: ?>>, %i0: i64) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %x = tile.load %a[%i0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32>
  tile.store %x, %c[%i0] : tensor<1024xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// Negative case: a tensor without a unit innermost stride.
// CHECK-LABEL: gpu.func @strided
// CHECK-NOT: vector.load
// CHECK: memref.load
func.func @strided(%a: memref<?xf32, strided<[?], offset: ?>>, %c: memref<?xf32, strided<[?], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf32, strided<[?], offset: ?>> -> tensor<1024xf32>
  tile.store %x, %c[%c0] : tensor<1024xf32>, memref<?xf32, strided<[?], offset: ?>>
  return
}

// -----

// A sum over 1024 elements on 4 warps: 8 elements in each thread, five
// butterfly shuffles across the lanes, then one barrier to combine the
// four warps' partial sums through a 16-byte shared buffer. The atomic
// runs on thread 0 only.
// CHECK-LABEL: gpu.func @sum
// CHECK-SAME: tile.shared_bytes = 16 : i64
// CHECK: gpu.dynamic_shared_memory
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: arith.cmpi eq, %{{.*}}, %c0
// CHECK: scf.if
// CHECK-NEXT: tile.atomic_rmw add
func.func @sum(%a: memref<?xf32, strided<[1], offset: ?>>, %out: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32>
  %s = tile.reduce sum %x {axis = 0 : i32} : tensor<1024xf32> -> tensor<f32>
  %e = tensor.extract %s[] : tensor<f32>
  tile.atomic_rmw add %e, %out[%c0] : f32, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// A reduction alone in a loop body reuses its shared buffer on the next
// iteration: a barrier before the write keeps the slowest warp's read of
// the previous iteration safe. Two barriers per iteration. A loop over
// tiles of unknown trip count is not to be unrolled again.
// CHECK-LABEL: gpu.func @max_loop
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK-NEXT: } {llvm.loop_annotation = #{{.*}}}
func.func @max_loop(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %out: memref<?xf32, strided<[1], offset: ?>>, %n: i64) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %m = scf.for %r = %c0 to %n step %c1 iter_args(%acc = %ninf) -> (f32) : i64 {
    %x = tile.load %a[%r, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x512xf32>
    %y = tile.reshape %x : tensor<1x512xf32> -> tensor<512xf32>
    %s = tile.reduce max %y {axis = 0 : i32} : tensor<512xf32> -> tensor<f32>
    %e = tensor.extract %s[] : tensor<f32>
    %next = arith.maximumf %acc, %e : f32
    scf.yield %next : f32
  }
  tile.atomic_rmw max %m, %out[%c0] : f32, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// A tile smaller than the block (64 elements, 128 threads): threads 64..127
// repeat threads 0..63; they do not store.
// CHECK-LABEL: gpu.func @replicated
// CHECK: %[[T:.*]] = arith.addi
// CHECK: %[[E:.*]] = arith.remui %[[T]], %c64
// CHECK: memref.load %{{.*}}[%[[E]]]
// CHECK: %[[OWN:.*]] = arith.cmpi ult, %[[T]], %c64
// CHECK: %[[OK:.*]] = arith.andi %{{.*}}, %[[OWN]]
// CHECK: scf.if %[[OK]]
// CHECK-NEXT: memref.store
func.func @replicated(%a: memref<?xf32, strided<[?], offset: ?>>, %c: memref<?xf32, strided<[?], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  tile.store %x, %c[%c0] : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>
  return
}

// -----

// A load whose elements only reach a store with the same bounds (same
// offset into dimensions with the same shape symbol) needs no padding
// value: nothing can read its out-of-bounds lanes.
// CHECK-LABEL: gpu.func @scaled_copy
// CHECK: llvm.mlir.poison : f32
// CHECK-NOT: arith.constant 0.000000e+00 : f32
// CHECK: gpu.return
func.func @scaled_copy(%a: memref<?xf32, strided<[1]>> {tile.dim_symbols = ["N"]}, %c: memref<?xf32, strided<[1]>> {tile.dim_symbols = ["N"]}, %s: f32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %p = tile.program_id 0 : i64
  %c1024 = arith.constant 1024 : i64
  %i0 = arith.muli %p, %c1024 : i64
  %x = tile.load %a[%i0] : memref<?xf32, strided<[1]>> -> tensor<1024xf32>
  %k = tile.splat %s : tensor<1024xf32>
  %y = arith.mulf %x, %k : tensor<1024xf32>
  tile.store %y, %c[%i0] : tensor<1024xf32>, memref<?xf32, strided<[1]>>
  return
}

// -----

// Negative cases: a reduction reads the padding (0 for a sum), and a store
// into a tensor of another shape symbol could keep lanes the load lacked.
// CHECK-LABEL: gpu.func @padding_read
// CHECK-NOT: llvm.mlir.poison
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @other_symbol
// CHECK-NOT: llvm.mlir.poison
// CHECK: gpu.return
func.func @padding_read(%a: memref<?xf32, strided<[1]>> {tile.dim_symbols = ["N"]}, %out: memref<?xf32, strided<[1]>> {tile.dim_symbols = ["N"]}) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf32, strided<[1]>> -> tensor<1024xf32>
  %s = tile.reduce sum %x {axis = 0 : i32} : tensor<1024xf32> -> tensor<f32>
  %e = tensor.extract %s[] : tensor<f32>
  tile.atomic_rmw add %e, %out[%c0] : f32, memref<?xf32, strided<[1]>>
  return
}
func.func @other_symbol(%a: memref<?xf32, strided<[1]>> {tile.dim_symbols = ["N"]}, %c: memref<?xf32, strided<[1]>> {tile.dim_symbols = ["M"]}) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf32, strided<[1]>> -> tensor<1024xf32>
  tile.store %x, %c[%c0] : tensor<1024xf32>, memref<?xf32, strided<[1]>>
  return
}

// -----

// A K loop over tensor-core products, num_stages = 3 (two shared slots of
// 2 KiB per operand):
// the prologue copies the first iteration's operands (16-byte cp.async
// chunks, zero-filled outside the tensor); each iteration waits for its
// own group, passes one barrier, copies the next iteration's operands into
// the other slot, then reads swizzled fragments (ldmatrix; .trans for B
// stored K x N; a chunk offset that overlaps the swizzle's bits is XORed
// in) for each K step and issues 2 x 4 m16n8k16 products per warp and
// step. The f32 accumulator stays in registers; the epilogue writes its
// pairs to shared memory (32 rows at a time, rows padded by 16 bytes, in
// the 8 KiB of the ring and 1 KiB more) and stores 16-byte vectors.
// CHECK-LABEL: gpu.func @gemm
// CHECK-SAME: tile.shared_bytes = 9216
// CHECK-COUNT-2: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: arith.xori
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-8: nvgpu.mma.sync
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK: gpu.barrier
// CHECK: vector.store {{.*}} : memref<{{[0-9]+}}xf32>, vector<2xf32>
// CHECK: gpu.barrier
// CHECK: vector.load {{.*}} : memref<{{[0-9]+}}xf32>, vector<4xf32>
// CHECK: vector.store {{.*}} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
// CHECK: gpu.return
func.func @gemm(%a: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32} {
  %c0 = arith.constant 0 : i64
  %c16 = arith.constant 16 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %acc = scf.for %k0 = %c0 to %k step %c16 iter_args(%acc0 = %zero) -> (tensor<64x64xf32>) : i64 {
    %x = tile.load %a[%c0, %k0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x16xf16>
    %y = tile.load %b[%k0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<16x64xf16>
    %d = tile.dot %x, %y, %acc0 : tensor<64x16xf16>, tensor<16x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %acc, %c[%c0, %c0] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// Two chained products (attention's Q K^T, then P V) on one 4x1 warp grid:
// the row maximum of the first result reduces each thread's registers and
// then the four lanes of a row (shuffles xor 1 and 2 for each of its two
// rows; no shared memory, no barrier), comes back to the tile by a register shuffle, and the f16 P
// reaches the second product's fragments in registers: nothing between
// the exponential and the second product's mma.sync touches shared memory.
// The result leaves through shared memory for 16-byte stores (64 rows of
// 64 + 8 f32: 18432 bytes beside the operands' 16384).
// CHECK-LABEL: gpu.func @chain
// CHECK-SAME: tile.shared_bytes = 34816
// CHECK-COUNT-3: gpu.barrier
// CHECK-COUNT-16: nvgpu.mma.sync
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK-NOT: gpu.shuffle
// CHECK: math.exp2 {{.*}} : vector<16xf32>
// CHECK-NOT: gpu.barrier
// CHECK-NOT: memref.store
// CHECK: nvgpu.mma.sync
func.func @chain(%q: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %v: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %o: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %z = arith.constant dense<0.000000e+00> : tensor<64x32xf32>
  %zo = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %a = tile.load %q[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x64xf16>
  %b = tile.load %k[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
  %w = tile.load %v[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x64xf16>
  %s = tile.dot %a, %b, %z : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
  %m = tile.reduce max %s {axis = 1 : i32} : tensor<64x32xf32> -> tensor<64xf32>
  %m2 = tile.reshape %m : tensor<64xf32> -> tensor<64x1xf32>
  %mb = tile.broadcast %m2 : tensor<64x1xf32> -> tensor<64x32xf32>
  %d = arith.subf %s, %mb : tensor<64x32xf32>
  %p = math.exp2 %d : tensor<64x32xf32>
  %p16 = arith.truncf %p : tensor<64x32xf32> to tensor<64x32xf16>
  %r = tile.dot %p16, %w, %zo : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  tile.store %r, %o[%c0, %c0] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// A mask `arange < n` with n the extent of a 16-byte aligned tensor (a
// multiple of 4 f32 elements) has one value on every run of 4: each run is
// one vector load predicated by the run's first mask bit, with no
// element-by-element fallback. Under tile.index32 the 64-bit comparison
// of the sign-extended arange with n is done in 32 bits, once per run (on
// each run's first register) and spread over the run; both sides are
// non-negative, so it is the unsigned comparison the bounds checks use.
// CHECK-LABEL: gpu.func @uniform_mask
// CHECK: arith.trunci %{{.*}} : i64 to i32
// CHECK: %[[FIRSTS:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 4] : vector<8xi32>, vector<8xi32>
// CHECK: %[[FEW:.*]] = arith.cmpi ult, %[[FIRSTS]], %{{.*}} : vector<2xi32>
// CHECK: vector.extract %[[FEW]][0] : i1 from vector<2xi1>
// CHECK: scf.if
// CHECK-NEXT: vector.load %{{.*}} {alignment = 16 : i64}
// CHECK: vector.extract %[[FEW]][1] : i1 from vector<2xi1>
// CHECK-NOT: memref.load
// CHECK: gpu.return
func.func @uniform_mask(%a: memref<?xf32, strided<[1], offset: ?>> {tile.aligned = true}, %c: memref<?xf32, strided<[1], offset: ?>> {tile.aligned = true}) attributes {tile.kernel, tile.index32, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %c0i = arith.constant 0 : index
  %d = memref.dim %a, %c0i : memref<?xf32, strided<[1], offset: ?>>
  %n = arith.index_cast %d : index to i64
  %r = tile.arange 0 to 1024 : tensor<1024xi32>
  %r64 = arith.extsi %r : tensor<1024xi32> to tensor<1024xi64>
  %ns = tile.splat %n : tensor<1024xi64>
  %m = arith.cmpi slt, %r64, %ns : tensor<1024xi64>
  %x = tile.load %a[%c0] mask(%m : tensor<1024xi1>) : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32>
  tile.store %x, %c[%c0] : tensor<1024xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// A mask `i0 + arange < n` with i0 up to 2^31 - 1 (here an extent): the sum
// may pass 2^31, so not a signed i32, but it stays below 2^32 and both sides
// are non-negative: an unsigned i32 comparison of an unsigned i32 sum.
// CHECK-LABEL: gpu.func @tile_start_mask
// CHECK-NOT: vector<{{[0-9]+}}xi64>
// CHECK: arith.addi %{{.*}}, %{{.*}} overflow<nuw> : vector<8xi32>
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK: gpu.return
func.func @tile_start_mask(%a: memref<?xf32, strided<[1], offset: ?>> {tile.aligned = true}, %c: memref<?xf32, strided<[1], offset: ?>> {tile.aligned = true}) attributes {tile.kernel, tile.index32, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %c0i = arith.constant 0 : index
  %d = memref.dim %a, %c0i : memref<?xf32, strided<[1], offset: ?>>
  %n = arith.index_cast %d : index to i64
  %r = tile.arange 0 to 1024 : tensor<1024xi32>
  %r64 = arith.extsi %r : tensor<1024xi32> to tensor<1024xi64>
  %starts = tile.splat %n : tensor<1024xi64>
  %i = arith.addi %starts, %r64 : tensor<1024xi64>
  %ns = tile.splat %n : tensor<1024xi64>
  %m = arith.cmpi slt, %i, %ns : tensor<1024xi64>
  %x = tile.load %a[%c0] mask(%m : tensor<1024xi1>) : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32>
  tile.store %x, %c[%c0] : tensor<1024xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// A comparison constant over runs of 4 that is not a load mask (here a
// `where`) is also computed once per run and spread over the run's
// registers.
// CHECK-LABEL: gpu.func @run_constant_where
// CHECK: %[[FEW:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK: %[[ALL:.*]] = vector.shuffle %[[FEW]], %[[FEW]] [0, 0, 0, 0, 1, 1, 1, 1] : vector<2xi1>, vector<2xi1>
// CHECK: arith.select %[[ALL]], %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
func.func @run_constant_where(%a: memref<?xf32, strided<[1], offset: ?>> {tile.aligned = true}, %c: memref<?xf32, strided<[1], offset: ?>> {tile.aligned = true}) attributes {tile.kernel, tile.index32, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %c0i = arith.constant 0 : index
  %d = memref.dim %a, %c0i : memref<?xf32, strided<[1], offset: ?>>
  %n = arith.index_cast %d : index to i64
  %r = tile.arange 0 to 1024 : tensor<1024xi32>
  %r64 = arith.extsi %r : tensor<1024xi32> to tensor<1024xi64>
  %ns = tile.splat %n : tensor<1024xi64>
  %m = arith.cmpi slt, %r64, %ns : tensor<1024xi64>
  %x = tile.load %a[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<1024xf32>
  %y = arith.select %m, %x, %ninf : tensor<1024xi1>, tensor<1024xf32>
  tile.store %y, %c[%c0] : tensor<1024xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// Dimensions with one shape symbol have one extent (the launch checks they
// agree): the store into %c is bounded by %a's extent, so the loads' and
// the stores' bounds checks are the same comparisons.
// CHECK-LABEL: gpu.func @shared_extent
// CHECK: memref.dim %arg0
// CHECK-NOT: memref.dim %arg1
// CHECK: gpu.return
func.func @shared_extent(%a: memref<?xf32, strided<[1], offset: ?>> {tile.aligned = true, tile.dim_symbols = ["N"]}, %c: memref<?xf32, strided<[1], offset: ?>> {tile.aligned = true, tile.dim_symbols = ["N"]}) attributes {tile.kernel, tile.index32, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32>
  tile.store %x, %c[%c0] : tensor<1024xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// Negative case: a bound n passed as a scalar may cut a run of 4 in the
// middle, so a run whose mask is not all true is read element by element;
// nothing bounds n to 32 bits, so the comparison stays 64-bit.
// CHECK-LABEL: gpu.func @ragged_mask
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : vector<8xi64>
// CHECK: vector.load
// CHECK: memref.load
func.func @ragged_mask(%a: memref<?xf32, strided<[1], offset: ?>> {tile.aligned = true}, %c: memref<?xf32, strided<[1], offset: ?>> {tile.aligned = true}, %n: i64) attributes {tile.kernel, tile.index32, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %r = tile.arange 0 to 1024 : tensor<1024xi32>
  %r64 = arith.extsi %r : tensor<1024xi32> to tensor<1024xi64>
  %ns = tile.splat %n : tensor<1024xi64>
  %m = arith.cmpi slt, %r64, %ns : tensor<1024xi64>
  %x = tile.load %a[%c0] mask(%m : tensor<1024xi1>) : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32>
  tile.store %x, %c[%c0] : tensor<1024xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// Under tile.index32, a program id split by a tensor extent (batch and
// head) divides in 32 bits: no 64-bit division (a call in SASS) remains.
// Without index32 the division stays 64-bit.
// CHECK-LABEL: gpu.func @split_program_id
// CHECK-NOT: arith.floordivsi
// CHECK: arith.divui %{{.*}}, %{{.*}} : i32
// CHECK-LABEL: gpu.func @split_program_id_wide
// CHECK: arith.floordivsi %{{.*}}, %{{.*}} : i64
func.func @split_program_id(%a: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.dim_symbols = ["Z", "H"]}) attributes {tile.kernel, tile.index32, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = tile.program_id 0 : i64
  %d = memref.dim %a, %c1 : memref<?x?xf32, strided<[?, 1], offset: ?>>
  %h = arith.index_cast %d : index to i64
  %z = arith.floordivsi %p, %h : i64
  %c0i = arith.constant 0 : i64
  %x = tile.load %a[%z, %c0i] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x128xf32>
  tile.store %x, %a[%z, %c0i] : tensor<1x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
func.func @split_program_id_wide(%a: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.dim_symbols = ["Z", "H"]}) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c1 = arith.constant 1 : index
  %p = tile.program_id 0 : i64
  %d = memref.dim %a, %c1 : memref<?x?xf32, strided<[?, 1], offset: ?>>
  %h = arith.index_cast %d : index to i64
  %z = arith.floordivsi %p, %h : i64
  %c0i = arith.constant 0 : i64
  %x = tile.load %a[%z, %c0i] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x128xf32>
  tile.store %x, %a[%z, %c0i] : tensor<1x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// Grouped program order without a persistent loop: block x runs program
// x of the grid of programs that follows the arguments, taken in groups of
// 4 along axis 0 (the last group smaller), axis 0 fastest within a group;
// num_programs reads that grid.
// CHECK-LABEL: gpu.func @copy_grouped
// CHECK-SAME: %[[G0:[a-z0-9]+]]: i64, %[[G1:[a-z0-9]+]]: i64, %[[G2:[a-z0-9]+]]: i64) kernel
// CHECK-SAME: tile.logical_grid
// CHECK-SAME: tile.program_group = 4 : i32
// CHECK-NOT: scf.for
// CHECK: %[[X0:.*]] = arith.index_cast %[[G0]] : i64 to index
// CHECK: %[[X1:.*]] = arith.index_cast %[[G1]] : i64 to index
// CHECK: %[[PLANE:.*]] = arith.muli %[[X0]], %[[X1]] : index
// CHECK: %[[BID:.*]] = gpu.block_id  x
// CHECK: %[[R:.*]] = arith.remui %[[BID]], %[[PLANE]] : index
// CHECK: %[[WIDTH:.*]] = arith.muli %[[X1]], %c4 : index
// CHECK: %[[GROUP:.*]] = arith.divui %[[R]], %[[WIDTH]] : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[GROUP]], %c4 : index
// CHECK: %[[LEFT:.*]] = arith.subi %[[X0]], %[[FIRST]] : index
// CHECK: %[[SIZE:.*]] = arith.minui %[[LEFT]], %c4 : index
// CHECK: %[[IN:.*]] = arith.remui %[[R]], %[[WIDTH]] : index
// CHECK: %[[OFF:.*]] = arith.remui %[[IN]], %[[SIZE]] : index
// CHECK: %[[P0:.*]] = arith.addi %[[FIRST]], %[[OFF]] : index
// CHECK: %[[P1:.*]] = arith.divui %[[IN]], %[[SIZE]] : index
// CHECK: arith.index_cast %[[P0]] : index to i64
// CHECK: arith.index_cast %[[P1]] : index to i64
// CHECK: vector.broadcast %[[G2]] : i64 to vector<8xi64>
// CHECK-NOT: scf.for
// CHECK: gpu.return
func.func @copy_grouped(%x: memref<?x?xf32, strided<[?, 1], offset: ?>>, %y: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.program_group = 4 : i32} {
  %c32 = arith.constant 32 : i64
  %n = tile.num_programs 2 : i64
  %p0 = tile.program_id 0 : i64
  %p1 = tile.program_id 1 : i64
  %r = arith.muli %p0, %c32 : i64
  %c = arith.muli %p1, %c32 : i64
  %t = tile.load %x[%r, %c] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<32x32xf32>
  %s = tile.splat %n : tensor<32x32xi64>
  %f = arith.sitofp %s : tensor<32x32xi64> to tensor<32x32xf32>
  %o = arith.addf %t, %f : tensor<32x32xf32>
  tile.store %o, %y[%r, %c] : tensor<32x32xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
