// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-assign-layouts{warpgroup-mma=true}),tessera-distribute-tiles{warpgroup-mma=true},canonicalize,cse)' | FileCheck %s
// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-assign-layouts{warpgroup-mma=true}),tessera-distribute-tiles{warpgroup-mma=true tensor-copies=false},canonicalize,cse)' | FileCheck %s --check-prefix=CPASYNC

// sm_90a: a 64x128 accumulator on four warps lays every warp along M (one
// warpgroup, 64 rows) and the K loop's dot becomes wgmma m64n128k16 on
// operands read through matrix descriptors. A (64x32, K contiguous) is one
// 64-byte-swizzled atom: swizzle mode 2, SBO 512, LBO 16; B (32x128, N
// contiguous) is two 64-column atoms of 128-byte rows: mode 1, SBO 1024,
// LBO (the atom stride) 4096. Each ring has num_stages slots (one more
// than the mma.sync ring) so that the copies never overwrite the slot the
// products still in flight read; every shared block starts on a
// 1024-byte boundary. Per iteration: one fence, two K steps, one commit
// group, and a wait that leaves that group in flight; the loop waits for
// all after it.
//
// The copies go through TMA: a tensor map per operand block (A: one 64x32
// box, 64-byte swizzle; B: 32x64 boxes, 128-byte swizzle) appended to the
// kernel's arguments and described in tile.tensor_maps; one mbarrier per
// slot, initialised by thread 0; thread 0 announces the stage's 12288
// bytes and issues one copy per atom (coordinates innermost first) for
// iterations that run; every thread waits on the slot's mbarrier with the
// ring pass's parity, flipped when the slot wraps. Nothing after the loop
// reuses its shared memory: no barrier after it.
// CHECK-LABEL: gpu.func @gemm
// CHECK-SAME: %[[MAPA:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64}, %[[MAPB:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64})
// CHECK-SAME: tile.shared_bytes = 36864
// CHECK-SAME: tile.tensor_maps = [{box = array<i64: 64, 32>, source = 0 : i64, swizzle = 64 : i64}, {box = array<i64: 32, 64>, source = 1 : i64, swizzle = 128 : i64}]
// CHECK-DAG: %[[DESCB:.*]] = arith.constant 4611686293322072064 : i64
// CHECK-DAG: %[[DESCA:.*]] = arith.constant -9223371899415756800 : i64
// CHECK-DAG: %[[TA:.*]] = builtin.unrealized_conversion_cast %[[MAPA]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<64x32xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_64b
// CHECK-DAG: %[[TB:.*]] = builtin.unrealized_conversion_cast %[[MAPB]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<32x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: %[[BARS:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK: %[[LEAD:.*]] = arith.cmpi eq, %thread_id_x, %c0
// CHECK-COUNT-3: nvgpu.mbarrier.init %[[BARS]][%{{.*}}], %c1, predicate = %[[LEAD]]
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: %[[GO:.*]] = arith.andi %{{.*}}, %[[LEAD]] : i1
// CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%c0], %c12288, predicate = %[[GO]]
// CHECK: nvgpu.tma.async.load %[[TA]][%c0, %c0], %[[BARS]][%c0] to %{{.*}}, predicate = %[[GO]]
// CHECK: nvgpu.tma.async.load %[[TB]][%c0, %c0], %[[BARS]][%c0] to %{{.*}}, predicate = %[[GO]]
// CHECK: nvgpu.tma.async.load %[[TB]][%c64, %c0], %[[BARS]][%c0] to %{{.*}}, predicate = %[[GO]]
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[SLOT32:.*]] = %c0_i32, %[[PARITY:.*]] = %false)
// CHECK-NEXT: %[[SLOT:.*]] = arith.index_castui %[[SLOT32]] : i32 to index
// CHECK-NEXT: nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[SLOT]]], %[[PARITY]], %{{.*}}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%[[NEXT:.*]]], %c12288
// CHECK: nvgpu.tma.async.load %[[TA]][%[[K:.*]], %c0], %[[BARS]][%[[NEXT]]]
// CHECK: nvgpu.tma.async.load %[[TB]][%c0, %[[K]]], %[[BARS]][%[[NEXT]]]
// CHECK: nvgpu.tma.async.load %[[TB]][%c64, %[[K]]], %[[BARS]][%[[NEXT]]]
// CHECK-NOT: nvgpu.ldmatrix
// CHECK-NOT: nvgpu.mma.sync
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: nvvm.wgmma.fence.aligned
// CHECK-COUNT-2: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: %[[WRAP:.*]] = arith.cmpi eq, %{{.*}}, %c3_i32 : i32
// CHECK: %[[FLIP:.*]] = arith.xori %[[PARITY]], %[[WRAP]] : i1
// CHECK: scf.yield {{.*}}, %[[FLIP]] :
// CHECK-NOT: nvgpu.device_async_wait
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The accumulator leaves through the ring, free once every thread is past
// the loop: pairs written, a barrier, 16-byte vectors read back and stored.
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<{{[0-9]+}}xf32>, vector<2xf32>
// CHECK: gpu.barrier
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<{{[0-9]+}}xf32>, vector<4xf32>
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
// CHECK: gpu.return

