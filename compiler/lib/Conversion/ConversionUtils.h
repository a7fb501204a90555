//===- ConversionUtils.h - Helpers shared by the conversion passes --------===//
//
// Internal to compiler/lib/Conversion.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_CONVERSION_CONVERSIONUTILS_H
#define TESSERA_LIB_CONVERSION_CONVERSIONUTILS_H

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include <cstdint>
#include <optional>

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
}
namespace gpu {
class GPUFuncOp;
}
} // namespace mlir

namespace mlir::tessera {

/// Moves the tile kernel `f` into a `gpu.func` kernel of `threads` threads
/// in a `gpu.module` of its own (with the constant globals it reads), with
/// `tile.program_id` / `tile.num_programs` as `gpu.block_id` /
/// `gpu.grid_dim` and `gpu.return` for `func.return`. `f` is erased.
///
/// A kernel with `tile.persistent` or `tile.program_group` is scheduled:
/// it takes the extents of its grid of programs as three i64 arguments
/// after its own (`tile.logical_grid`), and its blocks run the programs in
/// grouped order along grid axis 0, looping over them with `persistent`
/// (an scf.for marked `tile.program_loop` around the body). Returns null
/// after an error when such a kernel has unstructured control flow.
gpu::GPUFuncOp outlineKernel(ModuleOp module, func::FuncOp f, int64_t threads);

/// The threads of a block of tile kernel `f`, `tile.num_warps` x 32; an
/// error at `f` beyond CUDA's 1024.
FailureOr<int64_t> blockThreads(func::FuncOp f);

/// Whether `op` (or anything nested in it) may write, allocate or free
/// memory; operations with unknown effects may (block barriers do not).
bool writesMemory(Operation *op);

/// Whether `t` is a memref in the GPU workgroup (shared) address space.
bool isWorkgroupMemRef(Type t);

/// Whether `v` is, or is a subview / address-space cast / select of, a
/// workgroup memref.
bool reachesSharedMemory(Value v);

/// Whether `t` has a static innermost stride of 1.
bool hasUnitInnerStride(MemRefType t);

/// i1: the first element of `m` and every outer stride are `align`-byte
/// aligned (elements of `bytes` bytes), so every chunk that starts at a
/// multiple of align/bytes in the innermost dimension is.
Value alignedAt(OpBuilder &b, Location l, Value m, int64_t bytes,
                int64_t align);

/// Where the shape symbol of dimension `d` of argument `arg` first occurs
/// among the arguments' `tile.dim_symbols` (`symbols[i]`, null for
/// arguments without): (argument, dimension). Dimensions with one symbol
/// are equal at launch (the runtime checks it). (arg, d) itself when it has
/// no symbol.
std::pair<unsigned, int64_t> firstWithSymbol(ArrayRef<ArrayAttr> symbols,
                                             unsigned arg, int64_t d);
/// Where the shape symbol `symbol` first occurs among the arguments'
/// `tile.dim_symbols`: (argument, dimension); nullopt when nowhere.
std::optional<std::pair<unsigned, int64_t>>
firstWithSymbol(ArrayRef<ArrayAttr> symbols, StringAttr symbol);

/// The NVVM intrinsic `name` applied to `operands` (f32 scalars, or f32
/// vectors of one shape) element by element: one call on the scalars, or a
/// vector of one call per position, in element order.
Value callF32Intrinsic(OpBuilder &b, Location l, StringRef name,
                       ValueRange operands);

/// The byte address of memref[indices], as an index: aligned pointer +
/// (offset + sum(i_d * stride_d)) * element size.
Value byteAddress(OpBuilder &b, Location l, Value memref, ValueRange indices);

/// Under `tile.index32`, a bound on |v| for the integer scalar `v` from how
/// it is computed: tensor extents (below 2^31), program ids and counts
/// (within the kernel's `tile.grid_bound` or the `upper_bound` of their
/// gpu ops, else below 2^31), thread ids, constants, casts, sums,
/// differences, products, minima of non-negative values and loop induction
/// variables (between their bounds); nullopt when unknown.
std::optional<int64_t> index32Bound(Value v, unsigned depth = 0);

/// Whether the integer scalar or tile `v` is known to be non-negative from
/// how it is computed: extents, program and thread ids, non-negative
/// constants and aranges, splats and casts of those, unsigned extensions,
/// induction variables from a non-negative lower bound, minima and maxima
/// of those, and sums and products of those whose bound stays below the
/// sign bit of their type.
bool knownNonNegative(Value v, unsigned depth = 0);

/// The largest of `want`, want/2, ... (at least `least`) that divides
/// `extent`; 0 when none does.
int64_t fittingTile(int64_t extent, int64_t want, int64_t least);

/// A wgmma.mma_async as the sim's tessera_sim_wgmma reads it
/// (runtime/lib/Sim/FiberScheduler.h), less its accumulator chain: N,
/// the input format, A or B MN-major (transposed), scale-d, A from
/// registers. None for inputs the sim does not emulate.
std::optional<int64_t> simWgmmaConfig(NVVM::WGMMATypes in, int64_t n,
                                      bool transA, bool transB, bool scaleD,
                                      bool registerA);

/// Registers per thread a warp-specialised kernel's producer warpgroup
/// keeps (setmaxnreg.dec): it issues TMA copies from coordinates.
constexpr int64_t kProducerRegisters = 40;

/// Registers per thread its `consumerWarps` consumer warps take
/// (setmaxnreg.inc) once the producer has released its own: what one block
/// of consumerWarps * 32 + 128 threads may hold, less the producer's, at
/// most 240 and a multiple of 8 (setmaxnreg's granule).
int64_t consumerRegisters(int64_t consumerWarps);

/// Shared-memory wavefronts of one warp's accesses of `width` bytes at
/// `laneAddresses` (byte offsets, lane i's at position i), as the GPU
/// serves them (tessera/Support/SharedBanks.h, the sim's model too).
int64_t sharedWavefronts(ArrayRef<int64_t> laneAddresses, int64_t width);

} // namespace mlir::tessera

#endif // TESSERA_LIB_CONVERSION_CONVERSIONUTILS_H
