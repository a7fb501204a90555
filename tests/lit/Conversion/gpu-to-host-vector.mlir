// RUN: tessera-opt %s -tessera-gpu-to-host | FileCheck %s --check-prefix=CHECKS

// A vector access that promises alignment (16 bytes here) is checked for
// it as well: a misaligned address calls the fault hook with reason 1
// (out of bounds: 0) instead of accessing memory.
// CHECKS-LABEL: func.func @v_sim(
// CHECKS: %[[R:.*]] = arith.remui %{{.*}}, %c16
// CHECKS: %[[AL:.*]] = arith.cmpi eq, %[[R]]
// CHECKS: %[[OK:.*]] = arith.andi %[[IN:.*]], %[[AL]]
// CHECKS: scf.if %[[OK]]
// CHECKS: vector.load %{{.*}} {alignment = 16 : i64}
// CHECKS: } else {
// CHECKS: %[[WHY:.*]] = arith.select %[[IN]], %c1_i64{{.*}}, %c0_i64{{.*}} : i64
// CHECKS: call @tessera_sim_fault(%{{.*}}, %{{.*}}, %[[WHY]])
module {
  gpu.module @v_module {
    gpu.func @v(%x: memref<?xf32>, %y: memref<?xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %t = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %i = arith.muli %t, %c4 : index
      %v = vector.load %x[%i] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
      vector.store %v, %y[%i] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
      gpu.return
    }
  }
}
