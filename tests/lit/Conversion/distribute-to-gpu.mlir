// RUN: tessera-opt %s -split-input-file -tessera-distribute-to-gpu -verify-diagnostics | FileCheck %s

// One program instance per block of num_warps x 32 threads: the tile buffer
// becomes a view of the block's dynamic shared memory, the parallel loop a
// thread-strided loop followed by a barrier, program ids block ids, and the
// scalar store runs on thread 0.
// CHECK-LABEL: gpu.module @k_module
// CHECK: memref.global "private" constant @cst
// CHECK: gpu.func @k(%{{.*}}: memref<?xf32>, %{{.*}}: memref<f32>) kernel
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK-SAME: tile.shared_bytes = 1024 : i64
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[ARENA:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[VIEW:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK: %[[S:.*]] = memref.memory_space_cast %[[VIEW]] : memref<256xf32, #gpu.address_space<workgroup>> to memref<256xf32>
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: scf.for %[[I:.*]] = %[[TID]] to %{{.*}} step %[[C64]]
// CHECK: memref.store %{{.*}}, %[[S]][%{{.*}}]
// CHECK: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}}
// CHECK-NEXT: scf.if %[[FIRST]]
// CHECK-NEXT: memref.store
// CHECK: gpu.barrier
// CHECK: gpu.return
// CHECK-NOT: func.func @k
module {
  memref.global "private" constant @cst : memref<256xf32> = dense<1.0>
  func.func @k(%x: memref<?xf32>, %y: memref<f32>) attributes {tile.kernel, tile.num_warps = 2 : i32} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %pid = tile.program_id 0 : i64
    %g = memref.get_global @cst : memref<256xf32>
    %buf = memref.alloc() : memref<256xf32>
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %v = memref.load %g[%i] : memref<256xf32>
      memref.store %v, %buf[%i] : memref<256xf32>
      scf.reduce
    }
    %f = arith.sitofp %pid : i64 to f32
    memref.store %f, %y[] : memref<f32>
    return
  }
}

// -----

// A configuration whose tiles do not fit in shared memory is rejected.
module {
  // expected-error @+1 {{this configuration needs 262144 bytes of shared memory per block; the target allows 232448}}
  func.func @big(%x: memref<?xf32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
    %buf = memref.alloc() : memref<65536xf32>
    %c0 = arith.constant 0 : index
    %v = memref.load %buf[%c0] : memref<65536xf32>
    memref.store %v, %x[%c0] : memref<?xf32>
    return
  }
}

// -----

module {
  // expected-error @+1 {{num_warps=64 gives 2048 threads per block; the limit is 1024}}
  func.func @wide(%x: memref<?xf32>) attributes {tile.kernel, tile.num_warps = 64 : i32} {
    return
  }
}

// -----

// A workgroup-space alloca would silently become thread-local memory.
module {
  func.func @stack(%x: memref<?xf32>) attributes {tile.kernel, tile.num_warps = 1 : i32} {
    // expected-error @+1 {{allocates workgroup memory on the stack; it would silently become thread-local memory}}
    %b = memref.alloca() : memref<32xf32, #gpu.address_space<workgroup>>
    return
  }
}

// -----

// Buffers whose live ranges do not overlap share the arena: %b is dead
// (after a barrier) before %c is first written, so both sit at byte 1024 and
// the block needs 2048 bytes, not 3072. %a is live throughout (byte 0).
// CHECK-LABEL: gpu.func @reuse
// CHECK-SAME: tile.shared_bytes = 2048 : i64
// CHECK: memref.view %{{.*}}[%c0][] {{.*}} to memref<256xf32
// CHECK: memref.view %{{.*}}[%c1024][] {{.*}} to memref<256xf32
// CHECK: memref.view %{{.*}}[%c1024_{{[0-9]+}}][] {{.*}} to memref<256xf32
module {
  func.func @reuse(%x: memref<?xf32>) attributes {tile.kernel, tile.num_warps = 2 : i32} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %a = memref.alloc() : memref<256xf32>
    %b = memref.alloc() : memref<256xf32>
    %c = memref.alloc() : memref<256xf32>
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %v = memref.load %x[%i] : memref<?xf32>
      memref.store %v, %b[%i] : memref<256xf32>
      scf.reduce
    }
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %v = memref.load %b[%i] : memref<256xf32>
      memref.store %v, %a[%i] : memref<256xf32>
      scf.reduce
    }
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %v = memref.load %a[%i] : memref<256xf32>
      memref.store %v, %c[%i] : memref<256xf32>
      scf.reduce
    }
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %v = memref.load %c[%i] : memref<256xf32>
      %w = memref.load %a[%i] : memref<256xf32>
      %s = arith.addf %v, %w : f32
      memref.store %s, %x[%i] : memref<?xf32>
      scf.reduce
    }
    return
  }
}

