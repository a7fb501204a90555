//===- Passes.td - Tessera conversions ---------------------*- tablegen -*-===//

#ifndef TESSERA_CONVERSION_PASSES_TD
#define TESSERA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FormProgramLoopPass : Pass<"tessera-form-program-loop", "::mlir::ModuleOp"> {
  let summary = "Runs a chunk of program instances per call on the CPU";
  let description = [{
    For every `tile.kernel` function `@k`, replaces `tile.program_id` and
    `tile.num_programs` with six trailing i64 arguments and adds
    `@k_chunk(args..., %begin, %end, %g0, %g1, %g2)`, which loops over the
    linear program ids `[begin, end)` of a `g0 x g1 x g2` grid (axis 0
    fastest) and calls `@k` for each. `@k` becomes private so that the
    inliner folds it into the loop.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def ConvertTileToLinalgPass : Pass<"tessera-convert-tile-to-linalg"> {
  let summary = "Lowers tile ops to linalg, tensor, memref and bufferization";
  let description = [{
    Block loads become clipped `memref.subview`s read through
    `bufferization.to_tensor` and padded with the load's `other` value
    (`tensor.pad`), so out-of-bounds elements are never read. Stores write
    only the in-bounds slice (`bufferization.materialize_in_destination`);
    masked stores and scatters become loops of guarded `memref.store`.
    `tile.dot` becomes `linalg.matmul`, `tile.reduce` `linalg.reduce` with
    NaN-propagating `arith.maximumf`/`minimumf`, and the shape ops become
    `linalg.fill`/`broadcast`/`transpose` and `tensor` reshapes. Atomics are
    left for `tessera-lower-tile-atomics` (they touch no tensors, and
    lowering them after buffer deallocation keeps their regions out of its
    way); `tile.program_id`/`num_programs` are left for
    `tessera-form-program-loop`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def LowerTileAtomicsPass : Pass<"tessera-lower-tile-atomics"> {
  let summary = "Lowers tile.atomic_rmw to bounds-checked memref atomics";
  let description = [{
    An in-bounds `tile.atomic_rmw` becomes `memref.atomic_rmw` (`addf`/`addi`,
    NaN-propagating `maximumf`/`minimumf`, or signed `maxs`/`mins`).
    Out-of-bounds indices skip the update.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def ExpandFloat8CastsPass : Pass<"tessera-expand-float8-casts"> {
  let summary = "Rewrites fp8 casts and constants as integer arithmetic";
  let description = [{
    LLVM has no fp8 types, so scalar `arith.extf` from and `arith.truncf` to
    `f8E4M3FN`/`f8E5M2` become bit manipulation on i8/i32 (round to nearest
    even; E4M3FN overflow and infinities give NaN, E5M2 overflow gives
    infinity), and fp8 constants become i8 constants behind a bitcast; an
    extension to f16 (exact) places the bits in an f16 directly (E5M2 is
    the upper byte of one; E4M3FN is scaled by 2^8 in f32). NaN payloads
    are not kept (a NaN stays a NaN). Runs
    on scalar code, after linalg has been lowered to loops; casts of 1-D
    vectors are done element by element.

    With `f16x2-conversions` (GPUs of compute capability 8.9 and later), a
    1-D vector of an even number of fp8 elements widens to f16 two at a
    time with `nvvm.convert.f8x2.to.f16x2` (PTX `cvt.rn.f16x2.e4m3x2` /
    `.e5m2x2`, exact) instead.
  }];
  let options = [
    Option<"f16x2Conversions", "f16x2-conversions", "bool", "false",
           "Widen pairs of fp8 elements to f16 with the sm_89+ conversion">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
}


def VectorizeMatmulPass : Pass<"tessera-vectorize-matmul", "::mlir::func::FuncOp"> {
  let summary = "Register-tiles and vectorises static matmuls on buffers";
  let description = [{
    Each `linalg.matmul` on statically shaped memrefs whose operands are
    f32, f16 or bf16 and whose accumulator is f32 is tiled into
    `mr x nr x 1` micro-tiles (loops over M, N, then K), and every
    micro-tile is vectorised into `vector.transfer_read`s and a
    `vector.contract`. The accumulator's reads and writes are then hoisted
    out of the K loop, so it stays in registers, and the contraction is
    lowered to outer products, i.e. one FMA per accumulator row and K
    step with the A element broadcast. `mr` and `nr` shrink to divisors of
    the tile's extents; a matmul whose N extent has no divisor >= 8 among
    them is left alone (it lowers to scalar loops).
  }];
  let options = [
    Option<"mr", "mr", "int64_t", "8", "Micro-tile rows (M)">,
    Option<"nr", "nr", "int64_t", "32", "Micro-tile columns (N)">
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}


def VectorizeReductionsPass
    : Pass<"tessera-vectorize-reductions", "::mlir::func::FuncOp"> {
  let summary = "Vectorises innermost-axis reductions on buffers (CPU)";
  let description = [{
    A `linalg.reduce` on a statically shaped memref whose only reduced
    dimension is the innermost one (unit stride) and whose combiner is one
    of `arith.addf/addi/mulf/muli/maximumf/minimumf/maxsi/minsi/maxnumf/
    minnumf` becomes, for every outer index, an `scf.for` over chunks of
    `width` elements that combines `vector.transfer_read`s into a vector
    accumulator, followed by one `vector.reduction` with the reduce's
    initial value as its accumulator. Plain loops would leave one
    loop-carried scalar dependence per element that LLVM does not vectorise
    for floats. Sums are therefore reassociated (as on the GPU, whose
    reductions are trees); NaN propagation of `maximumf`/`minimumf` is kept.
    Reductions whose extent has no divisor >= 4 among width, width/2, ...
    are left alone.
  }];
  let options = [
    Option<"width", "width", "int64_t", "64",
           "Elements per chunk for 32-bit types (halved for 64-bit types)">
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}


def CopyToLinalgPass : Pass<"tessera-copy-to-linalg"> {
  let summary = "Rewrites memref.copy as linalg.copy";
  let description = [{
    `memref.copy` (left by bufferization for tensor slices) becomes
    `linalg.copy`, which then lowers to plain loops (CPU: the LLVM
    vectoriser handles them; GPU: a parallel loop spread over the threads)
    instead of a call into the MLIR runner-utils library.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def GPUVectorizeElementwisePass
    : Pass<"tessera-gpu-vectorize-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Vector global/shared accesses of up to 16 bytes per thread";
  let description = [{
    Runs on the tile kernels' outermost `scf.parallel` loops just before
    `tessera-distribute-to-gpu`. A loop whose body is element-wise along
    its innermost dimension (lower bound 0, step 1) is rewritten to work on
    chunks of W elements: every load and store indexed by the innermost
    induction variable (last index; the others independent of it) of a
    memref with unit innermost stride becomes a `vector.load` /
    `vector.store` of W elements with a W-element alignment
    (`ld.global.v4.f32` and the like in PTX), element-wise arithmetic on
    those values becomes vector arithmetic, and values independent of the
    innermost index (outer-index loads, scalars) are computed once per
    chunk and broadcast. W is 16 bytes over the widest accessed element
    (4 for f32, 8 for f16 data), at most the kernel's `tile.vector_width`
    (the `VECTOR_WIDTH` tuning parameter), and at least 2.

    The rewrite is versioned on alignment at run time: when the first
    element and every outer stride of each vector-accessed memref are
    aligned to its chunk, the chunked loop runs (over ceildiv(n, W) chunks
    per row; the last, partial chunk of a row element by element);
    otherwise the original loop. Loops the pass leaves alone: bodies with
    other side effects or regions, stores independent of the innermost
    index, index arithmetic on it, fp8 data, loads of a memref the loop
    also stores to at a fixed index, and plain tile loads from global
    memory into a tile buffer (`tessera-gpu-async-copy` turns those into
    cp.async).
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def DistributeTilesPass : Pass<"tessera-distribute-tiles", "::mlir::ModuleOp"> {
  let summary = "Lowers tiles with distributed layouts to per-thread registers";
  let description = [{
    Runs after `tessera-assign-layouts`. Each `tile.kernel` function becomes
    a `gpu.func` kernel of `tile.num_warps x 32` threads in a `gpu.module`
    of its own, and every tile becomes, in each thread, a vector of the
    elements its layout assigns to that thread (`vector<8xf32>` for a
    1024-element tile on 128 threads):

    - element-wise arithmetic, casts, selects, splats and splat constants
      act on those vectors with no data movement and no barrier;
      `tile.arange` is computed from the thread id; unit-dimension
      reshapes change nothing;
    - `tile.load` / `tile.store` move each run of consecutive registers
      along the tensor's unit-stride innermost dimension with one vector
      access of up to 16 bytes (`ld.global.v4.b32`), bounds-checked per
      run; threads that only repeat other threads' elements (a tile
      smaller than its layout) do not store; a load whose elements only
      reach stores with the same bounds gets no padding value (nothing
      can read it), so its out-of-bounds lanes cost nothing;
    - `tile.reduce` combines a thread's own elements, then the lanes along
      the axis with butterfly `gpu.shuffle`s, then, when warps lie along
      the axis, the warps through a small shared buffer with one barrier
      (a second one only when the buffer is reused in a loop with nothing
      else in between);
    - `tile.convert_layout` writes the tile to shared memory and reads it
      back in the new layout (two barriers). Between two layouts whose
      threads hold runs of consecutive elements along the last dimension
      (an accumulator's pairs, a blocked layout's vectors) each run is one
      vector access; the row pitch is padded by whole 16-byte chunks, the
      padding with the fewest shared-memory wavefronts for a warp's
      writes and reads; the tile goes through in rounds of rows (at most
      four) that fit in the bytes the kernel already holds at its peak
      where they can, such as a finished K loop's rings. A conversion
      right before a store hands each run it reads back to the store at
      once, so the converted tile is never whole in registers;
    - `tile.dot` (16-bit inputs, f32 accumulator in the `#tile.mma`
      layout) issues one `nvgpu.mma.sync` m16n8k16 per instruction tile and
      K step. An operand loaded only to feed the dot (through reshapes,
      transpositions and its conversion to the operand layout) never
      enters registers as a tile: its block is copied into XOR-swizzled
      shared memory, 16 bytes per `cp.async` (zero-filled outside the
      tensor), and each K step reads its fragments with `ldmatrix` (x4,
      `.trans` when the stored block runs the other way). In a loop whose
      copies depend only on the induction variable, the copies run
      `tile.num_stages - 1` iterations ahead in a ring of that many slots,
      with one `cp.async.wait_group` and one barrier per iteration. Other
      operands convert to the operand layouts through shared memory.
      With `warpgroup-mma` (sm_90a), a dot whose accumulator lays all warps
      along M and whose B operand comes from shared memory issues
      `wgmma.mma_async` m64nNk16 per warpgroup, 64-row block and K step
      instead, reading its shared operands through matrix descriptors
      (A in registers instead when the kernel computed it in the operand
      layout of the accumulator's own mma layout, as attention's P: the
      warp's slice of wgmma's A fragment is mma.sync's m16k16): their
      blocks are copied in atoms of at most 64 columns (128 bytes) with the
      hardware's 128-, 64- or 32-byte swizzle, and each dot is one
      `wgmma.fence`, its products, one commit group and a wait for it
      (after a `fence.proxy.async` that makes the copies visible to the
      tensor cores). The products are written by hand in NVVM rather than
      through `nvgpu.warpgroup.mma`, which keeps the accumulator opaque,
      bundles its own fence and wait, and takes its operands from TMA
      tensor maps only; NVVM's `wgmma.mma_async` has no register-A form,
      which is therefore inline PTX marked `tile.wgmma` (the instruction
      packed for the sim's lowering). A zero accumulator is not moved into
      registers: the first K step ignores it (scale-d 0). fp8 operands
      that tessera-widen-float8-dots leaves as they are (both K innermost)
      issue `wgmma.mma_async` m64nNk32 on both blocks as copied, in atoms
      of at most 128 bytes (wgmma reads 8-bit operands K-major only); a
      widened fp8 block (its uses all `arith.extf` to f16) is loaded into
      registers, widened there and stored into its swizzled block each
      time, never copied ahead. f32 dots of a kernel of precision "tf32"
      (which tessera-assign-layouts accepts only with A's K innermost)
      issue `wgmma.mma_async` m64nNk8 on tf32 in the same way: the tensor
      cores read each f32 as stored, keeping its top 10 mantissa bits. A B
      block stored [K, N] (N innermost; wgmma reads tf32 K-major only) is
      loaded into registers and stored transposed, an element per store,
      into a [N, K] block swizzled along K each time, never copied ahead. An fp8 or tf32 dot that cannot become wgmma is an
      error. With
      `tensor-copies` as well, the pipelined copies of those operands in a
      loop that no other loop encloses go
      through the tensor memory accelerator instead of `cp.async`: one
      `nvgpu.tma.async.load` per atom into the ring slot, issued by thread
      0 after an `mbarrier.arrive.expect_tx` of the stage's bytes on the
      slot's mbarrier; every thread waits on that mbarrier with the
      phase parity of the ring's pass (flipped each time it wraps). Each
      tensor map is one more kernel argument (`!llvm.ptr`, a 128-byte
      grid constant once lowered to NVVM) appended after the others;
      `tile.tensor_maps` on the kernel says, per added argument, the
      argument whose tensor it maps, the box and the swizzle, for the
      runtime to encode (`cuTensorMapEncodeTiled`). The argument is cast
      to `!nvgpu.tensormap.descriptor` because gpu-to-nvvm has no
      conversion for that type as a kernel argument;
    - scalar code runs on every thread; scalar code that writes memory
      (atomics) runs on thread 0.

    Vector accesses need aligned tensors. The kernel tests once, at entry,
    that every tensor it accesses with vectors has an aligned first
    element, aligned outer strides and a row length that is a multiple of
    the vector, and runs a copy of its body with vector accesses when they
    do and one with element accesses when they do not.
  }];
  let options = [
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t", "232448",
           "Shared memory available to one block (bytes); 0: not checked "
           "here (the GPU pipeline checks it per architecture)">,
    Option<"maxTileRegisters", "max-tile-registers", "int64_t", "128",
           "32-bit registers one tile may take per thread; a kernel over "
           "the limit is left unlowered with its need in "
           "`tile.tile_registers` (0: no limit)">,
    Option<"warpgroupMma", "warpgroup-mma", "bool", "false",
           "Lower dots whose B operand is in shared memory to wgmma "
           "(sm_90a)">,
    Option<"tensorCopies", "tensor-copies", "bool", "true",
           "With warpgroup-mma: copy the operand blocks of pipelined "
           "wgmma loops with TMA (cp.async.bulk.tensor) and mbarriers">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def DistributeToGPUPass : Pass<"tessera-distribute-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Maps bufferized tile programs onto GPU thread blocks";
  let description = [{
    Runs after bufferization and `convert-linalg-to-parallel-loops`. Each
    `tile.kernel` function becomes a `gpu.func` kernel in its own
    `gpu.module`, one program instance per thread block of
    `tile.num_warps x 32` threads:

    - `tile.program_id` / `tile.num_programs` become `gpu.block_id` /
      `gpu.grid_dim`;
    - every outermost `scf.parallel` (one per tile operation) is spread
      over the block's threads (linear ids strided by the thread count,
      consecutive threads on consecutive innermost elements, so global
      accesses coalesce), followed by a `gpu.barrier`;
    - other operations that write memory (scalar reductions, masked-store
      loop nests, atomics) run on thread 0 only, followed by a barrier;
      pure scalar code runs redundantly on every thread;
    - tile buffers (`memref.alloc`) become views of the block's dynamic
      shared memory (`gpu.dynamic_shared_memory`); buffers whose live
      ranges (program order, whole loops for buffers that outlive them,
      extended to the next block-wide barrier) do not overlap share bytes
      (first fit, largest first); a buffer allocated in a loop and carried
      to the next iteration gets two alternating copies; the arena's size
      is checked against `max-shared-bytes` and a kernel that does not fit
      is rejected with the number of bytes it needs;
    - a workgroup-space `memref.alloca` is refused (MLIR would silently make
      it thread-local);
    - constant globals the kernel reads are copied into its module.
  }];
  let options = [
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t", "232448",
           "Shared memory available to one block (bytes); 0: not checked "
           "here (the GPU pipeline checks it per architecture)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}


def OutlineSimtKernelsPass : Pass<"tessera-outline-simt-kernels", "::mlir::ModuleOp"> {
  let summary = "Moves SIMT programs into gpu.func kernels";
  let description = [{
    A `tile.kernel` function marked `tile.simt` runs one program instance
    per GPU thread: its body already uses the gpu dialect (`gpu.thread_id`,
    `gpu.lane_id`, `gpu.subgroup_reduce`, `gpu.barrier`) and element-wise
    `memref.load` / `memref.store`. It becomes a `gpu.func` kernel of
    `tile.num_warps x 32` threads in its own `gpu.module`, with
    `tile.program_id` / `tile.num_programs` as `gpu.block_id` /
    `gpu.grid_dim` (as for tile programs). Each workgroup-space
    `memref.alloca` (`tile.alloc_shared`) becomes a view of the block's
    dynamic shared memory at a 16-byte aligned offset of its own, made at
    the kernel's entry; the total is the kernel's `tile.shared_bytes`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def ExpandArithForGPUPass : Pass<"tessera-expand-arith-for-gpu"> {
  let summary = "Expands the arith ops NVPTX cannot lower, keeping min/max";
  let description = [{
    Upstream `arith-expand{include-bf16=true}` without its rewrite of
    `arith.maximumf` / `arith.minimumf` into compares and selects: those
    become `llvm.intr.maximum` / `llvm.intr.minimum`, which the NVPTX back
    end lowers to one `max.NaN.f32` / `min.NaN.f32` on sm_80 and later,
    with the same NaN propagation. An f32 `arith.divf` marked `afn` (the
    language's `/`, which need not be correctly rounded) becomes
    `llvm.nvvm.div.full` (PTX `div.full.f32`: at most 2 ulp over the whole
    range, as Triton's `/`), element by element for vectors; an unmarked
    division stays IEEE (`div.rn.f32`). Everything else is expanded as
    upstream does.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def MathToSFUPass : Pass<"tessera-math-to-sfu"> {
  let summary = "f32 exp2 and rsqrt as the SFU approximations that flush to zero";
  let description = [{
    Rewrites f32 `math.exp2` into `llvm.nvvm.ex2.approx.ftz.f32` (PTX
    `ex2.approx.ftz.f32`) and f32 `math.rsqrt` into
    `llvm.nvvm.rsqrt.approx.ftz.f` (`rsqrt.approx.ftz.f32`), element by
    element for vectors. These are the approximations the NVPTX back end
    already uses, with subnormal inputs and results flushed to zero, as
    Triton's `exp2` and `rsqrt` (its libdevice calls run with FTZ): a
    result of `exp2` below 2^-126 is 0. Without FTZ ptxas wraps each one in
    a range test and two scalings. Other types and ops are left alone.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def LinearizeGlobalAccessesPass : Pass<"tessera-linearize-global-accesses"> {
  let summary = "Global accesses through one linear offset, computed early";
  let description = [{
    Rewrites, in every `gpu.func` kernel, each `memref.load`/`memref.store`/
    `vector.load`/`vector.store` of a kernel argument (a global tensor) into an access of a 1-D view of
    that tensor at the linear element offset `sum(i_d * stride_d)`.
    The view is made once at kernel entry.

    The offset is computed in front of the outermost `scf.if` around the
    access whose condition and body the indices do not depend on, not inside
    it: the masked runs of a tile load or store (one `scf.if` each) then
    share the address arithmetic of their common outer indices, and the
    back end folds each run's constant displacement into the address, as it
    does for one predicated access. Under `tile.index32` (every element
    offset of every tensor of the launch fits in 31 bits, strides are
    non-negative) the offset is i32 arithmetic with no-wrap flags, widened
    once; otherwise index arithmetic.

    The global source of an `nvgpu.device_async_copy` (cp.async) is read
    the same way. A copy that may fall outside its tensor comes with every
    index selected to 0 under one condition (and a source size of 0 then):
    its offset is computed from the unselected indices and selected to 0
    under that condition, one select instead of one per index.

    Only the machine code sees this: the sim executes the IR before it and
    keeps its bounds checks against each tensor's shape.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def PredicateGlobalAccessesPass : Pass<"tessera-predicate-global-accesses"> {
  let summary = "Conditional global loads and stores as predicated PTX accesses";
  let description = [{
    Rewrites, in every `gpu.func` kernel, the `scf.if %p` around one access
    of a 1-D unit-stride global memref (what
    `tessera-linearize-global-accesses` leaves for each run of a tile load
    or store) into one predicated PTX access through `llvm.inline_asm`, as
    Triton emits its loads and stores:

    - a store alone in the then-block (no else): `@$p st.global.v4.b32`;
    - a load alone in the then-block, yielded, with the else-block yielding
      a padding value from outside (or its broadcast): the outputs are set
      to the padding (zero when the padding is poison), then
      `@$p ld.global.v4.b32` overwrites them.

    A constant added (without wrapping) to the index becomes the address's
    displacement (`[%rd+2048]`), so the runs of a tile share one address.
    Accesses of 2, 4, 8 or 16 bytes whose alignment covers their size are
    rewritten; others keep their branch. The asm has side effects, so LLVM
    keeps it in order with the other memory operations and barriers.

    Branches make LLVM sink a stored value's computation into its store's
    block, and ptxas then issues every load feeding the stores first.
    Without them loads, arithmetic and stores of successive runs
    interleave. Only the machine code sees this: the sim runs the IR before
    it.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def LowerKernelAssertsPass : Pass<"tessera-lower-kernel-asserts", "::mlir::ModuleOp"> {
  let summary = "Failed cf.assert calls the host's kernel-assertion routine";
  let description = [{
    For code that runs on the host (the cpu and sim devices): every
    `cf.assert %cond, "message"` becomes a branch that, when `%cond` is
    false, calls `tessera_kernel_assert_failed` with the message (a
    constant string) and then goes on; the routine records the message for
    the launch, which fails with it (tessera/Target/CPU/KernelAsserts.h).
    Upstream's lowering aborts the process instead. Runs on unstructured
    control flow (after convert-scf-to-cf), before the LLVM conversion.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

def LowerKernelPrintsPass : Pass<"tessera-lower-kernel-prints", "::mlir::ModuleOp"> {
  let summary = "gpu.printf in host code calls the C library's printf";
  let description = [{
    For code that runs on the host (the cpu and sim devices): every
    `gpu.printf "format", %args` becomes a call of the variadic C `printf`
    with the format as a constant string and the arguments as they are
    (the kernel-body print widens floats to f64 and small integers to i32,
    as C's default argument promotions require). The cuda target lowers
    gpu.printf to `vprintf` (convert-gpu-to-nvvm) instead.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PrintOncePerBlockPass : Pass<"tessera-print-once-per-block", "::mlir::ModuleOp"> {
  let summary = "A tile program's gpu.printf runs on the block's first thread";
  let description = [{
    In a tile program every thread of the block runs the program's scalar
    code. This pass puts each `gpu.printf` of a `gpu.func` kernel under
    `scf.if` thread (0, 0, 0), so that a print runs once per program
    instance, as on the cpu device. SIMT programs (whose kernels the GPU
    pipeline outlines without this pass) print once per thread.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def ApproximateMathPass : Pass<"tessera-approximate-math"> {
  let summary = "Replaces transcendental math ops with polynomial approximations";
  let description = [{
    Applies MLIR's polynomial approximations (`exp`, `exp2`, `log`, `log2`,
    `tanh`, `erf`, ...) so that kernels need no math library; f16 and bf16
    operands are computed in f32. Functions named in `keep` are left to the
    target's math library: the GPU pipeline keeps `exp`, `exp2`, `log` and
    `log2` for libdevice, whose versions use the special-function unit
    (`ex2.approx`, `lg2.approx`) with an exact argument reduction (2 ulp),
    in a third of the instructions.
  }];
  let options = [
    Option<"keep", "keep", "std::string", "\"\"",
           "Comma-separated math functions not to approximate">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}


def GPUToHostPass : Pass<"tessera-gpu-to-host", "::mlir::ModuleOp"> {
  let summary = "Turns GPU kernels into host functions for the sim device";
  let description = [{
    Every `gpu.func` kernel of every `gpu.module` becomes a host function
    `@<kernel>_sim` in the top-level module that runs ONE GPU thread:

      @<kernel>_sim(kernel args..., shared buffers..., arena,
                    %tid, %bid_x, %bid_y, %bid_z, %grid_x, %grid_y, %grid_z,
                    %ctx)

    Workgroup attributions become ordinary memref arguments and
    `gpu.dynamic_shared_memory` the `arena` argument (a `memref<?xi8>`,
    always present; the per-block memory the simulator hands every thread
    of a block), `gpu.thread_id x` /
    `gpu.block_id` / `gpu.grid_dim` become the trailing index arguments
    (`y`/`z` thread ids are 0, `gpu.block_dim` the kernel's known block
    size), and `gpu.barrier` a call to `@tessera_sim_barrier(%ctx, %site)`, which
    the simulator's fiber scheduler provides. Warp collectives become calls
    that rendezvous the warp's lanes: `gpu.shuffle` (tessera_sim_shuffle),
    `nvgpu.ldmatrix` (tessera_sim_ldmatrix: each lane passes its row
    address, the simulator deals out the fragments) and `nvgpu.mma.sync`
    (tessera_sim_mma: fragments passed through stack slots allocated once
    at entry; m16n8k16 with f16/bf16 inputs and f32 accumulation).
    `gpu.lane_id` is the thread id modulo 32. The rest of the IR is the
    exact code the PTX path compiles.

    With `checks` (the default), every `memref.load`/`store`/`atomic_rmw`
    and `vector.load`/`store` is instrumented for the simulator's checkers
    (each ldmatrix row read too; an out-of-bounds row is reported and reads
    as zeros):
    - its indices are checked against the memref's extents; an access out
      of bounds is skipped (a load yields 0) and reported through
      `@tessera_sim_fault(%ctx, %site)`;
    - its byte address, size and kind go to
      `@tessera_sim_access(%ctx, %addr, %bytes, %kind, %site)` (kind 0 read,
      1 write, 2 atomic), where the simulator detects shared-memory races
      within a barrier epoch.
    `%site` indexes the function's `tile.sim_sites` array of strings (op
    name and source location) that the reports quote.

    With `counters` (off by default) the simulator's counters get what they
    need: every access is instrumented as with `checks` (whatever `checks`
    says) but reported to `@tessera_sim_access_counted`, which counts it
    and checks it as `@tessera_sim_access` does (code without counters
    pays nothing for them), and every conditional branch of the kernel calls
    `@tessera_sim_branch(%ctx, %site, %taken)` before it branches: an
    `scf.if` or `cf.cond_br` with its condition, an `scf.while` with the
    condition it continues on, an `scf.for` whose bounds are not all
    constants with 1 at the start of each iteration and 0 after the loop
    (the exit test each lane evaluates). The instrumentation's own branches
    are not reported.
  }];
  let options = [
    Option<"checks", "checks", "bool", "true",
           "Instrument memory accesses for the sim checkers">,
    Option<"counters", "counters", "bool", "false",
           "Report memory accesses and conditional branches for the sim "
           "counters">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect"];
}


def GPUWarpReducePass : Pass<"tessera-gpu-warp-reduce", "::mlir::func::FuncOp"> {
  let summary = "Turns innermost-axis reductions into warp reductions";
  let description = [{
    Runs on bufferized `tile.kernel` functions before the GPU mapping. A
    `linalg.reduce` over the innermost dimension of a static buffer with a
    single add/max/min combiner becomes warp-cooperative code: warp `w`
    reduces the rows `w, w + num_warps, ...`; its lanes accumulate strided
    elements from the combiner's identity, `gpu.subgroup_reduce` combines
    the lanes, and lane 0 folds the row's result into the output. The code
    is wrapped in an `scf.execute_region` marked `tile.distributed`, which
    `tessera-distribute-to-gpu` leaves as it is (followed by a barrier).
    Other reductions keep the generic lowering (one thread per output
    element).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def LowerSubgroupReducePass : Pass<"tessera-lower-subgroup-reduce"> {
  let summary = "Lowers gpu.subgroup_reduce to butterfly gpu.shuffle xor";
  let description = [{
    Upstream's shuffle lowering for 32-lane subgroups, so that the PTX path
    (`shfl.sync.bfly`) and the `sim` device (warp rendezvous) execute the
    same shuffles.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def UnifyShapeDimsPass : Pass<"tessera-unify-shape-dims", "::mlir::func::FuncOp"> {
  let summary = "Uses one memref.dim for all dimensions of a shape symbol";
  let description = [{
    Tensor arguments carry `tile.dim_symbols` (the shape symbol of each
    dimension, from the kernel signature). Dimensions with the same symbol
    are equal at launch (the runtime checks it), so every `memref.dim` of
    such a dimension of an entry-block argument is replaced by one
    `memref.dim` of its first occurrence. Index arithmetic derived from the
    extents (the clipped regions of tile loads and stores) then folds
    together under CSE.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def WarpSpecializePass : Pass<"tessera-warp-specialize"> {
  let summary = "Splits a kernel into a producer warpgroup issuing TMA copies and consumer warpgroups";
  let description = [{
    Runs after `tessera-distribute-tiles` on the `gpu.func` kernels it marks
    `tile.warp_specialize` with `tile.consumer_threads = C`: kernels whose
    TMA rings it lowered for a producer. Their ring ops are marked
    `tile.producer` (the waits for a slot's release, `expect_tx` and the
    TMA copies), and the last barrier of the code every thread runs first
    (mbarrier initialisation) `tile.ring_entry`.

    After that barrier the kernel branches on the thread id:

    - threads below C (the consumer warpgroups) raise their registers with
      `setmaxnreg.inc` and run the kernel without the producer's ops; every
      `gpu.barrier` among them becomes the named barrier 1 for C threads;
    - the warpgroup after them lowers its registers with `setmaxnreg.dec`,
      and its first thread runs the producer: the `tile.producer` ops and
      what they need (their operands' producers, the loops and
      conditionals around them with the loop-carried values they use, the
      per-thread ring state they load and store), cloned in order.

    The block grows to C + 128 threads, and the kernel takes `.minnctapersm
    1` so that ptxas knows the registers each thread has at entry. The
    producer's slice must read no other memory; the pass fails otherwise
    (`tessera-distribute-tiles` specialises only kernels whose copies are
    addressed from coordinates).

    Upstream MLIR has no warp-specialisation transform for the nvgpu
    dialect: the split, the slice and the register counts are this pass's.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def WarpgroupPingpongPass : Pass<"tessera-warpgroup-pingpong"> {
  let summary = "Makes the two consumer warpgroups of a warp-specialised kernel take turns at the tensor cores";
  let description = [{
    Runs after `tessera-distribute-tiles` and before
    `tessera-warp-specialize`, on the `gpu.func` kernels marked
    `tile.pingpong` (the `pingpong` meta-parameter) whose
    `tile.consumer_threads` is 256: two consumer warpgroups. Elsewhere it
    only drops the attribute.

    A loop whose body issues wgmma products in two or more commit groups
    (an attention kernel's Q K^T and P V) and holds no barrier gets a turn
    protocol on the named barriers 2 and 3 (256 threads each; warpgroup g
    waits at 2 + g and hands over by `bar.arrive` at the other): a turn is
    the loop's last group of products and the next iteration's first. While
    one warpgroup's products run, the other works on what lies between
    them (the softmax), as FlashAttention-3's ping-pong schedule does.
    Before the loop warpgroup 1 arrives at 2, so that warpgroup 0 goes
    first; after it warpgroup 0 arrives at 3 for warpgroup 1's last turn.
    Each barrier phase is one warpgroup's wait and the other's arrival, so
    loops in sequence, or inside a persistent kernel's program loop,
    compose.

    Upstream MLIR has no warpgroup schedule for the nvgpu or NVVM
    dialects: the protocol is this pass's.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def FoldGridBoundsPass : Pass<"tessera-fold-grid-bounds"> {
  let summary = "Folds bounds tests of program ids against the extents the declared grid gives them";
  let description = [{
    A kernel whose grid axis is a shape symbol (`@kernel(grid=(S, B))`) and
    that is launched on that grid, or a smaller one, has `program_id(0) <
    S` and `program_id(1) < B` for every program. The driver records this
    for a specialisation that guarantees it (`declaredGrid`) as
    `tile.grid_extents` on the `gpu.func`: for each axis x, y, z the
    kernel argument and dimension whose extent bounds it (-1, -1 for an
    axis with no such extent).

    This pass replaces every `arith.cmpi ult` / `slt` of a `gpu.block_id`
    (through integer extensions and index casts, and under `tile.index32`
    truncations, which keep values below 2^31) against the `memref.dim` of
    that argument and dimension with `true`. The bounds tests of a tile
    access at `offsets=(b, s, 0)` on the outer dimensions disappear, and
    the access's predicate is that of its innermost run alone.

    The runtime launches such a variant only on grids within the declared
    one (a larger explicit grid runs code that keeps the tests).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PrefetchTileLoadsPass : Pass<"tessera-prefetch-tile-loads", "::mlir::func::FuncOp"> {
  let summary = "Row loops load the tiles of the next num_stages - 1 iterations ahead";
  let description = [{
    In a tile kernel with `tile.num_stages` S >= 2, each `scf.for` that
    walks along a row (a constant step: a grid-stride loop, whose step
    counts the programs, is left to occupancy), whose body writes no
    memory and has no `tile.dot` (the GEMM and attention loops pipeline
    their operands through shared memory in tessera-distribute-tiles) gets
    its `tile.load`s issued S - 1 iterations ahead: the tiles of the first S - 1 iterations are loaded
    before the loop, the body loads the tile of iteration i + S - 1 at its
    top (before any reduction's barrier) and carries the ring of loaded
    tiles as iteration arguments; the body computes on the tile loaded
    earlier. A load qualifies when its operands are computed in the body
    from the induction variable and values defined outside the loop by
    pure operations (cloned for the later iteration), not from
    loop-carried values.

    The induction variable of a load ahead is `min(iv + k * step, ub)`:
    a tile loaded for an iteration that does not run is never used, its
    load is clipped to the tensor like any other, and the clamp keeps the
    offsets within the loop's bounds (31 bits under `tile.index32`).
    Loops that store are left alone: a store in the body could write what
    a load ahead has already read.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def NarrowIndexLoopsPass : Pass<"tessera-narrow-index-loops", "::mlir::func::FuncOp"> {
  let summary = "Loops over 31-bit index ranges run on 32-bit induction variables";
  let description = [{
    In a `tile.index32` kernel, rewrites each i64 `scf.for` whose lower and
    upper bounds are known non-negative and within 31 bits (tensor extents,
    program ids within `tile.grid_bound`, their sums and products) and whose
    step is below 2^24 into an i32 loop with an unsigned comparison
    (`unsignedCmp`). The induction variable is zero-extended back to i64 for
    its uses, so the body computes what it computed before.

    An unsigned i32 loop is exact there: every value the induction variable
    takes is below 2^31, and the next value past the last (below
    2^31 + 2^24) does not wrap; neither do the prefetches of a pipelined
    loop, up to 64 steps ahead. A signed i32 loop would not be: an upper
    bound near 2^31 - 1 plus a step wraps.

    The loop's counter and comparison take one register and one instruction
    instead of a 64-bit pair, and the tile offsets computed from it are
    known to fit in 32 bits.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def FuseTileCopiesPass : Pass<"tessera-fuse-tile-copies", "::mlir::func::FuncOp"> {
  let summary = "Streams element-wise tiles between memory and memory";
  let description = [{
    Runs on buffers. A `linalg.generic` with identity maps and parallel
    iterators whose output tile (a static `memref.alloc`) is only stored --
    copied from a unit-stride subview of it to a destination, with no memory
    write in between -- is replaced, at the store, by a generic over the
    store's region that writes the destination directly. Each input tile
    that was loaded from memory over exactly that region (same offsets and
    sizes; `tessera-unify-shape-dims` makes them the same values) is read
    from memory directly; other inputs are read through the region's
    subview. Tile buffers left with writes only (padding fills, load copies)
    are erased. The result is a single pass over memory for element-wise
    kernels and epilogues, without the tile round trip (and, on the GPU,
    without the shared memory).

    Element-wise semantics make the restricted domain exact: an output
    element depends only on the input elements at the same index, and
    elements outside the store region are never written. Inputs that alias
    the destination at the same positions (in-place updates) stay correct;
    arguments that overlap in memory at shifted positions are not
    supported (as elsewhere in tile kernels).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def GPUMatmulToMMAPass : Pass<"tessera-gpu-matmul-to-mma", "::mlir::func::FuncOp"> {
  let summary = "Rewrites tile matmuls as warp-level 16x8xK contractions";
  let description = [{
    Runs on bufferized `tile.kernel` functions before the GPU mapping. A
    `linalg.matmul` on static row-major buffers with an f32 accumulator and
    inputs of one of these types, extents multiples of 16 (M), 8 (N) and
    the instruction's K:
      * f16 x f16 or bf16 x bf16, K = 16 (mma.sync m16n8k16, sm_80+);
      * f32 x f32 in functions marked `tile.dot_precision = "tf32"`, K = 8
        (tf32 m16n8k8);
      * fp8 x fp8 of one format (e4m3 or e5m2), K = 32 (m16n8k32), only
        with the `fp8` option (sm_89+);
    becomes warp-level vector code: C is cut into warp tiles of up to 2x4
    instructions (32x32 elements), warp `w` takes the tiles
    `w, w + num_warps, ...`, reads their accumulators into vector registers
    once, runs the K loop with one `vector.contract` of shape 16x8xK per
    fragment pair (each A fragment reused across the tile's columns, each B
    fragment across its rows) and writes them back. The code is wrapped in
    an `scf.execute_region` marked `tile.distributed` (the mapping keeps
    it, followed by a barrier). `tessera-gpu-mma-sync` turns the
    contractions into tensor-core instructions once the tiles live in
    shared memory. Other matmuls keep the generic lowering (so do fp8 ones
    with 16 warps, whose 128 registers per thread ptxas spilled on).

    When every warp owns the same number of warp tiles they are unrolled in
    a loop that runs once per warp; if the matmul sits directly in an
    `scf.for` (the kernel's K loop) whose accumulator buffer is made outside
    it and used in it by this matmul alone, and the accumulator registers
    (4 per fragment) plus a reserve for the dot (96, 128 for fp8) fit in
    what a thread may have with `num_warps` warps (65536 / (32 num_warps),
    at most 255), the loop is marked `tile.mma_hoist_accumulators`.
  }];
  let options = [
    Option<"fp8", "fp8", "bool", "false",
           "fp8 inputs use tensor cores (mma.sync m16n8k32, sm_89+)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def GPUAsyncCopyPass : Pass<"tessera-gpu-async-copy"> {
  let summary = "Turns global-to-shared tile copies into cp.async";
  let description = [{
    Runs after `tessera-distribute-to-gpu`. A thread-strided loop whose only
    side effect is storing into a shared-memory tile (through the generic
    cast of its view, possibly a subview) an element loaded from global
    memory, and which the mapping follows with a barrier, is a tile load.
    From a source whose innermost stride is 1:
    - when source and destination are subviews of the same sizes (what the
      mapping emits), the copy is versioned on alignment at run time: if
      the first element and the outer strides of both are aligned to the
      chunk (16 bytes, or 8/4 when the shared tile's row length requires),
      each thread copies chunks along the innermost dimension with one
      `nvgpu.device_async_copy` each (the partial chunk at a row's end
      element by element); otherwise the original loop runs;
    - in the element loop, 4- and 8-byte elements are copied with one
      `nvgpu.device_async_copy` each; 16-bit ones stay synchronous.
    `nvgpu.device_async_create_group` + `nvgpu.device_async_wait
    {numGroups = 0}` are placed before the barrier. Strided sources and
    shared-to-shared copies stay synchronous. Every copy is waited for
    before the barrier that follows it; `tessera-gpu-pipeline-copies`
    then pipelines loops of such copies over `num_stages`.
  }];
  let dependentDialects = ["::mlir::nvgpu::NVGPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FuseElementwiseKeepDotsPass
    : Pass<"tessera-fuse-elementwise-keep-dots", "::mlir::func::FuncOp"> {
  let summary = "Element-wise fusion that leaves contractions alone";
  let description = [{
    The patterns of MLIR's `linalg-fuse-elementwise-ops` (producer fusion,
    reshape propagation by expansion, constant folding, canonicalisation)
    with a control function that refuses any fusion or reshape expansion
    into or out of a contraction (a linalg op with a reduction loop and two
    or more inputs, e.g. the `linalg.matmul` of `tile.dot`). Upstream, the
    reshape propagation turns a matmul of reshaped tiles (attention's
    `[1, 1, M, D]` loads) into a 5- or 7-dimensional generic that the
    tensor-core path cannot use, and that the CPU's register-tiled matmul
    (`tessera-vectorize-matmul`) does not match either (scalar loops, 12-25x
    slower); here it stays a 2-D matmul and the reshapes stay on the
    element-wise side. Both the CPU and the GPU pipelines use it.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def GPUPipelineCopiesPass : Pass<"tessera-gpu-pipeline-copies"> {
  let summary = "Software-pipelines cp.async tile loads over num_stages";
  let description = [{
    Runs after `tessera-gpu-async-copy`, on kernels whose `tile.num_stages`
    is S >= 2. A loop whose body is a load part -- tile copies into shared
    memory, each followed by commit + wait-all + barrier -- then a compute
    part is pipelined (iteration arguments, such as register-resident
    accumulators, are carried by the compute part):
    - every arena view the load part writes gets S buffers: stage 0 keeps
      the tile's place, the other S - 1 are appended to the kernel's shared
      memory (`tile.shared_bytes` grows accordingly, before the
      shared-memory check);
    - the per-tile waits are dropped; the load part of an iteration commits
      one group, and its compute part starts with `device_async_wait
      {numGroups = S - 1}` and a barrier;
    - MLIR's loop pipeliner (scf::pipelineForLoop) issues the loads of
      iteration k + S - 1 before the compute of iteration k; past the end
      of the loop the loads are predicated off but their (empty) group is
      still committed, so every wait count stays exact.
    Loops where the load part reads shared memory or writes anything but
    arena views, the compute part writes those views or uses values of the
    load part, are left alone. Other views of the same arena bytes (the i8
    aliases of fp8 tiles) are re-made per stage with the tile's views.
  }];
  let dependentDialects = ["::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def GPUMMASyncPass : Pass<"tessera-gpu-mma-sync"> {
  let summary = "Lowers warp-level contractions to nvgpu.ldmatrix/mma.sync";
  let description = [{
    Runs after `tessera-distribute-to-gpu`. Vector transfers that read or
    write a tile through the generic-address-space cast of its shared-memory
    view are pointed at the view itself; then MLIR's vector-to-GPU
    conversion (nvgpu flavour, with its preparation patterns) rewrites the
    warp-level `vector.contract`s as `nvgpu.mma.sync`, the A/B fragment
    reads from shared memory as `nvgpu.ldmatrix` (transposed for row-major
    B) and the accumulator reads/writes as per-lane vector loads/stores
    laid out by the nvgpu fragment tables. A contraction left unconverted
    is an error. bf16 contractions go through the same conversion as f16
    ones (16-bit fragments have the same layouts) and are retyped to bf16
    afterwards; fp8 ones go through the i8 tables on i8 aliases of their
    shared tiles, the mma.sync marked `tile.fp8`.

    A unit marked `tile.mma_hoist_accumulators` (see
    `tessera-gpu-matmul-to-mma`) then keeps its accumulator fragments in
    registers across the kernel's K loop around it: the fragment reads of
    the accumulator tile (and their index math) are cloned before the K
    loop, the fragments become its iteration arguments (each dot's own K
    loop, or its first mma.sync when that loop had one iteration, starts
    from them; the K loop yields the final ones), and the per-lane writes
    run once after the loop, followed by a barrier for the epilogue.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def GPUMmaToNVVMPass : Pass<"tessera-gpu-mma-to-nvvm"> {
  let summary = "Lowers bf16, tf32 and fp8 nvgpu.mma.sync to nvvm.mma.sync";
  let description = [{
    MLIR 22's nvgpu-to-nvvm conversion cannot lower `nvgpu.mma.sync` with
    bf16 or fp8 operands ("failed to deduce operand PTX types"), and lowers
    the tf32 form by reinterpreting f32 bits as tf32, which truncates the
    mantissa. This pass, run before it, lowers them directly:
      * m16n8k16 bf16 x bf16 + f32: each row of the A and B fragments (two
        bf16) is bitcast to one i32 register;
      * m16n8k32 fp8 x fp8 + f32 (e4m3 or e5m2, sm_89+): each row (four
        fp8) is bitcast to one i32 register;
      * m16n8k8 f32 x f32 + f32 (tf32 tensor cores): each A and B element is
        rounded to tf32 with `cvt.rna.tf32.f32` (round to nearest, ties away
        from zero, as cuBLAS does) into one i32 register.
    The f32 accumulator is split into its four elements, and
    `nvvm.mma.sync` with row/col layouts produces the four f32 results,
    reassembled into the fragment vector. f16 is left to upstream.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif // TESSERA_CONVERSION_PASSES_TD
