"""layernorm.tile `layernorm`: layer normalisation of x[b, s, :].

One program per row, grid (S, B) as in Tessera. out = (x - mean) *
rsqrt(var + eps) * weight + bias with the biased variance of the centred
values; statistics and arithmetic are f32, the result is rounded once. A
row that fits in one block (ONE_BLOCK) is loaded once; a longer row is
walked three times (mean, centred variance, normalise) like the Tessera
kernel and Triton's layer-norm tutorial.
"""

import triton
import triton.language as tl

from .common import DTYPES, Plan, integer, ptr, real, strides
from .rows import row_block


@triton.jit
def layernorm(x, weight, bias, out, eps, H,
              stride_xb, stride_xs, stride_xh, stride_w, stride_bias,
              stride_ob, stride_os, stride_oh,
              BLOCK_SIZE: tl.constexpr, ONE_BLOCK: tl.constexpr):
    s = tl.program_id(0)
    b = tl.program_id(1)
    x_row = x + b * stride_xb + s * stride_xs
    o_row = out + b * stride_ob + s * stride_os
    cols = tl.arange(0, BLOCK_SIZE)

    if ONE_BLOCK:
        live = cols < H
        xs = tl.load(x_row + cols * stride_xh, mask=live, other=0.0)
        xs = xs.to(tl.float32)
        mean = tl.sum(xs, axis=0) / H
        d = tl.where(live, xs - mean, 0.0)
        rstd = tl.rsqrt(tl.sum(d * d, axis=0) / H + eps)
        w = tl.load(weight + cols * stride_w, mask=live).to(tl.float32)
        bb = tl.load(bias + cols * stride_bias, mask=live).to(tl.float32)
        y = d * rstd * w + bb
        tl.store(o_row + cols * stride_oh, y.to(out.dtype.element_ty),
                 mask=live)
    else:
        acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        for h0 in range(0, H, BLOCK_SIZE):
            live = h0 + cols < H
            xs = tl.load(x_row + (h0 + cols) * stride_xh, mask=live,
                         other=0.0)
            acc += xs.to(tl.float32)
        mean = tl.sum(acc, axis=0) / H

        acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        for h0 in range(0, H, BLOCK_SIZE):
            live = h0 + cols < H
            xs = tl.load(x_row + (h0 + cols) * stride_xh, mask=live,
                         other=0.0)
            d = tl.where(live, xs.to(tl.float32) - mean, 0.0)
            acc += d * d
        rstd = tl.rsqrt(tl.sum(acc, axis=0) / H + eps)

        for h0 in range(0, H, BLOCK_SIZE):
            live = h0 + cols < H
            xs = tl.load(x_row + (h0 + cols) * stride_xh, mask=live,
                         other=0.0)
            w = tl.load(weight + (h0 + cols) * stride_w, mask=live)
            bb = tl.load(bias + (h0 + cols) * stride_bias, mask=live)
            y = ((xs.to(tl.float32) - mean) * rstd * w.to(tl.float32)
                 + bb.to(tl.float32))
            tl.store(o_row + (h0 + cols) * stride_oh,
                     y.to(out.dtype.element_ty), mask=live)


def plan_layernorm(dtype, arch, shape, config):
    b, s, h = shape.int("B", 1), shape.int("S", 4096), shape.int("H", 4096)
    block, one_block, num_warps, notes = row_block(dtype, h, config)
    storage = DTYPES[dtype][0]
    dims = (b, s, h)
    args = [ptr("x", storage, "input [B, S, H]"),
            ptr("weight", storage, "[H]"),
            ptr("bias", storage, "[H]"),
            ptr("out", storage, "output [B, S, H]"),
            real("eps", 1e-5, "epsilon"),
            integer("H", h, "row length"),
            *strides("x", dims, "bsh"),
            integer("stride_w", 1, "stride of weight"),
            integer("stride_bias", 1, "stride of bias"),
            *strides("o", dims, "bsh")]
    return Plan(
        fn=layernorm, args=args,
        constexprs={"BLOCK_SIZE": block, "ONE_BLOCK": one_block},
        num_warps=num_warps, num_stages=1,
        config={"BLOCK_SIZE": block, "ONE_BLOCK": one_block,
                "num_warps": num_warps},
        grid="(S, B)", grid_dims=(s, b, 1),
        shape={"B": b, "S": s, "H": h}, notes=notes)
