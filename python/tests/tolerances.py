"""Allclose parameters of the tests, by storage type: one ulp of the type
at 1.0 (f32 a few hundred ulps for reordered sums), as the project's
tolerance table (docs/testing.md) states them."""

import math

BASE = {"f32": 1e-5, "f16": 1e-3, "bf16": 1.6e-2}


def elementwise(dtype):
    return dict(rtol=BASE[dtype], atol=BASE[dtype])


def reduction(dtype, k):
    """K-term sums and products: atol grows like sqrt(K)."""
    return dict(rtol=BASE[dtype], atol=BASE[dtype] * math.sqrt(max(k, 1)))


def rows(dtype, k):
    """Softmax and layer norm over rows of K: the f32 row statistics."""
    g = 8 * math.sqrt(max(k, 1)) * 2.0 ** -24
    return dict(rtol=BASE[dtype] + g, atol=BASE[dtype] + g)
