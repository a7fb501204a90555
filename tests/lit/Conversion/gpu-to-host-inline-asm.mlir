// RUN: not tessera-opt %s -split-input-file -tessera-gpu-to-host=checks=false 2>&1 | FileCheck %s

// Inline PTX has no host meaning: the sim refuses it, unless it is a
// wgmma.mma_async whose tile.wgmma config matches its operands.
// CHECK: error: 'llvm.inline_asm' op is not supported by the sim device
gpu.module @m {
  gpu.func @k(%x: f32) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %y = llvm.inline_asm has_side_effects asm_dialect = att "ex2.approx.f32 $0, $1;", "=f,f" %x : (f32) -> f32
    gpu.return
  }
}

// -----

// N 32 in the config (A from registers), 8 accumulators (N 16) in the
// operands.
// CHECK: error: 'llvm.inline_asm' op is not a wgmma.mma_async the sim knows
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
gpu.module @m {
  gpu.func @k(%desc: i64, %w: i32, %x: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %d = llvm.inline_asm has_side_effects asm_dialect = att {tile.wgmma = 49184 : i64} "wgmma", "=f,=f,=f,=f,=f,=f,=f,=f,r,r,r,r,l,0,1,2,3,4,5,6,7" %w, %w, %w, %w, %desc, %x, %x, %x, %x, %x, %x, %x, %x : (i32, i32, i32, i32, i64, f32, f32, f32, f32, f32, f32, f32, f32) -> !acc
    gpu.return
  }
}

// -----

// The config does not say A is in registers (bit 15).
// CHECK: error: 'llvm.inline_asm' op is not a wgmma.mma_async the sim knows
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
gpu.module @m {
  gpu.func @k(%desc: i64, %w: i32, %x: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %d = llvm.inline_asm has_side_effects asm_dialect = att {tile.wgmma = 16400 : i64} "wgmma", "=f,=f,=f,=f,=f,=f,=f,=f,r,r,r,r,l,0,1,2,3,4,5,6,7" %w, %w, %w, %w, %desc, %x, %x, %x, %x, %x, %x, %x, %x : (i32, i32, i32, i32, i64, f32, f32, f32, f32, f32, f32, f32, f32) -> !acc
    gpu.return
  }
}
