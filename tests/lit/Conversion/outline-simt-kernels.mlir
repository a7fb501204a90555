// RUN: tessera-opt %s -tessera-outline-simt-kernels | FileCheck %s
// A SIMT program becomes a gpu.func kernel of num_warps * 32 threads; its
// shared arrays become views of the dynamic shared memory at 16-byte
// aligned offsets, made at the entry; tile.program_id becomes gpu.block_id.

// CHECK: gpu.module @k_module
// CHECK: gpu.func @k(%[[X:.*]]: memref<?xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, tile.num_warps = 2 : i32, tile.shared_bytes = 20 : i64, tile.simt}
// CHECK-NEXT: %[[ARENA:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[O0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[ARENA]][%[[O0]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[O16:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[B:.*]] = memref.view %[[ARENA]][%[[O16]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1xf32, #gpu.address_space<workgroup>>
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: memref.store %{{.*}}, %[[A]][%[[T]]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}}, %[[B]]
// CHECK: gpu.block_id x
// CHECK: gpu.return
// CHECK-NOT: func.func @k
module {
  func.func @k(%x: memref<?xf32>) attributes {tile.kernel, tile.simt, tile.num_warps = 2 : i32} {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %a = memref.alloca() : memref<3xf32, #gpu.address_space<workgroup>>
    %t = gpu.thread_id x
    memref.store %one, %a[%t] : memref<3xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %first = arith.cmpi eq, %t, %c0 : index
    scf.if %first {
      // An array allocated under a branch is still one per block.
      %b = memref.alloca() : memref<1xf32, #gpu.address_space<workgroup>>
      memref.store %one, %b[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
    }
    %p = tile.program_id 0 : i64
    %pi = arith.index_cast %p : i64 to index
    memref.store %one, %x[%pi] : memref<?xf32>
    return
  }
}
