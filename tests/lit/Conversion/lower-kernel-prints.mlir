// RUN: tessera-opt %s -tessera-lower-kernel-prints | FileCheck %s

// Host prints call the variadic C printf with one constant string per
// distinct format; the arguments pass as they are.
// CHECK-DAG: llvm.func @printf(!llvm.ptr, ...) -> i32
// CHECK-DAG: llvm.mlir.global internal constant @[[F0:__tessera_print_format_0]]("x %d %g\0A\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[F1:__tessera_print_format_1]]("done 100%%\0A\00")
// CHECK-LABEL: func.func @prints
// CHECK: llvm.mlir.addressof @[[F0]]
// CHECK: llvm.call @printf(%{{.*}}, %arg0, %arg1) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, f64) -> i32
// CHECK: llvm.mlir.addressof @[[F1]]
// CHECK: llvm.call @printf(%{{.*}}) vararg
// CHECK: %[[B:.*]] = llvm.mlir.addressof @[[F0]]
// CHECK-NEXT: llvm.call @printf(%[[B]], %arg0, %arg1)
// CHECK-NOT: gpu.printf
func.func @prints(%i: i32, %f: f64) {
  gpu.printf "x %d %g\n", %i, %f : i32, f64
  gpu.printf "done 100%%\n"
  gpu.printf "x %d %g\n", %i, %f : i32, f64
  return
}
