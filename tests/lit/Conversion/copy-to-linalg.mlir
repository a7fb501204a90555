// RUN: tessera-opt %s -tessera-copy-to-linalg | FileCheck %s

// memref.copy becomes linalg.copy; a copy of a buffer onto itself is dropped.
// CHECK-LABEL: func.func @copies
// CHECK-NEXT: linalg.copy ins(%arg0 : memref<4x?xf32>) outs(%arg1 : memref<4x?xf32>)
// CHECK-NEXT: return
func.func @copies(%a: memref<4x?xf32>, %b: memref<4x?xf32>) {
  memref.copy %a, %b : memref<4x?xf32> to memref<4x?xf32>
  memref.copy %a, %a : memref<4x?xf32> to memref<4x?xf32>
  return
}
