// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-gpu-vectorize-elementwise))' | FileCheck %s

// triad on f32: 4-element chunks (16 bytes), versioned on the alignment of
// all three memrefs; the invariant scalar is broadcast; the partial chunk
// at the row's end runs the original body element by element; the
// unaligned version is the original loop.
// CHECK-LABEL: func.func @triad
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: arith.remui %{{.*}}, %[[C16]]
// CHECK: memref.extract_aligned_pointer_as_index %arg1
// CHECK: memref.extract_aligned_pointer_as_index %arg2
// CHECK: scf.if %{{.*}} {
// CHECK: %[[NC:.*]] = arith.ceildivui %arg4, %[[C4:.*]] : index
// CHECK: scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%[[NC]])
// CHECK: %[[COL:.*]] = arith.muli %[[C]], %[[C4]]
// CHECK: %[[LEFT:.*]] = arith.subi %arg4, %[[COL]]
// CHECK: %[[WHOLE:.*]] = arith.cmpi uge, %[[LEFT]], %[[C4]]
// CHECK: scf.if %[[WHOLE]] {
// CHECK: %[[A:.*]] = vector.load %arg0[%[[COL]]] {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK: %[[B:.*]] = vector.load %arg1[%[[COL]]] {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK: %[[S:.*]] = vector.broadcast %arg3 : f32 to vector<4xf32>
// CHECK: %[[M:.*]] = arith.mulf %[[S]], %[[B]] : vector<4xf32>
// CHECK: %[[R:.*]] = arith.addf %[[A]], %[[M]] : vector<4xf32>
// CHECK: vector.store %[[R]], %arg2[%[[COL]]] {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK: } else {
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[LEFT]]
// CHECK: %[[I:.*]] = arith.addi %[[COL]], %[[J]]
// CHECK: memref.load %arg0[%[[I]]]
// CHECK: memref.store %{{.*}}, %arg2[%[[I]]]
// CHECK: } else {
// CHECK: scf.parallel
// CHECK: memref.load %arg0[%{{.*}}] : memref<?xf32
// CHECK-NOT: vector.
// CHECK: return
func.func @triad(%a: memref<?xf32, strided<[1], offset: ?>>, %b: memref<?xf32, strided<[1], offset: ?>>,
                 %c: memref<?xf32, strided<[1], offset: ?>>, %s: f32, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32, strided<[1], offset: ?>>
    %y = memref.load %b[%i] : memref<?xf32, strided<[1], offset: ?>>
    %m = arith.mulf %s, %y : f32
    %r = arith.addf %x, %m : f32
    memref.store %r, %c[%i] : memref<?xf32, strided<[1], offset: ?>>
    scf.reduce
  }
  return
}

// -----

// 2-D, f16 in and f32 out: the widest element (f32) sets 4 elements per
// chunk; a row-indexed load (independent of the column) is read once per
// chunk and broadcast; the casts become vector casts.
// CHECK-LABEL: func.func @rows
// CHECK: scf.parallel (%[[R:.*]], %[[C:.*]]) =
// CHECK: %[[COL:.*]] = arith.muli %[[C]], %[[C4:.*]] : index
// CHECK: scf.if
// CHECK: %[[X:.*]] = vector.load %arg0[%[[R]], %[[COL]]] {alignment = 8 : i64} : memref<?x?xf16, strided<[?, 1], offset: ?>>, vector<4xf16>
// CHECK: %[[E:.*]] = arith.extf %[[X]] : vector<4xf16> to vector<4xf32>
// CHECK: %[[G:.*]] = memref.load %arg1[%[[R]]] : memref<?xf32>
// CHECK: %[[GB:.*]] = vector.broadcast %[[G]] : f32 to vector<4xf32>
// CHECK: %[[P:.*]] = arith.mulf %[[E]], %[[GB]] : vector<4xf32>
// CHECK: vector.store %[[P]], %arg2[%[[R]], %[[COL]]] {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
func.func @rows(%x: memref<?x?xf16, strided<[?, 1], offset: ?>>, %g: memref<?xf32>,
                %o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %m: index, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf16, strided<[?, 1], offset: ?>>
    %e = arith.extf %v : f16 to f32
    %w = memref.load %g[%i] : memref<?xf32>
    %p = arith.mulf %e, %w : f32
    memref.store %p, %o[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
    scf.reduce
  }
  return
}

// -----

// tile.vector_width caps the chunk: f16 would allow 8, the kernel asks for
// at most 2.
// CHECK-LABEL: func.func @capped
// CHECK: vector.load %arg0[%{{.*}}] {alignment = 4 : i64} : memref<?xf16>, vector<2xf16>
func.func @capped(%a: memref<?xf16>, %c: memref<?xf16>, %n: index) attributes {tile.kernel, tile.vector_width = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf16>
    %y = arith.addf %x, %x : f16
    memref.store %y, %c[%i] : memref<?xf16>
    scf.reduce
  }
  return
}

// -----

// Left alone: VECTOR_WIDTH 1; a strided memref; index arithmetic on the
// induction variable; fp8 data; a store at a fixed index; a plain tile
// load (global into a tile buffer: tessera-gpu-async-copy's).
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: vector.
// CHECK-NOT: scf.if
// CHECK: return
func.func @untouched(%a: memref<?xf32>, %st: memref<?xf32, strided<[?], offset: ?>>,
                     %f8: memref<?xf8E4M3FN>, %o: memref<?xf32>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %st[%i] : memref<?xf32, strided<[?], offset: ?>>
    memref.store %x, %o[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %k = arith.index_cast %i : index to i32
    %x = arith.sitofp %k : i32 to f32
    memref.store %x, %o[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %f8[%i] : memref<?xf8E4M3FN>
    %y = arith.extf %x : f8E4M3FN to f32
    memref.store %y, %o[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %o[%c0] : memref<?xf32>
    scf.reduce
  }
  %t = memref.alloc() : memref<256xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %t[%i] : memref<256xf32>
    scf.reduce
  }
  return
}

// -----

// CHECK-LABEL: func.func @scalar_width
// CHECK-NOT: vector.
func.func @scalar_width(%a: memref<?xf32>, %c: memref<?xf32>, %n: index) attributes {tile.kernel, tile.vector_width = 1 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %c[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
