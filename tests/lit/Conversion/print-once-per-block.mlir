// RUN: tessera-opt %s -tessera-print-once-per-block | FileCheck %s

// A kernel's print runs on thread (0, 0, 0) only; host code is untouched.
// CHECK-LABEL: gpu.func @k
// CHECK: %[[X:.*]] = gpu.thread_id x
// CHECK: %[[X0:.*]] = arith.cmpi eq, %[[X]]
// CHECK: %[[Y:.*]] = gpu.thread_id y
// CHECK: %[[Y0:.*]] = arith.cmpi eq, %[[Y]]
// CHECK: %[[XY:.*]] = arith.andi %[[X0]], %[[Y0]]
// CHECK: %[[Z:.*]] = gpu.thread_id z
// CHECK: %[[Z0:.*]] = arith.cmpi eq, %[[Z]]
// CHECK: %[[ALL:.*]] = arith.andi %[[XY]], %[[Z0]]
// CHECK: scf.if %[[ALL]] {
// CHECK-NEXT: gpu.printf "v %d\0A", %arg0 : i32
// CHECK-NEXT: }
// CHECK-LABEL: func.func @host
// CHECK-NEXT: gpu.printf "host\0A"
// CHECK-NEXT: return
gpu.module @m {
  gpu.func @k(%v: i32) kernel {
    gpu.printf "v %d\n", %v : i32
    gpu.return
  }
}
func.func @host() {
  gpu.printf "host\n"
  return
}
