"""kernels_dsl/softmax.tile and layernorm.tile: rows of edge lengths
(one, a prime, longer than one block), causal softmax, f32 and f16."""

import numpy as np
import pytest

import tolerances
import workloads as w
from conftest import library


def softmax_ref(x, causal):
    x = w.wide(x).copy()
    if causal:  # top-left aligned: row q keeps columns k <= q
        sq, sk = x.shape[-2:]
        q = np.arange(sq)[:, None]
        k = np.arange(sk)[None, :]
        x = np.where(k > q, -np.inf, x)
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("sk", [1, 37, 1500])
@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("causal", [False, True])
def test_softmax(device, sk, dtype, causal):
    x = w.normal((2, 2, 3, sk), dtype, sk, std=2.0)
    out = np.zeros_like(x)
    library("softmax").kernel("softmax", device=device)(x, out, CAUSAL=causal)
    np.testing.assert_allclose(w.wide(out), softmax_ref(x, causal),
                               **tolerances.rows(dtype, sk))


@pytest.mark.parametrize("h", [1, 37, 1500])
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_layernorm(device, h, dtype):
    x = w.normal((2, 3, h), dtype, h, mean=0.5, std=2.0)
    weight = w.uniform(h, dtype, 1, 0.5, 1.5)
    bias = w.uniform(h, dtype, 2)
    out = np.zeros_like(x)
    library("layernorm").kernel("layernorm", device=device)(
        x, weight, bias, out, 1e-5)
    xd = w.wide(x)
    mean = xd.mean(axis=-1, keepdims=True)
    var = xd.var(axis=-1, keepdims=True)
    expected = (xd - mean) / np.sqrt(var + 1e-5) * w.wide(weight) + w.wide(bias)
    np.testing.assert_allclose(w.wide(out), expected,
                               **tolerances.rows(dtype, h))
