"""stream.tile: the STREAM kernels (c is always the output).

    stream_copy   c = a               stream_copy_gather   c = a[idx]
    stream_scale  c = scalar * a      stream_scale_gather  c = scalar * a[idx]
    stream_add    c = a + b           stream_add_gather    c = a[idx] + b[idx]
    stream_triad  c = a + scalar * b  stream_triad_gather  the same via idx

copy moves the bits, scale and triad compute in f32 and round once, add
adds in the storage type. The gathers read 0 for indices outside [0, M)
and write c densely.
"""

import triton
import triton.language as tl

from .common import integer, real
from .vector_ops import plan_flat


@triton.jit
def stream_copy(a, c, N, stride_a, stride_c, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < N
    tl.store(c + offs * stride_c, tl.load(a + offs * stride_a, mask=live),
             mask=live)


@triton.jit
def stream_scale(a, c, scalar, N, stride_a, stride_c,
                 BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < N
    va = tl.load(a + offs * stride_a, mask=live).to(tl.float32)
    tl.store(c + offs * stride_c, (scalar * va).to(c.dtype.element_ty),
             mask=live)


@triton.jit
def stream_add(a, b, c, N, stride_a, stride_b, stride_c,
               BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < N
    va = tl.load(a + offs * stride_a, mask=live)
    vb = tl.load(b + offs * stride_b, mask=live)
    tl.store(c + offs * stride_c, (va + vb).to(c.dtype.element_ty),
             mask=live)


@triton.jit
def stream_triad(a, b, c, scalar, N, stride_a, stride_b, stride_c,
                 BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < N
    va = tl.load(a + offs * stride_a, mask=live).to(tl.float32)
    vb = tl.load(b + offs * stride_b, mask=live).to(tl.float32)
    tl.store(c + offs * stride_c, (va + scalar * vb).to(c.dtype.element_ty),
             mask=live)


@triton.jit
def _gather(src, idx, offs, live, M, stride_src, stride_idx):
    ids = tl.load(idx + offs * stride_idx, mask=live, other=0)
    ok = live & (ids >= 0) & (ids < M)
    return tl.load(src + ids * stride_src, mask=ok, other=0)


@triton.jit
def stream_copy_gather(a, idx, c, N, M, stride_a, stride_idx, stride_c,
                       BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < N
    va = _gather(a, idx, offs, live, M, stride_a, stride_idx)
    tl.store(c + offs * stride_c, va, mask=live)


@triton.jit
def stream_scale_gather(a, idx, c, scalar, N, M, stride_a, stride_idx,
                        stride_c, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < N
    va = _gather(a, idx, offs, live, M, stride_a, stride_idx)
    tl.store(c + offs * stride_c,
             (scalar * va.to(tl.float32)).to(c.dtype.element_ty), mask=live)


@triton.jit
def stream_add_gather(a, b, idx, c, N, M, stride_a, stride_b, stride_idx,
                      stride_c, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < N
    ids = tl.load(idx + offs * stride_idx, mask=live, other=0)
    ok = live & (ids >= 0) & (ids < M)
    va = tl.load(a + ids * stride_a, mask=ok, other=0)
    vb = tl.load(b + ids * stride_b, mask=ok, other=0)
    tl.store(c + offs * stride_c, (va + vb).to(c.dtype.element_ty),
             mask=live)


@triton.jit
def stream_triad_gather(a, b, idx, c, scalar, N, M, stride_a, stride_b,
                        stride_idx, stride_c, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < N
    ids = tl.load(idx + offs * stride_idx, mask=live, other=0)
    ok = live & (ids >= 0) & (ids < M)
    va = tl.load(a + ids * stride_a, mask=ok, other=0).to(tl.float32)
    vb = tl.load(b + ids * stride_b, mask=ok, other=0).to(tl.float32)
    tl.store(c + offs * stride_c, (va + scalar * vb).to(c.dtype.element_ty),
             mask=live)


_IN, _OUT = "input", "output"


def _planner(fn, tensors, scalar=False, gather=False):
    def plan(dtype, arch, shape, config):
        listed = [(name, _OUT if name == "c" else _IN,
                   "i32" if name == "idx" else None) for name in tensors]
        scalars = [real("scalar", 3.0, "scalar")] if scalar else []
        ints = []
        if gather:
            m = shape.int("M", shape.int("N", 1 << 24))
            ints = [integer("M", m, "length of the gathered arrays")]
        result = plan_flat(fn, dtype, shape, config, listed, scalars,
                           ints=ints)
        if gather:
            result.shape["M"] = ints[0].value
        return result
    return plan


plan_copy = _planner(stream_copy, ("a", "c"))
plan_scale = _planner(stream_scale, ("a", "c"), scalar=True)
plan_add = _planner(stream_add, ("a", "b", "c"))
plan_triad = _planner(stream_triad, ("a", "b", "c"), scalar=True)
plan_copy_gather = _planner(stream_copy_gather, ("a", "idx", "c"),
                            gather=True)
plan_scale_gather = _planner(stream_scale_gather, ("a", "idx", "c"),
                             scalar=True, gather=True)
plan_add_gather = _planner(stream_add_gather, ("a", "b", "idx", "c"),
                           gather=True)
plan_triad_gather = _planner(stream_triad_gather, ("a", "b", "idx", "c"),
                             scalar=True, gather=True)
