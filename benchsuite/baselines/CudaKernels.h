//===- CudaKernels.h - CUDA C++ baselines compiled with NVRTC ---*- C++ -*-===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The GPU counterpart of Loops.h for the memory-bound benchmark cases: plain
/// CUDA C++ kernels, the "what a competent engineer writes in CUDA" baseline
/// that `tessera-bench` runs on the `cuda` device beside each Tessera kernel.
/// Each function returns a `tessera::CudaKernelSource` for
/// `Runtime::compileCuda`, so the baseline is launched, checked and timed
/// through the same `Kernel::launch` / `launchTimed` calls as the tile kernel
/// it is compared with.
///
/// Conventions shared by every kernel here:
///  - f32 data, 64-bit (`long long`) indices and sizes; `int` parameters of
///    the signatures are 64-bit, `float` ones 32-bit.
///  - Blocks of kBlockSize threads. The sources carry no grid: pass
///    `LaunchOptions::grid` from elementwiseGrid(), reduceGrid() or
///    rowGrid().
///  - Tensors arrive as pointers to their first element and are declared 1-D
///    over their whole span (strided kernels index `i * stride` themselves).
///    Outputs must not overlap inputs (the pointers are `__restrict__`),
///    except axpy's `y`, which is both.
///  - An unknown `op` gives a source that does not compile: compileCuda
///    returns INVALID_ARGUMENT naming the op.
///
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCHSUITE_BASELINES_CUDAKERNELS_H
#define TESSERA_BENCHSUITE_BASELINES_CUDAKERNELS_H

#include "tessera/runtime/Runtime.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::bench::cudakernels {

/// Threads per block of every kernel here (CudaKernelSource::block).
inline constexpr int kBlockSize = 256;

/// Blocks per streaming multiprocessor of the grid-stride reductions.
inline constexpr int kReduceBlocksPerSM = 4;

/// The ops each family accepts, in the order the benchmarks list them.
inline constexpr std::array<std::string_view, 5> kElementwiseOps = {
    "copy", "scale", "add", "triad", "mul"};
inline constexpr std::array<std::string_view, 4> kGatherOps = {"copy", "scale",
                                                               "add", "triad"};
inline constexpr std::array<std::string_view, 4> kReduceOps = {"dot", "sumsq",
                                                               "sum", "max"};

/// Element-wise over `n` logical elements `stride` elements apart (stride 1
/// is contiguous; element i is at index i * stride of every array):
/// "copy" c = a, "scale" c = s*a, "add" c = a + b, "triad" c = a + s*b,
/// "mul" c = a*b. One thread per element.
/// Signature: `a: Tensor["A", f32], b: Tensor["B", f32], c: Tensor["C", f32],
/// s: float, n: int, stride: int` (copy and scale ignore b, which is still
/// passed). Grid: elementwiseGrid(n).
CudaKernelSource elementwise(const std::string &op);

/// Gathers with 32-bit indices, written densely: c[i] = a[idx[i]] ("copy"),
/// s*a[idx[i]] ("scale"), a[idx[i]] + b[idx[i]] ("add"),
/// a[idx[i]] + s*b[idx[i]] ("triad"). Indices must be in range.
/// Signature: `a: Tensor["A", f32], b: Tensor["B", f32],
/// idx: Tensor["N", i32], c: Tensor["N", f32], s: float, n: int`.
/// Grid: elementwiseGrid(n).
CudaKernelSource gather(const std::string &op);

/// y[i*stride] += alpha * x[i*stride] for i in [0, n).
/// Signature: `x: Tensor["X", f32], y: Tensor["Y", f32], alpha: float,
/// n: int, stride: int`. Grid: elementwiseGrid(n).
CudaKernelSource axpy();

/// Reductions of n elements into out[0]: "dot" sum a[i]*b[i], "sumsq"
/// sum a[i]^2 (the 2-norm without its final sqrt), "sum" sum a[i], "max"
/// max a[i]. Grid-stride loop with four independent accumulators per thread,
/// warp shuffles and shared memory per block, then one atomic per block into
/// out[0], which is accumulated into: the caller sets out[0] to
/// reduceIdentity(op) (0, or -inf for max) before every launch. The order of
/// the atomics varies, so sums differ in the last bits between runs. NaN
/// inputs give an unspecified max.
/// Signature: `a: Tensor["N", f32], b: Tensor["N", f32],
/// out: Tensor["one", f32], n: int` (b is read only by dot; pass any tensor
/// of n elements, a itself for instance). Grid: reduceGrid(n).
CudaKernelSource reduce(const std::string &op);

/// The value out[0] must hold before a reduce(op) launch: -inf for "max",
/// otherwise 0.
float reduceIdentity(const std::string &op);

/// Numerically stable softmax of each row of x [rows x cols] into y, one
/// block per row: max pass, exp-sum pass (expf), write pass. With
/// causal != 0 the rows are a stack of [rowsPerMatrix x cols] attention
/// matrices, row r is query q = r % rowsPerMatrix, and columns k > q are
/// written 0 and never read.
/// Signature: `x: Tensor["X", f32], y: Tensor["Y", f32], rows: int,
/// cols: int, rowsPerMatrix: int, causal: int`. Grid: rowGrid(rows).
CudaKernelSource softmax();

/// Layer norm of each row of x [rows x hidden] into y, one block per row:
/// mean pass, biased variance of the centred values, then
/// y = (x - mean) * rsqrt(var + eps) * w + b.
/// Signature: `x: Tensor["X", f32], w: Tensor["H", f32], b: Tensor["H", f32],
/// y: Tensor["Y", f32], rows: int, hidden: int, eps: float`.
/// Grid: rowGrid(rows).
CudaKernelSource layerNorm();

/// Blocks for elementwise(), gather() and axpy(): cdiv(n, kBlockSize).
std::array<int64_t, 3> elementwiseGrid(int64_t n);
/// Blocks for reduce(): cdiv(n, kBlockSize), at most kReduceBlocksPerSM
/// blocks per SM of a device with `computeUnits` SMs (132: an H100 SXM; pass
/// DeviceInfo::computeUnits).
std::array<int64_t, 3> reduceGrid(int64_t n, int computeUnits = 132);
/// Blocks for softmax() and layerNorm(): one per row.
std::array<int64_t, 3> rowGrid(int64_t rows);

} // namespace tessera::bench::cudakernels

#endif // TESSERA_BENCHSUITE_BASELINES_CUDAKERNELS_H
