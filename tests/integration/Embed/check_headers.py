#!/usr/bin/env python3
"""Checks an installed include tree: every header it holds includes only
standard headers and headers of the same tree, and nothing from LLVM, MLIR,
CLI11, CUDA or the compiler's internals.

    check_headers.py INCLUDE_DIR     exit 0 when clean, 1 with the findings
    check_headers.py --self-test     the checker catches a bad tree
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
FORBIDDEN = ("mlir/", "llvm/", "llvm-c/", "CLI/", "cuda", "nvrtc",
             "tessera/Driver/", "tessera/Dialect/", "tessera/Conversion/",
             "tessera/Target/", "tessera/Frontend/", "tessera/Sema/")


def check(root):
    findings = []
    headers = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            headers.append(os.path.join(dirpath, f))
    if not headers:
        return ["no headers under " + root]
    for path in sorted(headers):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(2)
                where = "%s:%d: includes %s" % (rel, lineno, name)
                if any(name.startswith(p) or ("/" + p) in name
                       for p in FORBIDDEN):
                    findings.append(where + " (not public)")
                elif m.group(1) == '"' or "/" in name:
                    if not os.path.isfile(os.path.join(root, name)):
                        findings.append(where + " (not installed)")
    return findings


def self_test():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "tessera"))
        with open(os.path.join(d, "tessera", "ok.h"), "w") as f:
            f.write('#include <vector>\n#include "tessera/ok.h"\n')
        if check(d):
            return "a clean tree was refused: %s" % check(d)
        with open(os.path.join(d, "tessera", "bad.h"), "w") as f:
            f.write('#include "mlir/IR/Value.h"\n'
                    '#include "tessera/Driver/Driver.h"\n'
                    '#include "tessera/missing.h"\n')
        found = check(d)
        if len(found) != 3:
            return "a bad tree gave %s" % found
    return None


def main():
    if sys.argv[1:] == ["--self-test"]:
        err = self_test()
        if err:
            print("check_headers: self-test failed: " + err)
            return 1
        print("check_headers: self-test passed")
        return 0
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    findings = check(sys.argv[1])
    for f in findings:
        print("check_headers: " + f)
    if findings:
        return 1
    print("check_headers: the installed headers are self-contained")
    return 0


if __name__ == "__main__":
    sys.exit(main())
