#!/usr/bin/env bash
# Runs Tessera's main benchmark job from build directory $1 and prints its
# tables: tessera-cpu-bench (compile latency, cache hits, kernels against
# baselines; Google Benchmark output, then the targets summary), then
# `tessera-bench run` on the quick sizes of its suites on the best device,
# with the results in $build_dir/bench/results.{json,md}. Extra arguments go
# to tessera-cpu-bench (e.g. --benchmark_filter=Gemm). BASELINES=1 also runs
# the baseline micro-benchmarks.
set -euo pipefail
build_dir=${1:-build/ci}
shift || true
bin="$build_dir/bin"
export TESSERA_KERNELS_DIR="$(cd "$(dirname "$0")/.." && pwd)/kernels_dsl"
"$bin/tessera-cpu-bench" "$@"
mkdir -p "$build_dir/bench"
"$bin/tessera-bench" run --sizes quick --out "$build_dir/bench/results.json" \
  --out "$build_dir/bench/results.md"
if [ "${BASELINES:-0}" = "1" ]; then
  "$bin/tessera-baseline-bench"
fi
