// RUN: tessera-opt %s -allow-unregistered-dialect -tessera-fold-grid-bounds | FileCheck %s

// Under tile.grid_extents = [x: %a dim 1, y: %a dim 0, z: none], block ids
// are below those extents: their bounds tests fold to true, through index
// casts and (index32) truncations. Tests against another extent, of
// another axis or of another kind stay.
// CHECK-LABEL: gpu.func @declared
// CHECK: %[[T0:.*]] = arith.constant true
// CHECK: %[[T1:.*]] = arith.constant true
// CHECK: %[[R:.*]] = arith.cmpi ult, %block_id_x, %dim : index
// CHECK: %[[S:.*]] = arith.cmpi ule, %block_id_x, %dim_0 : index
// CHECK: %[[T:.*]] = arith.cmpi ult, %block_id_x, %dim_1 : index
// CHECK: %[[U:.*]] = arith.cmpi ult, %block_id_z, %dim : index
// CHECK: "test.use"(%[[T0]], %[[T1]], %[[R]], %[[S]], %[[T]], %[[U]])
gpu.module @m {
  gpu.func @declared(%a: memref<?x?xf32>, %b: memref<?xf32>) kernel attributes {tile.grid_extents = array<i64: 0, 1, 0, 0, -1, -1>, tile.index32} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %x = gpu.block_id x
    %y = gpu.block_id y
    %z = gpu.block_id z
    %d0 = memref.dim %a, %c0 : memref<?x?xf32>
    %d1 = memref.dim %a, %c1 : memref<?x?xf32>
    %b0 = memref.dim %b, %c0 : memref<?xf32>
    %xi = arith.index_cast %x : index to i64
    %xt = arith.trunci %xi : i64 to i32
    %d1i = arith.index_cast %d1 : index to i32
    %p = arith.cmpi ult, %xt, %d1i : i32
    %q = arith.cmpi slt, %y, %d0 : index
    %r = arith.cmpi ult, %x, %d0 : index
    %s = arith.cmpi ule, %x, %d1 : index
    %t = arith.cmpi ult, %x, %b0 : index
    %u = arith.cmpi ult, %z, %d0 : index
    "test.use"(%p, %q, %r, %s, %t, %u) : (i1, i1, i1, i1, i1, i1) -> ()
    gpu.return
  }

  // Without index32 a truncation may change a value: the test stays. A
  // kernel without tile.grid_extents is left alone.
  // CHECK-LABEL: gpu.func @wide
  // CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : i32
  // CHECK-LABEL: gpu.func @undeclared
  // CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : index
  gpu.func @wide(%a: memref<?x?xf32>) kernel attributes {tile.grid_extents = array<i64: 0, 1, 0, 0, -1, -1>} {
    %c1 = arith.constant 1 : index
    %x = gpu.block_id x
    %d1 = memref.dim %a, %c1 : memref<?x?xf32>
    %xi = arith.index_cast %x : index to i64
    %xt = arith.trunci %xi : i64 to i32
    %d1i = arith.index_cast %d1 : index to i32
    %p = arith.cmpi ult, %xt, %d1i : i32
    "test.use"(%p) : (i1) -> ()
    gpu.return
  }
  gpu.func @undeclared(%a: memref<?x?xf32>) kernel {
    %c1 = arith.constant 1 : index
    %x = gpu.block_id x
    %d1 = memref.dim %a, %c1 : memref<?x?xf32>
    %p = arith.cmpi ult, %x, %d1 : index
    "test.use"(%p) : (i1) -> ()
    gpu.return
  }
}
