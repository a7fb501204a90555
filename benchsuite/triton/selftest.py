#!/usr/bin/env python3
"""Smoke test of the Triton baseline, no GPU needed.

Compiles every kernel for sm_80 and sm_90a through tessera_triton.py,
checks the files and the JSON, that the memory-bound kernels use 128-bit
global accesses, that gemm uses wgmma on sm_90a and mma.sync on sm_80,
that the registers match the cubin, that user errors exit 2 without a
traceback, and that the chosen nvdisasm/cuobjdump read cubins made by
CUDA 13 ptxas. Run it with the venv's python; exits 1 on any failure, 3
when that python has no triton.

    selftest.py [--out DIR] [--ptxas /usr/local/cuda/bin/ptxas]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "tessera_triton.py")
ARCHS = ("sm_80", "sm_90a")

# Extra (kernel, dtype, config, shape) cases beside the f32 default of each.
# The memory-bound ones expect 128-bit accesses unless listed in NARROW.
EXTRA = [
    ("gemm", "f16", "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,num_warps=4,"
     "num_stages=3", ""),
    ("gemm", "bf16", "BLOCK_N=64,num_warps=8", "transA=1"),
    ("gemm", "tf32", "", ""),
    ("gemm", "fp8_e5m2", "BLOCK_K=64", ""),
    ("gemm", "fp8_e4m3", "BLOCK_K=64", "transB=1"),
    ("attention", "f16", "HEAD_DIM=128,BLOCK_M=128,BLOCK_N=64,num_warps=8",
     "D=128,causal=1"),
    ("attention", "bf16", "", "D=48"),
    ("softmax", "f16", "num_warps=4", "Sk=1000,causal=1"),
    ("softmax", "bf16", "", "Sk=65536"),
    ("softmax", "fp8_e4m3", "", "Sk=2048"),
    ("layernorm", "f16", "BLOCK_SIZE=512,VECTOR_WIDTH=8,num_warps=4",
     "H=8192"),
    ("layernorm", "f32", "", "H=32768"),
    ("stream_triad", "f16", "BLOCK_SIZE=1024,num_warps=4", ""),
    ("dot", "bf16", "", ""),
]

# Rows of 1000 elements are not 16-aligned: Triton loads them narrower.
NARROW = {("softmax", "Sk=1000,causal=1")}

# Expected SASS/PTX traits: (kernel, dtype, arch) -> PTX pattern.
MMA = {("gemm", "f16", "sm_90a"): r"wgmma\.mma_async",
       ("gemm", "f16", "sm_80"): r"mma\.sync",
       ("gemm", "tf32", "sm_90a"): r"wgmma\.mma_async.*tf32",
       ("gemm", "fp8_e4m3", "sm_90a"): r"wgmma\.mma_async.*e4m3"}

# User errors: (arguments, what stderr must mention).
ERRORS = [
    (["--kernel", "nope", "--dtype", "f32", "--arch", "sm_80"], "unknown"),
    (["--kernel", "gemm", "--dtype", "f64", "--arch", "sm_80"], "dtype"),
    (["--kernel", "gemm", "--dtype", "f32", "--arch", "sm_70"], "arch"),
    (["--kernel", "gemm", "--dtype", "fp8_e4m3", "--arch", "sm_80"],
     "sm_80"),
    (["--kernel", "gemm", "--dtype", "f16", "--arch", "sm_80",
      "--config", "BLOCK_M=100"], "power of 2"),
    (["--kernel", "axpy", "--dtype", "f32", "--arch", "sm_80",
      "--config", "num_warps=four"], "integer"),
    (["--kernel", "axpy", "--dtype", "f32", "--arch", "sm_80",
      "--shape", "N"], "K=V"),
]


class Checks:
    def __init__(self):
        self.failures = []
        self.count = 0

    def expect(self, ok, what):
        self.count += 1
        if not ok:
            self.failures.append(what)
            print(f"FAIL {what}")
        return ok


def driver(*args):
    return subprocess.run([sys.executable, DRIVER, *args],
                          capture_output=True, text=True)


def compile_case(checks, out, kernel, dtype, arch, config="", shape=""):
    proc = driver("compile", "--kernel", kernel, "--dtype", dtype,
                  "--arch", arch, "--config", config, "--shape", shape,
                  "--out", out)
    what = f"{kernel} {dtype} {arch} [{config}] [{shape}]"
    if not checks.expect(proc.returncode == 0,
                         f"{what}: exit {proc.returncode}: "
                         f"{proc.stderr.strip()[-800:]}"):
        return None
    record = json.loads(proc.stdout)
    for key in ("cubin", "ptx"):
        checks.expect(os.path.getsize(record[key]) > 0, f"{what}: {key}")
    with open(record["ptx"]) as f:
        ptx = f.read()
    checks.expect(f".entry {record['function']}(" in ptx,
                  f"{what}: function {record['function']} not in the PTX")
    checks.expect(record["registers"] and record["registers"] > 0,
                  f"{what}: no register count")
    record["_ptx"] = ptx
    record["_what"] = what
    return record


def resource_registers(cuobjdump, cubin):
    text = subprocess.run([cuobjdump, "--dump-resource-usage", cubin],
                          capture_output=True, text=True).stdout
    match = re.search(r"REG:(\d+)", text)
    return int(match.group(1)) if match else None


def check_ptxas13(checks, tools, ptxas, ptx_file, arch, out):
    """Assemble a Triton PTX with CUDA 13 ptxas, read it back with the
    nvdisasm and cuobjdump the driver reports."""
    cubin = os.path.join(out, f"ptxas13-{arch}.cubin")
    proc = subprocess.run([ptxas, f"-arch={arch}", ptx_file, "-o", cubin],
                          capture_output=True, text=True)
    current = re.search(r"current version is '([\d.]+)'", proc.stderr)
    if proc.returncode and current:
        # Triton's PTX may declare a newer ISA than this ptxas reads; the
        # instructions are older, so declare the version it knows.
        with open(ptx_file) as f:
            ptx = re.sub(r"^\.version .*$", f".version {current.group(1)}",
                         f.read(), count=1, flags=re.M)
        ptx_file = os.path.join(out, f"ptxas13-{arch}.ptx")
        with open(ptx_file, "w") as f:
            f.write(ptx)
        proc = subprocess.run([ptxas, f"-arch={arch}", ptx_file, "-o",
                               cubin], capture_output=True, text=True)
    if not checks.expect(proc.returncode == 0,
                         f"{ptxas} -arch={arch}: {proc.stderr.strip()}"):
        return
    sass = subprocess.run([tools["nvdisasm"], "-c", cubin],
                          capture_output=True, text=True)
    checks.expect(sass.returncode == 0 and "EXIT" in sass.stdout,
                  f"nvdisasm -c on a CUDA 13 {arch} cubin: "
                  f"{sass.stderr.strip()}")
    dump = subprocess.run([tools["cuobjdump"], "-sass", cubin],
                          capture_output=True, text=True)
    checks.expect(dump.returncode == 0 and "EXIT" in dump.stdout,
                  f"cuobjdump -sass on a CUDA 13 {arch} cubin: "
                  f"{dump.stderr.strip()}")
    print(f"ok   CUDA 13 ptxas {arch} cubin read by nvdisasm and cuobjdump")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="keep the outputs in this folder")
    parser.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="tessera-triton-selftest-")
    checks = Checks()
    start = time.time()

    proc = driver("tools")
    if proc.returncode:
        print(f"selftest: {proc.stderr.strip()}", file=sys.stderr)
        return proc.returncode
    tools = json.loads(proc.stdout)
    kernels = json.loads(driver("list").stdout)
    memory_bound = {"softmax", "layernorm", "axpy", "add", "mul", "dot",
                    "norm", "reduce_sum", "reduce_max", "stream_copy",
                    "stream_scale", "stream_add", "stream_triad"}
    cases = [(k["name"], "f32", "", "") for k in kernels]
    cases += EXTRA
    records = []
    for kernel, dtype, config, shape in cases:
        for arch in ARCHS:
            kdef = next(k for k in kernels if k["name"] == kernel)
            if dtype not in kdef["archs"][arch]:
                continue
            record = compile_case(checks, out, kernel, dtype, arch, config,
                                  shape)
            if record is None:
                continue
            records.append(record)
            what = record["_what"]
            if (kernel in memory_bound and dtype in ("f32", "f16", "bf16")
                    and (kernel, shape) not in NARROW):
                checks.expect(re.search(r"ld\.global(\.\w+)*\.v4",
                                        record["_ptx"]),
                              f"{what}: no 128-bit global load")
            pattern = MMA.get((kernel, dtype, arch))
            if pattern:
                checks.expect(re.search(pattern, record["_ptx"]),
                              f"{what}: no {pattern}")
            reg = resource_registers(tools["cuobjdump"], record["cubin"])
            checks.expect(reg == record["registers"],
                          f"{what}: registers {record['registers']} but "
                          f"the cubin says {reg}")
            print(f"ok   {what}: {record['registers']} regs, "
                  f"{record['shared_bytes']} B shared, "
                  f"{record['spills']} B spilled")

    # 128-bit loads in the SASS of one cubin, read with the bundled nvdisasm.
    copy = next(r for r in records if r["kernel"] == "stream_copy"
                and r["arch"] == "sm_90a")
    sass = subprocess.run([tools["nvdisasm"], "-c", copy["cubin"]],
                          capture_output=True, text=True).stdout
    checks.expect("LDG.E.128" in sass and "STG.E.128" in sass,
                  "stream_copy sm_90a: no LDG.E.128/STG.E.128 in the SASS")

    for arguments, needle in ERRORS:
        proc = driver("compile", *arguments, "--out", out)
        checks.expect(proc.returncode == 2 and needle in proc.stderr
                      and "Traceback" not in proc.stderr,
                      f"{' '.join(arguments)}: exit {proc.returncode}, "
                      f"stderr {proc.stderr.strip()!r}")

    if os.path.exists(args.ptxas):
        for arch in ARCHS:
            softmax = next(r for r in records if r["kernel"] == "softmax"
                           and r["arch"] == arch)
            check_ptxas13(checks, tools, args.ptxas, softmax["ptx"], arch,
                          out)
    else:
        print(f"skip CUDA 13 ptxas check: no {args.ptxas}")

    print(f"\n{len(records)} compiles, {checks.count} checks, "
          f"{len(checks.failures)} failed, {time.time() - start:.0f} s; "
          f"outputs in {out}")
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