// -----

// Two loops one after the other, the second continuing what the first
// carried: a barrier after the first ends its body's buffers, so the
// second loop's temporary takes the first's bytes (1024), and the second
// loop's ping-pong pair is the first's (2048 and 3072: the first loop's
// result is the second's initial value only). The initial buffer (0) is
// live through the first loop: 4096 bytes, not 7168.
// CHECK-LABEL: gpu.func @sequential_loops
// CHECK-SAME: tile.shared_bytes = 4096 : i64
// CHECK: memref.view %{{.*}}[%c0][]
// CHECK: memref.view %{{.*}}[%c1024][]
// CHECK: %[[V1A:.*]] = memref.view %{{.*}}[%c2048][]
// CHECK-NEXT: %[[C1A:.*]] = memref.memory_space_cast %[[V1A]]
// CHECK: %[[V1B:.*]] = memref.view %{{.*}}[%c3072][]
// CHECK-NEXT: %[[C1B:.*]] = memref.memory_space_cast %[[V1B]]
// CHECK: memref.view %{{.*}}[%c1024_{{[0-9]+}}][]
// CHECK: %[[V2A:.*]] = memref.view %{{.*}}[%c2048_{{[0-9]+}}][]
// CHECK-NEXT: %[[C2A:.*]] = memref.memory_space_cast %[[V2A]]
// CHECK: %[[V2B:.*]] = memref.view %{{.*}}[%c3072_{{[0-9]+}}][]
// CHECK-NEXT: %[[C2B:.*]] = memref.memory_space_cast %[[V2B]]
// CHECK-NOT: memref.view
// CHECK: %[[R1:.*]] = scf.for {{.*}} -> (memref<256xf32>)
// CHECK: arith.select %{{.*}}, %[[C1B]], %[[C1A]] : memref<256xf32>
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %[[R1]]) -> (memref<256xf32>)
// CHECK: arith.select %{{.*}}, %[[C2B]], %[[C2A]] : memref<256xf32>
// CHECK: scf.yield
module {
  func.func @sequential_loops(%x: memref<?xf32>, %n: index, %m: index) attributes {tile.kernel, tile.num_warps = 2 : i32} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %zero = arith.constant 0.0 : f32
    %init = memref.alloc() : memref<256xf32>
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      memref.store %zero, %init[%i] : memref<256xf32>
      scf.reduce
    }
    %r1 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> (memref<256xf32>) {
      %t = memref.alloc() : memref<256xf32>
      scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
        %v = memref.load %x[%i] : memref<?xf32>
        memref.store %v, %t[%i] : memref<256xf32>
        scf.reduce
      }
      %new = memref.alloc() : memref<256xf32>
      scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
        %a = memref.load %acc[%i] : memref<256xf32>
        %b = memref.load %t[%i] : memref<256xf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %new[%i] : memref<256xf32>
        scf.reduce
      }
      scf.yield %new : memref<256xf32>
    }
    %r2 = scf.for %k = %n to %m step %c1 iter_args(%acc = %r1) -> (memref<256xf32>) {
      %t = memref.alloc() : memref<256xf32>
      scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
        %v = memref.load %x[%i] : memref<?xf32>
        %w = arith.mulf %v, %v : f32
        memref.store %w, %t[%i] : memref<256xf32>
        scf.reduce
      }
      %new = memref.alloc() : memref<256xf32>
      scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
        %a = memref.load %acc[%i] : memref<256xf32>
        %b = memref.load %t[%i] : memref<256xf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %new[%i] : memref<256xf32>
        scf.reduce
      }
      scf.yield %new : memref<256xf32>
    }
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      %v = memref.load %r2[%i] : memref<256xf32>
      memref.store %v, %x[%i] : memref<?xf32>
      scf.reduce
    }
    return
  }
}
