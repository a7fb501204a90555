// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(gpu.func(tessera-gpu-mma-sync)))' | FileCheck %s

// A warp-tile loop of tessera-gpu-matmul-to-mma after the GPU mapping: the
// tiles are views of the shared arena, reached through generic-space casts.
// The transfers are pointed at the shared views, so that A and B fragments
// come from ldmatrix (B transposed: it is row-major K x N), the contraction
// becomes mma.sync and the accumulator moves through per-lane vector
// loads/stores.
// CHECK-LABEL: gpu.func @k
// CHECK: %[[A:.*]] = memref.view {{.*}} to memref<16x16xf16, #gpu.address_space<workgroup>>
// CHECK: %[[B:.*]] = memref.view {{.*}} to memref<16x8xf16, #gpu.address_space<workgroup>>
// CHECK: %[[C:.*]] = memref.view {{.*}} to memref<16x8xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: gpu.lane_id
// CHECK: vector.load %[[C]]{{.*}} : memref<16x8xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: scf.for {{.*}} -> (vector<2x2xf32>)
// CHECK: nvgpu.ldmatrix %[[A]][{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix %[[B]][{{.*}}] {numTiles = 2 : i32, transpose = true} : memref<16x8xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: vector.store {{.*}}, %[[C]]{{.*}} : memref<16x8xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NOT: vector.contract
// CHECK-NOT: vector.transfer_read
// CHECK-NOT: tile.mma_warp_tiles
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c512 = arith.constant 512 : index
    %c768 = arith.constant 768 : index
    %z16 = arith.constant 0.0 : f16
    %z32 = arith.constant 0.0 : f32
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %va = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x16xf16, #gpu.address_space<workgroup>>
    %a = memref.memory_space_cast %va : memref<16x16xf16, #gpu.address_space<workgroup>> to memref<16x16xf16>
    %vb = memref.view %arena[%c512][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xf16, #gpu.address_space<workgroup>>
    %b = memref.memory_space_cast %vb : memref<16x8xf16, #gpu.address_space<workgroup>> to memref<16x8xf16>
    %vc = memref.view %arena[%c768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xf32, #gpu.address_space<workgroup>>
    %c = memref.memory_space_cast %vc : memref<16x8xf32, #gpu.address_space<workgroup>> to memref<16x8xf32>
    scf.for %t = %c0 to %c1 step %c1 {
      %acc = vector.transfer_read %c[%c0, %c0], %z32 {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
      %r = scf.for %k = %c0 to %c16 step %c16 iter_args(%x = %acc) -> (vector<16x8xf32>) {
        %fa = vector.transfer_read %a[%c0, %k], %z16 {in_bounds = [true, true]} : memref<16x16xf16>, vector<16x16xf16>
        %fb = vector.transfer_read %b[%k, %c0], %z16 {in_bounds = [true, true]} : memref<16x8xf16>, vector<16x8xf16>
        %d = vector.contract {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %fb, %x : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
        scf.yield %d : vector<16x8xf32>
      }
      vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    } {tile.mma_warp_tiles}
    gpu.return
  }
}

// -----

// The same loop on bf16 tiles: converted through the f16 fragment tables
// and retyped, so ldmatrix yields bf16 fragments and mma.sync multiplies
// bf16.
// CHECK-LABEL: gpu.func @kbf
// CHECK: nvgpu.ldmatrix %{{.*}}[{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<16x16xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvgpu.ldmatrix %{{.*}}[{{.*}}] {numTiles = 2 : i32, transpose = true} : memref<16x8xbf16, #gpu.address_space<workgroup>> -> vector<2x2xbf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-NOT: f16>
// CHECK: gpu.return
#nA = affine_map<(d0, d1, d2) -> (d0, d2)>
#nB = affine_map<(d0, d1, d2) -> (d2, d1)>
#nC = affine_map<(d0, d1, d2) -> (d0, d1)>
gpu.module @mbf {
  gpu.func @kbf() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c512 = arith.constant 512 : index
    %c768 = arith.constant 768 : index
    %z16 = arith.constant 0.0 : bf16
    %z32 = arith.constant 0.0 : f32
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %va = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x16xbf16, #gpu.address_space<workgroup>>
    %a = memref.memory_space_cast %va : memref<16x16xbf16, #gpu.address_space<workgroup>> to memref<16x16xbf16>
    %vb = memref.view %arena[%c512][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xbf16, #gpu.address_space<workgroup>>
    %b = memref.memory_space_cast %vb : memref<16x8xbf16, #gpu.address_space<workgroup>> to memref<16x8xbf16>
    %vc = memref.view %arena[%c768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xf32, #gpu.address_space<workgroup>>
    %c = memref.memory_space_cast %vc : memref<16x8xf32, #gpu.address_space<workgroup>> to memref<16x8xf32>
    scf.for %t = %c0 to %c1 step %c1 {
      %acc = vector.transfer_read %c[%c0, %c0], %z32 {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
      %r = scf.for %k = %c0 to %c16 step %c16 iter_args(%x = %acc) -> (vector<16x8xf32>) {
        %fa = vector.transfer_read %a[%c0, %k], %z16 {in_bounds = [true, true]} : memref<16x16xbf16>, vector<16x16xbf16>
        %fb = vector.transfer_read %b[%k, %c0], %z16 {in_bounds = [true, true]} : memref<16x8xbf16>, vector<16x8xbf16>
        %d = vector.contract {indexing_maps = [#nA, #nB, #nC], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %fb, %x : vector<16x16xbf16>, vector<16x8xbf16> into vector<16x8xf32>
        scf.yield %d : vector<16x8xf32>
      }
      vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    } {tile.mma_warp_tiles}
    gpu.return
  }
}


// -----

// tf32: the 16x8 f32 A fragment comes from one ldmatrix.x4 (each 32-bit
// element a pair of b16), the 8x8 B fragment, which would need a transposed
// 32-bit ldmatrix, from per-lane loads; they feed an m16n8k8 mma.sync on
// f32 operands, which tessera-gpu-mma-to-nvvm rounds to tf32.
// CHECK-LABEL: gpu.func @ktf
// CHECK: nvgpu.ldmatrix %{{.*}}[{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<16x8xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK-COUNT-2: memref.load %{{.*}} : memref<8x8xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8]} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-NOT: vector.contract
// CHECK: gpu.return
#tA = affine_map<(d0, d1, d2) -> (d0, d2)>
#tB = affine_map<(d0, d1, d2) -> (d2, d1)>
#tC = affine_map<(d0, d1, d2) -> (d0, d1)>
gpu.module @mtf {
  gpu.func @ktf() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c512 = arith.constant 512 : index
    %c768 = arith.constant 768 : index
    %z32 = arith.constant 0.0 : f32
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %va = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xf32, #gpu.address_space<workgroup>>
    %a = memref.memory_space_cast %va : memref<16x8xf32, #gpu.address_space<workgroup>> to memref<16x8xf32>
    %vb = memref.view %arena[%c512][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x8xf32, #gpu.address_space<workgroup>>
    %b = memref.memory_space_cast %vb : memref<8x8xf32, #gpu.address_space<workgroup>> to memref<8x8xf32>
    %vc = memref.view %arena[%c768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xf32, #gpu.address_space<workgroup>>
    %c = memref.memory_space_cast %vc : memref<16x8xf32, #gpu.address_space<workgroup>> to memref<16x8xf32>
    scf.for %t = %c0 to %c1 step %c1 {
      %acc = vector.transfer_read %c[%c0, %c0], %z32 {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
      %r = scf.for %k = %c0 to %c8 step %c8 iter_args(%x = %acc) -> (vector<16x8xf32>) {
        %fa = vector.transfer_read %a[%c0, %k], %z32 {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
        %fb = vector.transfer_read %b[%k, %c0], %z32 {in_bounds = [true, true]} : memref<8x8xf32>, vector<8x8xf32>
        %d = vector.contract {indexing_maps = [#tA, #tB, #tC], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %fb, %x : vector<16x8xf32>, vector<8x8xf32> into vector<16x8xf32>
        scf.yield %d : vector<16x8xf32>
      }
      vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    } {tile.mma_warp_tiles}
    gpu.return
  }
}

// -----

// fp8 (e4m3) tiles: nvgpu.ldmatrix and nvgpu.mma.sync have no fp8 forms, so
// the loop runs on i8 aliases of the same arena bytes (new memref.views at
// the same offsets) and the m16n8k32 mma.sync on i8 fragments names the
// format in tile.fp8.
// CHECK-LABEL: gpu.func @kf8
// CHECK-DAG: %[[A8:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x32xi8, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B8:.*]] = memref.view %{{.*}}[%c512{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x8xi8, #gpu.address_space<workgroup>>
// CHECK: nvgpu.ldmatrix %[[A8]][{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<16x32xi8, #gpu.address_space<workgroup>> -> vector<4x4xi8>
// CHECK-COUNT-8: memref.load %[[B8]]
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 32], tile.fp8 = "e4m3"} : (vector<4x4xi8>, vector<2x4xi8>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-NOT: vector.contract
// CHECK: gpu.return
#fA = affine_map<(d0, d1, d2) -> (d0, d2)>
#fB = affine_map<(d0, d1, d2) -> (d2, d1)>
#fC = affine_map<(d0, d1, d2) -> (d0, d1)>
gpu.module @mf8 {
  gpu.func @kf8() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c512 = arith.constant 512 : index
    %c768 = arith.constant 768 : index
    %z8 = arith.constant 0.0 : f8E4M3FN
    %z32 = arith.constant 0.0 : f32
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %va = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x32xf8E4M3FN, #gpu.address_space<workgroup>>
    %a = memref.memory_space_cast %va : memref<16x32xf8E4M3FN, #gpu.address_space<workgroup>> to memref<16x32xf8E4M3FN>
    %vb = memref.view %arena[%c512][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x8xf8E4M3FN, #gpu.address_space<workgroup>>
    %b = memref.memory_space_cast %vb : memref<32x8xf8E4M3FN, #gpu.address_space<workgroup>> to memref<32x8xf8E4M3FN>
    %vc = memref.view %arena[%c768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xf32, #gpu.address_space<workgroup>>
    %c = memref.memory_space_cast %vc : memref<16x8xf32, #gpu.address_space<workgroup>> to memref<16x8xf32>
    scf.for %t = %c0 to %c1 step %c1 {
      %acc = vector.transfer_read %c[%c0, %c0], %z32 {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
      %r = scf.for %k = %c0 to %c32 step %c32 iter_args(%x = %acc) -> (vector<16x8xf32>) {
        %fa = vector.transfer_read %a[%c0, %k], %z8 {in_bounds = [true, true]} : memref<16x32xf8E4M3FN>, vector<16x32xf8E4M3FN>
        %fb = vector.transfer_read %b[%k, %c0], %z8 {in_bounds = [true, true]} : memref<32x8xf8E4M3FN>, vector<32x8xf8E4M3FN>
        %d = vector.contract {indexing_maps = [#fA, #fB, #fC], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %fb, %x : vector<16x32xf8E4M3FN>, vector<32x8xf8E4M3FN> into vector<16x8xf32>
        scf.yield %d : vector<16x8xf32>
      }
      vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    } {tile.mma_warp_tiles}
    gpu.return
  }
}

// -----

// A warp-tile unit marked for register-resident accumulators, in the
// kernel's K loop: after the conversion the accumulator fragment is read
// from the shared tile once before the K loop, carried through it as an
// iteration argument (the dot's own K loop starts from it and yields the
// new one) and written back once after it, followed by a barrier. The unit
// loop (one trip per warp) is gone.
// CHECK-LABEL: gpu.func @khoist
// CHECK: vector.load
// CHECK: vector.insert %{{.*}} [0] : vector<2xf32> into vector<2x2xf32>
// CHECK: vector.load
// CHECK: %[[INIT:.*]] = vector.insert %{{.*}} [1] : vector<2xf32> into vector<2x2xf32>
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %c0 to %arg0 step %c1 iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<2x2xf32>) {
// CHECK-NOT: vector.store
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (vector<2x2xf32>)
// CHECK: nvgpu.mma.sync
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK: }
// CHECK: vector.extract %[[R]]
// CHECK: vector.store
// CHECK: vector.store
// CHECK: gpu.barrier
// CHECK: gpu.return
#hA = affine_map<(d0, d1, d2) -> (d0, d2)>
#hB = affine_map<(d0, d1, d2) -> (d2, d1)>
#hC = affine_map<(d0, d1, d2) -> (d0, d1)>
gpu.module @mh {
  gpu.func @khoist(%n: index) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c512 = arith.constant 512 : index
    %c768 = arith.constant 768 : index
    %z16 = arith.constant 0.0 : f16
    %z32 = arith.constant 0.0 : f32
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %va = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x16xf16, #gpu.address_space<workgroup>>
    %a = memref.memory_space_cast %va : memref<16x16xf16, #gpu.address_space<workgroup>> to memref<16x16xf16>
    %vb = memref.view %arena[%c512][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xf16, #gpu.address_space<workgroup>>
    %b = memref.memory_space_cast %vb : memref<16x8xf16, #gpu.address_space<workgroup>> to memref<16x8xf16>
    %vc = memref.view %arena[%c768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xf32, #gpu.address_space<workgroup>>
    %c = memref.memory_space_cast %vc : memref<16x8xf32, #gpu.address_space<workgroup>> to memref<16x8xf32>
    scf.for %kk = %c0 to %n step %c1 {
      %tid = gpu.thread_id x
      %w = affine.apply affine_map<(d0) -> (d0 floordiv 32)>(%tid)
      scf.for %t = %w to %c1 step %c1 {
        %acc = vector.transfer_read %c[%c0, %c0], %z32 {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
        %r = scf.for %k = %c0 to %c16 step %c16 iter_args(%x = %acc) -> (vector<16x8xf32>) {
          %fa = vector.transfer_read %a[%c0, %k], %z16 {in_bounds = [true, true]} : memref<16x16xf16>, vector<16x16xf16>
          %fb = vector.transfer_read %b[%k, %c0], %z16 {in_bounds = [true, true]} : memref<16x8xf16>, vector<16x8xf16>
          %d = vector.contract {indexing_maps = [#hA, #hB, #hC], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %fb, %x : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
          scf.yield %d : vector<16x8xf32>
        }
        vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
      } {tile.mma_warp_tiles, tile.mma_hoist_accumulators}
      gpu.barrier
    }
    gpu.return
  }
}
