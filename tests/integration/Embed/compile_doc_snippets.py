#!/usr/bin/env python3
"""Compiles every ```c++ block of a document against installed headers.

    compile_doc_snippets.py DOC INCLUDE_DIR [CXX]

Each block becomes the body of a function whose parameters are the free
names the documents use for an application's own data (host pointers a, b,
c; sizes M, N, K, n); `#include` and `using namespace` lines move to the
top of the file. The file is compiled with -fsyntax-only (C++20): the
examples must be valid code against the headers an installation ships.
Exit status 0 when every block compiles (and there is at least one).
"""
import os
import re
import subprocess
import sys
import tempfile

FREE = "void *a, void *b, void *c, int64_t M, int64_t N, int64_t K, int64_t n"


def blocks(text):
    return re.findall(r"```c\+\+\n(.*?)```", text, re.S)


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    doc, include = sys.argv[1], sys.argv[2]
    cxx = sys.argv[3] if len(sys.argv) == 4 else os.environ.get("CXX", "c++")
    with open(doc, encoding="utf-8") as f:
        found = blocks(f.read())
    if not found:
        print("compile_doc_snippets: no c++ blocks in " + doc)
        return 1
    failed = 0
    for i, body in enumerate(found):
        head, code = ["#include <cstdint>"], []
        for line in body.splitlines():
            (head if re.match(r"\s*(#include|using namespace)", line)
             else code).append(line)
        src = "\n".join(head) + "\n\nvoid snippet(%s) {\n%s\n}\n" % (
            FREE, "\n".join(code))
        with tempfile.NamedTemporaryFile("w", suffix=".cpp",
                                         delete=False) as tmp:
            tmp.write(src)
        r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only",
                            "-Wno-unused-variable", "-Wno-unused-result",
                            "-I", include, tmp.name],
                           capture_output=True, text=True)
        os.unlink(tmp.name)
        if r.returncode:
            failed += 1
            print("compile_doc_snippets: %s, block %d does not compile:\n%s"
                  % (doc, i + 1, r.stderr))
    if failed:
        return 1
    print("compile_doc_snippets: %d block(s) of %s compile"
          % (len(found), os.path.basename(doc)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
