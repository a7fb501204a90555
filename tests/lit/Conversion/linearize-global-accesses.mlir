// RUN: tessera-opt %s -split-input-file -tessera-linearize-global-accesses | FileCheck %s

// Under tile.index32 each access of a kernel argument becomes an access of a
// 1-D view (made once at entry) at an i32 linear offset, outer dimensions
// first. The offsets are computed in front of the scf.if around each
// access: both runs share `i * stride + j`; the second run's constant
// displacement (512) comes last, where the back end folds it into the
// address. j alone may be negative where j + 512 is not (a tile starting
// before the tensor): those sums only promise no signed wrap.
// CHECK-LABEL: gpu.func @masked_runs
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[S0:.*]] = arith.index_cast %[[STRIDES]]#0 : index to i32
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<?x?xf32, strided<[?, 1]>> to memref<?xf32>
// CHECK: %[[ROW:.*]] = arith.muli %[[I:.*]], %[[S0]] overflow<nsw, nuw> : i32
// CHECK: %[[LIN0:.*]] = arith.addi %[[ROW]], %[[J0:.*]] overflow<nsw, nuw> : i32
// CHECK: %[[IDX0:.*]] = arith.index_castui %[[LIN0]] : i32 to index
// CHECK: scf.if
// CHECK-NEXT: vector.load %[[FLAT]][%[[IDX0]]] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK: %[[ROW1:.*]] = arith.muli %[[I]], %[[S0]] overflow<nsw, nuw> : i32
// CHECK: %[[LIN1:.*]] = arith.addi %[[ROW1]], %[[J0]] overflow<nsw> : i32
// CHECK: %[[C512:.*]] = arith.constant 512 : i32
// CHECK: arith.addi %[[LIN1]], %[[C512]] overflow<nsw> : i32
// CHECK: scf.if
// CHECK-NEXT: vector.load %[[FLAT]][%{{.*}}] {alignment = 16 : i64}
gpu.module @m {
  gpu.func @masked_runs(%arg0: memref<?x?xf32, strided<[?, 1]>>, %i: i32, %j: i32, %p: i1, %q: i1) kernel attributes {tile.index32} {
    %zero = arith.constant dense<0.0> : vector<4xf32>
    %c512 = arith.constant 512 : i32
    %ii = arith.index_castui %i : i32 to index
    %j0 = arith.index_castui %j : i32 to index
    %j1i = arith.addi %j, %c512 : i32
    %j1 = arith.index_castui %j1i : i32 to index
    %a = scf.if %p -> (vector<4xf32>) {
      %v = vector.load %arg0[%ii, %j0] {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1]>>, vector<4xf32>
      scf.yield %v : vector<4xf32>
    } else {
      scf.yield %zero : vector<4xf32>
    }
    %b = scf.if %q -> (vector<4xf32>) {
      %v = vector.load %arg0[%ii, %j1] {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1]>>, vector<4xf32>
      scf.yield %v : vector<4xf32>
    } else {
      scf.yield %zero : vector<4xf32>
    }
    %s = arith.addf %a, %b : vector<4xf32>
    vector.store %s, %arg0[%ii, %j0] : memref<?x?xf32, strided<[?, 1]>>, vector<4xf32>
    gpu.return
  }
}

// -----

