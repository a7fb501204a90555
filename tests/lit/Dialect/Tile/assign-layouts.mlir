// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-assign-layouts))' | FileCheck %s

// A STREAM-like kernel: loads, element-wise math and a store share one
// layout; f32 on a unit-stride tensor asks for 16-byte vectors (4 elements
// per thread), 32 lanes and 4 warps along the only dimension.
// CHECK: #[[B4:.*]] = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @triad
// CHECK: tile.load {{.*}} -> tensor<1024xf32, #[[B4]]>
// CHECK: tile.splat {{.*}} : tensor<1024xf32, #[[B4]]>
// CHECK: arith.mulf {{.*}} : tensor<1024xf32, #[[B4]]>
// CHECK: tile.store {{.*}} : tensor<1024xf32, #[[B4]]>
func.func @triad(%a: memref<?xf32, strided<[1], offset: ?>>, %b: memref<?xf32, strided<[1], offset: ?>>, %s: f32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32>
  %k = tile.splat %s : tensor<1024xf32>
  %y = arith.mulf %x, %k : tensor<1024xf32>
  tile.store %y, %b[%c0] : tensor<1024xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// f16 asks for 8 elements per thread (16 bytes); the f32 arithmetic after
// the cast keeps the same layout, so no conversion is needed.
// CHECK: #[[B8:.*]] = #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @f16_widen
// CHECK: tile.load {{.*}} -> tensor<1024xf16, #[[B8]]>
// CHECK: arith.extf {{.*}} to tensor<1024xf32, #[[B8]]>
// CHECK-NOT: tile.convert_layout
func.func @f16_widen(%a: memref<?xf16, strided<[1], offset: ?>>, %b: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf16, strided<[1], offset: ?>> -> tensor<1024xf16>
  %y = arith.extf %x : tensor<1024xf16> to tensor<1024xf32>
  tile.store %y, %b[%c0] : tensor<1024xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// VECTOR_WIDTH caps the elements per thread.
// CHECK: #tile.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @capped
func.func @capped(%a: memref<?xf32, strided<[1], offset: ?>>, %b: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.vector_width = 2 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<1024xf32>
  tile.store %x, %b[%c0] : tensor<1024xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// Negative case: a tensor whose innermost stride is not known to be 1
// cannot be read with vectors, so one element per thread.
// CHECK: #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @strided
func.func @strided(%a: memref<?xf32, strided<[?], offset: ?>>, %b: memref<?xf32, strided<[?], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf32, strided<[?], offset: ?>> -> tensor<256xf32>
  tile.store %x, %b[%c0] : tensor<256xf32>, memref<?xf32, strided<[?], offset: ?>>
  return
}

// -----

// A tile smaller than the block: the vector shrinks so that every thread
// holds elements of its own (256 elements, 128 threads: 2 each).
// CHECK: #tile.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @small
func.func @small(%a: memref<?xf32, strided<[1], offset: ?>>, %b: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<256xf32>
  tile.store %x, %b[%c0] : tensor<256xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// Unit dimensions: a [1, 1024] block read from a 2-D tensor and reshaped to
// 1-D keeps its elements in the same threads; unit dimensions come last in
// the order with one element, lane and warp. A row reduction's result is a
// scalar (rank 0) every thread holds.
// CHECK-DAG: #[[R2:.*]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]>
// CHECK-DAG: #[[R1:.*]] = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @row
// CHECK: tile.load {{.*}} -> tensor<1x1024xf32, #[[R2]]>
// CHECK: tile.reshape {{.*}} -> tensor<1024xf32, #[[R1]]>
// CHECK: tile.reduce sum {{.*}} -> tensor<f32>
func.func @row(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %out: memref<?xf32, strided<[1], offset: ?>>, %r: i64) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%r, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x1024xf32>
  %y = tile.reshape %x : tensor<1x1024xf32> -> tensor<1024xf32>
  %s = tile.reduce sum %y {axis = 0 : i32} : tensor<1024xf32> -> tensor<f32>
  %e = tensor.extract %s[] : tensor<f32>
  tile.atomic_rmw add %e, %out[%c0] : f32, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// A 2-D reduction: 16-byte vectors along the rows, 16 lanes cover a row
// and the rest of the lanes and the warps go down the column; the result
// is the slice of the operand's layout along the reduced axis. Used by
// nothing that has a layout of its own, it keeps the slice.
// CHECK-DAG: #[[P:.*]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[S:.*]] = #tile.slice<dim = 1, parent = #[[P]]>
// CHECK-LABEL: func.func @rows2d
// CHECK: tile.load {{.*}} -> tensor<16x64xf32, #[[P]]>
// CHECK: tile.reduce max {{.*}} -> tensor<16xf32, #[[S]]>
// CHECK: arith.mulf {{.*}} : tensor<16xf32, #[[S]]>
// CHECK-NOT: tile.convert_layout
func.func @rows2d(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<16x64xf32>
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<16x64xf32> -> tensor<16xf32>
  %m2 = arith.mulf %m, %m : tensor<16xf32>
  return
}

// -----

// A reduction result meeting a tile that global memory laid out: the
// group keeps the access's layout and the result is converted to it.
// CHECK-DAG: #[[B:.*]] = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-DAG: #[[S:.*]] = #tile.slice<dim = 1, parent = #{{.*}}>
// CHECK-LABEL: func.func @meet
// CHECK: %[[M:.*]] = tile.reduce max {{.*}} -> tensor<16xf32, #[[S]]>
// CHECK: %[[C:.*]] = tile.convert_layout %[[M]] : tensor<16xf32, #[[S]]> -> tensor<16xf32, #[[B]]>
// CHECK: arith.addf %[[C]], %{{.*}} : tensor<16xf32, #[[B]]>
func.func @meet(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %b: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %x = tile.load %a[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<16x64xf32>
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<16x64xf32> -> tensor<16xf32>
  %y = tile.load %b[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<16xf32>
  %z = arith.addf %m, %y : tensor<16xf32>
  tile.store %z, %b[%c0] : tensor<16xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----

// The accumulator group takes the m16n8 tensor-core layout: 128x128 on 4
// warps as a 2x2 warp grid. The operands keep the layouts of their loads
// (16-byte vectors) and convert to the operand layouts at the dot; the
// transposed operand's layout is its load's with the dimensions swapped.
// The result is stored in 16-byte vectors: converted to a blocked layout
// right before its store.
// CHECK: #[[A:.*]] = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK: #[[BT:.*]] = #tile.blocked<sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]>
// CHECK: #[[OUT:.*]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK: #[[MMA:.*]] = #tile.mma<warpsPerCTA = [2, 2]>
// CHECK: #[[OPA:.*]] = #tile.dot_operand<opIdx = 0, parent = #[[MMA]]>
// CHECK: #[[OPB:.*]] = #tile.dot_operand<opIdx = 1, parent = #[[MMA]]>
// CHECK-LABEL: func.func @gemm
// CHECK: arith.constant dense<0.000000e+00> : tensor<128x128xf32, #[[MMA]]>
// CHECK: scf.for {{.*}} -> (tensor<128x128xf32, #[[MMA]]>)
// CHECK: tile.load {{.*}} -> tensor<128x32xf16, #[[A]]>
// CHECK: tile.load {{.*}} -> tensor<128x32xf16, #[[A]]>
// CHECK: tile.trans {{.*}} : tensor<128x32xf16, #[[A]]> -> tensor<32x128xf16, #[[BT]]>
// CHECK: tile.convert_layout {{.*}} -> tensor<128x32xf16, #[[OPA]]>
// CHECK: tile.convert_layout {{.*}} : tensor<32x128xf16, #[[BT]]> -> tensor<32x128xf16, #[[OPB]]>
// CHECK: tile.dot {{.*}} -> tensor<128x128xf32, #[[MMA]]>
// CHECK: arith.mulf {{.*}} : tensor<128x128xf32, #[[MMA]]>
// CHECK: tile.convert_layout {{.*}} : tensor<128x128xf32, #[[MMA]]> -> tensor<128x128xf32, #[[OUT]]>
// CHECK: tile.store {{.*}} : tensor<128x128xf32, #[[OUT]]>
func.func @gemm(%a: memref<?x?xf16, strided<[?, 1], offset: ?>>, %b: memref<?x?xf16, strided<[?, 1], offset: ?>>, %c: memref<?x?xf32, strided<[?, 1], offset: ?>>, %k: i64, %alpha: f32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc0 = %zero) -> (tensor<128x128xf32>) : i64 {
    %x = tile.load %a[%c0, %k0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<128x32xf16>
    %y = tile.load %b[%c0, %k0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<128x32xf16>
    %yt = tile.trans %y [1, 0] : tensor<128x32xf16> -> tensor<32x128xf16>
    %d = tile.dot %x, %yt, %acc0 : tensor<128x32xf16>, tensor<32x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %s = tile.splat %alpha : tensor<128x128xf32>
  %r = arith.mulf %acc, %s : tensor<128x128xf32>
  tile.store %r, %c[%c0, %c0] : tensor<128x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// An epilogue that loads (alpha * acc + beta * C) runs in the blocked
// layout of its store: the accumulator converts, C is loaded in 16-byte
// vectors. A masked store keeps the tensor-core layout.
// CHECK: #[[OUT:.*]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK: #[[MMA:.*]] = #tile.mma<warpsPerCTA = [2, 2]>
// CHECK-LABEL: func.func @epilogue
// CHECK: %[[ACC:.*]] = tile.dot {{.*}} -> tensor<64x64xf32, #[[MMA]]>
// CHECK: %[[C:.*]] = tile.load {{.*}} -> tensor<64x64xf32, #[[OUT]]>
// CHECK: %[[CONV:.*]] = tile.convert_layout %[[ACC]] : tensor<64x64xf32, #[[MMA]]> -> tensor<64x64xf32, #[[OUT]]>
// CHECK: %[[SUM:.*]] = arith.addf %[[CONV]], %[[C]] : tensor<64x64xf32, #[[OUT]]>
// CHECK: tile.store %[[SUM]], {{.*}} : tensor<64x64xf32, #[[OUT]]>
// CHECK-NOT: tile.convert_layout {{.*}} #[[OUT]]>
// CHECK: tile.store {{.*}} mask({{.*}}) : tensor<64x64xf32, #[[MMA]]>
func.func @epilogue(%a: memref<?x?xf16, strided<[?, 1], offset: ?>>, %b: memref<?x?xf16, strided<[?, 1], offset: ?>>, %c: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x64xf16>
  %d = tile.dot %x, %y, %zero : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %old = tile.load %c[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<64x64xf32>
  %sum = arith.addf %d, %old : tensor<64x64xf32>
  tile.store %sum, %c[%c0, %c0] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  %m = arith.cmpf ogt, %d, %zero : tensor<64x64xf32>
  tile.store %d, %c[%c0, %c0] mask(%m : tensor<64x64xi1>) : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// Chained products share a 4x1 warp grid. The row maximum is the slice of
// the tensor-core layout; reshaped back to 64x1 it is that layout
// collapsed along the columns, which the broadcast reads in place; P
// converts straight to the left-operand layout of the same grid.
// CHECK: #[[MMA:.*]] = #tile.mma<warpsPerCTA = [4, 1]>
// CHECK: #[[OPA:.*]] = #tile.dot_operand<opIdx = 0, parent = #[[MMA]]>
// CHECK: #[[ROWS:.*]] = #tile.slice<dim = 1, parent = #[[MMA]]>
// CHECK-LABEL: func.func @chain
// CHECK: tile.reduce  max {{.*}} -> tensor<64xf32, #[[ROWS]]>
// CHECK: tile.reshape {{.*}} : tensor<64xf32, #[[ROWS]]> -> tensor<64x1xf32, #[[MMA]]>
// CHECK: tile.broadcast {{.*}} : tensor<64x1xf32, #[[MMA]]> -> tensor<64x32xf32, #[[MMA]]>
// CHECK: tile.convert_layout {{.*}} : tensor<64x32xf16, #[[MMA]]> -> tensor<64x32xf16, #[[OPA]]>
func.func @chain(%q: memref<?x?xf16, strided<[?, 1], offset: ?>>, %k: memref<?x?xf16, strided<[?, 1], offset: ?>>, %v: memref<?x?xf16, strided<[?, 1], offset: ?>>, %o: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i64
  %z = arith.constant dense<0.000000e+00> : tensor<64x32xf32>
  %zo = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %a = tile.load %q[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x64xf16>
  %b = tile.load %k[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<64x32xf16>
  %s = tile.dot %a, %b, %z : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
  %m = tile.reduce max %s {axis = 1 : i32} : tensor<64x32xf32> -> tensor<64xf32>
  %m2 = tile.reshape %m : tensor<64xf32> -> tensor<64x1xf32>
  %mb = tile.broadcast %m2 : tensor<64x1xf32> -> tensor<64x32xf32>
  %d = arith.subf %s, %mb : tensor<64x32xf32>
  %p = math.exp2 %d : tensor<64x32xf32>
  %p16 = arith.truncf %p : tensor<64x32xf32> to tensor<64x32xf16>
  %w = tile.load %v[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x64xf16>
  %r = tile.dot %p16, %w, %zo : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  tile.store %r, %o[%c0, %c0] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// A persistent kernel stores an accumulator of 128 registers per thread
// from the tensor-core layout: its loop over programs leaves the
// conversion no registers.
// CHECK: #[[MMA:.*]] = #tile.mma<warpsPerCTA = [2, 2]>
// CHECK-LABEL: func.func @persistent_epilogue
// CHECK-NOT: tile.convert_layout {{.*}} : tensor<128x128xf32
// CHECK: tile.store {{.*}} : tensor<128x128xf32, #[[MMA]]>
func.func @persistent_epilogue(%a: memref<?x?xf16, strided<[?, 1], offset: ?>>, %b: memref<?x?xf16, strided<[?, 1], offset: ?>>, %c: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.persistent} {
  %c0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<128x32xf16>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x128xf16>
  %d = tile.dot %x, %y, %zero : tensor<128x32xf16>, tensor<32x128xf16> -> tensor<128x128xf32>
  tile.store %d, %c[%c0, %c0] : tensor<128x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// So does a warp-specialised kernel, whose consumers give registers up.
// CHECK: #[[MMA:.*]] = #tile.mma<warpsPerCTA = [2, 2]>
// CHECK-LABEL: func.func @specialised_epilogue
// CHECK-NOT: tile.convert_layout {{.*}} : tensor<128x128xf32
// CHECK: tile.store {{.*}} : tensor<128x128xf32, #[[MMA]]>
func.func @specialised_epilogue(%a: memref<?x?xf16, strided<[?, 1], offset: ?>>, %b: memref<?x?xf16, strided<[?, 1], offset: ?>>, %c: memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_specialize} {
  %c0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %x = tile.load %a[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<128x32xf16>
  %y = tile.load %b[%c0, %c0] : memref<?x?xf16, strided<[?, 1], offset: ?>> -> tensor<32x128xf16>
  %d = tile.dot %x, %y, %zero : tensor<128x32xf16>, tensor<32x128xf16> -> tensor<128x128xf32>
  tile.store %d, %c[%c0, %c0] : tensor<128x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
