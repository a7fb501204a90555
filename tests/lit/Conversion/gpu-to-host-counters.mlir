// RUN: tessera-opt %s -tessera-gpu-to-host=counters=true | FileCheck %s
// RUN: tessera-opt %s "-tessera-gpu-to-host=checks=false counters=true" | FileCheck %s
// RUN: tessera-opt %s -tessera-gpu-to-host | FileCheck %s --check-prefix=OFF

// With counters every conditional branch of the kernel reports the
// direction of each lane before it branches: an scf.if its condition, a
// loop with non-constant bounds 1 per iteration and 0 after the loop. A
// loop of constant trip count is not reported, nor are the branches the
// instrumentation adds. Accesses are reported, to the counting hook, even
// without checks.
// CHECK-LABEL: func.func @k_sim(
// CHECK-SAME: %[[TID:[a-z0-9]+]]: index, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index,
// CHECK-SAME: %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index, %[[CTX:[a-z0-9]+]]: i64)
// CHECK-SAME: tile.sim_sites = ["gpu.barrier at {{.*}}", "scf.for at {{.*}}", "scf.if at {{.*}}", "memref.store at {{.*}}"]
// CHECK: %[[ODD:.*]] = arith.cmpi ne
// CHECK-NEXT: %[[TAKEN:.*]] = arith.extui %[[ODD]] : i1 to i64
// CHECK-NEXT: %[[IF:.*]] = arith.constant 2 : i64
// CHECK-NEXT: call @tessera_sim_branch(%[[CTX]], %[[IF]], %[[TAKEN]]) : (i64, i64, i64) -> ()
// CHECK-NEXT: scf.if %[[ODD]] {
// CHECK-NEXT: scf.for %{{.*}} = %[[TID]] to
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[FOR:.*]] = arith.constant 1 : i64
// CHECK-NEXT: func.call @tessera_sim_branch(%[[CTX]], %[[FOR]], %[[ONE]])
// CHECK: call @tessera_sim_access_counted(
// CHECK: } else {
// CHECK: call @tessera_sim_fault
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[FOR2:.*]] = arith.constant 1 : i64
// CHECK-NEXT: func.call @tessera_sim_branch(%[[CTX]], %[[FOR2]], %[[ZERO]])
// CHECK-NEXT: }
// CHECK-NEXT: scf.for
// CHECK-NOT: tessera_sim_branch
// CHECK: return
// CHECK-NOT: @tessera_sim_access(
// CHECK: func.func private @tessera_sim_access_counted(i64, index, i64, i64, i64)
// CHECK: func.func private @tessera_sim_branch(i64, i64, i64)

// OFF-NOT: tessera_sim_branch
// OFF-NOT: tessera_sim_access_counted
module {
  gpu.module @k_module {
    gpu.func @k(%x: memref<?xf32>, %n: index) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %f = arith.constant 1.0 : f32
      %r = arith.remui %t, %c2 : index
      %odd = arith.cmpi ne, %r, %c0 : index
      scf.if %odd {
        scf.for %i = %t to %n step %c64 {
          memref.store %f, %x[%i] : memref<?xf32>
        }
      }
      scf.for %j = %c0 to %c4 step %c1 {
        gpu.barrier
      }
      gpu.return
    }
  }
}
