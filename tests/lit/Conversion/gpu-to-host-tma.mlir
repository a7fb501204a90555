// RUN: tessera-opt %s -tessera-gpu-to-host=checks=false | FileCheck %s

// TMA loads on the sim device: a tensor-map argument (an !llvm.ptr cast to
// the descriptor type) is the address of the runtime's SimTensorMap; each
// nvgpu.tma.async.load becomes one tessera_sim_tma_load call with that
// address, the barrier's number in the block's table, the destination's
// byte address, five coordinates (innermost first, zeros past the box's
// rank), the predicate (1 without one) and the site.
// CHECK-LABEL: func.func @k_sim(
// CHECK-SAME: %[[MAP:[^:]*]]: !llvm.ptr
// CHECK-SAME: %[[CTX:[^:]*]]: i64)
// CHECK: %[[ADDR:.*]] = llvm.ptrtoint %[[MAP]] : !llvm.ptr to i64
// CHECK: %[[FIRST:.*]] = call @tessera_sim_mbarrier_create
// CHECK: call @tessera_sim_mbarrier_init
// CHECK: %[[BAR:.*]] = arith.addi %[[FIRST]], %{{.*}} : i64
// CHECK: %[[DST:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-NEXT: %[[X:.*]] = arith.index_cast %c64 : index to i64
// CHECK: %[[Y:.*]] = arith.index_cast %c8 : index to i64
// CHECK: %[[Z2:.*]] = arith.constant 0 : i64
// CHECK: %[[Z3:.*]] = arith.constant 0 : i64
// CHECK: %[[Z4:.*]] = arith.constant 0 : i64
// CHECK: %[[P:.*]] = arith.extui %{{.*}} : i1 to i64
// CHECK: call @tessera_sim_tma_load(%[[CTX]], %[[ADDR]], %[[BAR]], %[[DST]], %[[X]], %[[Y]], %[[Z2]], %[[Z3]], %[[Z4]], %[[P]], %{{.*}}) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
// CHECK-NOT: nvgpu.
// CHECK-NOT: unrealized_conversion_cast
!g = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 1>
!box = memref<8x64xf16, #gpu.address_space<workgroup>>
!map = !nvgpu.tensormap.descriptor<tensor = !box, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
gpu.module @m {
  gpu.func @k(%out: memref<128xf32>, %arg: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %map = builtin.unrealized_conversion_cast %arg : !llvm.ptr to !map
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %first = arith.cmpi eq, %tid, %c0 : index
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %dst = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to !box
    %bars = nvgpu.mbarrier.create -> !g
    nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %first : !g
    nvgpu.tma.async.load %map[%c64, %c8], %bars[%c0] to %dst, predicate = %first : !map, !g -> !box
    gpu.return
  }
}
