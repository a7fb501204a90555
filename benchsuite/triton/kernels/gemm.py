"""gemm.tile `gemm`: C = alpha * op(A) @ op(B) + beta * C.

One program computes one BLOCK_M x BLOCK_N tile of C (grid (cdiv(M,
BLOCK_M), cdiv(N, BLOCK_N)), no reordering, as in Tessera), looping over K
in BLOCK_K steps with an f32 accumulator. A and B are in the storage type,
C is f32. op(A) and op(B) are given by strides: a transposed operand
(TRANS_A: A stored [K, M]) is the same kernel with its strides swapped,
which Triton specialises at compile time when a stride is 1. With beta == 0
C is not read (a run-time branch, as in Tessera); otherwise, when the dot
uses tensor cores (SPLIT_C), the tile is updated in two halves of BLOCK_N /
2 columns. The IEEE f32 dot (FMA) keeps the whole tile: splitting it
spills more there.
"""

import triton
import triton.language as tl

from .common import DTYPES, Plan, integer, ptr, real, warps_and_stages


@triton.jit
def gemm(A, B, C, alpha, beta, M, N, K,
         stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
         BLOCK_K: tl.constexpr, PRECISION: tl.constexpr,
         SPLIT_C: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k0),
                    other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k0) & (rn[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    acc = alpha * acc
    if SPLIT_C and beta != 0.0:
        # Two half-width tiles, so that C and the accumulator are not both
        # live in full (the epilogue sub-tiling of Triton's persistent
        # matmul tutorial); the whole tile spills at 128x128 with 4 warps.
        half = tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2))
        acc0, acc1 = tl.split(tl.permute(half, (0, 2, 1)))
        rn0 = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N // 2)
        _beta_store(C, acc0, beta, rm, rn0, M, N, stride_cm, stride_cn)
        _beta_store(C, acc1, beta, rm, rn0 + BLOCK_N // 2, M, N, stride_cm,
                    stride_cn)
    else:
        c_ptrs = C + rm[:, None] * stride_cm + rn[None, :] * stride_cn
        c_mask = (rm[:, None] < M) & (rn[None, :] < N)
        if beta != 0.0:
            acc += beta * tl.load(c_ptrs, mask=c_mask, other=0.0)
        tl.store(c_ptrs, acc, mask=c_mask)


@triton.jit
def _beta_store(C, acc, beta, rm, rn, M, N, stride_cm, stride_cn):
    """C[rm, rn] = acc + beta * C[rm, rn]."""
    c_ptrs = C + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    acc += beta * tl.load(c_ptrs, mask=c_mask, other=0.0)
    tl.store(c_ptrs, acc, mask=c_mask)


def plan_gemm(dtype, arch, shape, config):
    m = shape.int("M", 4096)
    n = shape.int("N", m)
    k = shape.int("K", m)
    trans_a = shape.flag(("transA", "TRANS_A")) or config.flag("TRANS_A")
    trans_b = shape.flag(("transB", "TRANS_B")) or config.flag("TRANS_B")
    bm = config.int("BLOCK_M", 128, pow2=True, minimum=16)
    bn = config.int("BLOCK_N", 128, pow2=True, minimum=16)
    bk = config.int("BLOCK_K", 32, pow2=True, minimum=16)
    num_warps, num_stages = warps_and_stages(config, 4, 3)
    storage, precision = DTYPES[dtype]
    # Stored layouts, row-major: A [M, K] or [K, M], B [K, N] or [N, K].
    sa = (1, m) if trans_a else (k, 1)
    sb = (1, k) if trans_b else (n, 1)
    args = [ptr("A", storage, "[K, M] (TRANS_A)" if trans_a else "[M, K]"),
            ptr("B", storage, "[N, K] (TRANS_B)" if trans_b else "[K, N]"),
            ptr("C", "fp32", "[M, N], f32"),
            real("alpha", 1.0, "alpha"), real("beta", 0.0, "beta"),
            integer("M", m, "rows of C"), integer("N", n, "columns of C"),
            integer("K", k, "inner dimension"),
            integer("stride_am", sa[0], "stride of op(A) along M"),
            integer("stride_ak", sa[1], "stride of op(A) along K"),
            integer("stride_bk", sb[0], "stride of op(B) along K"),
            integer("stride_bn", sb[1], "stride of op(B) along N"),
            integer("stride_cm", n, "stride of C along M"),
            integer("stride_cn", 1, "stride of C along N")]
    split_c = precision != "ieee"
    notes = []
    if bm * bn > 4096 * num_warps:
        notes.append("BLOCK_M * BLOCK_N > 4096 * num_warps: outside "
                     "Tessera's restrict (more than 128 accumulator "
                     "registers per thread)")
    if dtype.startswith("fp8") and arch == "sm_90a":
        notes.append("fp8 dot products use Triton's default "
                     "max_num_imprecise_acc on sm_90a (the wgmma "
                     "accumulator is not promoted to full f32 per step)")
    return Plan(
        fn=gemm, args=args,
        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk,
                    "PRECISION": precision, "SPLIT_C": split_c},
        num_warps=num_warps, num_stages=num_stages,
        config={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk,
                "num_warps": num_warps, "num_stages": num_stages,
                "input_precision": precision, "SPLIT_C": split_c,
                "TRANS_A": trans_a,
                "TRANS_B": trans_b},
        grid="(cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))",
        grid_dims=(-(-m // bm), -(-n // bn), 1),
        shape={"M": m, "N": n, "K": k, "transA": trans_a,
               "transB": trans_b},
        notes=notes)
