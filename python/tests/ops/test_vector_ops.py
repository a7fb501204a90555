"""kernels_dsl/vector_ops.tile: every kernel on every device, at seed 004's
edge sizes, f32 and f16 (bf16 for axpy)."""

import numpy as np
import pytest

import tolerances
import workloads as w
from conftest import library

SIZES = [1, 37, 2048]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_axpy(device, n, dtype):
    x, y = w.uniform(n, dtype, 1), w.uniform(n, dtype, 2)
    expected = 2.0 * w.wide(x) + w.wide(y)
    library("vector_ops").kernel("axpy", device=device)(x, y, 2.0)
    np.testing.assert_allclose(w.wide(y), expected,
                               **tolerances.elementwise(dtype))


@pytest.mark.parametrize("op", ["add", "mul"])
@pytest.mark.parametrize("n", SIZES)
def test_binary(device, op, n):
    x, y = w.uniform(n, "f16", 3), w.uniform(n, "f16", 4)
    out = np.zeros(n, np.float16)
    library("vector_ops").kernel(op, device=device)(x, y, out)
    expected = (w.wide(x) + w.wide(y)) if op == "add" else w.wide(x) * w.wide(y)
    np.testing.assert_allclose(w.wide(out), expected,
                               **tolerances.elementwise("f16"))


@pytest.mark.parametrize("n", SIZES)
def test_reductions(device, n):
    prog = library("vector_ops")
    x, y = w.uniform(n, "f32", 5), w.uniform(n, "f32", 6)
    out = np.zeros(1, np.float32)
    prog.kernel("dot", device=device)(x, y, out)
    np.testing.assert_allclose(out[0], np.dot(w.wide(x), w.wide(y)),
                               **tolerances.reduction("f32", n))
    out[0] = 0
    prog.kernel("norm", device=device)(x, out)
    prog.kernel("norm_finalize", device=device)(out)
    np.testing.assert_allclose(out[0], np.linalg.norm(w.wide(x)),
                               **tolerances.reduction("f32", n))
    out[0] = 0
    prog.kernel("reduce_sum", device=device)(x, out)
    np.testing.assert_allclose(out[0], w.wide(x).sum(),
                               **tolerances.reduction("f32", n))
    out[0] = -np.inf
    prog.kernel("reduce_max", device=device)(x, out)
    assert out[0] == x.max()
