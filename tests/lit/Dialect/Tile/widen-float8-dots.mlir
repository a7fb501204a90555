// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-widen-float8-dots))' | FileCheck %s
// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-widen-float8-dots{warpgroup-mma=true}))' | FileCheck %s --check-prefix=WG

// Both fp8 operands widen to f16 where they are loaded; the transposition
// between B's load and the dot then moves an f16 tile.
// CHECK-LABEL: func.func @gemm
// CHECK: %[[A:.*]] = tile.load %{{.*}} -> tensor<64x32xf8E4M3FN>
// CHECK-NEXT: %[[A16:.*]] = arith.extf %[[A]] : tensor<64x32xf8E4M3FN> to tensor<64x32xf16>
// CHECK-NEXT: %[[B:.*]] = tile.load %{{.*}} -> tensor<64x32xf8E4M3FN>
// CHECK-NEXT: %[[B16:.*]] = arith.extf %[[B]] : tensor<64x32xf8E4M3FN> to tensor<64x32xf16>
// CHECK-NEXT: %[[BT:.*]] = tile.trans %[[B16]] [1, 0] : tensor<64x32xf16> -> tensor<32x64xf16>
// CHECK-NEXT: tile.dot %[[A16]], %[[BT]], %{{.*}} : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
// With warpgroup products, A [M, K] and B [N, K] (transposed) both have K
// innermost: wgmma k32 reads them as they are.
// WG-LABEL: func.func @gemm
// WG-NOT: arith.extf
// WG: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xf32>
func.func @gemm(%a: memref<?x?xf8E4M3FN>, %b: memref<?x?xf8E4M3FN>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0, %c0] : memref<?x?xf8E4M3FN> -> tensor<64x32xf8E4M3FN>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf8E4M3FN> -> tensor<64x32xf8E4M3FN>
  %yt = tile.trans %y [1, 0] : tensor<64x32xf8E4M3FN> -> tensor<32x64xf8E4M3FN>
  %d = tile.dot %x, %yt, %acc : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// -----

// A view with another use keeps its fp8 type: the operand widens after it.
// Operands of other types are left alone.
// CHECK-LABEL: func.func @shared_view
// CHECK: %[[YT:.*]] = tile.trans %{{.*}} [1, 0] : tensor<64x32xf8E5M2> -> tensor<32x64xf8E5M2>
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[YT]] : tensor<32x64xf8E5M2> to tensor<32x64xf16>
// CHECK-NEXT: %[[D:.*]] = tile.dot %{{.*}}, %[[W]], %{{.*}} : tensor<64x32xf16>, tensor<32x64xf16>
// CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf16>, tensor<32x64xf16>
// CHECK-NOT: arith.extf
// CHECK: return %[[D]], %[[YT]]
func.func @shared_view(%x: tensor<64x32xf8E5M2>, %y: tensor<64x32xf8E5M2>, %h: tensor<64x32xf16>, %g: tensor<32x64xf16>, %acc: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<32x64xf8E5M2>, tensor<64x64xf32>) {
  %yt = tile.trans %y [1, 0] : tensor<64x32xf8E5M2> -> tensor<32x64xf8E5M2>
  %d = tile.dot %x, %yt, %acc : tensor<64x32xf8E5M2>, tensor<32x64xf8E5M2> -> tensor<64x64xf32>
  %e = tile.dot %h, %g, %acc : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  return %d, %yt, %e : tensor<64x64xf32>, tensor<32x64xf8E5M2>, tensor<64x64xf32>
}

// -----

// B stored [K, N] has N innermost, which wgmma's 8-bit operands cannot
// be: both operands widen.
// WG-LABEL: func.func @n_inner
// WG: arith.extf %{{.*}} : tensor<64x32xf8E4M3FN> to tensor<64x32xf16>
// WG: arith.extf %{{.*}} : tensor<32x64xf8E4M3FN> to tensor<32x64xf16>
// WG: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf16>, tensor<32x64xf16>
func.func @n_inner(%a: memref<?x?xf8E4M3FN>, %b: memref<?x?xf8E4M3FN>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0, %c0] : memref<?x?xf8E4M3FN> -> tensor<64x32xf8E4M3FN>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf8E4M3FN> -> tensor<32x64xf8E4M3FN>
  %d = tile.dot %x, %y, %acc : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// -----

// Rows that do not fill the warps along M (8 warps need 128), and a K
// below one k32 step, keep the widening.
// WG-LABEL: func.func @few_rows
// WG-COUNT-2: arith.extf
// WG-LABEL: func.func @short_k
// WG-COUNT-2: arith.extf
func.func @few_rows(%a: memref<?x?xf8E5M2>, %b: memref<?x?xf8E5M2>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> attributes {tile.num_warps = 8 : i64} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0, %c0] : memref<?x?xf8E5M2> -> tensor<64x32xf8E5M2>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf8E5M2> -> tensor<64x32xf8E5M2>
  %yt = tile.trans %y [1, 0] : tensor<64x32xf8E5M2> -> tensor<32x64xf8E5M2>
  %d = tile.dot %x, %yt, %acc : tensor<64x32xf8E5M2>, tensor<32x64xf8E5M2> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}
func.func @short_k(%a: memref<?x?xf8E5M2>, %b: memref<?x?xf8E5M2>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0, %c0] : memref<?x?xf8E5M2> -> tensor<64x16xf8E5M2>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf8E5M2> -> tensor<64x16xf8E5M2>
  %yt = tile.trans %y [1, 0] : tensor<64x16xf8E5M2> -> tensor<16x64xf8E5M2>
  %d = tile.dot %x, %yt, %acc : tensor<64x16xf8E5M2>, tensor<16x64xf8E5M2> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}