// Without tensor copies: cp.async into the same swizzled slots, made
// visible to the async proxy before the barrier.
// CPASYNC-LABEL: gpu.func @gemm
// CPASYNC-NOT: tile.tensor_maps
// CPASYNC-DAG: memref.view %{{.*}}[%c0][] : {{.*}} to memref<6144xf16, #gpu.address_space<workgroup>>
// CPASYNC-DAG: memref.view %{{.*}}[%c12288][] : {{.*}} to memref<12288xf16, #gpu.address_space<workgroup>>
// CPASYNC-NOT: nvgpu.mbarrier
// CPASYNC: scf.for
// CPASYNC: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CPASYNC-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CPASYNC-NEXT: gpu.barrier
// CPASYNC: nvgpu.device_async_copy
// CPASYNC: nvvm.wgmma.commit.group.sync.aligned
// CPASYNC-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CPASYNC: scf.yield
// CPASYNC: nvvm.wgmma.wait.group.sync.aligned 0
// CPASYNC: gpu.return
func.func @gemm(%a: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc0 = %zero) -> (tensor<64x128xf32>) : i64 {
    %x = tile.load %a[%c0, %k0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
    %y = tile.load %b[%k0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x128xf16>
    %d = tile.dot %x, %y, %acc0 : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  tile.store %acc, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// A loop-invariant operand that feeds the products of two sequential loops
// is staged once (its copy before the loops) and read by both through its
// descriptor. The loops run one after the other: the second loop's ring
// reuses the first's shared memory (20480 bytes: A's 4096 and one ring of
// two 8192-byte slots), behind a proxy fence and a barrier after the first
// loop. Registers are counted per loop: both accumulators are the same
// value, live in one loop at a time (64 words, not 128, beside the 64-bit
// indices' 24 and the fixed 40); A's copy addresses die before the loops
// and B's TMA copies need none (with cp.async, B's 8 more).
// The epilogue's 64 x (128 + 8) f32 exchange (34816 bytes) outgrows the
// rings it reuses.
// CHECK-LABEL: gpu.func @two_loops
// CHECK-SAME: tile.register_estimate = 128
// CHECK-SAME: tile.shared_bytes = 38912
// CHECK: %[[A:.*]] = memref.view %{{.*}}[%c0][] : {{.*}} to memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK: %[[RING:.*]] = memref.view %{{.*}}[%c4096][] : {{.*}} to memref<8192xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy
// CHECK: %[[BARS1:.*]] = nvgpu.mbarrier.create
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0, %c0], %[[BARS1]][%c0] to %[[SLOT0:[a-z_0-9]+]],
// CHECK: scf.for
// CHECK-COUNT-2: nvvm.wgmma.mma_async
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[BARS2:.*]] = nvgpu.mbarrier.create
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0, %{{.*}}], %[[BARS2]][%c0] to %[[SLOT0]],
// CHECK: scf.for
// CHECK-COUNT-2: nvvm.wgmma.mma_async
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: vector.store {{.*}} vector<2xf32>
// CHECK: gpu.barrier
// CHECK: gpu.return
// CPASYNC-LABEL: gpu.func @two_loops
// CPASYNC-SAME: tile.register_estimate = 136
func.func @two_loops(%a: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64, %n: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
  %acc = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc0 = %zero) -> (tensor<64x128xf32>) : i64 {
    %y = tile.load %b[%k0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x128xf16>
    %d = tile.dot %x, %y, %acc0 : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %acc2 = scf.for %k0 = %k to %n step %c32 iter_args(%acc0 = %acc) -> (tensor<64x128xf32>) : i64 {
    %y = tile.load %b[%k0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x128xf16>
    %d = tile.dot %x, %y, %acc0 : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  tile.store %acc2, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// The same with B's alignment tested at run time: the vector body (TMA)
// and the element-by-element one share the arena, each with its loops'
// reuse and the fence and barrier between them (inside its branch).
// CHECK-LABEL: gpu.func @two_loops_unaligned
// CHECK-SAME: tile.shared_bytes = 38912
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %c0_i64 to %arg3
// CHECK: nvgpu.tma.async.load
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvgpu.mbarrier.create
// CHECK: scf.for %{{.*}} = %arg3 to %arg4
// CHECK: } else {
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: scf.for %{{.*}} = %c0_i64 to %arg3
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %{{.*}} = %arg3 to %arg4
// CHECK: gpu.return
func.func @two_loops_unaligned(%a: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf16, strided<[?, 1], offset: ?>>, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64, %n: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
  %acc = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc0 = %zero) -> (tensor<64x128xf32>) : i64 {
    %y = tile.load %b[%k0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x128xf16>
    %d = tile.dot %x, %y, %acc0 : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %acc2 = scf.for %k0 = %k to %n step %c32 iter_args(%acc0 = %acc) -> (tensor<64x128xf32>) : i64 {
    %y = tile.load %b[%k0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x128xf16>
    %d = tile.dot %x, %y, %acc0 : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  tile.store %acc2, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// One loop under a run-time alignment test: nothing after the loop reuses
// its ring (the masked store writes from the accumulator's registers), so
// neither branch keeps a barrier after it.
// CHECK-LABEL: gpu.func @one_loop_unaligned
// CHECK: scf.if
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: gpu.barrier
// CHECK: } else {
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @one_loop_unaligned(%a: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf16, strided<[?, 1], offset: ?>>, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc0 = %zero) -> (tensor<64x128xf32>) : i64 {
    %x = tile.load %a[%c0, %k0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
    %y = tile.load %b[%k0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x128xf16>
    %d = tile.dot %x, %y, %acc0 : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %live = arith.cmpf one, %acc, %zero : tensor<64x128xf32>
  tile.store %acc, %c[%c0, %c0] mask(%live : tensor<64x128xi1>) : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// A block two dots read, one of which cannot be a warpgroup product (32
// rows): wgmma's atom layout would not be the block mma.sync's fragment
// loads expect, so both stay on mma.sync.
// CHECK-LABEL: gpu.func @mixed
// CHECK-NOT: nvvm.wgmma
// CHECK: nvgpu.mma.sync
// CHECK-NOT: nvvm.wgmma
// CHECK: gpu.return
func.func @mixed(%a: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %z1 = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %z2 = arith.constant dense<0.000000e+00> : tensor<32x128xf32>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x128xf16>
  %x1 = tile.load %a[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
  %x2 = tile.load %a[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x32xf16>
  %d1 = tile.dot %x1, %y, %z1 : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  %d2 = tile.dot %x2, %y, %z2 : tensor<32x32xf16>, tensor<32x128xf16> -> tensor<32x128xf32>
  tile.store %d1, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  tile.store %d2, %c[%c0, %c0] : tensor<32x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// Rows that do not fill a warpgroup (32 rows on four warps) keep mma.sync.
// CHECK-LABEL: gpu.func @small
// CHECK-NOT: nvvm.wgmma
// CHECK: nvgpu.mma.sync
// CHECK-NOT: nvvm.wgmma
// CHECK: gpu.return
func.func @small(%a: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x16xf16>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<16x32xf16>
  %d = tile.dot %x, %y, %zero : tensor<32x16xf16>, tensor<16x32xf16> -> tensor<32x32xf32>
  tile.store %d, %c[%c0, %c0] : tensor<32x32xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// Both products of an attention block on wgmma. S = Q K^T reads both
// operands from shared memory; its zero accumulator is never moved into
// registers: the first K step ignores it (scale-d 0), the next accumulate.
// O = P V takes P from registers (the accumulator layout of S, rounded to
// f16, is wgmma's A fragment): NVVM has no such form, so it is inline PTX
// with A's four words, B's descriptor (V stored K x N: transposed) and the
// accumulators tied to the results, marked with tile.wgmma (N 64 | B
// transposed << 13 | scale-d << 14 | A from registers << 15) for the sim;
// its first K step too
// ignores the zero accumulator.
// CHECK-LABEL: gpu.func @attention_block
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 16>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 16>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: arith.truncf
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att {tile.wgmma = 41024 : i64} "{\0A.reg .pred p;\0Asetp.ne.b32 p, 0, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}, $31}, {$32, $33, $34, $35}, $36, p, 1, 1, 1;\0A}", "=f,{{.*}},=f,r,r,r,r,l,0,{{.*}},31"
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att {tile.wgmma = 57408 : i64} "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvgpu.mma.sync
// CHECK: gpu.return
func.func @attention_block(%q: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %v: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %o: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %zs = arith.constant dense<0.000000e+00> : tensor<64x32xf32>
  %zo = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = tile.load %q[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x64xf16>
  %kb = tile.load %k[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x64xf16>
  %kt = tile.trans %kb [1, 0] : tensor<32x64xf16> -> tensor<64x32xf16>
  %s = tile.dot %x, %kt, %zs : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
  %p = arith.truncf %s : tensor<64x32xf32> to tensor<64x32xf16>
  %y = tile.load %v[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x64xf16>
  %d = tile.dot %p, %y, %zo : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  tile.store %d, %o[%c0, %c0] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// fp8 operands (widened to f16 by tessera-widen-float8-dots) are staged as
// their f16 image: each thread loads its 16 fp8 elements per row into
// registers (no cp.async, no TMA: nothing converts on the way); with both
// operands' loads in flight, one barrier (the previous iteration's reads
// are done), then per block the widening and the 16-byte chunks into the
// swizzled layout wgmma reads, the proxy fence that orders those generic
// stores before wgmma, and one barrier. The register estimate adds to the
// 128 of the f16 kernel the fp8 words and load addresses of each block
// (A: 4 + 2, B: 8 + 4) and the larger f16 image (B's 16).
// CHECK-LABEL: gpu.func @gemm_fp8
// CHECK-NOT: tile.tensor_maps
// CHECK-SAME: tile.register_estimate = 162
// CHECK-SAME: tile.shared_bytes = 47104
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<?x?xf8E4M3FN, {{.*}}>, vector<16xf8E4M3FN>
// CHECK-NOT: gpu.barrier
// CHECK: vector.load %{{.*}} : memref<?x?xf8E4M3FN, {{.*}}>, vector<16xf8E4M3FN>
// CHECK-NOT: gpu.barrier
// CHECK: vector.load %{{.*}} : memref<?x?xf8E4M3FN, {{.*}}>, vector<16xf8E4M3FN>
// CHECK: gpu.barrier
// CHECK-NEXT: arith.extf %{{.*}} : vector<16xf8E4M3FN> to vector<16xf16>
// CHECK-COUNT-2: vector.store %{{.*}} : memref<2048xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: arith.extf %{{.*}} : vector<32xf8E4M3FN> to vector<32xf16>
// CHECK-COUNT-4: vector.store %{{.*}} : memref<4096xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-2: nvvm.wgmma.mma_async
// CHECK: scf.yield
func.func @gemm_fp8(%a: memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc0 = %zero) -> (tensor<64x128xf32>) : i64 {
    %x = tile.load %a[%c0, %k0] : memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>> -> tensor<64x32xf8E4M3FN>
    %x16 = arith.extf %x : tensor<64x32xf8E4M3FN> to tensor<64x32xf16>
    %y = tile.load %b[%k0, %c0] : memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>> -> tensor<32x128xf8E4M3FN>
    %y16 = arith.extf %y : tensor<32x128xf8E4M3FN> to tensor<32x128xf16>
    %d = tile.dot %x16, %y16, %acc0 : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  tile.store %acc, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// fp8 operands that both have K innermost (A [M, K], B [N, K] transposed;
// tessera-widen-float8-dots keeps them) are staged as they are: TMA boxes
// of 64 bytes per row with the 64-byte swizzle, and wgmma k32 reads them
// K-major (LBO 16, SBO eight 64-byte rows, mode 2), two products per
// 64-deep K step. Nothing goes through registers: the estimate is the
// accumulator's.
// CHECK-LABEL: gpu.func @gemm_fp8_k_major
// CHECK-SAME: tile.register_estimate = 128
// CHECK-SAME: tile.shared_bytes = 36864
// CHECK-SAME: tile.tensor_maps = [{box = array<i64: 64, 64>, source = 0 : i64, swizzle = 64 : i64}, {box = array<i64: 128, 64>, source = 1 : i64, swizzle = 64 : i64}]
// CHECK-DAG: arith.constant -9223371899415756800 : i64
// CHECK-DAG: memref.view %{{.*}} to memref<12288xf8E5M2, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.view %{{.*}} to memref<24576xf8E5M2, #gpu.address_space<workgroup>>
// CHECK-NOT: arith.extf
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c12288
// CHECK: nvgpu.tma.async.load
// CHECK: nvgpu.tma.async.load
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-2: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <one>], A[<e5m2>, <one>, <row>], B[<e5m2>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CPASYNC-LABEL: gpu.func @gemm_fp8_k_major
// CPASYNC: scf.for
// CPASYNC-COUNT-2: nvgpu.device_async_copy {{.*}} : memref<?x?xf8E5M2, {{.*}}> to memref<12288xf8E5M2, #gpu.address_space<workgroup>>
// CPASYNC-COUNT-4: nvgpu.device_async_copy {{.*}} : memref<?x?xf8E5M2, {{.*}}> to memref<24576xf8E5M2, #gpu.address_space<workgroup>>
// CPASYNC-COUNT-2: nvvm.wgmma.mma_async {{.*}} k = 32
func.func @gemm_fp8_k_major(%a: memref<?x?xf8E5M2, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf8E5M2, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32} {
  %c0 = arith.constant 0 : i64
  %c64 = arith.constant 64 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k0 = %c0 to %k step %c64 iter_args(%acc0 = %zero) -> (tensor<64x128xf32>) : i64 {
    %x = tile.load %a[%c0, %k0] : memref<?x?xf8E5M2, strided<[?, 1], offset: ?>> -> tensor<64x64xf8E5M2>
    %y = tile.load %b[%c0, %k0] : memref<?x?xf8E5M2, strided<[?, 1], offset: ?>> -> tensor<128x64xf8E5M2>
    %yt = tile.trans %y [1, 0] : tensor<128x64xf8E5M2> -> tensor<64x128xf8E5M2>
    %d = tile.dot %x, %yt, %acc0 : tensor<64x64xf8E5M2>, tensor<64x128xf8E5M2> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  tile.store %acc, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// f32 operands under precision "tf32" that both have K innermost are
// staged as they are (TMA boxes of 128-byte rows, the 128-byte swizzle)
// and read K-major by wgmma k8 on tf32, four products per 32-deep K step.
// CHECK-LABEL: gpu.func @gemm_tf32_k_major
// CHECK-SAME: tile.shared_bytes = 73728
// CHECK-SAME: tile.tensor_maps = [{box = array<i64: 64, 32>, source = 0 : i64, swizzle = 128 : i64}, {box = array<i64: 128, 32>, source = 1 : i64, swizzle = 128 : i64}]
// CHECK: scf.for
// CHECK: nvgpu.tma.async.load
// CHECK: nvgpu.tma.async.load
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvgpu.mma.sync
func.func @gemm_tf32_k_major(%a: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32, tile.dot_precision = "tf32"} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc0 = %zero) -> (tensor<64x128xf32>) : i64 {
    %x = tile.load %a[%c0, %k0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<64x32xf32>
    %y = tile.load %b[%c0, %k0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<128x32xf32>
    %yt = tile.trans %y [1, 0] : tensor<128x32xf32> -> tensor<32x128xf32>
    %d = tile.dot %x, %yt, %acc0 : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  tile.store %acc, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// B stored [K, N] (N innermost) under "tf32": wgmma reads tf32 K-major
// only, so the block is loaded into registers (16-byte vectors along N)
// and stored transposed, an element per store, into a [N, K] block
// swizzled along K, each iteration; A still comes by TMA.
// CHECK-LABEL: gpu.func @gemm_tf32_mn_major
// CHECK-SAME: tile.tensor_maps = [{box = array<i64: 64, 32>, source = 0 : i64, swizzle = 128 : i64}]
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<?x?xf32, {{.*}}>, vector<4xf32>
// CHECK: memref.store %{{.*}} : memref<4096xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// CHECK-NOT: nvgpu.mma.sync
func.func @gemm_tf32_mn_major(%a: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32, tile.dot_precision = "tf32"} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc0 = %zero) -> (tensor<64x128xf32>) : i64 {
    %x = tile.load %a[%c0, %k0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<64x32xf32>
    %y = tile.load %b[%k0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<32x128xf32>
    %d = tile.dot %x, %y, %acc0 : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  tile.store %acc, %c[%c0, %c0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// A persistent kernel in grouped order: the grid of programs arrives after
// the arguments (before the tensor maps), and each block loops over its
// programs from its block id in steps of the grid, each program after a
// proxy fence and a barrier (the previous program's shared memory is
// free). The ring's mbarriers are initialised once, before that loop, and
// the K loop starts from the slot and phase where the previous program's
// left them (a two-word private state).
// CHECK-LABEL: gpu.func @gemm_persistent
// CHECK-SAME: %{{.*}}: i64, %[[G0:.*]]: i64, %[[G1:.*]]: i64, %[[G2:.*]]: i64, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64})
// CHECK-SAME: tile.logical_grid
// CHECK-SAME: tile.persistent, tile.program_group = 8 : i32
// CHECK: %[[BARS:.*]] = nvgpu.mbarrier.create
// CHECK-COUNT-3: nvgpu.mbarrier.init %[[BARS]]
// CHECK: gpu.barrier
// CHECK: %[[STATE:.*]] = memref.alloca() : memref<2xi32>
// CHECK: %[[BID:.*]] = gpu.block_id  x
// CHECK: %[[STEP:.*]] = gpu.grid_dim  x
// CHECK: scf.for %[[T:.*]] = %[[BID]] to %{{.*}} step %[[STEP]] {
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: arith.minui
// CHECK: %[[SLOT:.*]] = memref.load %[[STATE]][%c0]
// CHECK: %[[PHASE:.*]] = memref.load %[[STATE]][%c1]
// CHECK-NOT: nvgpu.mbarrier.init
// CHECK: nvgpu.tma.async.load
// CHECK: %[[K:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[SLOT]], %{{.*}} = %{{.*}})
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BARS]]
// CHECK: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: memref.store %[[K]]#1, %[[STATE]][%c0]
// CHECK: memref.store %{{.*}}, %[[STATE]][%c1]
// CHECK: } {llvm.loop_annotation = #{{.*}}, tile.program_loop}
// CHECK-NEXT: gpu.return
func.func @gemm_persistent(%a: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32, tile.persistent, tile.program_group = 8 : i32} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %c64 = arith.constant 64 : i64
  %c128 = arith.constant 128 : i64
  %p0 = tile.program_id 0 : i64
  %p1 = tile.program_id 1 : i64
  %m0 = arith.muli %p0, %c64 : i64
  %n0 = arith.muli %p1, %c128 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc0 = %zero) -> (tensor<64x128xf32>) : i64 {
    %x = tile.load %a[%m0, %k0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
    %y = tile.load %b[%k0, %n0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x128xf16>
    %d = tile.dot %x, %y, %acc0 : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// A load at the top of a persistent kernel's program (attention's query
// block) pipelines the loop over programs: its ring's mbarriers before the
// loop, the next program's block copied at the top of each program, after
// the ring's wait, a proxy fence and the barrier; the K loop inside keeps
// its ring state across programs.
// CHECK-LABEL: gpu.func @attention_like
// CHECK: %[[KBARS:.*]] = nvgpu.mbarrier.create
// CHECK: %[[STATE:.*]] = memref.alloca() : memref<2xi32>
// CHECK: %[[QBARS:.*]] = nvgpu.mbarrier.create
// CHECK: nvgpu.tma.async.load %{{.*}}, %[[QBARS]][%c0]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %c0_i32, %[[QPHASE:.*]] = %false) -> (i32, i1) {
// CHECK: nvgpu.mbarrier.try_wait.parity %[[QBARS]][%{{.*}}], %[[QPHASE]]
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.tma.async.load %{{.*}}, %[[QBARS]]
// CHECK: memref.load %[[STATE]][%c0]
// CHECK: nvgpu.tma.async.load %{{.*}}, %[[KBARS]]
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity %[[KBARS]]
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: memref.store %{{.*}}, %[[STATE]][%c0]
// CHECK: } {llvm.loop_annotation = #{{.*}}, tile.program_loop}
func.func @attention_like(%q: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32, tile.persistent} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %c64 = arith.constant 64 : i64
  %p0 = tile.program_id 0 : i64
  %m0 = arith.muli %p0, %c64 : i64
  %x = tile.load %q[%m0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x64xf16>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x32xf32>
  %acc = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc0 = %zero) -> (tensor<64x32xf32>) : i64 {
    %y = tile.load %b[%c0, %k0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
    %d = tile.dot %x, %y, %acc0 : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
    scf.yield %d : tensor<64x32xf32>
  }
  tile.store %acc, %c[%m0, %c0] : tensor<64x32xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// Warp specialisation (tile.warp_specialize): the ring's mbarriers and a
// second group counting the 128 consumer threads' releases of each slot
// are initialised at the entry, before the barrier that marks where the
// kernel splits (tessera-warp-specialize). The producer's ops -- the wait
// for a slot's release (a fresh slot's phase "-1" counts as released),
// expect_tx and the TMA copies, issued by thread 128 -- are marked
// tile.producer. The K loop has no barrier: it releases the previous
// iteration's slot once wait_group 1 has completed that iteration's
// products, and the last iteration's after the loop.
// CHECK-LABEL: gpu.func @gemm_specialized
// CHECK-SAME: tile.consumer_threads = 128 : i64
// CHECK-SAME: tile.warp_specialize
// CHECK: %[[FULL:.*]] = nvgpu.mbarrier.create
// CHECK-COUNT-3: nvgpu.mbarrier.init %[[FULL]][%{{.*}}], %c1,
// CHECK: %[[EMPTY:.*]] = nvgpu.mbarrier.create
// CHECK-COUNT-3: nvgpu.mbarrier.init %[[EMPTY]][%{{.*}}], %c128,
// CHECK: %[[LEAD:.*]] = arith.cmpi eq, %{{.*}}, %c128 : index
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier {tile.ring_entry}
// CHECK: %[[GO:.*]] = arith.andi %{{.*}}, %[[LEAD]] : i1
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%c0], %true, %{{.*}} {tile.producer}
// CHECK-NEXT: } {tile.producer}
// CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%c0], %c12288, predicate = %[[GO]] {tile.producer}
// CHECK-COUNT-3: nvgpu.tma.async.load {{.*}}predicate = %[[GO]] {tile.producer}
// CHECK: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: nvgpu.mbarrier.try_wait.parity %[[FULL]]
// CHECK-NOT: gpu.barrier
// CHECK: nvgpu.mbarrier.try_wait.parity %[[EMPTY]]{{.*}} {tile.producer}
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NOT: gpu.barrier
// CHECK: nvgpu.mbarrier.arrive %[[EMPTY]]
// CHECK: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: scf.if
// CHECK: nvgpu.mbarrier.arrive %[[EMPTY]]
func.func @gemm_specialized(%a: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %b: memref<?x?xf16, strided<[?, 1], offset: ?>> {tile.aligned = true}, %c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.aligned = true}, %k: i64) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32, tile.warp_specialize} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %c64 = arith.constant 64 : i64
  %c128 = arith.constant 128 : i64
  %p0 = tile.program_id 0 : i64
  %p1 = tile.program_id 1 : i64
  %m0 = arith.muli %p0, %c64 : i64
  %n0 = arith.muli %p1, %c128 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc0 = %zero) -> (tensor<64x128xf32>) : i64 {
    %x = tile.load %a[%m0, %k0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
    %y = tile.load %b[%k0, %n0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x128xf16>
    %d = tile.dot %x, %y, %acc0 : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<64x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
