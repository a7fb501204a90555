"""kernels_dsl/vector_ops.tile from Python: axpy on every device, at the edge
sizes (one element, a prime, a non-multiple of the block), f32 and f16."""

import numpy as np
import pytest

from conftest import library


@pytest.mark.parametrize("n", [1, 37, 1000])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_axpy(device, n, dtype):
    rng = np.random.default_rng(n)
    x = rng.uniform(-1, 1, n).astype(dtype)
    y = rng.uniform(-1, 1, n).astype(dtype)
    expected = (2.0 * x.astype(np.float64) + y.astype(np.float64))
    library("vector_ops").kernel("axpy", device=device)(x, y, 2.0)
    tol = 1e-5 if dtype == np.float32 else 1e-3
    np.testing.assert_allclose(y.astype(np.float64), expected, rtol=tol,
                               atol=tol)
