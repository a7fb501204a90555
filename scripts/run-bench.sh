#!/usr/bin/env bash
# Runs Tessera's main benchmark job from build directory $1 and prints its
# tables (Google Benchmark output, then the targets summary). Extra
# arguments go to tessera-cpu-bench (e.g. --benchmark_filter=Gemm).
# BASELINES=1 also runs the baseline micro-benchmarks.
set -euo pipefail
build_dir=${1:-build/ci}
shift || true
bin="$build_dir/bin"
export TESSERA_KERNELS_DIR="$(cd "$(dirname "$0")/.." && pwd)/kernels_dsl"
"$bin/tessera-cpu-bench" "$@"
if [ "${BASELINES:-0}" = "1" ]; then
  "$bin/tessera-baseline-bench"
fi
