// RUN: tessera-opt %s -pass-pipeline='builtin.module(func.func(tessera-fuse-elementwise-keep-dots))' | FileCheck %s

// A matmul of reshaped tiles (attention's [1, 1, M, D] loads) stays a 2-D
// linalg.matmul: the reshape is not propagated into it (upstream's
// linalg-fuse-elementwise-ops expands it into a 4-D generic). Element-wise
// producers still fuse with each other, and the cast feeding the matmul
// stays a separate op.
// CHECK-LABEL: func.func @reshaped_dot(
// CHECK: tensor.collapse_shape
// CHECK: %[[CAST:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: arith.mulf
// CHECK-NEXT: arith.truncf
// CHECK: linalg.matmul ins(%{{.*}}, %[[CAST]] : tensor<16x32xf16>, tensor<32x8xf16>) outs(%{{.*}} : tensor<16x8xf32>)
// CHECK-NOT: linalg.generic
func.func @reshaped_dot(%a4: tensor<1x1x16x32xf16>, %b: tensor<32x8xf32>, %s: f32) -> tensor<16x8xf32> {
  %a = tensor.collapse_shape %a4 [[0, 1, 2], [3]] : tensor<1x1x16x32xf16> into tensor<16x32xf16>
  %e = tensor.empty() : tensor<32x8xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<32x8xf32>) outs(%e : tensor<32x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %s : f32
    linalg.yield %y : f32
  } -> tensor<32x8xf32>
  %e16 = tensor.empty() : tensor<32x8xf16>
  %b16 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%scaled : tensor<32x8xf32>) outs(%e16 : tensor<32x8xf16>) {
  ^bb0(%x: f32, %o: f16):
    %y = arith.truncf %x : f32 to f16
    linalg.yield %y : f16
  } -> tensor<32x8xf16>
  %z = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<16x8xf32>
  %c = linalg.fill ins(%z : f32) outs(%c0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %r = linalg.matmul ins(%a, %b16 : tensor<16x32xf16>, tensor<32x8xf16>) outs(%c : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}
