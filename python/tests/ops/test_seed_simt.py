"""kernels_dsl/seed/: seed 002's thread-level kernels from Python."""

import numpy as np
import pytest

import tolerances
import workloads as w
from conftest import KERNELS

import tessera


def seed(name):
    return tessera.load(KERNELS / "seed" / f"{name}.tile")


@pytest.mark.parametrize("n", [1, 37, 1000])
def test_vector_operations_axpy(device, n):
    x, y = w.uniform(n, "f32", 1), w.uniform(n, "f32", 2)
    out = np.zeros(n, np.float32)
    seed("vector_operations").kernel(
        "vector_operations", device=device, operation="axpy",
        result_dtype="f32")(x, y, out, 1.5)
    np.testing.assert_allclose(w.wide(out), 1.5 * w.wide(x) + w.wide(y),
                               **tolerances.elementwise("f32"))


@pytest.mark.parametrize("h", [1, 300])
def test_layernorm_safe(device, h):
    x = w.normal((2, 3, h), "f32", h, mean=0.5, std=2.0)
    weight, bias = w.uniform(h, "f32", 1, 0.5, 1.5), w.uniform(h, "f32", 2)
    out = np.zeros_like(x)
    seed("layernorm_safe").kernel("layernorm_safe", device=device)(
        x, weight, bias, out, 1e-5)
    xd = w.wide(x)
    expected = ((xd - xd.mean(-1, keepdims=True)) /
                np.sqrt(xd.var(-1, keepdims=True) + 1e-5) * w.wide(weight) +
                w.wide(bias))
    np.testing.assert_allclose(w.wide(out), expected,
                               **tolerances.rows("f32", h))


@pytest.mark.parametrize("causal", [False, True])
def test_softmax_safe(device, causal):
    x = w.normal((1, 2, 5, 77), "f32", 3, std=2.0)
    out = np.zeros_like(x)
    seed("softmax_safe").kernel("softmax_safe", device=device,
                                causal_mask=causal)(x, out)
    s = w.wide(x)
    if causal:
        s = np.where(np.arange(77)[None, :] > np.arange(5)[:, None], -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(w.wide(out), p / p.sum(-1, keepdims=True),
                               **tolerances.rows("f32", 77))


@pytest.mark.parametrize("op", ["copy", "triad"])
def test_memory_bandwidth(device, op):
    n = 1000
    a, b = w.uniform(n, "f32", 4), w.uniform(n, "f32", 5)
    c = np.zeros(n, np.float32)
    seed("memory_bandwidth").kernel(
        "memory_bandwidth_kernel", device=device, operation=op,
        access_pattern="sequential")(a, b, c, 2.0, 1)
    expected = w.wide(a) if op == "copy" else w.wide(a) + 2.0 * w.wide(b)
    np.testing.assert_allclose(w.wide(c), expected,
                               **tolerances.elementwise("f32"))
