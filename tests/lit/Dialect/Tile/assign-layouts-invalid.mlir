// RUN: tessera-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tessera-assign-layouts))'

// Matrix products have no register lowering yet: the pass names the op.
// expected-error @+1 {{has no register lowering: 'tile.dot'}}
func.func @dot(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf32>) attributes {tile.kernel} {
  %d = tile.dot %a, %b, %c : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  return
}

// -----

// expected-error @+1 {{threadsPerWarp multiplies to 16, not 32}}
#bad = #tile.blocked<sizePerThread = [1], threadsPerWarp = [16], warpsPerCTA = [4], order = [0]>
func.func @lanes(%x: tensor<64xf32, #bad>) {
  return
}
