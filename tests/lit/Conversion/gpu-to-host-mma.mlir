// RUN: tessera-opt %s -tessera-gpu-to-host=checks=false | FileCheck %s
// RUN: tessera-opt %s -tessera-gpu-to-host | FileCheck %s --check-prefix=CHECKS

// Tensor-core warp collectives on the sim device: gpu.lane_id is the thread
// id modulo 32; ldmatrix passes each lane's row address and a stack slot
// for its fragments to tessera_sim_ldmatrix; mma.sync passes the A, B, C
// fragments and a D slot to tessera_sim_mma (kind 0: f16 inputs). The
// slots are allocated once at function entry.
// CHECK-LABEL: func.func @k_sim(
// CHECK-SAME: %[[ARENA:[^:]*]]: memref<?xi8>, %[[TID:[^:]*]]: index,
// CHECK-SAME: %[[CTX:[^:]*]]: i64)
// CHECK-COUNT-6: memref.alloca() : memref<{{[0-9]+}}xf{{16|32}}>
// CHECK: arith.remui %[[TID]], %c32
// CHECK: call @tessera_sim_ldmatrix(%[[CTX]], %{{.*}}, %c4_i64, %c0_i64{{.*}}) : (i64, i64, i64, i64, i64, i64) -> ()
// CHECK: vector.load %{{.*}}[%{{.*}}] : memref<8xf16>, vector<8xf16>
// CHECK: call @tessera_sim_ldmatrix(%[[CTX]], %{{.*}}, %c2_i64, %c1_i64{{.*}})
// CHECK: call @tessera_sim_mma(%[[CTX]], %c0_i64{{.*}}) : (i64, i64, i64, i64, i64, i64, i64) -> ()
// CHECK: vector.load %{{.*}} : memref<4xf32>, vector<4xf32>
// CHECK: vector.shape_cast {{.*}} : vector<4xf32> to vector<2x2xf32>
// CHECK-NOT: nvgpu.

// With the checkers, each lane that supplies a row (lanes below 8 x tiles)
// checks its 16-byte row and reports the read; out of bounds, the row is
// reported as a fault and reads as zeros (address 0). The accumulator's
// vector loads/stores are checked like scalar accesses, with their width.
// CHECKS-LABEL: func.func @k_sim(
// CHECKS: arith.remui
// CHECKS: %[[LANE:.*]] = arith.remui
// CHECKS: arith.cmpi ult, %[[LANE]], %c32
// CHECKS: call @tessera_sim_access(%{{.*}}, %{{.*}}, %c16_i64, %c0_i64
// CHECKS: call @tessera_sim_fault
// CHECKS: call @tessera_sim_ldmatrix
// CHECKS: arith.cmpi ult, %{{.*}}, %c16
// CHECKS: call @tessera_sim_ldmatrix
// CHECKS: call @tessera_sim_mma
// CHECKS: call @tessera_sim_access(%{{.*}}, %{{.*}}, %c8_i64, %c1_i64
// CHECKS: vector.store {{.*}} : memref<16x8xf32>, vector<2xf32>
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c512 = arith.constant 512 : index
    %c768 = arith.constant 768 : index
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %a = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x16xf16, #gpu.address_space<workgroup>>
    %b = memref.view %arena[%c512][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xf16, #gpu.address_space<workgroup>>
    %c = memref.view %arena[%c768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xf32, #gpu.address_space<workgroup>>
    %lane = gpu.lane_id
    %z = arith.constant dense<0.0> : vector<2x2xf32>
    %fa = nvgpu.ldmatrix %a[%lane, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
    %fb = nvgpu.ldmatrix %b[%lane, %c0] {numTiles = 2 : i32, transpose = true} : memref<16x8xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
    %d = nvgpu.mma.sync(%fa, %fb, %z) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %row = vector.extract %d[0] : vector<2xf32> from vector<2x2xf32>
    vector.store %row, %c[%c0, %c0] : memref<16x8xf32, #gpu.address_space<workgroup>>, vector<2xf32>
    gpu.return
  }
}