// Without tile.index32 the offset is index arithmetic; an index computed
// inside the conditional keeps its offset there; a strided innermost
// dimension multiplies its index too; shared memory and values that are
// not kernel arguments are left alone.
// CHECK-LABEL: gpu.func @index_offsets
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<?x?xf32, strided<[?, ?]>> to memref<?xf32>
// CHECK: scf.if
// CHECK-NEXT: %[[K:.*]] = arith.addi %arg2, %{{.*}} : index
// CHECK-NEXT: %[[A:.*]] = arith.muli %arg1, %[[STRIDES]]#0 overflow<nsw, nuw> : index
// CHECK-NEXT: %[[B:.*]] = arith.muli %[[K]], %[[STRIDES]]#1 overflow<nsw, nuw> : index
// CHECK-NEXT: %[[L:.*]] = arith.addi %[[A]], %[[B]] overflow<nsw, nuw> : index
// CHECK-NEXT: memref.load %[[FLAT]][%[[L]]] : memref<?xf32>
// CHECK: memref.store %{{.*}}, %arg4[%arg1] : memref<4xf32, #gpu.address_space<workgroup>>
gpu.module @m {
  gpu.func @index_offsets(%arg0: memref<?x?xf32, strided<[?, ?]>>, %i: index, %j: index, %p: i1) workgroup(%sh : memref<4xf32, #gpu.address_space<workgroup>>) kernel {
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %a = scf.if %p -> (f32) {
      %k = arith.addi %j, %c1 : index
      %v = memref.load %arg0[%i, %k] : memref<?x?xf32, strided<[?, ?]>>
      scf.yield %v : f32
    } else {
      scf.yield %zero : f32
    }
    memref.store %a, %sh[%i] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

// A cp.async from a global tensor reads the 1-D view at the linear offset.
// One that may fall outside the tensor has every index selected to 0 and a
// source size of 0 under one condition: the linear offset of the unselected
// indices is selected to 0 instead, once. The destination (shared memory)
// is left alone, and so is a copy whose indices are not all selected under
// one condition (linearized as they are).
// CHECK-LABEL: gpu.func @async_copies
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<?x?xf16, strided<[?, 1]>> to memref<?xf16>
// CHECK: %[[ROW:.*]] = arith.muli %[[I:.*]], %{{.*}} overflow<nsw, nuw> : i32
// CHECK: %[[LIN:.*]] = arith.addi %[[ROW]], %[[J:.*]] overflow<nsw, nuw> : i32
// CHECK: %[[C0:.*]] = arith.constant 0 : i32
// CHECK: %[[SEL:.*]] = arith.select %arg3, %[[LIN]], %[[C0]] : i32
// CHECK: %[[IDX:.*]] = arith.index_castui %[[SEL]] : i32 to index
// CHECK: nvgpu.device_async_copy %[[FLAT]][%[[IDX]]], %arg1[%{{.*}}], 8, %{{.*}} {bypassL1} : memref<?xf16> to memref<1024xf16, #gpu.address_space<workgroup>>
// CHECK: arith.muli %{{.*}}, %{{.*}} overflow<nsw, nuw> : i32
// CHECK-NOT: arith.select %arg3
// CHECK: nvgpu.device_async_copy %[[FLAT]][%{{.*}}], %arg1[%{{.*}}], 8 : memref<?xf16> to memref<1024xf16, #gpu.address_space<workgroup>>
gpu.module @m {
  gpu.func @async_copies(%arg0: memref<?x?xf16, strided<[?, 1]>>, %arg1: memref<1024xf16, #gpu.address_space<workgroup>>, %i: i32, %p: i1, %q: i1, %j: i32) kernel attributes {tile.index32} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %ii = arith.index_castui %i : i32 to index
    %jj = arith.index_castui %j : i32 to index
    %si = arith.select %p, %ii, %c0 : index
    %sj = arith.select %p, %jj, %c0 : index
    %n = arith.select %p, %c8, %c0 : index
    %t0 = nvgpu.device_async_copy %arg0[%si, %sj], %arg1[%c0], 8, %n {bypassL1} : memref<?x?xf16, strided<[?, 1]>> to memref<1024xf16, #gpu.address_space<workgroup>>
    %ti = arith.select %q, %ii, %c0 : index
    %t1 = nvgpu.device_async_copy %arg0[%ti, %sj], %arg1[%c8], 8 : memref<?x?xf16, strided<[?, 1]>> to memref<1024xf16, #gpu.address_space<workgroup>>
    gpu.return
  }
}
