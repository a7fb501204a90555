// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessera-remove-layout-conversions))' | FileCheck %s

#a = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#b = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>

// A splat, a splat constant, an arange and element-wise math on them are
// recomputed in the wanted layout instead of moving through shared memory.
// CHECK: #[[B:.*]] = #tile.blocked<sizePerThread = [1]
// CHECK-LABEL: func.func @remat
// CHECK-NOT: tile.convert_layout
// CHECK-DAG: arith.constant dense<2.000000e+00> : tensor<512xf32, #[[B]]>
// CHECK-DAG: tile.arange 0 to 512 : tensor<512xi32, #[[B]]>
// CHECK-DAG: tile.splat %{{.*}} : tensor<512xi32, #[[B]]>
// CHECK: arith.addi {{.*}} : tensor<512xi32, #[[B]]>
// CHECK-NOT: tile.convert_layout
// CHECK: return
func.func @remat(%s: i32) -> (tensor<512xi32, #b>, tensor<512xf32, #b>) {
  %r = tile.arange 0 to 512 : tensor<512xi32, #a>
  %k = tile.splat %s : tensor<512xi32, #a>
  %x = arith.addi %r, %k : tensor<512xi32, #a>
  %cx = tile.convert_layout %x : tensor<512xi32, #a> -> tensor<512xi32, #b>
  %c = arith.constant dense<2.0> : tensor<512xf32, #a>
  %cc = tile.convert_layout %c : tensor<512xf32, #a> -> tensor<512xf32, #b>
  return %cx, %cc : tensor<512xi32, #b>, tensor<512xf32, #b>
}

// -----

#a = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#b = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>

// A conversion back to the layout the tile had is no conversion; a chain
// moves the data once.
// CHECK-LABEL: func.func @chains
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<512xf32, #[[A:[a-z0-9]+]]>)
// CHECK: %[[C:.*]] = tile.convert_layout %[[X]] : tensor<512xf32, #[[A]]> -> tensor<512xf32, #{{[a-z0-9]+}}>
// CHECK-NEXT: return %[[X]], %[[C]]
func.func @chains(%x: tensor<512xf32, #a>) -> (tensor<512xf32, #a>, tensor<512xf32, #b>) {
  %y = tile.convert_layout %x : tensor<512xf32, #a> -> tensor<512xf32, #b>
  %z = tile.convert_layout %y : tensor<512xf32, #b> -> tensor<512xf32, #a>
  %w = tile.convert_layout %z : tensor<512xf32, #a> -> tensor<512xf32, #b>
  return %z, %w : tensor<512xf32, #a>, tensor<512xf32, #b>
}

// -----

#a = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#b = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>

// Negative case: a loaded tile cannot be recomputed; its conversion stays.
// CHECK-LABEL: func.func @loaded
// CHECK: tile.convert_layout
func.func @loaded(%m: memref<?xf32, strided<[1], offset: ?>>, %i: i64) -> tensor<512xf32, #b> {
  %x = tile.load %m[%i] : memref<?xf32, strided<[1], offset: ?>> -> tensor<512xf32, #a>
  %y = tile.convert_layout %x : tensor<512xf32, #a> -> tensor<512xf32, #b>
  return %y : tensor<512xf32, #b>
}
