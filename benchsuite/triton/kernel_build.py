"""Compiles a kernel Plan the way a real launch would, without a GPU.

The specialisation is the one Triton's launcher computes for aligned,
contiguous tensors: every pointer is 16-byte aligned (tt.divisibility 16),
each int goes through Triton's own specialisation (an int equal to 1
becomes a constexpr and leaves the signature, a multiple of 16 is flagged
divisible by 16, i32 or i64 by range) and floats are fp32.
"""

import contextlib
import hashlib
import io
import json
import os
import re
import resource
import tempfile
import time

import triton
from triton import knobs
from triton._C.libtriton import native_specialize_impl
from triton.backends.compiler import BaseBackend, GPUTarget
from triton.backends.nvidia.compiler import get_ptxas
from triton.compiler import ASTSource

from kernels.common import ARCHS, UsageError

_DIVISIBLE = [["tt.divisibility", 16]]

# PTX .param type of each signature kind.
_PTX_TYPES = {"pointer": "u64", "i32": "u32", "i64": "u64", "fp32": "f32",
              "global_scratch": "u64", "profile_scratch": "u64"}


def specialise(plan):
    """(signature, constexprs, attrs, params, removed) for ASTSource."""
    by_name = {arg.name: arg for arg in plan.args}
    fn_args = plan.fn.arg_names
    missing = set(by_name) ^ (set(fn_args) - set(plan.constexprs))
    if missing:
        raise RuntimeError(f"plan and kernel disagree on {sorted(missing)}")
    signature, constexprs, attrs = {}, dict(plan.constexprs), {}
    params, removed = [], []
    for index, name in enumerate(fn_args):
        if name in plan.constexprs:
            signature[name] = "constexpr"
            continue
        arg = by_name[name]
        entry = {"name": name, "role": arg.role}
        if arg.kind == "pointer":
            signature[name] = "*" + arg.dtype
            attrs[(index,)] = _DIVISIBLE
            entry.update(kind="pointer", dtype=arg.dtype, align=16)
        elif arg.kind == "int":
            kind, spec = native_specialize_impl(BaseBackend, arg.value,
                                                False, True, True)
            if kind == "constexpr":
                signature[name] = "constexpr"
                constexprs[name] = arg.value
                removed.append({"name": name, "value": arg.value,
                                "role": arg.role,
                                "why": "equal to 1: a constexpr"})
                continue
            signature[name] = kind
            if spec == "D":
                attrs[(index,)] = _DIVISIBLE
            entry.update(kind=kind, value=arg.value,
                         divisible_by_16=spec == "D")
        else:
            signature[name] = "fp32"
            entry.update(kind="fp32", value=arg.value)
        params.append(entry)
    return signature, constexprs, attrs, params, removed


def _ptx_params(ptx, function):
    match = re.search(r"\.entry\s+" + re.escape(function) + r"\s*\(([^)]*)\)",
                      ptx)
    if not match:
        raise RuntimeError(f"no .entry {function} in the PTX")
    return re.findall(r"\.param\s+\.(\w+)", match.group(1))


def _check_params(params, ptx, function):
    found = _ptx_params(ptx, function)
    wanted = [_PTX_TYPES[p["kind"]] for p in params]
    if found != wanted:
        raise RuntimeError(f"PTX parameters {found} of {function} do not "
                           f"match the plan {wanted}")


def _ptxas_usage(log):
    """registers, spill store/load bytes and stack from a ptxas -v log."""
    def number(pattern):
        match = re.search(pattern, log)
        return int(match.group(1)) if match else None
    return {"registers": number(r"Used (\d+) registers"),
            "spills": number(r"(\d+) bytes spill stores"),
            "spill_loads": number(r"(\d+) bytes spill loads"),
            "stack_bytes": number(r"(\d+) bytes stack frame")}


