// Regression: DotOp::verify crashes (cast<FloatType> assertion) when the
// operands are neither float nor integer (complex, index) and the
// accumulator is a float: the "narrower accumulator" check casts the operand
// type without testing it.
// RUN: env LLVM_DISABLE_SYMBOLIZATION=1 tessera-opt %s -split-input-file -verify-diagnostics

func.func @dot_complex(%a: tensor<4x4xcomplex<f32>>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tile.dot'}}
  %0 = tile.dot %a, %a, %c : tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @dot_index(%a: tensor<4x4xindex>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tile.dot'}}
  %0 = tile.dot %a, %a, %c : tensor<4x4xindex>, tensor<4x4xindex> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
