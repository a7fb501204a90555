// RUN: tessera-opt %s -tessera-convert-tile-to-linalg | FileCheck %s
// RUN: tessera-opt %s -tessera-convert-tile-to-linalg -canonicalize | FileCheck %s --check-prefix=CANON
// Lowering of tile ops on tensors to linalg / tensor / memref / bufferization.

// After canonicalization no tile op but the ones left for later passes remains.
// CANON-NOT: tile.load
// CANON-NOT: tile.store
// CANON-NOT: tile.gather
// CANON-NOT: tile.scatter
// CANON-NOT: tile.dot
// CANON-NOT: tile.reduce
// CANON-NOT: tile.splat
// CANON-NOT: tile.arange
// CANON-NOT: tile.reshape
// CANON-NOT: tile.broadcast
// CANON-NOT: tile.trans
// CANON: tile.program_id
// CANON: tile.atomic_rmw

// A block load reads only the in-bounds part of the block (a clipped
// subview) and pads the rest with zero.
// CHECK-LABEL: func.func @load(
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[DIM0:.*]] = memref.dim %arg0, %[[C0]]
// CHECK-NEXT: %[[OFF0:.*]] = arith.index_cast %arg1 : i64 to index
// CHECK-NEXT: %[[END0:.*]] = arith.addi %[[OFF0]], %[[C16]] : index
// CHECK-NEXT: %[[LO0A:.*]] = arith.maxsi %[[OFF0]], %[[C0]] : index
// CHECK-NEXT: %[[LO0:.*]] = arith.minsi %[[LO0A]], %[[DIM0]] : index
// CHECK-NEXT: %[[HI0:.*]] = arith.minsi %[[END0]], %[[DIM0]] : index
// CHECK: memref.dim %arg0, %c1
// CHECK: %[[SUB:.*]] = memref.subview %arg0[%[[LO0]], %{{.*}}] [%{{.*}}, %{{.*}}] [1, 1] : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-NEXT: %[[T:.*]] = bufferization.to_tensor %[[SUB]] restrict : memref<?x?xf32, strided<[?, 1], offset: ?>> to tensor<?x?xf32>
// The padding value is written only when the block overhangs the tensor:
// the fill's leading extent is 16 or 0.
// CHECK: %[[PART:.*]] = arith.ori
// CHECK-NEXT: %[[BUF:.*]] = bufferization.alloc_tensor() : tensor<16x32xf32>
// CHECK-NEXT: %[[N:.*]] = arith.select %[[PART]], %[[C16]], %[[C0]] : index
// CHECK-NEXT: %[[R:.*]] = tensor.extract_slice %[[BUF]][0, 0] [%[[N]], 32] [1, 1]
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[R]] : tensor<?x32xf32>)
// CHECK-NEXT: %[[B:.*]] = tensor.insert_slice %[[F]] into %[[BUF]][0, 0] [%[[N]], 32] [1, 1]
// CHECK-NEXT: %[[P:.*]] = tensor.insert_slice %[[T]] into %[[B]][%{{.*}}, %{{.*}}] [%{{.*}}, %{{.*}}] [1, 1] : tensor<?x?xf32> into tensor<16x32xf32>
// CHECK-NEXT: return %[[P]]
func.func @load(%x: memref<?x?xf32, strided<[?, 1], offset: ?>>, %i: i64, %j: i64) -> tensor<16x32xf32> {
  %v = tile.load %x[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<16x32xf32>
  return %v : tensor<16x32xf32>
}

// other= is the padding value; the mask selects between the loaded block
// and a block filled with it.
// CHECK-LABEL: func.func @load_masked(
// CHECK: %[[SUB:.*]] = memref.subview %arg0
// CHECK-NEXT: %[[T:.*]] = bufferization.to_tensor %[[SUB]] restrict
// CHECK: linalg.fill ins(%arg3 : f16) outs(%{{.*}} : tensor<?xf16>)
// CHECK: %[[P:.*]] = tensor.insert_slice %[[T]]
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<64xf16>
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%arg3 : f16) outs(%[[E]] : tensor<64xf16>) -> tensor<64xf16>
// CHECK-NEXT: %[[R:.*]] = arith.select %arg2, %[[P]], %[[F]] : tensor<64xi1>, tensor<64xf16>
// CHECK-NEXT: return %[[R]]
func.func @load_masked(%x: memref<?xf16, strided<[?], offset: ?>>, %i: i64, %m: tensor<64xi1>, %pad: f16) -> tensor<64xf16> {
  %v = tile.load %x[%i] mask(%m : tensor<64xi1>) other(%pad : f16) : memref<?xf16, strided<[?], offset: ?>> -> tensor<64xf16>
  return %v : tensor<64xf16>
}