def _cpu_seconds():
    """CPU time of this process and its finished children (ptxas)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _compile(src, target, options):
    """triton.compile with the ptxas -v log captured (no cache hit)."""
    log = io.StringIO()
    saved = (knobs.compilation.always_compile, knobs.nvidia.dump_ptxas_log,
             knobs.cache.dir)
    with tempfile.TemporaryDirectory(prefix="tessera-triton-") as cache:
        knobs.compilation.always_compile = True
        knobs.nvidia.dump_ptxas_log = True
        knobs.cache.dir = cache
        try:
            with contextlib.redirect_stdout(log):
                # The first compile of a process also sets Triton up; the
                # second, into an empty cache again, is the one timed.
                triton.compile(src, target=target, options=options)
                knobs.cache.dir = tempfile.mkdtemp(dir=cache)
                log.seek(0)
                log.truncate()
                cpu0, wall0 = _cpu_seconds(), time.perf_counter()
                kernel = triton.compile(src, target=target, options=options)
                compile_s = (_cpu_seconds() - cpu0,
                             time.perf_counter() - wall0)
        except Exception as error:  # Triton's compile errors vary by stage
            text = str(error).strip() or type(error).__name__
            text = "\n".join(text.splitlines()[:40])
            raise UsageError(f"Triton cannot compile it: {text}") from None
        finally:
            (knobs.compilation.always_compile, knobs.nvidia.dump_ptxas_log,
             knobs.cache.dir) = saved
    return kernel, log.getvalue(), compile_s


def _default_id(kernel, dtype, arch, plan, constexprs):
    key = json.dumps([plan.shape, plan.config, sorted(map(str,
                     constexprs.items()))], sort_keys=True, default=str)
    digest = hashlib.sha1(key.encode()).hexdigest()[:8]
    return f"{kernel}-{dtype}-{arch}-{digest}"


def compile_plan(kdef, dtype, arch, plan, out_dir, name=None):
    """Compiles `plan`, writes <id>.cubin/.ptx/.json in out_dir and
    returns the JSON record."""
    signature, constexprs, attrs, params, removed = specialise(plan)
    src = ASTSource(plan.fn, signature=signature, constexprs=constexprs,
                    attrs=attrs)
    target = GPUTarget("cuda", ARCHS[arch], 32)
    options = {"num_warps": plan.num_warps, "num_stages": plan.num_stages,
               "num_ctas": 1, "enable_fp_fusion": True}
    kernel, log, (compile_cpu, compile_wall) = _compile(src, target, options)
    meta = kernel.metadata
    ptx = kernel.asm["ptx"]
    params.append({"name": "global_scratch", "kind": "global_scratch",
                   "bytes_per_program": meta.global_scratch_size,
                   "align": meta.global_scratch_align})
    params.append({"name": "profile_scratch", "kind": "profile_scratch",
                   "bytes_per_program": meta.profile_scratch_size,
                   "align": meta.profile_scratch_align})
    _check_params(params, ptx, meta.name)

    os.makedirs(out_dir, exist_ok=True)
    ident = name or _default_id(kdef.name, dtype, arch, plan, constexprs)
    base = os.path.abspath(os.path.join(out_dir, ident))
    with open(base + ".cubin", "wb") as f:
        f.write(kernel.asm["cubin"])
    with open(base + ".ptx", "w") as f:
        f.write(ptx)

    ptxas = get_ptxas(ARCHS[arch])
    usage = _ptxas_usage(log)
    notes = list(plan.notes)
    notes.append(f"registers/spills/stack: the ptxas -v log of the ptxas "
                 f"run that made this cubin ({ptxas.path}, CUDA "
                 f"{ptxas.version}); spills are spill-store bytes")
    notes.append("shared_bytes is the dynamic shared memory Triton "
                 "launches with (opt in above 48 KiB)")
    notes.append("compile_cpu_ms: CPU time (with ptxas) of a compile into an "
                 "empty cache, after a first compile set the process up")
    record = {
        "kernel": kdef.name, "tessera_kernel": kdef.tessera,
        "dtype": dtype, "arch": arch,
        "triton_version": triton.__version__, "function": meta.name,
        "id": ident, "cubin": base + ".cubin", "ptx": base + ".ptx",
        "num_warps": meta.num_warps, "num_stages": meta.num_stages,
        "num_ctas": meta.num_ctas, "shared_bytes": meta.shared,
        **usage,
        "config": plan.config, "params": params,
        "removed_params": removed,
        "launch": {"block": [32 * meta.num_warps, 1, 1],
                   "dynamic_shared_bytes": meta.shared,
                   "cluster": [meta.num_ctas, 1, 1],
                   "cooperative": meta.launch_cooperative_grid,
                   "pdl": meta.launch_pdl},
        "grid": plan.grid, "grid_dims": list(plan.grid_dims),
        "shape": plan.shape,
        "ptxas": {"path": ptxas.path, "version": ptxas.version},
        "compile_cpu_ms": compile_cpu * 1e3,
        "compile_wall_ms": compile_wall * 1e3,
        "notes": "; ".join(notes),
    }
    with open(base + ".json", "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    return record
