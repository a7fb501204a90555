"""kernels_dsl/stream.tile: the STREAM kernels and their gathers, on
contiguous and strided views."""

import numpy as np
import pytest

import tolerances
import workloads as w
from conftest import library


@pytest.mark.parametrize("stride", [1, 3])
def test_stream(device, stride):
    n = 1000
    prog = library("stream")
    a = w.uniform(n * stride, "f32", 7)[::stride]
    b = w.uniform(n * stride, "f32", 8)[::stride]
    c = np.zeros(n, np.float32)
    cases = {
        "copy": ((a, c), w.wide(a)),
        "scale": ((a, c, 3.0), 3.0 * w.wide(a)),
        "add": ((a, b, c), w.wide(a) + w.wide(b)),
        "triad": ((a, b, c, 3.0), w.wide(a) + 3.0 * w.wide(b)),
    }
    for name, (args, expected) in cases.items():
        c[:] = 0
        prog.kernel(name, device=device)(*args)
        np.testing.assert_allclose(w.wide(c), expected,
                                   **tolerances.elementwise("f32"),
                                   err_msg=name)


def test_gathers(device):
    m, n = 300, 500
    prog = library("stream")
    a, b = w.uniform(m, "f32", 9), w.uniform(m, "f32", 10)
    idx = np.random.default_rng(11).integers(-5, m + 5, n).astype(np.int32)
    ok = (idx >= 0) & (idx < m)
    safe = np.where(ok, idx, 0)
    pick = lambda x: np.where(ok, w.wide(x)[safe], 0.0)  # noqa: E731
    c = np.zeros(n, np.float32)
    cases = {
        "copy_gather": ((a, idx, c), pick(a)),
        "scale_gather": ((a, idx, c, 3.0), 3.0 * pick(a)),
        "add_gather": ((a, b, idx, c), pick(a) + pick(b)),
        "triad_gather": ((a, b, idx, c, 3.0), pick(a) + 3.0 * pick(b)),
    }
    for name, (args, expected) in cases.items():
        c[:] = 0
        prog.kernel(name, device=device)(*args)
        np.testing.assert_allclose(w.wide(c), expected,
                                   **tolerances.elementwise("f32"),
                                   err_msg=name)
