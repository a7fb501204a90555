// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-unify-shape-dims),cse,func.func(tessera-fuse-tile-copies))' | FileCheck %s

// A triad tile: two tiles loaded over the clipped region [lo, lo+n) of
// tensors that share the shape symbol N, an element-wise generic, and the
// store of its tile over the same region. The extents unify to one
// memref.dim, the regions to the same values, and the generic then streams
// from the sources to the destination; the tiles, their padding fills and
// the load/store copies are gone.
// CHECK-LABEL: func.func @triad
// CHECK: %[[D:.*]] = memref.dim %arg0, %c0
// CHECK-NOT: memref.dim
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.fill
// CHECK: %[[A:.*]] = memref.subview %arg0[%[[LO:.*]]] [%[[N:.*]]] [1]
// CHECK: %[[B:.*]] = memref.subview %arg1[%[[LO]]] [%[[N]]] [1]
// CHECK: %[[C:.*]] = memref.subview %arg2[%[[LO]]] [%[[N]]] [1]
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : {{.*}}) outs(%[[C]] : {{.*}})
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: memref.copy
#id = affine_map<(d0) -> (d0)>
func.func @triad(%a: memref<?xf32> {tile.dim_symbols = ["N"]},
                 %b: memref<?xf32> {tile.dim_symbols = ["N"]},
                 %c: memref<?xf32> {tile.dim_symbols = ["N"]},
                 %s: f32, %lo: index) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %ta = memref.alloc() : memref<64xf32>
  %tb = memref.alloc() : memref<64xf32>
  %tc = memref.alloc() : memref<64xf32>
  %da = memref.dim %a, %c0 : memref<?xf32>
  %na = arith.subi %da, %lo : index
  %pa = memref.subview %ta[0] [64] [1] : memref<64xf32> to memref<64xf32, strided<[1]>>
  linalg.fill ins(%zero : f32) outs(%pa : memref<64xf32, strided<[1]>>)
  %ga = memref.subview %a[%lo] [%na] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %la = memref.subview %ta[0] [%na] [1] : memref<64xf32> to memref<?xf32, strided<[1]>>
  memref.copy %ga, %la : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1]>>
  %db = memref.dim %b, %c0 : memref<?xf32>
  %nb = arith.subi %db, %lo : index
  %gb = memref.subview %b[%lo] [%nb] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %lb = memref.subview %tb[0] [%nb] [1] : memref<64xf32> to memref<?xf32, strided<[1]>>
  memref.copy %gb, %lb : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%ta, %tb : memref<64xf32>, memref<64xf32>) outs(%tc : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %s, %y : f32
    %r = arith.addf %x, %m : f32
    linalg.yield %r : f32
  }
  %dc = memref.dim %c, %c0 : memref<?xf32>
  %nc = arith.subi %dc, %lo : index
  %sc = memref.subview %tc[0] [%nc] [1] : memref<64xf32> to memref<?xf32, strided<[1]>>
  %gc = memref.subview %c[%lo] [%nc] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  memref.copy %sc, %gc : memref<?xf32, strided<[1]>> to memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// Different shape symbols: the extents stay apart, the regions differ, so
// the loaded tile is read through the store region's subview; the output
// tile still goes straight to memory.
// CHECK-LABEL: func.func @other_symbols
// CHECK: memref.alloc() : memref<64xf32>
// CHECK: memref.dim %arg0
// CHECK: memref.copy
// CHECK: memref.dim %arg1
// CHECK: %[[T:.*]] = memref.subview %alloc[0] [%{{.*}}] [1]
// CHECK: linalg.generic {{.*}} ins(%[[T]] : {{.*}}) outs(%{{.*}} : memref<?xf32, strided<[1], offset: ?>>)
// CHECK-NOT: memref.copy
#id1 = affine_map<(d0) -> (d0)>
func.func @other_symbols(%a: memref<?xf32> {tile.dim_symbols = ["N"]},
                         %c: memref<?xf32> {tile.dim_symbols = ["M"]},
                         %lo: index) {
  %c0 = arith.constant 0 : index
  %ta = memref.alloc() : memref<64xf32>
  %tc = memref.alloc() : memref<64xf32>
  %da = memref.dim %a, %c0 : memref<?xf32>
  %ga = memref.subview %a[%lo] [%da] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %la = memref.subview %ta[0] [%da] [1] : memref<64xf32> to memref<?xf32, strided<[1]>>
  memref.copy %ga, %la : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%ta : memref<64xf32>) outs(%tc : memref<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %x : f32
    linalg.yield %r : f32
  }
  %dc = memref.dim %c, %c0 : memref<?xf32>
  %sc = memref.subview %tc[0] [%dc] [1] : memref<64xf32> to memref<?xf32, strided<[1]>>
  %gc = memref.subview %c[%lo] [%dc] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  memref.copy %sc, %gc : memref<?xf32, strided<[1]>> to memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// Regression: bufferization leaves a copy of the padding fill onto itself
// (one view reached through both operands); the dead tile and its writes
// are erased once each (a double erase corrupted the heap).
// CHECK-LABEL: func.func @self_copy
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
#id2 = affine_map<(d0) -> (d0)>
func.func @self_copy(%a: memref<?xf32> {tile.dim_symbols = ["N"]},
                     %c: memref<?xf32> {tile.dim_symbols = ["N"]},
                     %lo: index, %pad: index) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %ta = memref.alloc() : memref<64xf32>
  %tc = memref.alloc() : memref<64xf32>
  %da = memref.dim %a, %c0 : memref<?xf32>
  %p = memref.subview %ta[0] [%pad] [1] : memref<64xf32> to memref<?xf32, strided<[1]>>
  linalg.fill ins(%zero : f32) outs(%p : memref<?xf32, strided<[1]>>)
  memref.copy %p, %p : memref<?xf32, strided<[1]>> to memref<?xf32, strided<[1]>>
  %ga = memref.subview %a[%lo] [%da] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %la = memref.subview %ta[0] [%da] [1] : memref<64xf32> to memref<?xf32, strided<[1]>>
  memref.copy %ga, %la : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]}
      ins(%ta : memref<64xf32>) outs(%tc : memref<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %x : f32
    linalg.yield %r : f32
  }
  %dc = memref.dim %c, %c0 : memref<?xf32>
  %sc = memref.subview %tc[0] [%dc] [1] : memref<64xf32> to memref<?xf32, strided<[1]>>
  %gc = memref.subview %c[%lo] [%dc] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  memref.copy %sc, %gc : memref<?xf32, strided<[1]>> to memref<?xf32, strided<[1], offset: ?>>
  return
}
