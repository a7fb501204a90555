#!/usr/bin/env bash
# Runs Tessera's benchmark binaries from build directory $1 and prints their
# tables. Used by `make bench`.
set -euo pipefail
build_dir=${1:-build/ci}
bin="$build_dir/bin"
status=0
for b in tessera-cpu-bench tessera-baseline-bench; do
  if [ -x "$bin/$b" ]; then
    echo "== $b"
    "$bin/$b" --benchmark_min_time=0.2s || status=1
  fi
done
exit $status
