// RUN: tessera-opt %s -tessera-gpu-mma-to-nvvm | FileCheck %s

// bf16 mma.sync: fragment rows are packed into i32 registers, the f32
// accumulator is split into its elements and nvvm.mma.sync multiplies bf16
// (row-major A, column-major B).
// CHECK-LABEL: func.func @mma_bf16(
// CHECK-COUNT-6: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: %[[D:.*]] = nvvm.mma.sync A[{{.*}}, {{.*}}, {{.*}}, {{.*}}] B[{{.*}}, {{.*}}] C[{{.*}}, {{.*}}, {{.*}}, {{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-4: llvm.extractvalue %[[D]]
// CHECK: %[[R:.*]] = vector.from_elements {{.*}} : vector<2x2xf32>
// CHECK-NEXT: return %[[R]]
func.func @mma_bf16(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
  return %d : vector<2x2xf32>
}

// tf32 mma.sync (f32 fragments, m16n8k8): every A and B element is rounded
// with cvt.rna.tf32.f32 into an i32 register.
// CHECK-LABEL: func.func @mma_tf32(
// CHECK-COUNT-6: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: nvvm.mma.sync A[{{.*}}, {{.*}}, {{.*}}, {{.*}}] B[{{.*}}, {{.*}}] C[{{.*}}] {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_tf32(%a: vector<4x1xf32>, %b: vector<2x1xf32>, %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
  return %d : vector<2x2xf32>
}

// fp8 mma.sync (i8 fragments named e5m2 by tile.fp8, m16n8k32): rows of four
// bytes become i32 registers and the instruction is inline PTX (MLIR 22's
// nvvm.mma.sync verifier has no fp8 multiplicands).
// CHECK-LABEL: func.func @mma_fp8(
// CHECK-COUNT-6: vector.bitcast %{{.*}} : vector<4xi8> to vector<1xi32>
// CHECK: %[[D:.*]] = llvm.inline_asm asm_dialect = att "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};", "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f" {{.*}} : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-4: llvm.extractvalue %[[D]]
func.func @mma_fp8(%a: vector<4x4xi8>, %b: vector<2x4xi8>, %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 32], tile.fp8 = "e5m2"} : (vector<4x4xi8>, vector<2x4xi8>, vector<2x2xf32>) -> vector<2x2xf32>
  return %d : vector<2x2xf32>
}

// An i8 mma.sync without tile.fp8 is an integer product: left alone.
// CHECK-LABEL: func.func @mma_i8(
// CHECK: nvgpu.mma.sync
func.func @mma_i8(%a: vector<4x4xi8>, %b: vector<2x4xi8>, %c: vector<2x2xi32>) -> vector<2x2xi32> {
  %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 32]} : (vector<4x4xi8>, vector<2x4xi8>, vector<2x2xi32>) -> vector<2x2xi32>
  return %d : vector<2x2xi32>
}

// f16 mma.sync is left to convert-nvgpu-to-nvvm.
// CHECK-LABEL: func.func @mma_f16(
// CHECK: nvgpu.mma.sync
// CHECK-NOT: nvvm.mma.sync
func.func @mma_f16(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
  return %d : vector<2x2xf32>
}
