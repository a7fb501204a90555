// RUN: tessera-opt %s -tessera-expand-arith-for-gpu | FileCheck %s

// NaN-propagating max/min become single LLVM intrinsics (max.NaN.f32 on
// sm_80+); integer floor/ceiling divisions and bf16 conversions are
// expanded as upstream's arith-expand does.
// CHECK-LABEL: func.func @keep_minmax
// CHECK: llvm.intr.maximum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.intr.minimum(%{{.*}}, %{{.*}}) : (vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// CHECK-NOT: arith.maximumf
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.extf {{.*}} bf16
// CHECK: return
func.func @keep_minmax(%a: f32, %b: f32, %v: vector<4xf32>, %w: vector<4xf32>, %i: i32, %j: i32, %h: bf16) -> (f32, vector<4xf32>, i32, f32) {
  %m = arith.maximumf %a, %b : f32
  %n = arith.minimumf %v, %w : vector<4xf32>
  %c = arith.ceildivsi %i, %j : i32
  %e = arith.extf %h : bf16 to f32
  return %m, %n, %c, %e : f32, vector<4xf32>, i32, f32
}
