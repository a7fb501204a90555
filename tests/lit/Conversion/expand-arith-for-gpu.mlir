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

// f32 divisions marked afn (the language's `/`) become div.full, element by
// element for vectors; unmarked ones (tile.div_rn) and f64 stay IEEE.
// CHECK-LABEL: func.func @approximate_division
// CHECK: llvm.call_intrinsic "llvm.nvvm.div.full"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.div.full"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} fastmath<afn> : f64
// CHECK-NOT: llvm.call_intrinsic
// CHECK: return
func.func @approximate_division(%a: f32, %b: f32, %v: vector<2xf32>, %w: vector<2xf32>, %x: f64, %y: f64) -> (f32, vector<2xf32>, f32, f64) {
  %q = arith.divf %a, %b fastmath<afn> : f32
  %r = arith.divf %v, %w fastmath<afn> : vector<2xf32>
  %s = arith.divf %a, %b : f32
  %t = arith.divf %x, %y fastmath<afn> : f64
  return %q, %r, %s, %t : f32, vector<2xf32>, f32, f64
}
