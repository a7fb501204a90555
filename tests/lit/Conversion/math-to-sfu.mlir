// RUN: tessera-opt %s -tessera-math-to-sfu | FileCheck %s

// f32 exp2 and rsqrt become the flush-to-zero SFU approximations, element
// by element for vectors (in element order, the shape kept).
// CHECK-LABEL: func.func @sfu
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%{{.*}}) : (f32) -> f32
// CHECK: %[[FLAT:.*]] = vector.shape_cast %{{.*}} : vector<2x2xf32> to vector<4xf32>
// CHECK: %[[E0:.*]] = vector.extract %[[FLAT]][0]
// CHECK: %[[R0:.*]] = llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.ftz.f"(%[[E0]]) : (f32) -> f32
// CHECK: %[[E1:.*]] = vector.extract %[[FLAT]][1]
// CHECK: %[[R1:.*]] = llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.ftz.f"(%[[E1]]) : (f32) -> f32
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.ftz.f"
// CHECK: %[[V:.*]] = vector.from_elements %[[R0]], %[[R1]], %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: vector.shape_cast %[[V]] : vector<4xf32> to vector<2x2xf32>
// CHECK-NOT: math.exp2 {{.*}} : f32
// CHECK-NOT: math.rsqrt
// CHECK: return
func.func @sfu(%x: f32, %v: vector<2x2xf32>) -> (f32, vector<2x2xf32>) {
  %e = math.exp2 %x : f32
  %r = math.rsqrt %v : vector<2x2xf32>
  return %e, %r : f32, vector<2x2xf32>
}

// Other element types and other math ops are left alone.
// CHECK-LABEL: func.func @others
// CHECK: math.exp2 %{{.*}} : f64
// CHECK: math.rsqrt %{{.*}} : f16
// CHECK: math.exp %{{.*}} : f32
// CHECK-NOT: llvm.call_intrinsic
// CHECK: return
func.func @others(%d: f64, %h: f16, %x: f32) -> (f64, f16, f32) {
  %a = math.exp2 %d : f64
  %b = math.rsqrt %h : f16
  %c = math.exp %x : f32
  return %a, %b, %c : f64, f16, f32
}
