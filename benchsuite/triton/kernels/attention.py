"""attention.tile `attention`: O = softmax(scale * Q @ K^T) @ V, forward.

Q and O are [Z, H, M, D], K and V [Z, H, N, D]. One program computes
BLOCK_M query rows of one (batch, head): grid (cdiv(M, BLOCK_M), Z * H) as
in Tessera. Keys are walked in BLOCK_N blocks with an online softmax in
base 2 (log2(e) folded into the scale); scores, statistics and the
accumulator are f32, P is rounded to the storage type for P @ V, O is
rounded once. CAUSAL: query i sees keys j <= i + (N - M) (bottom-right
aligned); blocks above the diagonal are skipped. In Triton's usual way the
key blocks that every row of the program sees in full run without masks,
and only the blocks on the diagonal or past N are masked. Rows that see no
key get 0. HEAD_DIM >= D is the tile width of the head dimension; columns
past D (EVEN_D false) are masked.
"""

import triton
import triton.language as tl

from .common import DTYPES, Plan, integer, ptr, real, strides
from .common import warps_and_stages, UsageError


@triton.jit
def _attend(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_kd,
            stride_vn, stride_vd, rows, cols_d, D, lo, hi, N, diag,
            qk_scale, BLOCK_N: tl.constexpr, MASKED: tl.constexpr,
            CAUSAL: tl.constexpr, EVEN_D: tl.constexpr,
            PRECISION: tl.constexpr):
    for n0 in range(lo, hi, BLOCK_N):
        keys = n0 + tl.arange(0, BLOCK_N)
        kv_mask = keys[:, None] < N
        if not EVEN_D:
            kv_mask = kv_mask & (cols_d[None, :] < D)
        k_ptrs = (k_base + keys[:, None] * stride_kn
                  + cols_d[None, :] * stride_kd)
        v_ptrs = (v_base + keys[:, None] * stride_vn
                  + cols_d[None, :] * stride_vd)
        if MASKED or not EVEN_D:
            k = tl.load(k_ptrs, mask=kv_mask, other=0.0)
            v = tl.load(v_ptrs, mask=kv_mask, other=0.0)
        else:
            k = tl.load(k_ptrs)
            v = tl.load(v_ptrs)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * qk_scale
        if MASKED:
            valid = keys[None, :] < N
            if CAUSAL:
                valid = valid & (keys[None, :] <= rows[:, None] + diag)
            s = tl.where(valid, s, float("-inf"))
        # A row with no visible key yet keeps m = -inf; shift it by 0 so
        # that exp2 gives 0 rather than NaN.
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_shift)
        p = tl.exp2(s - m_shift[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None],
                     input_precision=PRECISION)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attention(Q, K, V, O, scale, H, M, N, D,  # noqa: E741
              stride_qz, stride_qh, stride_qm, stride_qd,
              stride_kz, stride_kh, stride_kn, stride_kd,
              stride_vz, stride_vh, stride_vn, stride_vd,
              stride_oz, stride_oh, stride_om, stride_od,
              CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              EVEN_D: tl.constexpr, PRECISION: tl.constexpr):
    m0 = tl.program_id(0) * BLOCK_M
    zh = tl.program_id(1)
    z = zh // H
    h = zh % H
    rows = m0 + tl.arange(0, BLOCK_M)
    cols_d = tl.arange(0, HEAD_DIM)
    q_mask = rows[:, None] < M
    if not EVEN_D:
        q_mask = q_mask & (cols_d[None, :] < D)
    q_ptrs = (Q + z * stride_qz + h * stride_qh + rows[:, None] * stride_qm
              + cols_d[None, :] * stride_qd)
    q = tl.load(q_ptrs, mask=q_mask, other=0.0)
    k_base = K + z * stride_kz + h * stride_kh
    v_base = V + z * stride_vz + h * stride_vh
    qk_scale = scale * 1.4426950408889634  # log2(e)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    # Keys [0, full_end) are visible to every row of the block; the rest
    # up to kv_end is on the diagonal or past N and needs masks.
    diag = N - M
    kv_end = N
    full_end = N - N % BLOCK_N
    if CAUSAL:
        kv_end = tl.minimum(N, m0 + BLOCK_M + diag)
        seen_by_all = tl.maximum(tl.minimum(N, m0 + diag + 1), 0)
        full_end = seen_by_all - seen_by_all % BLOCK_N
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_base, v_base, stride_kn,
                            stride_kd, stride_vn, stride_vd, rows, cols_d, D,
                            0, full_end, N, diag, qk_scale, BLOCK_N, False,
                            CAUSAL, EVEN_D, PRECISION)
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_base, v_base, stride_kn,
                            stride_kd, stride_vn, stride_vd, rows, cols_d, D,
                            full_end, kv_end, N, diag, qk_scale, BLOCK_N,
                            True, CAUSAL, EVEN_D, PRECISION)

    o = tl.where((l_i == 0.0)[:, None], 0.0, acc / l_i[:, None])
    o_ptrs = (O + z * stride_oz + h * stride_oh + rows[:, None] * stride_om
              + cols_d[None, :] * stride_od)
    tl.store(o_ptrs, o.to(O.dtype.element_ty), mask=q_mask)


def plan_attention(dtype, arch, shape, config):
    s = shape.int("S", 4096)
    z, h = shape.int(("Z", "B"), 1), shape.int("H", 16)
    m, n = shape.int(("M", "Sq"), s), shape.int(("N", "Sk"), s)
    d = shape.int("D", 64)
    causal = shape.flag(("causal", "CAUSAL")) or config.flag("CAUSAL")
    head_dim = config.int("HEAD_DIM", 64 if d <= 64 else 128,
                          choices=(64, 128))
    if head_dim < d:
        raise UsageError(f"--config HEAD_DIM={head_dim} is below D={d}")
    bm = config.int("BLOCK_M", 64, pow2=True, minimum=16)
    bn = config.int("BLOCK_N", 32, pow2=True, minimum=16)
    num_warps, num_stages = warps_and_stages(config, 4, 2)
    storage, precision = DTYPES[dtype]
    if storage != "fp32":
        precision = None
    qdims, kdims = (z, h, m, d), (z, h, n, d)
    args = [ptr("Q", storage, "[Z, H, M, D]"),
            ptr("K", storage, "[Z, H, N, D]"),
            ptr("V", storage, "[Z, H, N, D]"),
            ptr("O", storage, "output [Z, H, M, D]"),
            real("scale", d ** -0.5, "softmax scale, 1/sqrt(D)"),
            integer("H", h, "heads"), integer("M", m, "queries"),
            integer("N", n, "keys"), integer("D", d, "head dimension"),
            *strides("q", qdims, "zhmd"), *strides("k", kdims, "zhnd"),
            *strides("v", kdims, "zhnd"), *strides("o", qdims, "zhmd")]
    even_d = head_dim == d
    return Plan(
        fn=attention, args=args,
        constexprs={"CAUSAL": causal, "HEAD_DIM": head_dim, "BLOCK_M": bm,
                    "BLOCK_N": bn, "EVEN_D": even_d,
                    "PRECISION": precision},
        num_warps=num_warps, num_stages=num_stages,
        config={"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": head_dim,
                "num_warps": num_warps, "num_stages": num_stages,
                "CAUSAL": causal, "EVEN_D": even_d,
                "input_precision": precision},
        grid="(cdiv(M, BLOCK_M), Z * H)", grid_dims=(-(-m // bm), z * h, 1),
        shape={"Z": z, "H": h, "M": m, "N": n, "D": d, "causal": causal})
