// RUN: tessera-opt %s -split-input-file -tessera-warp-specialize -verify-diagnostics | FileCheck %s

// A kernel split after its barrier marked tile.ring_entry: the consumers
// (threads below 128) run the kernel without the tile.producer ops, with
// more registers, their barriers named for 128 threads; the warpgroup
// after them gives registers back and its first thread runs the producer's
// slice: the loop with only the loop-carried value the producer's ops use
// (the slot), the offset they need, the per-thread ring state's stores --
// not the consumers' loads, sums, waits or barriers. The block grows by a
// warpgroup, and ptxas is told one block per SM.
// CHECK-LABEL: gpu.func @split
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: nvvm.minctasm = 1 : i32
// CHECK-NOT: tile.warp_specialize
// CHECK-NOT: tile.consumer_threads
// CHECK: gpu.barrier
// CHECK: %[[TID:.*]] = gpu.thread_id  x
// CHECK: %[[CONS:.*]] = arith.cmpi ult, %[[TID]], %c128
// CHECK: scf.if %[[CONS]] {
// CHECK-NEXT: nvvm.setmaxregister increase 240
// CHECK: scf.for {{.*}} -> (f32, index) {
// CHECK-NOT: expect_tx
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK-NOT: expect_tx
// CHECK: scf.yield
// CHECK: memref.store
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c128
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[S0:.*]] = memref.load %{{.*}}[%c0] : memref<1xindex>
// CHECK: %[[R:.*]] = scf.for %[[I:.*]] = %c0 to %{{.*}} step %c1 iter_args(%[[SLOT:.*]] = %[[S0]]) -> (index) {
// CHECK-NOT: memref.load
// CHECK-NOT: arith.addf
// CHECK-NOT: gpu.barrier
// CHECK-NOT: nvvm.barrier
// CHECK: %[[OFF:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%[[SLOT]]], %[[OFF]], predicate = %{{.*}} :
// CHECK-NOT: nvgpu.mbarrier.try_wait.parity
// CHECK: scf.yield %{{.*}} : index
// CHECK: memref.store %[[R]], %{{.*}}[%c0] : memref<1xindex>
// CHECK-NOT: memref.store
// CHECK-NOT: tile.producer
// CHECK: gpu.return
!g = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
gpu.module @m {
  gpu.func @split(%out: memref<?xf32>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.consumer_threads = 128 : i64, tile.warp_specialize} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %c1000 = arith.constant 1000 : index
    %false = arith.constant false
    %f0 = arith.constant 0.0 : f32
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    %lead = arith.cmpi eq, %tid, %c128 : index
    %full = nvgpu.mbarrier.create -> !g
    nvgpu.mbarrier.init %full[%c0], %c1, predicate = %first : !g
    nvgpu.mbarrier.init %full[%c1], %c1, predicate = %first : !g
    gpu.barrier {tile.ring_entry}
    %state = memref.alloca() : memref<1xindex>
    memref.store %c0, %state[%c0] : memref<1xindex>
    %bid = gpu.block_id x
    %s0 = memref.load %state[%c0] : memref<1xindex>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %f0, %slot = %s0) -> (f32, index) {
      %off = arith.muli %i, %bid : index
      nvgpu.mbarrier.arrive.expect_tx %full[%slot], %off, predicate = %lead {tile.producer} : !g
      nvgpu.mbarrier.try_wait.parity %full[%slot], %false, %c1000 : !g
      %v = memref.load %out[%i] : memref<?xf32>
      %sum = arith.addf %acc, %v : f32
      gpu.barrier
      %next = arith.xori %slot, %c1 : index
      scf.yield %sum, %next : f32, index
    }
    memref.store %r#1, %state[%c0] : memref<1xindex>
    memref.store %r#0, %out[%c0] : memref<?xf32>
    gpu.return
  }
}

// -----

// The producer addresses its copies from coordinates alone: a copy whose
// offset comes from memory is refused.
!g = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 1>
gpu.module @m {
  gpu.func @from_memory(%offsets: memref<?xindex>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.consumer_threads = 128 : i64, tile.warp_specialize} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %full = nvgpu.mbarrier.create -> !g
    gpu.barrier {tile.ring_entry}
    // expected-error @below {{is needed by the producer warpgroup of a warp-specialised kernel}}
    %off = memref.load %offsets[%c0] : memref<?xindex>
    nvgpu.mbarrier.arrive.expect_tx %full[%c0], %off {tile.producer} : !g
    gpu.return
  }
}

// -----

// A kernel whose lowering fed no ring from a producer (no
// tile.consumer_threads) keeps its block and code.
// CHECK-LABEL: gpu.func @unfed
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-NOT: tile.warp_specialize
// CHECK-NOT: nvvm.setmaxregister
// CHECK: gpu.barrier
// CHECK-NEXT: gpu.return
gpu.module @m {
  gpu.func @unfed() kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.warp_specialize} {
    gpu.barrier
    gpu.return
  }
}
