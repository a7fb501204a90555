// RUN: tessera-opt %s -tessera-gpu-to-host=checks=false | FileCheck %s

// wgmma.mma_async with A from registers (the GPU lowering's inline PTX,
// marked with tile.wgmma) on the sim device: A's four words go through a
// slot of their own, whose address stands for A's descriptor; the
// instruction is its tile.wgmma config (here N 16 | scale-d << 14 | A from
// registers << 15). The accumulators go through a slot
// as for the shared-memory form and D is read back into a struct.
// CHECK-LABEL: func.func @k_sim(
// CHECK-SAME: %[[CTX:[^:]*]]: i64)
// CHECK-DAG: %[[ACC:.*]] = memref.alloca() : memref<8xf32>
// CHECK-DAG: %[[WORDS:.*]] = memref.alloca() : memref<4xi32>
// CHECK: call @tessera_sim_wgmma_fence(%[[CTX]])
// CHECK: vector.store %{{.*}}, %[[WORDS]]
// CHECK: vector.store %{{.*}}, %[[ACC]]
// CHECK: %[[CONFIG:.*]] = arith.constant 49168 : i64
// CHECK: call @tessera_sim_wgmma(%[[CTX]], %[[CONFIG]], %{{.*}}, %[[DESC:[^,]*]], %{{.*}}, %{{.*}})
// CHECK: vector.load %[[ACC]]
// CHECK: llvm.insertvalue
// CHECK-NOT: llvm.inline_asm
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
gpu.module @m {
  gpu.func @k(%out: memref<8xf32>, %desc: i64, %w: i32, %x: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    nvvm.wgmma.fence.aligned
    %d = llvm.inline_asm has_side_effects asm_dialect = att {tile.wgmma = 49168 : i64} "wgmma", "=f,=f,=f,=f,=f,=f,=f,=f,r,r,r,r,l,0,1,2,3,4,5,6,7" %w, %w, %w, %w, %desc, %x, %x, %x, %x, %x, %x, %x, %x : (i32, i32, i32, i32, i64, f32, f32, f32, f32, f32, f32, f32, f32) -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    %y = llvm.extractvalue %d[0] : !acc
    memref.store %y, %out[%c0] : memref<8xf32>
    gpu.return
  }
}
