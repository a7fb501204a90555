"""kernels_dsl/gemm.tile and attention.tile: edge shapes, transposed
storage, f32 and f16 (the policy's accumulator is f32)."""

import numpy as np
import pytest

import tolerances
import workloads as w
from conftest import library


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (37, 20, 45), (100, 64, 130)])
@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm(device, m, n, k, dtype, trans_b):
    a = w.uniform((m, k), dtype, 1)
    b = w.uniform((n, k) if trans_b else (k, n), dtype, 2)
    c = w.uniform((m, n), "f32", 3)
    expected = 0.75 * (w.wide(a) @ (w.wide(b).T if trans_b else w.wide(b))) \
        + 0.5 * w.wide(c)
    gemm = library("gemm").kernel(
        "gemm", device=device, precision=f"{dtype}@accum(fp32)",
        TRANS_B=trans_b, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16)
    gemm(a, b, c, 0.75, 0.5)
    np.testing.assert_allclose(w.wide(c), expected,
                               **tolerances.reduction(dtype, k))


@pytest.mark.parametrize("m,n", [(1, 1), (40, 70)])
@pytest.mark.parametrize("causal", [False, True])
def test_attention(device, m, n, causal):
    d = 16
    q = w.uniform((1, 2, m, d), "f16", 1)
    k = w.uniform((1, 2, n, d), "f16", 2)
    v = w.uniform((1, 2, n, d), "f16", 3)
    o = np.zeros_like(q)
    scale = d ** -0.5
    library("attention").kernel("attention", device=device)(
        q, k, v, o, scale, CAUSAL=causal, HEAD_DIM=d)
    s = scale * np.einsum("zhmd,zhnd->zhmn", w.wide(q), w.wide(k))
    if causal:
        rows = np.arange(m)[:, None]
        cols = np.arange(n)[None, :]
        s = np.where(cols > rows + (n - m), -np.inf, s)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    expected = np.einsum("zhmn,zhnd->zhmd", p, w.wide(v))
    tol = tolerances.rows("f16", max(n, d))
    tol["atol"] *= 2
    np.testing.assert_allclose(w.wide(o), expected, **tol)
