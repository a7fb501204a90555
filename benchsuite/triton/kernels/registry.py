"""Tessera kernel name -> Triton kernel definition."""

from dataclasses import dataclass

from . import attention, gemm, layernorm, softmax, stream, vector_ops
from .common import DTYPES, canonical_dtype

_ROWS = ("f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2")
_FLAT = ("f32", "f16", "bf16")


@dataclass(frozen=True)
class KernelDef:
    name: str
    tessera: str        # file.kernel in kernels_dsl/
    dtypes: tuple
    plan: object        # (dtype, arch, shape, config) -> Plan
    memory_bound: bool  # expected to use 128-bit global accesses


def _defs():
    yield KernelDef("softmax", "softmax.tile softmax", _ROWS,
                    softmax.plan_softmax, True)
    yield KernelDef("layernorm", "layernorm.tile layernorm", _ROWS,
                    layernorm.plan_layernorm, True)
    for name in ("axpy", "add", "mul", "dot", "norm", "reduce_sum",
                 "reduce_max"):
        yield KernelDef(name, f"vector_ops.tile {name}", _FLAT,
                        getattr(vector_ops, f"plan_{name}"), True)
    for name in ("copy", "scale", "add", "triad"):
        yield KernelDef(f"stream_{name}", f"stream.tile {name}", _FLAT,
                        getattr(stream, f"plan_{name}"), True)
        yield KernelDef(f"stream_{name}_gather",
                        f"stream.tile {name}_gather", _FLAT,
                        getattr(stream, f"plan_{name}_gather"), False)
    yield KernelDef("gemm", "gemm.tile gemm", tuple(DTYPES),
                    gemm.plan_gemm, False)
    yield KernelDef("attention", "attention.tile attention",
                    ("f32", "f16", "bf16"), attention.plan_attention, False)


KERNELS = {k.name: k for k in _defs()}

__all__ = ["KERNELS", "DTYPES", "canonical_dtype"]
