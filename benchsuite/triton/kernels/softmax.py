"""softmax.tile `softmax`: softmax along the last axis of [B, H, Sq, Sk].

One program per row, grid (Sq, H, B) as in Tessera. A row that fits in
one block (ONE_BLOCK) is loaded once and kept in registers; a longer row
is read twice in BLOCK_SIZE pieces (online max/sum, then normalise), the
algorithm of the Tessera kernel. Arithmetic is f32, the result is rounded
once to the storage type. CAUSAL keeps columns k <= q (top-left aligned);
masked columns are not read and are written as 0.
"""

import triton
import triton.language as tl

from .common import DTYPES, Plan, integer, ptr, strides
from .rows import row_block


@triton.jit
def softmax(x, out, Sk,
            stride_xb, stride_xh, stride_xq, stride_xk,
            stride_ob, stride_oh, stride_oq, stride_ok,
            CAUSAL: tl.constexpr, BLOCK_SIZE: tl.constexpr,
            ONE_BLOCK: tl.constexpr):
    q = tl.program_id(0)
    h = tl.program_id(1)
    b = tl.program_id(2)
    x_row = x + b * stride_xb + h * stride_xh + q * stride_xq
    o_row = out + b * stride_ob + h * stride_oh + q * stride_oq
    cols = tl.arange(0, BLOCK_SIZE)
    read_end = Sk
    if CAUSAL:
        read_end = tl.minimum(q + 1, Sk)

    if ONE_BLOCK:
        keep = cols < read_end
        # Masked lanes become -inf after the conversion (fp8_e4m3 has no
        # infinity to pass as `other`).
        xs = tl.load(x_row + cols * stride_xk, mask=keep, other=0.0)
        xs = tl.where(keep, xs.to(tl.float32), float("-inf"))
        e = tl.exp(xs - tl.max(xs, axis=0))
        p = e * (1.0 / tl.sum(e, axis=0))
        tl.store(o_row + cols * stride_ok, p.to(out.dtype.element_ty),
                 mask=cols < Sk)
    else:
        m_i = float("-inf")
        l_i = 0.0
        for k0 in range(0, read_end, BLOCK_SIZE):
            keep = k0 + cols < read_end
            xs = tl.load(x_row + (k0 + cols) * stride_xk, mask=keep,
                         other=0.0)
            xs = tl.where(keep, xs.to(tl.float32), float("-inf"))
            m_new = tl.maximum(m_i, tl.max(xs, axis=0))
            l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(xs - m_new),
                                                     axis=0)
            m_i = m_new
        inv_l = 1.0 / l_i
        for k0 in range(0, Sk, BLOCK_SIZE):
            keep = k0 + cols < read_end
            xs = tl.load(x_row + (k0 + cols) * stride_xk, mask=keep,
                         other=0.0)
            p = tl.where(keep, tl.exp(xs.to(tl.float32) - m_i) * inv_l, 0.0)
            tl.store(o_row + (k0 + cols) * stride_ok,
                     p.to(out.dtype.element_ty), mask=k0 + cols < Sk)


def plan_softmax(dtype, arch, shape, config):
    s = shape.int("S", 4096)
    b, h = shape.int("B", 1), shape.int("H", 1)
    sq, sk = shape.int("Sq", s), shape.int("Sk", s)
    causal = shape.flag(("causal", "CAUSAL")) or config.flag("CAUSAL")
    block, one_block, num_warps, notes = row_block(dtype, sk, config, 8)
    storage = DTYPES[dtype][0]
    dims = (b, h, sq, sk)
    args = [ptr("x", storage, "input [B, H, Sq, Sk]"),
            ptr("out", storage, "output [B, H, Sq, Sk]"),
            integer("Sk", sk, "row length"),
            *strides("x", dims, "bhqk"), *strides("o", dims, "bhqk")]
    return Plan(
        fn=softmax, args=args,
        constexprs={"CAUSAL": causal, "BLOCK_SIZE": block,
                    "ONE_BLOCK": one_block},
        num_warps=num_warps, num_stages=1,
        config={"BLOCK_SIZE": block, "ONE_BLOCK": one_block,
                "CAUSAL": causal, "num_warps": num_warps},
        grid="(Sq, H, B)", grid_dims=(sq, h, b),
        shape={"B": b, "H": h, "Sq": sq, "Sk": sk, "causal": causal},
        notes=notes)
