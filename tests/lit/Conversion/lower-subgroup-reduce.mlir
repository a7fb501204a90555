// RUN: tessera-opt %s -tessera-lower-subgroup-reduce | FileCheck %s

// A 32-lane butterfly: five xor shuffles with offsets 1, 2, 4, 8, 16.
// CHECK-LABEL: func.func @sum
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
func.func @sum(%x: f32) -> f32 {
  %r = gpu.subgroup_reduce add %x uniform : (f32) -> f32
  return %r : f32
}
