// RUN: tessera-opt %s -split-input-file -verify-diagnostics
// Verifier (and custom-syntax) errors of the tile dialect ops.

func.func @program_id_axis() {
  // expected-error @+1 {{'tile.program_id' op attribute 'axis' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 0 whose maximum value is 2}}
  %0 = tile.program_id 3 : i64
  return
}
// -----
func.func @num_programs_axis() {
  // expected-error @+1 {{'tile.num_programs' op attribute 'axis' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 0 whose maximum value is 2}}
  %0 = tile.num_programs -1 : i64
  return
}
// -----
func.func @arange_rank() {
  // expected-error @+1 {{'tile.arange' op result must be a 1-D tile}}
  %0 = tile.arange 0 to 16 : tensor<4x4xi32>
  return
}
// -----
func.func @arange_empty() {
  // expected-error @+1 {{'tile.arange' op end (8) must be greater than start (8)}}
  %0 = tile.arange 8 to 8 : tensor<1xi32>
  return
}
// -----
func.func @arange_length() {
  // expected-error @+1 {{'tile.arange' op result length 8 differs from end - start = 16}}
  %0 = tile.arange 0 to 16 : tensor<8xi32>
  return
}
// -----
func.func @arange_float() {
  // expected-error @+1 {{'tile.arange' op result #0 must be statically shaped tensor of signless integer values, but got 'tensor<16xf32>'}}
  %0 = tile.arange 0 to 16 : tensor<16xf32>
  return
}
// -----
// expected-note @+1 {{prior use here}}
func.func @splat_type(%x: f16) {
  // expected-error @+1 {{use of value '%x' expects different type than prior uses: 'f32' vs 'f16'}}
  %0 = tile.splat %x : tensor<8xf32>
  return
}
// -----
func.func @splat_dynamic_shape(%x: f32) {
  // expected-error @+1 {{custom op 'tile.splat' 'result' must be statically shaped tensor of any type values, but got 'tensor<?xf32>'}}
  %0 = tile.splat %x : tensor<?xf32>
  return
}
// -----
func.func @broadcast_elem(%t: tensor<1x8xf32>) {
  // expected-error @+1 {{'tile.broadcast' op element types differ}}
  %0 = tile.broadcast %t : tensor<1x8xf32> -> tensor<4x8xf16>
  return
}
// -----
func.func @broadcast_rank(%t: tensor<8xf32>) {
  // expected-error @+1 {{'tile.broadcast' op source rank 1 differs from result rank 2}}
  %0 = tile.broadcast %t : tensor<8xf32> -> tensor<4x8xf32>
  return
}
// -----
func.func @broadcast_shape(%t: tensor<2x8xf32>) {
  // expected-error @+1 {{'tile.broadcast' op cannot broadcast 2x8 to 4x8}}
  %0 = tile.broadcast %t : tensor<2x8xf32> -> tensor<4x8xf32>
  return
}
// -----
func.func @reshape_elem(%t: tensor<64xf32>) {
  // expected-error @+1 {{'tile.reshape' op element types differ}}
  %0 = tile.reshape %t : tensor<64xf32> -> tensor<8x8xi32>
  return
}
// -----
func.func @reshape_count(%t: tensor<64xf32>) {
  // expected-error @+1 {{'tile.reshape' op cannot reshape 64 (64 elements) to 8x4 (32 elements)}}
  %0 = tile.reshape %t : tensor<64xf32> -> tensor<8x4xf32>
  return
}
// -----
func.func @trans_size(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.trans' op permutation size must equal the tile rank}}
  %0 = tile.trans %t [1, 0, 2] : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}
