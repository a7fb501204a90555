// RUN: tessera-opt %s -split-input-file -tessera-warpgroup-pingpong | FileCheck %s

// Two consumer warpgroups and a loop with two groups of products (Q K^T,
// then P V after the softmax): warpgroup 1 lets warpgroup 0 go first, each
// waits for its turn before the first group and hands the turn over after
// it, waits again before the last group (whose turn runs on into the next
// iteration's first group), and after the loop warpgroup 0 hands warpgroup
// 1 its last turn. The barriers are 2 + g (own) and 3 - g (other's).
// CHECK-LABEL: gpu.func @two_groups
// CHECK-NOT: tile.pingpong
// CHECK: %[[TID:.*]] = gpu.thread_id{{ +}}x
// CHECK: %[[G:.*]] = arith.divui %[[TID]], %c128
// CHECK: %[[G32:.*]] = arith.index_castui %[[G]] : index to i32
// CHECK: %[[OWN:.*]] = arith.addi %[[G32]], %c2_i32
// CHECK: %[[OTHER:.*]] = arith.subi %c3_i32{{.*}}, %[[G32]]
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %[[G32]], %c1_i32
// CHECK: scf.if %[[IS1]] {
// CHECK: nvvm.barrier.arrive id = %c2_i32{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.barrier id = %[[OWN]] number_of_threads = %c256_i32
// CHECK: scf.for
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma
// CHECK: nvvm.barrier.arrive id = %[[OTHER]] number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: math.exp2
// CHECK: nvvm.barrier id = %[[OWN]] number_of_threads = %c256_i32
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.barrier
// CHECK: scf.yield
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[G32]], %c0_i32
// CHECK: scf.if %[[IS0]] {
// CHECK: nvvm.barrier.arrive id = %c3_i32{{.*}} number_of_threads = %c256_i32
// CHECK: gpu.return
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
gpu.module @m {
  gpu.func @two_groups(%n: index, %da: i64, %db: i64) kernel attributes {tile.consumer_threads = 256 : i64, tile.pingpong} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = llvm.mlir.poison : !acc
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%o = %z) -> (!acc) {
      nvvm.wgmma.fence.aligned
      %s = nvvm.wgmma.mma_async %da, %db, %z, <m = 64, n = 32, k = 16>, D [<f32>, <zero>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      %e = llvm.extractvalue %s[0] : !acc
      %p = math.exp2 %e : f32
      %s2 = llvm.insertvalue %p, %o[0] : !acc
      nvvm.wgmma.fence.aligned
      %o2 = nvvm.wgmma.mma_async %da, %db, %s2, <m = 64, n = 32, k = 16>, D [<f32>, <one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      scf.yield %o2 : !acc
    }
    gpu.return
  }
}

// -----

// One group per iteration (a GEMM's K loop), a barrier in the loop, or one
// consumer warpgroup: nothing to take turns at; the attribute goes.
// CHECK-LABEL: gpu.func @one_group
// CHECK-NOT: tile.pingpong
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @barrier_in_loop
// CHECK-NOT: tile.pingpong
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: gpu.barrier
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @one_warpgroup
// CHECK-NOT: tile.pingpong
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
gpu.module @m {
  gpu.func @one_group(%n: index, %da: i64, %db: i64) kernel attributes {tile.consumer_threads = 256 : i64, tile.pingpong} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = llvm.mlir.poison : !acc
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%o = %z) -> (!acc) {
      nvvm.wgmma.fence.aligned
      %o2 = nvvm.wgmma.mma_async %da, %db, %o, <m = 64, n = 32, k = 16>, D [<f32>, <one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      scf.yield %o2 : !acc
    }
    gpu.return
  }
  gpu.func @barrier_in_loop(%n: index, %da: i64, %db: i64) kernel attributes {tile.consumer_threads = 256 : i64, tile.pingpong} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = llvm.mlir.poison : !acc
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%o = %z) -> (!acc) {
      nvvm.wgmma.fence.aligned
      %s = nvvm.wgmma.mma_async %da, %db, %o, <m = 64, n = 32, k = 16>, D [<f32>, <one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      gpu.barrier
      nvvm.wgmma.fence.aligned
      %o2 = nvvm.wgmma.mma_async %da, %db, %s, <m = 64, n = 32, k = 16>, D [<f32>, <one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      scf.yield %o2 : !acc
    }
    gpu.return
  }
  gpu.func @one_warpgroup(%n: index, %da: i64, %db: i64) kernel attributes {tile.consumer_threads = 128 : i64, tile.pingpong} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = llvm.mlir.poison : !acc
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%o = %z) -> (!acc) {
      nvvm.wgmma.fence.aligned
      %s = nvvm.wgmma.mma_async %da, %db, %o, <m = 64, n = 32, k = 16>, D [<f32>, <one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      nvvm.wgmma.fence.aligned
      %o2 = nvvm.wgmma.mma_async %da, %db, %s, <m = 64, n = 32, k = 16>, D [<f32>, <one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      scf.yield %o2 : !acc
    }
    gpu.return
  }
}
