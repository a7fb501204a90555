"""vector_ops.tile: axpy, add, mul (element-wise) and dot, norm,
reduce_sum, reduce_max (reductions) on 1-D tensors with any stride.

Element-wise results are computed in f32 and rounded once to the storage
type. Each reduction program folds blocks BLOCK_SIZE * grid apart into a
private f32 accumulator and then makes one atomic update of out[0] (f32):
atomic_add for dot, norm (the squared norm) and reduce_sum, atomic_max for
reduce_max; the caller initialises out[0] (0 or -inf) as for Tessera.
"""

import triton
import triton.language as tl

from .common import DTYPES, Plan, integer, ptr, real, warps

# Grid bound of the reductions (MAX_REDUCE_PROGRAMS in vector_ops.tile).
MAX_REDUCE_PROGRAMS = 1024


@triton.jit
def axpy(x, y, alpha, N, stride_x, stride_y, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < N
    xs = tl.load(x + offs * stride_x, mask=live).to(tl.float32)
    ys = tl.load(y + offs * stride_y, mask=live).to(tl.float32)
    tl.store(y + offs * stride_y, (alpha * xs + ys).to(y.dtype.element_ty),
             mask=live)


@triton.jit
def vector_add(x, y, out, N, stride_x, stride_y, stride_out,
               BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < N
    xs = tl.load(x + offs * stride_x, mask=live).to(tl.float32)
    ys = tl.load(y + offs * stride_y, mask=live).to(tl.float32)
    tl.store(out + offs * stride_out, (xs + ys).to(out.dtype.element_ty),
             mask=live)


@triton.jit
def vector_mul(x, y, out, N, stride_x, stride_y, stride_out,
               BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < N
    xs = tl.load(x + offs * stride_x, mask=live).to(tl.float32)
    ys = tl.load(y + offs * stride_y, mask=live).to(tl.float32)
    tl.store(out + offs * stride_out, (xs * ys).to(out.dtype.element_ty),
             mask=live)


@triton.jit
def dot(x, y, out, N, stride_x, stride_y, BLOCK_SIZE: tl.constexpr):
    cols = tl.arange(0, BLOCK_SIZE)
    step = tl.num_programs(0) * BLOCK_SIZE
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for i0 in range(tl.program_id(0) * BLOCK_SIZE, N, step):
        live = i0 + cols < N
        xs = tl.load(x + (i0 + cols) * stride_x, mask=live, other=0.0)
        ys = tl.load(y + (i0 + cols) * stride_y, mask=live, other=0.0)
        acc += xs.to(tl.float32) * ys.to(tl.float32)
    tl.atomic_add(out, tl.sum(acc, axis=0))


@triton.jit
def norm(x, out, N, stride_x, BLOCK_SIZE: tl.constexpr):
    cols = tl.arange(0, BLOCK_SIZE)
    step = tl.num_programs(0) * BLOCK_SIZE
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for i0 in range(tl.program_id(0) * BLOCK_SIZE, N, step):
        xs = tl.load(x + (i0 + cols) * stride_x, mask=i0 + cols < N,
                     other=0.0).to(tl.float32)
        acc += xs * xs
    tl.atomic_add(out, tl.sum(acc, axis=0))


@triton.jit
def reduce_sum(x, out, N, stride_x, BLOCK_SIZE: tl.constexpr):
    cols = tl.arange(0, BLOCK_SIZE)
    step = tl.num_programs(0) * BLOCK_SIZE
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for i0 in range(tl.program_id(0) * BLOCK_SIZE, N, step):
        xs = tl.load(x + (i0 + cols) * stride_x, mask=i0 + cols < N,
                     other=0.0)
        acc += xs.to(tl.float32)
    tl.atomic_add(out, tl.sum(acc, axis=0))


@triton.jit
def _max_nan(a, b):
    # Maximum that keeps NaN (Tessera's reduce_max propagates it).
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def reduce_max(x, out, N, stride_x, BLOCK_SIZE: tl.constexpr):
    cols = tl.arange(0, BLOCK_SIZE)
    step = tl.num_programs(0) * BLOCK_SIZE
    acc = tl.full([BLOCK_SIZE], float("-inf"), dtype=tl.float32)
    for i0 in range(tl.program_id(0) * BLOCK_SIZE, N, step):
        live = i0 + cols < N
        xs = tl.load(x + (i0 + cols) * stride_x, mask=live, other=0.0)
        # -inf after the conversion: fp8_e4m3 has no infinity.
        acc = _max_nan(acc, tl.where(live, xs.to(tl.float32),
                                     float("-inf")))
    tl.atomic_max(out, tl.reduce(acc, 0, _max_nan))


# Hints of Tessera's 1-D tuning spaces that Triton does not take.
FLAT_HINTS = ("VECTOR_WIDTH",)


def plan_flat(fn, dtype, shape, config, tensors, scalars=(), reduction=False,
              ints=()):
    """Plan of a 1-D kernel: `tensors` are (name, role, element type or
    None for the storage type) in argument order, `scalars` the float Args
    that follow them, then N, `ints` and one stride per tensor except a
    reduction's f32 output."""
    n = shape.int("N", 1 << 24)
    stride = shape.int(("stride", "S"), 1)
    block = config.int("BLOCK_SIZE", 1024, pow2=True)
    num_warps = warps(config)
    storage = DTYPES[dtype][0]
    notes = [f"Tessera's {h} is not used (the access width is Triton's)"
             for h in FLAT_HINTS if config.take(h) is not None]
    args = [ptr(name, kind or storage, role) for name, role, kind in tensors]
    args += list(scalars)
    args.append(integer("N", n, "number of elements"))
    args += list(ints)
    for name, _, kind in tensors:
        if not (reduction and kind == "fp32"):
            args.append(integer(f"stride_{name}", stride,
                                f"element stride of {name}"))
    programs = -(-n // block)
    grid = "(cdiv(N, BLOCK_SIZE),)"
    if reduction:
        programs = min(programs, MAX_REDUCE_PROGRAMS)
        grid = f"(min(cdiv(N, BLOCK_SIZE), {MAX_REDUCE_PROGRAMS}),)"
    return Plan(fn=fn, args=args, constexprs={"BLOCK_SIZE": block},
                num_warps=num_warps, num_stages=1,
                config={"BLOCK_SIZE": block, "num_warps": num_warps},
                grid=grid, grid_dims=(programs, 1, 1),
                shape={"N": n, "stride": stride}, notes=notes)


def _binary(fn):
    def plan(dtype, arch, shape, config):
        return plan_flat(fn, dtype, shape, config,
                         [("x", "input", None), ("y", "input", None),
                          ("out", "output", None)])
    return plan


def _reduction(fn, inputs):
    def plan(dtype, arch, shape, config):
        tensors = [(name, "input", None) for name in inputs]
        tensors.append(("out", "out[0], f32, initialised by the caller",
                        "fp32"))
        return plan_flat(fn, dtype, shape, config, tensors, reduction=True)
    return plan


def plan_axpy(dtype, arch, shape, config):
    return plan_flat(axpy, dtype, shape, config,
                     [("x", "input", None), ("y", "input and output", None)],
                     scalars=[real("alpha", 1.0, "alpha")])


plan_add = _binary(vector_add)
plan_mul = _binary(vector_mul)
plan_dot = _reduction(dot, ("x", "y"))
plan_norm = _reduction(norm, ("x",))
plan_reduce_sum = _reduction(reduce_sum, ("x",))
plan_reduce_max = _reduction(reduce_max, ("x",))
