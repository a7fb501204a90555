"""Triton versions of Tessera's library kernels (kernels_dsl/*.tile).

Each module defines the @triton.jit kernels of one .tile family and a
`plan_*` function per kernel that turns (dtype, arch, shape, config) into a
`Plan`: the arguments a real launch would pass, the constexprs and the
compile options. `KERNELS` maps Tessera's kernel names to their definitions.
"""

from .registry import KERNELS, DTYPES, canonical_dtype

__all__ = ["KERNELS", "DTYPES", "canonical_dtype"]
