// RUN: tessera-opt %s -tessera-gpu-to-host=checks=false | FileCheck %s

// wgmma k8 on tf32 (both operands K-major) on the sim device: its packed
// shape is N | tf32 << 9 | scale-d << 14 (16 | 512 | 16384).
// CHECK-LABEL: func.func @k_sim(
// CHECK: %[[CONFIG:.*]] = arith.constant 16912 : i64
// CHECK: call @tessera_sim_wgmma(%{{.*}}, %[[CONFIG]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64, i64, i64, i64) -> ()
// CHECK-NOT: nvvm.wgmma.mma_async
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
gpu.module @m {
  gpu.func @k(%out: memref<8xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1024xf32, #gpu.address_space<workgroup>>
    %p = memref.extract_aligned_pointer_as_index %v : memref<1024xf32, #gpu.address_space<workgroup>> -> index
    %pi = arith.index_cast %p : index to i64
    %acc = llvm.mlir.poison : !acc
    nvvm.wgmma.fence.aligned
    %d = nvvm.wgmma.mma_async %pi, %pi, %acc, #nvvm.shape<m = 64, n = 16, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>] : !acc -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    %x = llvm.extractvalue %d[0] : !acc
    memref.store %x, %out[%c0] : memref<8xf32>
    gpu.return
  }
}
