// RUN: tessera-opt %s -tessera-gpu-to-host=checks=false | FileCheck %s

// mbarriers on the sim device: a group is the i64 number of its first
// barrier in the block's table (tessera_sim_mbarrier_create with the
// group's size and the creating site), a barrier that number plus its
// index; init and arrive.expect_tx pass their predicate (1 without one),
// arrive returns its phase as the token test.wait takes, and
// try_wait.parity is one blocking call with the parity widened to i64.
// CHECK-LABEL: func.func @k_sim(
// CHECK-SAME: %[[CTX:[^:]*]]: i64)
// CHECK: %[[N:.*]] = arith.constant 3 : i64
// CHECK: %[[FIRST:.*]] = call @tessera_sim_mbarrier_create(%[[CTX]], %[[N]], %{{.*}}) : (i64, i64, i64) -> i64
// CHECK: %[[I1:.*]] = arith.index_cast %c1 : index to i64
// CHECK: %[[B1:.*]] = arith.addi %[[FIRST]], %[[I1]] : i64
// CHECK: %[[P:.*]] = arith.extui %{{.*}} : i1 to i64
// CHECK: call @tessera_sim_mbarrier_init(%[[CTX]], %[[B1]], %{{.*}}, %[[P]], %{{.*}}) : (i64, i64, i64, i64, i64) -> ()
// CHECK: %[[TX:.*]] = arith.index_cast %c256 : index to i64
// CHECK: %[[ALL:.*]] = arith.constant 1 : i64
// CHECK: call @tessera_sim_mbarrier_arrive(%[[CTX]], %{{.*}}, %[[TX]], %[[ALL]], %{{.*}}) : (i64, i64, i64, i64, i64) -> i64
// CHECK: %[[TOK:.*]] = call @tessera_sim_mbarrier_arrive(%[[CTX]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64, i64, i64) -> i64
// CHECK: %[[PAR:.*]] = arith.extui %{{.*}} : i1 to i64
// CHECK: call @tessera_sim_mbarrier_wait_parity(%[[CTX]], %{{.*}}, %[[PAR]], %{{.*}}) : (i64, i64, i64, i64) -> ()
// CHECK: %[[DONE:.*]] = call @tessera_sim_mbarrier_test_wait(%[[CTX]], %{{.*}}, %[[TOK]], %{{.*}}) : (i64, i64, i64, i64) -> i64
// CHECK: %[[OK:.*]] = arith.cmpi ne, %[[DONE]], %{{.*}} : i64
// CHECK: arith.select %[[OK]]
// CHECK-NOT: nvgpu.
!g = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
gpu.module @m {
  gpu.func @k(%out: memref<128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %ticks = arith.constant 1000 : index
    %first = arith.cmpi eq, %tid, %c0 : index
    %bars = nvgpu.mbarrier.create -> !g
    nvgpu.mbarrier.init %bars[%c1], %c128, predicate = %first : !g
    nvgpu.mbarrier.arrive.expect_tx %bars[%c1], %c256 : !g
    %tok = nvgpu.mbarrier.arrive %bars[%c1] : !g -> !nvgpu.mbarrier.token
    %parity = arith.constant true
    nvgpu.mbarrier.try_wait.parity %bars[%c1], %parity, %ticks : !g
    %done = nvgpu.mbarrier.test.wait %bars[%c1], %tok : !g, !nvgpu.mbarrier.token
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %done, %one, %zero : f32
    memref.store %v, %out[%tid] : memref<128xf32>
    gpu.return
  }
}
