// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// Round trip of every tile op through the custom assembly format.

// CHECK-LABEL: func.func @all_ops
func.func @all_ops(%x: memref<?xf32, strided<[?], offset: ?>>,
                   %a: memref<?x?xf16, strided<[?, 1], offset: ?>>,
                   %o: memref<?x?xf32, strided<[?, 1], offset: ?>>,
                   %i: i64, %s: f32) {
  // CHECK: tile.program_id 0 : i64
  %pid = tile.program_id 0 : i64
  // CHECK: tile.num_programs 2 : i64
  %np = tile.num_programs 2 : i64
  // CHECK: tile.arange 0 to 64 : tensor<64xi32>
  %r = tile.arange 0 to 64 : tensor<64xi32>
  // CHECK: tile.splat %{{.*}} : tensor<64xf32>
  %sp = tile.splat %s : tensor<64xf32>
  %m = arith.constant dense<true> : tensor<64xi1>
  // CHECK: tile.load %{{.*}}[%{{.*}}] mask(%{{.*}} : tensor<64xi1>) other(%{{.*}} : f32) : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  %v = tile.load %x[%i] mask(%m : tensor<64xi1>) other(%s : f32) : memref<?xf32, strided<[?], offset: ?>> -> tensor<64xf32>
  // CHECK: tile.gather %{{.*}}[%{{.*}}] : memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32> -> tensor<64xf32>
  %g = tile.gather %x[%r] : memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32> -> tensor<64xf32>
  // CHECK: tile.scatter %{{.*}}, %{{.*}}[%{{.*}}] mask(%{{.*}} : tensor<64xi1>) : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32>
  tile.scatter %g, %x[%r] mask(%m : tensor<64xi1>) : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32>
  // CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}] : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>
  tile.store %v, %x[%i] : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>
  // CHECK: tile.reshape %{{.*}} : tensor<64xf32> -> tensor<8x8xf32>
  %rs = tile.reshape %sp : tensor<64xf32> -> tensor<8x8xf32>
  // CHECK: tile.trans %{{.*}} [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %t = tile.trans %rs [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %a16 = tile.load %a[%i, %i] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<16x32xf16>
  %b16 = tile.load %a[%i, %i] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x8xf16>
  %z = arith.constant dense<0.0> : tensor<16x8xf32>
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x32xf16>, tensor<32x8xf16> -> tensor<16x8xf32>
  %d = tile.dot %a16, %b16, %z : tensor<16x32xf16>, tensor<32x8xf16> -> tensor<16x8xf32>
  // CHECK: tile.reduce max %{{.*}} {axis = 1 : i32} : tensor<16x8xf32> -> tensor<16xf32>
  %red = tile.reduce max %d {axis = 1 : i32} : tensor<16x8xf32> -> tensor<16xf32>
  // CHECK: tile.broadcast %{{.*}} : tensor<1x8xf32> -> tensor<16x8xf32>
  %row = tile.reshape %sp : tensor<64xf32> -> tensor<8x8xf32>
  %one = tile.load %o[%i, %i] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x8xf32>
  %bc = tile.broadcast %one : tensor<1x8xf32> -> tensor<16x8xf32>
  tile.store %bc, %o[%i, %i] : tensor<16x8xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  // CHECK: tile.atomic_rmw add %{{.*}}, %{{.*}}[%{{.*}}] : f32, memref<?xf32, strided<[?], offset: ?>>
  tile.atomic_rmw add %s, %x[%i] : f32, memref<?xf32, strided<[?], offset: ?>>
  return
}
