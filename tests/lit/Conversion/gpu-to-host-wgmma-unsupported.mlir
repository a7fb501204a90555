// RUN: not tessera-opt %s -tessera-gpu-to-host=checks=false 2>&1 | FileCheck %s

// A warpgroup product the simulator does not emulate (A negated by its
// scale immediate) is refused with the forms it supports, never run wrong.
// CHECK: error: 'nvvm.wgmma.mma_async' op sim supports wgmma.mma_async m64nNk16 with f16/bf16 inputs, m64nNk32 with e4m3/e5m2 inputs and m64nNk8 with K-major tf32 inputs, from shared memory, with f32 accumulation only
!acc = !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %d0 = arith.constant 0 : i64
    %acc = llvm.mlir.poison : !acc
    nvvm.wgmma.fence.aligned
    %d = nvvm.wgmma.mma_async %d0, %d0, %acc, #nvvm.shape<m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<f16>, <neg>, <row>], B[<f16>, <one>, <col>] : !acc -> !acc
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    gpu.return
  }
}
