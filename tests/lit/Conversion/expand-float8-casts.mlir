// RUN: tessera-opt %s -split-input-file -tessera-expand-float8-casts | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tessera-expand-float8-casts='f16x2-conversions=true' | FileCheck %s --check-prefix=CVT

// By default a vector cast is expanded element by element into integer
// arithmetic (no fp8 types remain). With f16x2-conversions, an fp8 -> f16
// widening of an even number of elements takes one sm_89+ conversion per
// pair; other casts are expanded as before.
// CHECK-LABEL: func.func @widen
// CHECK-NOT: nvvm.convert
// CHECK-NOT: arith.extf {{.*}}f8E4M3FN
// CHECK: return
// CVT-LABEL: func.func @widen
// CVT: %[[BITS:.*]] = arith.bitcast %{{.*}} : vector<4xf8E4M3FN> to vector<4xi8>
// CVT: %[[P0:.*]] = vector.shuffle %[[BITS]], %[[BITS]] [0, 1] : vector<4xi8>, vector<4xi8>
// CVT: nvvm.convert.f8x2.to.f16x2 %[[P0]] : vector<2xi8>{{ ?}}(f8E4M3FN) -> vector<2xf16>
// CVT: %[[P1:.*]] = vector.shuffle %[[BITS]], %[[BITS]] [2, 3] : vector<4xi8>, vector<4xi8>
// CVT: nvvm.convert.f8x2.to.f16x2 %[[P1]] : vector<2xi8>{{ ?}}(f8E4M3FN) -> vector<2xf16>
// CVT: vector.from_elements {{.*}} : vector<4xf16>
func.func @widen(%x: vector<4xf8E4M3FN>) -> vector<4xf16> {
  %y = arith.extf %x : vector<4xf8E4M3FN> to vector<4xf16>
  return %y : vector<4xf16>
}

// -----

// E5M2, and an odd count and a widening to f32, which stay on integer
// arithmetic.
// CVT-LABEL: func.func @other_forms
// CVT: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>{{ ?}}(f8E5M2) -> vector<2xf16>
// CVT-NOT: nvvm.convert
// CVT: return
func.func @other_forms(%x: vector<2xf8E5M2>, %o: vector<3xf8E5M2>) -> (vector<2xf16>, vector<3xf16>, vector<2xf32>) {
  %y = arith.extf %x : vector<2xf8E5M2> to vector<2xf16>
  %z = arith.extf %o : vector<3xf8E5M2> to vector<3xf16>
  %w = arith.extf %x : vector<2xf8E5M2> to vector<2xf32>
  return %y, %z, %w : vector<2xf16>, vector<3xf16>, vector<2xf32>
}
