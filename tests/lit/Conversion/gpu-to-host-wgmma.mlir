// RUN: tessera-opt %s -tessera-gpu-to-host=checks=false | FileCheck %s

// Warpgroup products on the sim device: wgmma.fence, commit_group and
// wait_group N are calls with the thread's context; wgmma.mma_async stores
// the thread's accumulators (the struct's f32 fields) into a slot made at
// function entry, passes its packed shape (N | bf16 << 10 | A transposed
// << 12 | B transposed << 13 | scale-d << 14) and both descriptors to
// tessera_sim_wgmma, and reads D back into a struct. The shared view's
// aligned pointer (what the descriptors are built from) is the arena's.
// CHECK-LABEL: func.func @k_sim(
// CHECK-SAME: %[[ARENA:[^:]*]]: memref<?xi8>, %[[TID:[^:]*]]: index,
// CHECK-SAME: %[[CTX:[^:]*]]: i64)
// CHECK: %[[SLOT:.*]] = memref.alloca() : memref<8xf32>
// CHECK: memref.extract_aligned_pointer_as_index %{{.*}} : memref<1024xf16> -> index
// CHECK: call @tessera_sim_wgmma_fence(%[[CTX]]) : (i64) -> ()
// CHECK: llvm.extractvalue
// CHECK: vector.store %{{.*}}, %[[SLOT]]
// CHECK: %[[CONFIG:.*]] = arith.constant 24592 : i64
// CHECK: call @tessera_sim_wgmma(%[[CTX]], %[[CONFIG]], %[[DA:.*]], %[[DB:.*]], %{{.*}}, %{{.*}}) : (i64, i64, i64, i64, i64, i64) -> ()
// CHECK: vector.load %[[SLOT]]
// CHECK: llvm.insertvalue
// CHECK: call @tessera_sim_wgmma_commit(%[[CTX]]) : (i64) -> ()
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: call @tessera_sim_wgmma_wait(%[[CTX]], %[[ONE]]) : (i64, i64) -> ()
// CHECK-NOT: nvvm.
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
gpu.module @m {
  gpu.func @k(%out: memref<8xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1024xf16, #gpu.address_space<workgroup>>
    %p = memref.extract_aligned_pointer_as_index %v : memref<1024xf16, #gpu.address_space<workgroup>> -> index
    %pi = arith.index_cast %p : index to i64
    %acc = llvm.mlir.poison : !acc
    nvvm.wgmma.fence.aligned
    %d = nvvm.wgmma.mma_async %pi, %pi, %acc, #nvvm.shape<m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>] : !acc -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 1
    %x = llvm.extractvalue %d[0] : !acc
    memref.store %x, %out[%c0] : memref<8xf32>
    gpu.return
  }
}
