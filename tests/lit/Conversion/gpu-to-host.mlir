// RUN: tessera-opt %s -tessera-gpu-to-host=checks=false | FileCheck %s
// RUN: tessera-opt %s -tessera-gpu-to-host | FileCheck %s --check-prefix=CHECKS

// A GPU kernel becomes a host function running one GPU thread: workgroup
// buffers and the thread/block/grid ids become trailing arguments, barriers
// calls into the simulator with its context.
// CHECK: memref.global "private" constant @cst
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @k_sim(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?xf32>, %[[BUF:[a-z0-9]+]]: memref<64xf32>,
// CHECK-SAME: %[[TID:[a-z0-9]+]]: index, %[[BX:[a-z0-9]+]]: index, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index,
// CHECK-SAME: %[[GX:[a-z0-9]+]]: index, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index, %[[CTX:[a-z0-9]+]]: i64)
// CHECK-SAME: tile.block_size = 64 : i64
// CHECK-SAME: tile.sim_sites = ["gpu.barrier at {{.*}}"]
// CHECK: memref.get_global @cst
// CHECK: memref.store %{{.*}}, %[[BUF]][%[[TID]]]
// CHECK: call @tessera_sim_barrier(%[[CTX]], %{{.*}}) : (i64, i64) -> ()
// CHECK: arith.addi %[[BX]], %[[GX]]
// CHECK: return
// CHECK: func.func private @tessera_sim_barrier(i64, i64)
module {
  gpu.module @k_module {
    memref.global "private" constant @cst : memref<64xf32> = dense<2.0>
    gpu.func @k(%x: memref<?xf32>) workgroup(%buf : memref<64xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %g = gpu.grid_dim x
      %c = memref.get_global @cst : memref<64xf32>
      %s = memref.memory_space_cast %buf : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32>
      %v = memref.load %c[%t] : memref<64xf32>
      memref.store %v, %s[%t] : memref<64xf32>
      gpu.barrier
      %i = arith.addi %b, %g : index
      %w = memref.load %s[%t] : memref<64xf32>
      memref.store %w, %x[%i] : memref<?xf32>
      gpu.return
    }
  }
}

// With checks (the default) every access is bounds-checked and reported to
// the race checker with its site; an out-of-bounds one calls the fault hook
// instead.
// CHECKS-LABEL: func.func @k_sim(
// CHECKS-SAME: tile.sim_sites = ["gpu.barrier at {{.*}}", "memref.load at {{.*}}", "memref.store at {{.*}}", "memref.load at {{.*}}", "memref.store at {{.*}}"]
// CHECKS: %[[DIM:.*]] = memref.dim
// CHECKS: arith.cmpi slt
// CHECKS: scf.if
// CHECKS: memref.extract_strided_metadata
// CHECKS: call @tessera_sim_access(%{{.*}}, %{{.*}}, %c4_i64{{.*}}, %{{.*}}, %[[SITE:[a-z0-9_]+]]) : (i64, index, i64, i64, i64) -> ()
// CHECKS-NEXT: memref.load
// CHECKS: } else {
// CHECKS: call @tessera_sim_fault(%{{.*}}, %[[SITE]], %{{.*}})
// CHECKS: func.func private @tessera_sim_fault(i64, i64, i64)
// CHECKS: func.func private @tessera_sim_access(i64, index, i64, i64, i64)

