// RUN: tessera-opt %s -tessera-gpu-to-host=checks=false | FileCheck %s

// Reads of wgmma accumulators are checked: an accumulator is carried, not
// read, through struct and vector element moves, loop iter_args and yields
// and the next wgmma.mma_async on it (one chain); any other user reads it
// and calls tessera_sim_wgmma_read with each chain it reads (the chain is
// also bits 16 and up of the product's packed shape). Here two
// accumulators cross a loop as vectors with their products in flight; the
// loop body reads neither, the epilogue reads chain 0 and then chain 1.
// CHECK-LABEL: func.func @k_sim(
// CHECK-SAME: %[[CTX:[^:]*]]: i64)
// CHECK: scf.for
// CHECK-NOT: tessera_sim_wgmma_read
// CHECK: %[[C0:.*]] = arith.constant 24584 : i64
// CHECK: call @tessera_sim_wgmma(%[[CTX]], %[[C0]],
// CHECK-NOT: tessera_sim_wgmma_read
// CHECK: %[[C1:.*]] = arith.constant 90120 : i64
// CHECK: call @tessera_sim_wgmma(%[[CTX]], %[[C1]],
// CHECK-NOT: tessera_sim_wgmma_read
// CHECK: scf.yield
// CHECK: call @tessera_sim_wgmma_wait
// CHECK: %[[CHAIN0:.*]] = arith.constant 0 : i64
// CHECK: call @tessera_sim_wgmma_read(%[[CTX]], %[[CHAIN0]], %{{.*}}) : (i64, i64, i64) -> ()
// CHECK-NEXT: arith.truncf
// CHECK: %[[CHAIN1:.*]] = arith.constant 1 : i64
// CHECK: call @tessera_sim_wgmma_read(%[[CTX]], %[[CHAIN1]], %{{.*}}) : (i64, i64, i64) -> ()
// CHECK-NEXT: arith.addf
// CHECK-NOT: call @tessera_sim_wgmma_read
// CHECK: return
!acc = !llvm.struct<(f32, f32, f32, f32)>
gpu.module @m {
  gpu.func @k(%out: memref<8xf16>, %out2: memref<8xf32>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1024xf16, #gpu.address_space<workgroup>>
    %p = memref.extract_aligned_pointer_as_index %v : memref<1024xf16, #gpu.address_space<workgroup>> -> index
    %pi = arith.index_cast %p : index to i64
    %zero = arith.constant dense<0.0> : vector<4xf32>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero, %b = %zero) -> (vector<4xf32>, vector<4xf32>) {
      %s0 = llvm.mlir.poison : !acc
      %ae0 = vector.extract %a[0] : f32 from vector<4xf32>
      %sa0 = llvm.insertvalue %ae0, %s0[0] : !acc
      %ae1 = vector.extract %a[1] : f32 from vector<4xf32>
      %sa1 = llvm.insertvalue %ae1, %sa0[1] : !acc
      %ae2 = vector.extract %a[2] : f32 from vector<4xf32>
      %sa2 = llvm.insertvalue %ae2, %sa1[2] : !acc
      %ae3 = vector.extract %a[3] : f32 from vector<4xf32>
      %sa3 = llvm.insertvalue %ae3, %sa2[3] : !acc
      %be0 = vector.extract %b[0] : f32 from vector<4xf32>
      %sb0 = llvm.insertvalue %be0, %s0[0] : !acc
      %be1 = vector.extract %b[1] : f32 from vector<4xf32>
      %sb1 = llvm.insertvalue %be1, %sb0[1] : !acc
      %be2 = vector.extract %b[2] : f32 from vector<4xf32>
      %sb2 = llvm.insertvalue %be2, %sb1[2] : !acc
      %be3 = vector.extract %b[3] : f32 from vector<4xf32>
      %sb3 = llvm.insertvalue %be3, %sb2[3] : !acc
      nvvm.wgmma.fence.aligned
      %da = nvvm.wgmma.mma_async %pi, %pi, %sa3, #nvvm.shape<m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>] : !acc -> !acc
      %db = nvvm.wgmma.mma_async %pi, %pi, %sb3, #nvvm.shape<m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>] : !acc -> !acc
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 1
      %x0 = llvm.extractvalue %da[0] : !acc
      %x1 = llvm.extractvalue %da[1] : !acc
      %x2 = llvm.extractvalue %da[2] : !acc
      %x3 = llvm.extractvalue %da[3] : !acc
      %y0 = llvm.extractvalue %db[0] : !acc
      %y1 = llvm.extractvalue %db[1] : !acc
      %y2 = llvm.extractvalue %db[2] : !acc
      %y3 = llvm.extractvalue %db[3] : !acc
      %na = vector.from_elements %x0, %x1, %x2, %x3 : vector<4xf32>
      %nb = vector.from_elements %y0, %y1, %y2, %y3 : vector<4xf32>
      scf.yield %na, %nb : vector<4xf32>, vector<4xf32>
    }
    nvvm.wgmma.wait.group.sync.aligned 0
    %h = arith.truncf %r#0 : vector<4xf32> to vector<4xf16>
    vector.store %h, %out[%c0] : memref<8xf16>, vector<4xf16>
    %e = vector.extract %r#1[0] : f32 from vector<4xf32>
    %f = arith.addf %e, %e : f32
    memref.store %f, %out2[%c0] : memref<8xf32>
    gpu.return
  }
}
