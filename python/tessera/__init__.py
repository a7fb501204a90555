"""Tessera from Python: compile tile-language kernels and run them on arrays.

    import numpy as np, tessera
    prog = tessera.load("kernels_dsl/vector_ops.tile")
    axpy = prog.kernel("axpy", device="cpu")
    axpy(x, y, 2.0)                              # grid from @kernel(grid=...)
    axpy[(4,)](x, y, 2.0, BLOCK_SIZE=512)        # explicit grid and constexprs

Arrays are used in place with their strides: NumPy arrays, anything with
``__dlpack__`` (PyTorch, CuPy), and ml_dtypes' bfloat16 / float8 arrays.
A kernel's generic dtype names (``dtype`` in ``Tensor["N", dtype]``) are
bound from the arrays passed unless a precision policy is given.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Sequence, Tuple

from . import _tessera

__all__ = [
    "CompileError",
    "Error",
    "Kernel",
    "Program",
    "compile_source",
    "device_available",
    "load",
]


class Error(RuntimeError):
    """A failed launch or compile: the runtime's message, and its code."""

    def __init__(self, message: str, code: str = "UNKNOWN"):
        super().__init__(message)
        self.message = message
        self.code = code


class CompileError(Error):
    """A kernel that does not compile: ``file:line:col: error: ...`` with the
    source line and a caret; ``line`` and ``col`` locate the first error
    (None when the message names no position)."""

    def __init__(self, message: str, code: str = "INVALID_ARGUMENT"):
        super().__init__(message, code)
        m = re.search(r":(\d+):(\d+): error", message)
        self.line = int(m.group(1)) if m else None
        self.col = int(m.group(2)) if m else None


def _translate(e: _tessera.Error) -> Error:
    message, code, stage = e.args
    return (CompileError if stage == "compile" else Error)(message, code)


# ml_dtypes' scalar types, which NumPy arrays carry but DLPack and the
# buffer protocol cannot describe: passed as raw bytes with the dtype name.
_BYTE_VIEWS = {
    "bfloat16": ("uint16", "bf16"),
    "float8_e4m3fn": ("uint8", "fp8_e4m3"),
    "float8_e5m2": ("uint8", "fp8_e5m2"),
}

# NumPy / PyTorch / CuPy dtype names -> Tessera dtype names, for binding
# generic dtypes (PyTorch spells them "torch.float32").
_DTYPE_NAMES = {
    "float32": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
    "int8": "i8",
    "int32": "i32",
    "int64": "i64",
    "bool": "bool",
}


def _array_arg(value: Any) -> Tuple[Any, Optional[str]]:
    """(what the native launch takes, the Tessera dtype name or None)."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return value, None
    name = str(getattr(dtype, "name", dtype)).replace("torch.", "")
    if name in _BYTE_VIEWS and hasattr(value, "view"):
        raw, tessera_name = _BYTE_VIEWS[name]
        return (value.view(raw), tessera_name), tessera_name
    return value, _DTYPE_NAMES.get(name)


class Kernel:
    """A kernel of a program, compiled on first call for each set of
    constexprs and dtypes (the runtime caches the compiled variants)."""

    def __init__(self, program: "Program", name: str, device: str,
                 precision: Optional[str], constants: Dict[str, Any],
                 grid: Optional[Sequence[int]] = None):
        self._program = program
        self.name = name
        self.device = device
        self.precision = precision
        self._constants = dict(constants)
        self._grid = tuple(grid) if grid is not None else None
        self._compiled: Dict[Tuple, Any] = {}
        # (name, is_tensor, dtype name, generic) per parameter, read once.
        self._params = program._native.params(name)

    def __getitem__(self, grid) -> "Kernel":
        """``kernel[grid](...)``: launch on an explicit grid of programs."""
        if isinstance(grid, int):
            grid = (grid,)
        return Kernel(self._program, self.name, self.device, self.precision,
                      self._constants, grid)

    def __call__(self, *args: Any, **constants: Any) -> None:
        merged = dict(self._constants)
        merged.update(constants)
        launch_args = []
        params = self._params
        for i, value in enumerate(args):
            arg, dtype = _array_arg(value)
            launch_args.append(arg)
            # A generic dtype name is bound from the first array passed for
            # it, unless a precision policy or the caller binds it.
            if i < len(params):
                pname, is_tensor, dname, generic = params[i]
                if (is_tensor and generic and dtype is not None
                        and self.precision is None and dname not in merged):
                    merged[dname] = dtype
        key = tuple(sorted((k, repr(v)) for k, v in merged.items()))
        native = self._compiled.get(key)
        try:
            if native is None:
                native = self._program._native.compile(
                    self.name, self.device, self.precision or "", merged)
                self._compiled[key] = native
            native.launch(launch_args, list(self._grid) if self._grid else None)
        except _tessera.Error as e:
            raise _translate(e) from None


class Program:
    """A parsed .tile source: its kernels by name."""

    def __init__(self, native):
        self._native = native

    @property
    def name(self) -> str:
        return self._native.name

    def kernels(self):
        return self._native.kernels()

    def kernel(self, name: str, device: str = "cpu",
               precision: Optional[str] = None, **constants: Any) -> Kernel:
        """The kernel `name` for `device` ("cpu", "sim" or "cuda"), with a
        precision policy ("bf16@accum(fp32)", ...) and constexprs."""
        if name not in self._native.kernels():
            raise Error(f"no kernel '{name}' in {self.name} "
                        f"({', '.join(self._native.kernels())})", "NOT_FOUND")
        return Kernel(self, name, device, precision, constants)


def load(path: str) -> Program:
    """Parses the .tile file at `path`."""
    try:
        return Program(_tessera.load_file(str(path)))
    except _tessera.Error as e:
        raise _translate(e) from None


def compile_source(text: str, name: str = "<source>.tile") -> Program:
    """Parses tile-language source text."""
    try:
        return Program(_tessera.load_source(name, text))
    except _tessera.Error as e:
        raise _translate(e) from None


def device_available(device: str) -> Optional[str]:
    """None when `device` can run kernels here, else the reason it cannot."""
    return _tessera.device_status(device)
