"""Inputs of the kernel tests and benchmarks (seed 000's layout): one
function per op family, deterministic from a seed, shared by
python/tests/ops and python/benchmarks/ops."""

from __future__ import annotations

import ml_dtypes
import numpy as np

DTYPES = {
    "f32": np.float32,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
}


def uniform(shape, dtype="f32", seed=0, lo=-1.0, hi=1.0):
    """Uniform values in [lo, hi), rounded to `dtype`."""
    rng = np.random.default_rng(seed)
    return rng.uniform(lo, hi, shape).astype(DTYPES[dtype])


def normal(shape, dtype="f32", seed=0, mean=0.0, std=1.0):
    rng = np.random.default_rng(seed)
    return rng.normal(mean, std, shape).astype(DTYPES[dtype])


def wide(x):
    """`x` in float64, the references' precision."""
    return np.asarray(x).astype(np.float64)


# Edge sizes of seed 004: one element, a prime, a non-multiple of the
# block, and a multiple of it.
EDGE_SIZES = [1, 37, 1000, 2048]