// A store writes only the in-bounds slice of the value.
// CHECK-LABEL: func.func @store(
// CHECK: %[[SUB:.*]] = memref.subview %arg0[%{{.*}}, %{{.*}}] [%[[N0:.*]], %[[N1:.*]]] [1, 1]
// CHECK-NEXT: %[[SL:.*]] = tensor.extract_slice %arg2[%{{.*}}, %{{.*}}] [%[[N0]], %[[N1]]] [1, 1] : tensor<16x32xf32> to tensor<?x?xf32>
// CHECK-NEXT: bufferization.materialize_in_destination %[[SL]] in restrict writable %[[SUB]] : (tensor<?x?xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
// CHECK-NEXT: return
func.func @store(%x: memref<?x?xf32, strided<[?, ?], offset: ?>>, %i: i64, %v: tensor<16x32xf32>) {
  tile.store %v, %x[%i, %i] : tensor<16x32xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}

// A masked store becomes a loop of guarded scalar stores over the in-bounds
// part.
// CHECK-LABEL: func.func @store_masked(
// CHECK: %[[SUB:.*]] = memref.subview %arg0[%{{.*}}] [%[[N:.*]]] [1]
// CHECK-NEXT: %[[V:.*]] = tensor.extract_slice %arg2[%[[SKIP:.*]]] [%[[N]]] [1] : tensor<64xf32> to tensor<?xf32>
// CHECK-NEXT: %[[M:.*]] = tensor.extract_slice %arg3[%[[SKIP]]] [%[[N]]] [1] : tensor<64xi1> to tensor<?xi1>
// CHECK-NEXT: scf.for %[[I:.*]] = %c0 to %[[N]] step %c1 {
// CHECK-NEXT: %[[B:.*]] = tensor.extract %[[M]][%[[I]]] : tensor<?xi1>
// CHECK-NEXT: scf.if %[[B]] {
// CHECK-NEXT: %[[X:.*]] = tensor.extract %[[V]][%[[I]]] : tensor<?xf32>
// CHECK-NEXT: memref.store %[[X]], %[[SUB]][%[[I]]]
// CHECK-NOT: bufferization.materialize_in_destination
func.func @store_masked(%x: memref<?xf32, strided<[?], offset: ?>>, %i: i64, %v: tensor<64xf32>, %m: tensor<64xi1>) {
  tile.store %v, %x[%i] mask(%m : tensor<64xi1>) : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>
  return
}

// A gather reads element by element, only where the index is in bounds and
// the mask is set.
// CHECK-LABEL: func.func @gather(
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[G:.*]] = tensor.generate {
// CHECK-NEXT: ^bb0(%[[P:.*]]: index):
// CHECK-NEXT: %[[I32:.*]] = tensor.extract %arg1[%[[P]]] : tensor<64xi32>
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[I32]] : i32 to index
// CHECK-NEXT: %[[D:.*]] = memref.dim %arg0, %c0
// CHECK-NEXT: %[[GE:.*]] = arith.cmpi sge, %[[I]], %c0 : index
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi slt, %[[I]], %[[D]] : index
// CHECK-NEXT: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT: %[[M:.*]] = tensor.extract %arg2[%[[P]]] : tensor<64xi1>
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[IN]], %[[M]] : i1
// CHECK-NEXT: %[[V:.*]] = scf.if %[[OK]] -> (f32) {
// CHECK-NEXT: %[[L:.*]] = memref.load %arg0[%[[I]]]
// CHECK-NEXT: scf.yield %[[L]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[ZERO]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: tensor.yield %[[V]] : f32
// CHECK-NEXT: } : tensor<64xf32>
// CHECK-NEXT: return %[[G]]
func.func @gather(%x: memref<?xf32, strided<[?], offset: ?>>, %idx: tensor<64xi32>, %m: tensor<64xi1>) -> tensor<64xf32> {
  %g = tile.gather %x[%idx] mask(%m : tensor<64xi1>) : memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32> -> tensor<64xf32>
  return %g : tensor<64xf32>
}

// CHECK-LABEL: func.func @scatter(
// CHECK: scf.for %[[P:.*]] = %c0 to %c64 step %c1 {
// CHECK-NEXT: %[[I32:.*]] = tensor.extract %arg1[%[[P]]] : tensor<64xi32>
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[I32]] : i32 to index
// CHECK: %[[IN:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: %[[V:.*]] = tensor.extract %arg2[%[[P]]] : tensor<64xf32>
// CHECK-NEXT: memref.store %[[V]], %arg0[%[[I]]]
func.func @scatter(%x: memref<?xf32, strided<[?], offset: ?>>, %idx: tensor<64xi32>, %v: tensor<64xf32>) {
  tile.scatter %v, %x[%idx] : tensor<64xf32>, memref<?xf32, strided<[?], offset: ?>>, tensor<64xi32>
  return
}

