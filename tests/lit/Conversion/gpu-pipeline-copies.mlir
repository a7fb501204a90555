// RUN: tessera-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(tessera-gpu-pipeline-copies))' | FileCheck %s

// A K loop in the shape the mapping and tessera-gpu-async-copy give it: the
// load part copies a tile into a shared view with cp.async, then commits,
// waits for everything and synchronises; the compute part reads the tile.
// With two stages: the tile gets a second buffer appended to the shared
// memory (4096 -> 8192 bytes); the loads of iteration 0 run before the
// loop (predicated on the loop running at all), the loop issues the loads
// of iteration k + 1 (predicated on k + 1 being an iteration), always
// commits a group, waits until one group may still be in flight, and
// computes iteration k on its stage's buffer.
// CHECK-LABEL: gpu.func @k(
// CHECK-SAME: tile.shared_bytes = 8192
// CHECK: scf.if
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: %[[FIRST:.*]] = nvgpu.device_async_create_group
// CHECK: scf.for %[[K:.*]] = %c0 to %arg1 step %c32
// CHECK-NOT: iter_args
// CHECK: scf.if
// CHECK: nvgpu.device_async_copy
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: %[[G:.*]] = nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %[[G]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: %[[SEL:.*]] = arith.select %{{.*}}, %c0, %{{.*}} : index
// CHECK-NEXT: %[[BUF:.*]] = memref.view %{{.*}}[%[[SEL]]][]
// CHECK: memref.load %[[BUF]]
// CHECK: gpu.barrier
// CHECK-NOT: numGroups = 0
gpu.module @m {
  gpu.func @k(%a: memref<?x32xf32>, %n: index, %out: memref<32xf32>) kernel attributes {tile.num_stages = 2 : i32, tile.shared_bytes = 4096 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c1024 = arith.constant 1024 : index
    %tid = gpu.thread_id x
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %n step %c32 {
      scf.for %i = %tid to %c1024 step %c32 {
        %r = arith.divui %i, %c32 : index
        %c = arith.remui %i, %c32 : index
        %row = arith.addi %k, %r : index
        %t = nvgpu.device_async_copy %a[%row, %c], %v[%r, %c], 1 : memref<?x32xf32> to memref<32x32xf32, #gpu.address_space<workgroup>>
      }
      %g = nvgpu.device_async_create_group
      nvgpu.device_async_wait %g {numGroups = 0 : i32}
      gpu.barrier
      %x = memref.load %v[%tid, %tid] : memref<32x32xf32, #gpu.address_space<workgroup>>
      %o = memref.load %out[%tid] : memref<32xf32>
      %s = arith.addf %x, %o : f32
      memref.store %s, %out[%tid] : memref<32xf32>
      gpu.barrier
    }
    gpu.return
  }
}

// -----

// Left alone: one stage, and a compute part that writes the copied tile.
// CHECK-LABEL: gpu.func @one_stage(
// CHECK-SAME: tile.shared_bytes = 4096
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK-LABEL: gpu.func @writes_tile(
// CHECK-SAME: tile.shared_bytes = 4096
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
gpu.module @m2 {
  gpu.func @one_stage(%a: memref<?x32xf32>, %n: index) kernel attributes {tile.num_stages = 1 : i32, tile.shared_bytes = 4096 : i64} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %tid = gpu.thread_id x
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %n step %c32 {
      %t = nvgpu.device_async_copy %a[%k, %tid], %v[%tid, %tid], 1 : memref<?x32xf32> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group
      nvgpu.device_async_wait %g {numGroups = 0 : i32}
      gpu.barrier
    }
    gpu.return
  }
  gpu.func @writes_tile(%a: memref<?x32xf32>, %n: index) kernel attributes {tile.num_stages = 3 : i32, tile.shared_bytes = 4096 : i64} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %f = arith.constant 0.0 : f32
    %tid = gpu.thread_id x
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %n step %c32 {
      %t = nvgpu.device_async_copy %a[%k, %tid], %v[%tid, %tid], 1 : memref<?x32xf32> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group
      nvgpu.device_async_wait %g {numGroups = 0 : i32}
      gpu.barrier
      memref.store %f, %v[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>
      gpu.barrier
    }
    gpu.return
  }
}

// -----

// A compute part that reads the tile through an alias -- another view of
// the same arena bytes with another element type, as the i8 stand-ins of
// fp8 tiles -- reads the alias of its own stage's buffer too. Three stages
// of one 1024-byte buffer (the alias adds none): 3072 bytes.
// CHECK-LABEL: gpu.func @alias(
// CHECK-SAME: tile.shared_bytes = 3072
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 2 : i32}
// CHECK: %[[SEL:.*]] = arith.select %{{.*}}, %c0, %{{.*}} : index
// CHECK-DAG: memref.view %{{.*}}[%[[SEL]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf8E4M3FN, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[I8:.*]] = memref.view %{{.*}}[%[[SEL]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xi8, #gpu.address_space<workgroup>>
// CHECK: memref.load %[[I8]]
gpu.module @m3 {
  gpu.func @alias(%a: memref<?x32xf8E4M3FN>, %n: index, %out: memref<32xi8>) kernel attributes {tile.num_stages = 3 : i32, tile.shared_bytes = 1024 : i64} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %tid = gpu.thread_id x
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf8E4M3FN, #gpu.address_space<workgroup>>
    %w = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xi8, #gpu.address_space<workgroup>>
    scf.for %k = %c0 to %n step %c32 {
      %t = nvgpu.device_async_copy %a[%k, %tid], %v[%tid, %c0], 4 : memref<?x32xf8E4M3FN> to memref<32x32xf8E4M3FN, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group
      nvgpu.device_async_wait %g {numGroups = 0 : i32}
      gpu.barrier
      %x = memref.load %w[%tid, %tid] : memref<32x32xi8, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<32xi8>
      gpu.barrier
    }
    gpu.return
  }
}

// -----

// A K loop with iteration arguments (register-resident accumulators): the
// compute part yields the new values, and the pipelined loop carries them
// next to its own state; the result after the loop is the last value.
// CHECK-LABEL: gpu.func @carried(
// CHECK-SAME: tile.shared_bytes = 8192
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %c0 to %arg1 step %c32 iter_args(%[[ACC:.*]] = %cst) -> (f32) {
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK: %[[X:.*]] = memref.load
// CHECK: %[[S:.*]] = arith.addf %[[ACC]], %[[X]]
// CHECK: scf.yield %[[S]]
// CHECK: memref.store %[[R]], %arg2
gpu.module @m4 {
  gpu.func @carried(%a: memref<?x32xf32>, %n: index, %out: memref<32xf32>) kernel attributes {tile.num_stages = 2 : i32, tile.shared_bytes = 4096 : i64} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %z = arith.constant 0.0 : f32
    %tid = gpu.thread_id x
    %arena = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %arena[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
    %r = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %z) -> (f32) {
      %t = nvgpu.device_async_copy %a[%k, %tid], %v[%tid, %tid], 1 : memref<?x32xf32> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group
      nvgpu.device_async_wait %g {numGroups = 0 : i32}
      gpu.barrier
      %x = memref.load %v[%tid, %tid] : memref<32x32xf32, #gpu.address_space<workgroup>>
      %s = arith.addf %acc, %x : f32
      gpu.barrier
      scf.yield %s : f32
    }
    memref.store %r, %out[%tid] : memref<32xf32>
    gpu.return
  }
}
