"""Shared fixtures: where the kernel library is, and the devices to run on."""

import os
import pathlib
import sys

import pytest

# python/workloads (after the built package, which must come first).
sys.path.append(str(pathlib.Path(__file__).parents[1]))

import tessera

ROOT = pathlib.Path(os.environ.get("TESSERA_SOURCE_DIR",
                                   pathlib.Path(__file__).parents[2]))
KERNELS = ROOT / "kernels_dsl"


def library(name: str) -> tessera.Program:
    """kernels_dsl/<name>.tile."""
    return tessera.load(KERNELS / f"{name}.tile")


@pytest.fixture(params=["cpu", "sim", "cuda"])
def device(request):
    """Every device: cuda tests skip, with the reason, without a GPU."""
    why = tessera.device_available(request.param)
    if why is not None:
        pytest.skip(f"{request.param}: {why}")
    return request.param