// CHECK-LABEL: func.func @dot(
// CHECK-NEXT: %[[R:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<16x32xf16>, tensor<32x8xf16>) outs(%arg2 : tensor<16x8xf32>) -> tensor<16x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @dot(%a: tensor<16x32xf16>, %b: tensor<32x8xf16>, %c: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %d = tile.dot %a, %b, %c : tensor<16x32xf16>, tensor<32x8xf16> -> tensor<16x8xf32>
  return %d : tensor<16x8xf32>
}

// Reductions start from the identity of their kind: 0 for sum, -inf / +inf
// (or the extreme integers) for max / min; float max/min propagate NaN.
// CHECK-LABEL: func.func @reduce(
// CHECK-DAG: %[[IMAX:.*]] = arith.constant 2147483647 : i32
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<16xf32>
// CHECK-NEXT: %[[I0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E0]] : tensor<16xf32>) -> tensor<16xf32>
// CHECK-NEXT: %[[S:.*]] = linalg.reduce ins(%arg0 : tensor<16x8xf32>) outs(%[[I0]] : tensor<16xf32>) dimensions = [1]
// CHECK: arith.addf
// CHECK: %[[I1:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %[[MX:.*]] = linalg.reduce ins(%arg0 : tensor<16x8xf32>) outs(%[[I1]] : tensor<8xf32>) dimensions = [0]
// CHECK: arith.maximumf
// CHECK: %[[I2:.*]] = linalg.fill ins(%[[IMAX]] : i32) outs(%{{.*}} : tensor<16xi32>) -> tensor<16xi32>
// CHECK-NEXT: %[[MN:.*]] = linalg.reduce ins(%arg1 : tensor<16x8xi32>) outs(%[[I2]] : tensor<16xi32>) dimensions = [1]
// CHECK: arith.minsi
// CHECK: return %[[S]], %[[MX]], %[[MN]]
func.func @reduce(%t: tensor<16x8xf32>, %u: tensor<16x8xi32>) -> (tensor<16xf32>, tensor<8xf32>, tensor<16xi32>) {
  %s = tile.reduce sum %t {axis = 1 : i32} : tensor<16x8xf32> -> tensor<16xf32>
  %mx = tile.reduce max %t {axis = 0 : i32} : tensor<16x8xf32> -> tensor<8xf32>
  %mn = tile.reduce min %u {axis = 1 : i32} : tensor<16x8xi32> -> tensor<16xi32>
  return %s, %mx, %mn : tensor<16xf32>, tensor<8xf32>, tensor<16xi32>
}

// CHECK-LABEL: func.func @shape_ops(
// CHECK-DAG: %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi32>
// CHECK-DAG: %[[SPLAT:.*]] = linalg.fill ins(%arg0 : f32) outs(%{{.*}} : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: %[[RS:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
// CHECK-DAG: %[[ROW:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1]] : tensor<1x8xf32> into tensor<8xf32>
// CHECK-DAG: %[[BC:.*]] = linalg.broadcast ins(%[[ROW]] : tensor<8xf32>) outs(%{{.*}} : tensor<4x8xf32>) dimensions = [0]
// CHECK-DAG: %[[TR:.*]] = linalg.transpose ins(%arg3 : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>) permutation = [1, 0]
// CHECK-NOT: tile.
// CHECK: return %[[SPLAT]], %[[IOTA]], %[[RS]], %[[BC]], %[[TR]]
func.func @shape_ops(%x: f32, %t: tensor<64xf32>, %r: tensor<1x8xf32>, %m: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<16xi32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>) {
  %s = tile.splat %x : tensor<4x8xf32>
  %a = tile.arange 0 to 16 : tensor<16xi32>
  %rs = tile.reshape %t : tensor<64xf32> -> tensor<8x8xf32>
  %b = tile.broadcast %r : tensor<1x8xf32> -> tensor<4x8xf32>
  %tr = tile.trans %m [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %s, %a, %rs, %b, %tr : tensor<4x8xf32>, tensor<16xi32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>
}

// Program ids and atomics are left for later passes.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NEXT: %[[P:.*]] = tile.program_id 0 : i64
// CHECK-NEXT: %[[N:.*]] = tile.num_programs 1 : i64
// CHECK-NEXT: tile.atomic_rmw add %arg1, %arg0[%[[P]]]
func.func @left_alone(%x: memref<?xf32, strided<[?], offset: ?>>, %s: f32) -> i64 {
  %p = tile.program_id 0 : i64
  %n = tile.num_programs 1 : i64
  tile.atomic_rmw add %s, %x[%p] : f32, memref<?xf32, strided<[?], offset: ?>>
  %r = arith.addi %p, %n : i64
  return %r : i64
}