// -----
func.func @trans_perm(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.trans' op invalid permutation}}
  %0 = tile.trans %t [1, 1] : tensor<4x8xf32> -> tensor<8x8xf32>
  return
}
// -----
func.func @trans_result(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.trans' op result dimension 0 is 4, expected 8}}
  %0 = tile.trans %t [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
// -----
func.func @trans_elem(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.trans' op element types differ}}
  %0 = tile.trans %t [1, 0] : tensor<4x8xf32> -> tensor<8x4xf16>
  return
}
// -----
func.func @load_offsets(%x: memref<?x?xf32>, %i: i64) {
  // expected-error @+1 {{'tile.load' op expected 2 offsets, got 1}}
  %0 = tile.load %x[%i] : memref<?x?xf32> -> tensor<4x8xf32>
  return
}
// -----
func.func @load_rank(%x: memref<?x?xf32>, %i: i64) {
  // expected-error @+1 {{'tile.load' op tile rank 1 differs from tensor rank 2}}
  %0 = tile.load %x[%i, %i] : memref<?x?xf32> -> tensor<32xf32>
  return
}
// -----
func.func @load_elem(%x: memref<?xf32>, %i: i64) {
  // expected-error @+1 {{'tile.load' op tile element type 'f16' differs from tensor element type 'f32'}}
  %0 = tile.load %x[%i] : memref<?xf32> -> tensor<32xf16>
  return
}
// -----
func.func @load_mask_shape(%x: memref<?xf32>, %i: i64, %m: tensor<16xi1>) {
  // expected-error @+1 {{'tile.load' op mask shape 16 does not match tile shape 32}}
  %0 = tile.load %x[%i] mask(%m : tensor<16xi1>) : memref<?xf32> -> tensor<32xf32>
  return
}
// -----
func.func @load_mask_type(%x: memref<?xf32>, %i: i64, %m: tensor<32xi8>) {
  // expected-error @+1 {{'tile.load' op operand #2 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<32xi8>'}}
  %0 = tile.load %x[%i] mask(%m : tensor<32xi8>) : memref<?xf32> -> tensor<32xf32>
  return
}
// -----
func.func @load_other(%x: memref<?xf32>, %i: i64, %p: f16) {
  // expected-error @+1 {{'tile.load' op padding value type 'f16' does not match element type 'f32'}}
  %0 = tile.load %x[%i] other(%p : f16) : memref<?xf32> -> tensor<32xf32>
  return
}
// -----
// expected-note @+1 {{prior use here}}
func.func @load_offset_type(%x: memref<?xf32>, %i: i32) {
  // expected-error @+1 {{use of value '%i' expects different type than prior uses: 'i64' vs 'i32'}}
  %0 = tile.load %x[%i] : memref<?xf32> -> tensor<32xf32>
  return
}
// -----
func.func @load_dynamic_tile(%x: memref<?xf32>, %i: i64) {
  // expected-error @+1 {{'tile.load' op result #0 must be statically shaped tensor of any type values, but got 'tensor<?xf32>'}}
  %0 = tile.load %x[%i] : memref<?xf32> -> tensor<?xf32>
  return
}
// -----
func.func @store_offsets(%x: memref<?x?xf32>, %i: i64, %v: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.store' op expected 2 offsets, got 3}}
  tile.store %v, %x[%i, %i, %i] : tensor<4x8xf32>, memref<?x?xf32>
  return
}
// -----
func.func @store_rank(%x: memref<?xf32>, %i: i64, %v: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.store' op tile rank 2 differs from tensor rank 1}}
  tile.store %v, %x[%i] : tensor<4x8xf32>, memref<?xf32>
  return
}
// -----
func.func @store_elem(%x: memref<?xf16>, %i: i64, %v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.store' op tile element type 'f32' differs from tensor element type 'f16'}}
  tile.store %v, %x[%i] : tensor<8xf32>, memref<?xf16>
  return
}
// -----
func.func @store_mask(%x: memref<?xf32>, %i: i64, %v: tensor<8xf32>, %m: tensor<4xi1>) {
  // expected-error @+1 {{'tile.store' op mask shape 4 does not match tile shape 8}}
  tile.store %v, %x[%i] mask(%m : tensor<4xi1>) : tensor<8xf32>, memref<?xf32>
  return
}
// -----
func.func @gather_count(%x: memref<?x?xf32>, %idx: tensor<8xi32>) {
  // expected-error @+1 {{'tile.gather' op expected 2 index tiles, got 1}}
  %0 = tile.gather %x[%idx] : memref<?x?xf32>, tensor<8xi32> -> tensor<8xf32>
  return
}
// -----
func.func @gather_index_shape(%x: memref<?xf32>, %idx: tensor<4xi32>) {
  // expected-error @+1 {{'tile.gather' op index tile shape 4 does not match tile shape 8}}
  %0 = tile.gather %x[%idx] : memref<?xf32>, tensor<4xi32> -> tensor<8xf32>
  return
}
// -----
func.func @gather_elem(%x: memref<?xf32>, %idx: tensor<8xi32>) {
  // expected-error @+1 {{'tile.gather' op tile element type 'i32' differs from tensor element type 'f32'}}
  %0 = tile.gather %x[%idx] : memref<?xf32>, tensor<8xi32> -> tensor<8xi32>
  return
}
// -----
func.func @gather_index_type(%x: memref<?xf32>, %idx: tensor<8xf32>) {
  // expected-error @+1 {{'tile.gather' op operand #1 must be variadic of statically shaped tensor of signless integer values, but got 'tensor<8xf32>'}}
  %0 = tile.gather %x[%idx] : memref<?xf32>, tensor<8xf32> -> tensor<8xf32>
  return
}
// -----
func.func @gather_other(%x: memref<?xf32>, %idx: tensor<8xi32>, %p: i32) {
  // expected-error @+1 {{'tile.gather' op padding value type 'i32' does not match element type 'f32'}}
  %0 = tile.gather %x[%idx] other(%p : i32) : memref<?xf32>, tensor<8xi32> -> tensor<8xf32>
  return
}
// -----
func.func @scatter_mask(%x: memref<?xf32>, %idx: tensor<8xi32>, %v: tensor<8xf32>, %m: tensor<2x4xi1>) {
  // expected-error @+1 {{'tile.scatter' op mask shape 2x4 does not match tile shape 8}}
  tile.scatter %v, %x[%idx] mask(%m : tensor<2x4xi1>) : tensor<8xf32>, memref<?xf32>, tensor<8xi32>
  return
}
// -----
func.func @scatter_elem(%x: memref<?xf32>, %idx: tensor<8xi32>, %v: tensor<8xf16>) {
  // expected-error @+1 {{'tile.scatter' op tile element type 'f16' differs from tensor element type 'f32'}}
  tile.scatter %v, %x[%idx] : tensor<8xf16>, memref<?xf32>, tensor<8xi32>
  return
}
// -----
func.func @atomic_indices(%x: memref<?x?xf32>, %i: i64, %s: f32) {
  // expected-error @+1 {{'tile.atomic_rmw' op expected 2 indices, got 1}}
  tile.atomic_rmw add %s, %x[%i] : f32, memref<?x?xf32>
  return
}
// -----
func.func @atomic_value(%x: memref<?xf32>, %i: i64, %s: f16) {
  // expected-error @+1 {{'tile.atomic_rmw' op value type 'f16' differs from tensor element type 'f32'}}
  tile.atomic_rmw max %s, %x[%i] : f16, memref<?xf32>
  return
}
// -----
func.func @atomic_elem(%x: memref<?xf16>, %i: i64, %s: f16) {
  // expected-error @+1 {{'tile.atomic_rmw' op atomics support f32, f64, i32 and i64 tensors, not 'f16'}}
  tile.atomic_rmw add %s, %x[%i] : f16, memref<?xf16>
  return
}
// -----
func.func @atomic_kind(%x: memref<?xf32>, %i: i64, %s: f32) {
  // expected-error @+2 {{custom op 'tile.atomic_rmw' expected ::mlir::tessera::tile::AtomicKind to be one of: add, max, min}}
  // expected-error @+1 {{custom op 'tile.atomic_rmw' failed to parse Tile_AtomicKindAttr parameter 'value' which is to be a `::mlir::tessera::tile::AtomicKind`}}
  tile.atomic_rmw mul %s, %x[%i] : f32, memref<?xf32>
  return
}
// -----
func.func @dot_rank(%a: tensor<16xf16>, %b: tensor<16x8xf16>, %c: tensor<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op operands must be 2-D tiles}}
  %0 = tile.dot %a, %b, %c : tensor<16xf16>, tensor<16x8xf16> -> tensor<16x8xf32>
  return
}
// -----
func.func @dot_inner(%a: tensor<16x32xf16>, %b: tensor<16x8xf16>, %c: tensor<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op inner dimensions differ: 16x32 x 16x8}}
  %0 = tile.dot %a, %b, %c : tensor<16x32xf16>, tensor<16x8xf16> -> tensor<16x8xf32>
  return
}
// -----
func.func @dot_acc(%a: tensor<16x32xf16>, %b: tensor<32x8xf16>, %c: tensor<8x8xf32>) {
  // expected-error @+1 {{'tile.dot' op accumulator shape 8x8 does not match 16x8}}
  %0 = tile.dot %a, %b, %c : tensor<16x32xf16>, tensor<32x8xf16> -> tensor<8x8xf32>
  return
}
// -----
func.func @dot_operand_types(%a: tensor<16x32xf16>, %b: tensor<32x8xbf16>, %c: tensor<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op operand element types differ: 'f16' and 'bf16'}}
  %0 = tile.dot %a, %b, %c : tensor<16x32xf16>, tensor<32x8xbf16> -> tensor<16x8xf32>
  return
}
// -----
func.func @dot_float_int_acc(%a: tensor<16x32xf16>, %b: tensor<32x8xf16>, %c: tensor<16x8xi32>) {
  // expected-error @+1 {{'tile.dot' op floating-point operands need a floating-point accumulator, got 'i32'}}
  %0 = tile.dot %a, %b, %c : tensor<16x32xf16>, tensor<32x8xf16> -> tensor<16x8xi32>
  return
}
// -----
func.func @dot_int_acc(%a: tensor<16x32xi8>, %b: tensor<32x8xi8>, %c: tensor<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op integer operands need an i32 accumulator, got 'f32'}}
  %0 = tile.dot %a, %b, %c : tensor<16x32xi8>, tensor<32x8xi8> -> tensor<16x8xf32>
  return
}
// -----
func.func @dot_narrow_acc(%a: tensor<16x32xf32>, %b: tensor<32x8xf32>, %c: tensor<16x8xf16>) {
  // expected-error @+1 {{'tile.dot' op accumulator type 'f16' is narrower than operand type 'f32'}}
  %0 = tile.dot %a, %b, %c : tensor<16x32xf32>, tensor<32x8xf32> -> tensor<16x8xf16>
  return
}
// -----
func.func @reduce_axis(%t: tensor<16x8xf32>) {
  // expected-error @+1 {{'tile.reduce' op axis 2 out of range for a rank-2 tile}}
  %0 = tile.reduce sum %t {axis = 2 : i32} : tensor<16x8xf32> -> tensor<16xf32>
  return
}
// -----
func.func @reduce_elem(%t: tensor<16x8xf32>) {
  // expected-error @+1 {{'tile.reduce' op element types differ}}
  %0 = tile.reduce max %t {axis = 1 : i32} : tensor<16x8xf32> -> tensor<16xf16>
  return
}
// -----
func.func @reduce_shape(%t: tensor<16x8xf32>) {
  // expected-error @+1 {{'tile.reduce' op result shape 16, expected 8}}
  %0 = tile.reduce min %t {axis = 0 : i32} : tensor<16x8xf32> -> tensor<16xf32>
  return
}
// -----
func.func @reduce_kind(%t: tensor<16x8xf32>) {
  // expected-error @+2 {{custom op 'tile.reduce' expected ::mlir::tessera::tile::ReduceKind to be one of: sum, max, min}}
  // expected-error @+1 {{custom op 'tile.reduce' failed to parse Tile_ReduceKindAttr parameter 'value' which is to be a `::mlir::tessera::tile::ReduceKind`}}
  %0 = tile.reduce prod %t {axis = 0 : i32} : tensor<16x8xf32> -> tensor<8xf32>
  return
}
