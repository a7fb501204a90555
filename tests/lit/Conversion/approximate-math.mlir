// RUN: tessera-opt %s -tessera-approximate-math | FileCheck %s

// Transcendentals become polynomial arithmetic: no math library call is left.
// CHECK-LABEL: func.func @exp_log
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK: math.fma
// CHECK: return
func.func @exp_log(%x: f32) -> f32 {
  %e = math.exp %x : f32
  %l = math.log %e : f32
  return %l : f32
}
