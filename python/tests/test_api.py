"""The package's contract: the call forms, arrays used in place with their
strides, ml_dtypes' bf16, DLPack, and errors that leave outputs alone."""

import ml_dtypes
import numpy as np
import pytest

import tessera
from conftest import ROOT

SCALE = """
@kernel(grid=(cdiv(N, BLOCK),))
def scale(x: Tensor["N", dtype], out: Tensor["N", dtype], s: float,
          BLOCK: constexpr = 64):
    i0 = tile.program_id(0) * BLOCK
    v = tile.load(x, offsets=(i0,), shape=(BLOCK,)).to(f32)
    tile.store(out, (s * v).to(dtype), offsets=(i0,))
"""


def _readme_arrays():
    return np.arange(4096, dtype=np.float32), np.ones(4096, dtype=np.float32)


def test_readme_lines(monkeypatch):
    # python/README.md shows these lines; they run from the repository root.
    monkeypatch.chdir(ROOT)
    x, y = _readme_arrays()
    # --- README begin
    import numpy as np, tessera
    prog = tessera.load("kernels_dsl/vector_ops.tile")
    axpy = prog.kernel("axpy", device="cpu")
    axpy(x, y, 2.0)                          # y = 2x + y, grid from @kernel
    axpy[(8,)](x, y, 2.0, BLOCK_SIZE=512)    # explicit grid and constexprs
    # --- README end
    np.testing.assert_array_equal(y, 4.0 * np.arange(4096) + 1.0)


def test_non_contiguous_views_are_used_in_place():
    scale = tessera.compile_source(SCALE).kernel("scale")
    base = np.arange(200, dtype=np.float32)
    out = np.zeros((100, 2), dtype=np.float32)
    scale(base[::2], out[:, 1], 3.0)  # strides 2 and 2 elements
    np.testing.assert_array_equal(out[:, 1], 3.0 * base[::2])
    np.testing.assert_array_equal(out[:, 0], 0.0)


def test_bf16_arrays_through_ml_dtypes():
    scale = tessera.compile_source(SCALE).kernel("scale")
    x = np.linspace(-2, 2, 130).astype(ml_dtypes.bfloat16)
    out = np.zeros(130, dtype=ml_dtypes.bfloat16)
    scale(x, out, 0.5)
    np.testing.assert_array_equal(out.astype(np.float32),
                                  (0.5 * x.astype(np.float32)))


def test_wrong_dtype_is_an_exception_and_writes_nothing():
    scale = tessera.compile_source(SCALE).kernel("scale")
    x = np.ones(64, dtype=np.float32)
    out = np.full(64, 7, dtype=np.int32)
    with pytest.raises(tessera.Error) as e:
        scale(x, out, 2.0)
    assert "out" in str(e.value), str(e.value)
    np.testing.assert_array_equal(out, 7)


class Producer:
    """A DLPack producer of this test's own: only __dlpack__ and
    __dlpack_device__, no buffer protocol, no NumPy type."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None, **kwargs):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_producer():
    scale = tessera.compile_source(SCALE).kernel("scale")
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, dtype=np.float32)
    scale(Producer(x), Producer(out), 2.0)
    np.testing.assert_array_equal(out, 2.0 * x)


def test_compile_errors_carry_the_position():
    bad = SCALE.replace("(s * v)", "(s * w)")
    with pytest.raises(tessera.CompileError) as e:
        tessera.compile_source(bad, "bad.tile").kernel("scale")(
            np.ones(4, np.float32), np.ones(4, np.float32), 1.0)
    assert e.value.line == 7 and e.value.col is not None, str(e.value)
    assert "undefined name 'w'" in str(e.value)
    assert "^" in str(e.value)


def test_unknown_kernel():
    with pytest.raises(tessera.Error, match="no kernel 'nope'"):
        tessera.compile_source(SCALE).kernel("nope")
