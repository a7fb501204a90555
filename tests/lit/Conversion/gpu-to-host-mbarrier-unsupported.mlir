// RUN: not tessera-opt %s -tessera-gpu-to-host=checks=false 2>&1 | FileCheck %s

// An mbarrier token carried through a branch's results is refused with the
// forms the sim supports, never run wrong.
// CHECK: error: 'nvgpu.mbarrier.test.wait' op sim supports mbarrier groups and tokens used as nvgpu.mbarrier.create and nvgpu.mbarrier.arrive define them (not through block arguments)
!g = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %bars = nvgpu.mbarrier.create -> !g
    nvgpu.mbarrier.init %bars[%c0], %c128 : !g
    %low = arith.cmpi ult, %tid, %c128 : index
    %tok = scf.if %low -> (!nvgpu.mbarrier.token) {
      %t = nvgpu.mbarrier.arrive %bars[%c0] : !g -> !nvgpu.mbarrier.token
      scf.yield %t : !nvgpu.mbarrier.token
    } else {
      %t = nvgpu.mbarrier.arrive %bars[%c0] : !g -> !nvgpu.mbarrier.token
      scf.yield %t : !nvgpu.mbarrier.token
    }
    %done = nvgpu.mbarrier.test.wait %bars[%c0], %tok : !g, !nvgpu.mbarrier.token
    gpu.return
  }
}
