// RUN: tessera-opt %s -split-input-file -tessera-predicate-global-accesses | FileCheck %s

// A run of a tile store (a 16-byte aligned vector store alone in an scf.if)
// becomes one predicated PTX store; the constant part of its index is the
// address's displacement.
// CHECK-LABEL: gpu.func @store_run
// CHECK-NOT: scf.if
// The index without its displacement may be negative: widened as signed.
// CHECK: arith.index_cast %arg1 : i32 to index
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[PTR:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK: %[[W:.*]] = vector.bitcast %arg3 : vector<4xf32> to vector<4xi32>
// CHECK: llvm.inline_asm has_side_effects "@$0 st.global.v4.b32 [$1+2048], {$2, $3, $4, $5};", "b,l,r,r,r,r" %arg2, %[[PTR]]
gpu.module @m {
  gpu.func @store_run(%arg0: memref<?xf32>, %i: i32, %p: i1, %v: vector<4xf32>) kernel {
    %c512 = arith.constant 512 : i32
    %j = arith.addi %i, %c512 overflow<nsw> : i32
    %idx = arith.index_castui %j : i32 to index
    scf.if %p {
      vector.store %v, %arg0[%idx] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
    }
    gpu.return
  }
}

// -----

// The run at the tile's start is widened as signed too (its executed index
// is non-negative), the same value as its neighbour's: one address.
// CHECK-LABEL: gpu.func @store_runs
// CHECK: arith.index_cast %arg1 : i32 to index
// CHECK: st.global.v4.b32 [$1],
// CHECK: arith.index_cast %arg1 : i32 to index
// CHECK: st.global.v4.b32 [$1+2048],
gpu.module @m {
  gpu.func @store_runs(%arg0: memref<?xf32>, %i: i32, %p: i1, %q: i1, %v: vector<4xf32>) kernel {
    %c512 = arith.constant 512 : i32
    %idx0 = arith.index_castui %i : i32 to index
    scf.if %p {
      vector.store %v, %arg0[%idx0] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
    }
    %j = arith.addi %i, %c512 overflow<nsw> : i32
    %idx1 = arith.index_castui %j : i32 to index
    scf.if %q {
      vector.store %v, %arg0[%idx1] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
    }
    gpu.return
  }
}

// -----

// A padded run of a tile load: the outputs start as the padding (zero for
// poison padding) and the predicated load overwrites them.
// CHECK-LABEL: gpu.func @load_runs
// CHECK: llvm.inline_asm has_side_effects "mov.b32 $0, $6;\0A\09mov.b32 $1, $7;\0A\09mov.b32 $2, $8;\0A\09mov.b32 $3, $9;\0A\09@$4 ld.global.v4.b32 {$0, $1, $2, $3}, [$5];", "=r,=r,=r,=r,b,l,r,r,r,r" %arg2, %{{.*}} : (i1, !llvm.ptr, i32, i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: vector.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
// A 2-byte scalar goes through a 16-bit register.
// CHECK: llvm.inline_asm has_side_effects "mov.b16 $0, $3;\0A\09@$1 ld.global.b16 $0, [$2];", "=h,b,l,h"
// CHECK: vector.bitcast %{{.*}} : vector<1xi16> to vector<1xf16>
gpu.module @m {
  gpu.func @load_runs(%a: memref<?xf32>, %h: memref<?xf16>, %p: i1, %k: index) kernel {
    %poison = llvm.mlir.poison : f32
    %one = arith.constant 1.0 : f16
    %r = scf.if %p -> (vector<4xf32>) {
      %v = vector.load %a[%k] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
      scf.yield %v : vector<4xf32>
    } else {
      %pad = vector.broadcast %poison : f32 to vector<4xf32>
      scf.yield %pad : vector<4xf32>
    }
    %s = scf.if %p -> (f16) {
      %x = memref.load %h[%k] : memref<?xf16>
      scf.yield %x : f16
    } else {
      scf.yield %one : f16
    }
    vector.store %r, %a[%k] : memref<?xf32>, vector<4xf32>
    memref.store %s, %h[%k] : memref<?xf16>
    gpu.return
  }
}

// -----

// Negative cases keep their branch: a vector store aligned to less than its
// size, a 1-byte store, shared memory, a conditional with more than the
// access in it.
// CHECK-LABEL: gpu.func @kept
// CHECK-NOT: llvm.inline_asm
// CHECK-COUNT-4: scf.if
gpu.module @m {
  gpu.func @kept(%a: memref<?xf32>, %b: memref<?xi8>, %p: i1, %k: index, %v: vector<4xf32>, %x: i8) workgroup(%sh : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    scf.if %p {
      vector.store %v, %a[%k] {alignment = 4 : i64} : memref<?xf32>, vector<4xf32>
    }
    scf.if %p {
      memref.store %x, %b[%k] : memref<?xi8>
    }
    scf.if %p {
      vector.store %v, %sh[%k] {alignment = 16 : i64} : memref<64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    }
    scf.if %p {
      %w = arith.addf %v, %v : vector<4xf32>
      vector.store %w, %a[%k] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
    }
    gpu.return
  }
}
