// RUN: tessera-opt %s -tessera-approximate-math | FileCheck %s
// RUN: tessera-opt %s -tessera-approximate-math='keep=exp,log' | FileCheck %s --check-prefix=KEEP

// Transcendentals become polynomial arithmetic: no math library call is left.
// CHECK-LABEL: func.func @exp_log
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK: math.fma
// CHECK: return
// Functions in `keep` are left for the target's library (the GPU's
// libdevice); the others are still approximated.
// KEEP-LABEL: func.func @exp_log
// KEEP: math.exp %{{.*}} : f32
// KEEP: math.log %{{.*}} : f32
// KEEP-NOT: math.tanh
// KEEP: return
func.func @exp_log(%x: f32) -> f32 {
  %e = math.exp %x : f32
  %l = math.log %e : f32
  %t = math.tanh %l : f32
  return %t : f32
}

// f16 operands of a kept function are computed in f32.
// KEEP-LABEL: func.func @exp_f16
// KEEP: arith.extf %{{.*}} : f16 to f32
// KEEP: math.exp %{{.*}} : f32
// KEEP: arith.truncf
func.func @exp_f16(%x: f16) -> f16 {
  %e = math.exp %x : f16
  return %e : f16
}
