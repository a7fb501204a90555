// Regression: rank-0 global tensors pass the verifiers, but
// -tessera-lower-tile-atomics (AtomicLowering) and
// -tessera-convert-tile-to-linalg (GatherLowering, ScatterLowering) crash:
// boundsCheck() returns a null Value when there are no indices and it is
// used as an scf.if / arith.andi operand. (A rank-0 gather also prints as
// "memref<f32>,  -> tensor<8xf32>", which does not parse back.)
// RUN: env LLVM_DISABLE_SYMBOLIZATION=1 tessera-opt %s -split-input-file -tessera-lower-tile-atomics | FileCheck %s --check-prefix=ATOMIC
// RUN: env LLVM_DISABLE_SYMBOLIZATION=1 tessera-opt %s -split-input-file -tessera-convert-tile-to-linalg | FileCheck %s --check-prefix=GATHER

// ATOMIC: memref.atomic_rmw addf
func.func @atomic_rank0(%x: memref<f32>, %s: f32) {
  tile.atomic_rmw add %s, %x[] : f32, memref<f32>
  return
}

// -----

// GATHER: tensor.generate
func.func @gather_rank0(%x: memref<f32>) -> tensor<8xf32> {
  %0 = "tile.gather"(%x) {operandSegmentSizes = array<i32: 1, 0, 0, 0>} : (memref<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
