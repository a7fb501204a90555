// RUN: tessera-opt %s -tessera-lower-kernel-asserts | FileCheck %s

// A failed assertion calls the host routine with its message, then goes on
// where the assertion was (nothing aborts).
// CHECK-DAG: llvm.func @tessera_kernel_assert_failed(!llvm.ptr)
// CHECK-DAG: llvm.mlir.global internal constant @[[M0:__tessera_assert_message_0]]("step is zero\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[M1:__tessera_assert_message_1]]("second\00")
// CHECK-LABEL: func.func @two
// CHECK: cf.cond_br %arg0, ^[[AFTER:.*]], ^[[FAIL:[a-z0-9]+]]
// CHECK: ^[[FAIL]]:
// CHECK: llvm.mlir.addressof @[[M0]]
// CHECK: llvm.call @tessera_kernel_assert_failed
// CHECK: cf.br ^[[AFTER]]
// CHECK: ^[[AFTER]]:
// CHECK: arith.addi
// CHECK: cf.cond_br %arg1
// CHECK: llvm.mlir.addressof @[[M1]]
// CHECK-NOT: cf.assert
func.func @two(%c: i1, %d: i1, %x: i64) -> i64 {
  cf.assert %c, "step is zero"
  %y = arith.addi %x, %x : i64
  cf.assert %d, "second"
  return %y : i64
}
