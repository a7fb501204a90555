// RUN: tessera-opt %s -pass-pipeline='builtin.module(gpu.module(gpu.func(tessera-gpu-async-copy)))' | FileCheck %s

// Tile loads after the GPU mapping: thread-strided loops storing elements
// loaded from global memory into shared tiles, each followed by a barrier.
// f32 from a unit-stride source becomes cp.async into the shared view (a
// subview of it here), committed and waited for before the barrier. An f16
// tile load that is not a copy between same-sized subviews, a strided
// source and a shared-to-shared copy stay as they are. (The chunked,
// alignment-versioned form is tested in @chunks below.)
// CHECK-LABEL: gpu.func @k
// CHECK: %[[V:.*]] = memref.view {{.*}} to memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK: %[[SV:.*]] = memref.subview %[[V]]{{.*}} to memref<?x?xf32, strided<[32, 1]>, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvgpu.device_async_copy %arg0[{{.*}}], %[[SV]][{{.*}}], 1 : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32, strided<[32, 1]>, #gpu.address_space<workgroup>>
// CHECK-NOT: memref.store
// CHECK: }
// CHECK-NEXT: %[[G:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[G]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// f16 elements:
// CHECK: memref.load %arg1
// CHECK: memref.store
// CHECK: gpu.barrier
// strided source:
// CHECK: memref.load %arg2
// CHECK: memref.store
// CHECK: gpu.barrier
// shared to shared:
// CHECK: memref.load %[[T:.*]][
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK-NOT: nvgpu.device_async
gpu.module @m {
  gpu.func @k(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %h: memref<?x?xf16, strided<[?, 1], offset: ?>>,
              %st: memref<?x?xf32, strided<[?, ?], offset: ?>>, %rows: index, %cols: index) kernel {
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %c8192 = arith.constant 8192 : index
    %c12288 = arith.constant 12288 : index
    %tid = gpu.thread_id x
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x32xf32, #gpu.address_space<workgroup>>
    %t = memref.memory_space_cast %v : memref<64x32xf32, #gpu.address_space<workgroup>> to memref<64x32xf32>
    %vh = memref.view %arena[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %th = memref.memory_space_cast %vh : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16>
    %v2 = memref.view %arena[%c12288][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x32xf32, #gpu.address_space<workgroup>>
    %t2 = memref.memory_space_cast %v2 : memref<64x32xf32, #gpu.address_space<workgroup>> to memref<64x32xf32>
    %n = arith.muli %rows, %cols : index
    %dst = memref.subview %t[0, 0] [%rows, %cols] [1, 1] : memref<64x32xf32> to memref<?x?xf32, strided<[32, 1]>>
    scf.for %i = %tid to %n step %c128 {
      %r = arith.divsi %i, %cols : index
      %c = arith.remsi %i, %cols : index
      %x = memref.load %a[%r, %c] : memref<?x?xf32, strided<[?, 1], offset: ?>>
      memref.store %x, %dst[%r, %c] : memref<?x?xf32, strided<[32, 1]>>
    }
    gpu.barrier
    scf.for %i = %tid to %n step %c128 {
      %r = arith.divsi %i, %cols : index
      %c = arith.remsi %i, %cols : index
      %x = memref.load %h[%r, %c] : memref<?x?xf16, strided<[?, 1], offset: ?>>
      memref.store %x, %th[%r, %c] : memref<64x32xf16>
    }
    gpu.barrier
    scf.for %i = %tid to %n step %c128 {
      %r = arith.divsi %i, %cols : index
      %c = arith.remsi %i, %cols : index
      %x = memref.load %st[%r, %c] : memref<?x?xf32, strided<[?, ?], offset: ?>>
      memref.store %x, %t2[%r, %c] : memref<64x32xf32>
    }
    gpu.barrier
    scf.for %i = %tid to %n step %c128 {
      %r = arith.divsi %i, %cols : index
      %c = arith.remsi %i, %cols : index
      %x = memref.load %t[%r, %c] : memref<64x32xf32>
      memref.store %x, %t2[%r, %c] : memref<64x32xf32>
    }
    gpu.barrier
    gpu.return
  }
}

// A copy between subviews of the same sizes (what the mapping emits) is
// versioned on alignment: when the tensor's first element and row stride
// and the shared tile are 16-byte aligned, each thread copies rows in
// chunks of 8 halves (one 16-byte cp.async each, the last partial chunk of
// a row element by element); otherwise the element loop runs as it was.
// CHECK-LABEL: gpu.func @chunks
// CHECK: %[[SRC:.*]] = memref.subview %arg0
// CHECK: %[[DST:.*]] = memref.subview %{{.*}} to memref<?x?xf16, strided<[32, 1], offset: ?>>
// CHECK: %[[SH:.*]] = memref.subview %{{.*}} to memref<?x?xf16, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
// CHECK: memref.extract_aligned_pointer_as_index %[[DST]]
// CHECK: memref.extract_aligned_pointer_as_index %[[SRC]]
// CHECK: arith.andi
// CHECK-NEXT: %[[OK:.*]] = arith.andi
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK: %[[W:.*]] = memref.dim %[[SRC]], %c1
// CHECK: %[[CH:.*]] = arith.ceildivui %[[W]], %c8
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c128 {
// CHECK: %[[COL:.*]] = arith.muli %{{.*}}, %c8
// CHECK: %[[LEFT:.*]] = arith.subi %[[W]], %[[COL]]
// CHECK: %[[WHOLE:.*]] = arith.cmpi uge, %[[LEFT]], %c8
// CHECK: scf.if %[[WHOLE]] {
// CHECK-NEXT: nvgpu.device_async_copy %[[SRC]][%{{.*}}, %[[COL]]], %[[SH]][%{{.*}}, %[[COL]]], 8 {bypassL1}
// CHECK: } else {
// CHECK: scf.for
// CHECK: memref.load %[[SRC]]
// CHECK: memref.store %{{.*}}, %[[DST]]
// CHECK: } else {
// CHECK: scf.for
// CHECK: memref.load %[[SRC]]
// CHECK: memref.store %{{.*}}, %[[DST]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: %[[G:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[G]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
gpu.module @m2 {
  gpu.func @chunks(%h: memref<?x?xf16, strided<[?, 1], offset: ?>>, %r0: index, %k0: index, %rows: index, %cols: index) kernel {
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %tid = gpu.thread_id x
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %vh = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
    %th = memref.memory_space_cast %vh : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf16>
    %src = memref.subview %h[%r0, %k0] [%rows, %cols] [1, 1] : memref<?x?xf16, strided<[?, 1], offset: ?>> to memref<?x?xf16, strided<[?, 1], offset: ?>>
    %dst = memref.subview %th[%r0, 0] [%rows, %cols] [1, 1] : memref<64x32xf16> to memref<?x?xf16, strided<[32, 1], offset: ?>>
    %n = arith.muli %rows, %cols : index
    scf.for %i = %tid to %n step %c128 {
      %r = arith.divsi %i, %cols : index
      %c = arith.remsi %i, %cols : index
      %x = memref.load %src[%r, %c] : memref<?x?xf16, strided<[?, 1], offset: ?>>
      memref.store %x, %dst[%r, %c] : memref<?x?xf16, strided<[32, 1], offset: ?>>
    }
    gpu.barrier
    gpu.return
  }
}
