// RUN: tessera-opt %s -tessera-gpu-to-host=checks=false | FileCheck %s

// A warp-specialised kernel on the sim device: setmaxnreg changes nothing
// (its threads share no register file), and a named barrier of its
// consumers (bar.sync id, count) is one call with both widened to i64 -- 0
// for an operand it omits (barrier 0 of the whole block); an arrival
// without a wait (bar.arrive id, count) is a call of its own.
// CHECK-LABEL: func.func @k_sim(
// CHECK-SAME: %[[CTX:[^:]*]]: i64)
// CHECK-NOT: setmaxregister
// CHECK: %[[ID:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK: %[[N:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK: call @tessera_sim_named_barrier(%[[CTX]], %[[ID]], %[[N]], %{{.*}}) : (i64, i64, i64, i64) -> ()
// CHECK: %[[ID0:.*]] = arith.constant 0 : i64
// CHECK: %[[ALL:.*]] = arith.constant 0 : i64
// CHECK: call @tessera_sim_named_barrier(%[[CTX]], %[[ID0]], %[[ALL]], %{{.*}})
// CHECK: %[[AID:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK: %[[AN:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK: call @tessera_sim_named_barrier_arrive(%[[CTX]], %[[AID]], %[[AN]], %{{.*}}) : (i64, i64, i64, i64) -> ()
// CHECK-NOT: nvvm.
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %id = arith.constant 1 : i32
    %n = arith.constant 128 : i32
    nvvm.setmaxregister increase 240
    nvvm.barrier id = %id number_of_threads = %n
    nvvm.setmaxregister decrease 40
    nvvm.barrier
    nvvm.barrier.arrive id = %id number_of_threads = %n
    gpu.return
  }
}
