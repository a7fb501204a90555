#!/usr/bin/env python3
"""Triton baseline of Tessera's code scorecard: compiles the Triton
versions of Tessera's library kernels for sm_80 / sm_90a without a GPU.

    tessera_triton.py tools
    tessera_triton.py list
    tessera_triton.py compile --kernel NAME --dtype DT --arch ARCH
                              [--shape K=V,...] [--config K=V,...]
                              --out DIR [--name ID]

Run it with the python of the venv made by scripts/setup-triton.sh.
Output is JSON on stdout. Exit status: 0 success, 2 a rejected request or
a Triton compile failure (message on stderr), 3 Triton is not installed.
See README.md.
"""

import argparse
import json
import os
import sys

EXIT_USAGE = 2
EXIT_NO_TRITON = 3

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _fail(message, status=EXIT_USAGE):
    print(f"tessera_triton: {message}", file=sys.stderr)
    return status


def _pairs(option, text):
    """'K=V,K=V' -> {K: V}."""
    pairs = {}
    for item in filter(None, (p.strip() for p in (text or "").split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{option} {item!r}: K=V expected")
        pairs[key.strip()] = value.strip()
    return pairs


def cmd_tools(_args):
    import triton
    from triton import knobs
    from triton.backends.nvidia.compiler import get_ptxas
    from kernels.common import ARCHS
    print(json.dumps({
        "triton_version": triton.__version__,
        "cuobjdump": knobs.nvidia.cuobjdump.path,
        "nvdisasm": knobs.nvidia.nvdisasm.path,
        "ptxas": {arch: get_ptxas(cc).path for arch, cc in ARCHS.items()},
        "python": sys.executable,
    }, indent=2))
    return 0


def cmd_list(_args):
    from kernels import KERNELS
    from kernels.common import ARCHS, UsageError, check_arch_dtype

    def accepted(kdef, arch):
        out = []
        for dtype in kdef.dtypes:
            try:
                check_arch_dtype(arch, dtype)
                out.append(dtype)
            except UsageError:
                pass
        return out

    print(json.dumps([{"name": k.name, "tessera": k.tessera,
                       "dtypes": list(k.dtypes),
                       "archs": {a: accepted(k, a) for a in ARCHS}}
                      for k in KERNELS.values()], indent=2))
    return 0


def cmd_compile(args):
    from kernel_build import compile_plan
    from kernels import KERNELS, canonical_dtype
    from kernels.common import ARCHS, UsageError, Values, check_arch_dtype

    kdef = KERNELS.get(args.kernel)
    if kdef is None:
        raise UsageError(f"unknown kernel {args.kernel!r} (known: "
                         f"{', '.join(KERNELS)})")
    dtype = canonical_dtype(args.dtype)
    if dtype not in kdef.dtypes:
        raise UsageError(f"{kdef.name} takes no dtype {args.dtype!r} "
                         f"(it takes {', '.join(kdef.dtypes)})")
    if args.arch not in ARCHS:
        raise UsageError(f"unknown arch {args.arch!r} (known: "
                         f"{', '.join(ARCHS)})")
    check_arch_dtype(args.arch, dtype)
    try:
        shape = Values("--shape", _pairs("--shape", args.shape))
        config = Values("--config", _pairs("--config", args.config))
    except ValueError as error:
        raise UsageError(str(error))
    plan = kdef.plan(dtype, args.arch, shape, config)
    for option, values in (("--shape", shape), ("--config", config)):
        if values.unused():
            plan.notes.append(f"ignored {option} keys: "
                              f"{', '.join(values.unused())}")
    record = compile_plan(kdef, dtype, args.arch, plan, args.out, args.name)
    print(json.dumps(record, indent=2))
    return 0


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="tessera_triton.py",
        description="Compile Triton versions of Tessera's kernels.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("tools", help="triton version and disassembler paths")
    sub.add_parser("list", help="known kernels and their dtypes")
    comp = sub.add_parser("compile", help="compile one kernel")
    comp.add_argument("--kernel", required=True)
    comp.add_argument("--dtype", required=True)
    comp.add_argument("--arch", required=True)
    comp.add_argument("--shape", default="")
    comp.add_argument("--config", default="")
    comp.add_argument("--out", required=True)
    comp.add_argument("--name", help="file name stem (default: derived)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        import triton  # noqa: F401
    except ImportError as error:
        return _fail(f"cannot import triton ({error}); run "
                     "scripts/setup-triton.sh", EXIT_NO_TRITON)
    from kernels.common import UsageError
    command = {"tools": cmd_tools, "list": cmd_list,
               "compile": cmd_compile}[args.command]
    try:
        return command(args)
    except UsageError as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"{error.filename or ''}: {error.strerror}")


if __name__ == "__main__":
    sys.exit(main())
