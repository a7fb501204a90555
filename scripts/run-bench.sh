#!/usr/bin/env bash
# Runs Tessera's main benchmark job from build directory $1:
#   0. the code scorecard: scripts/setup-triton.sh makes the Triton venv
#      (skipped with one line when Triton cannot be installed), then
#      `tessera-bench sass` prints every library kernel's code beside
#      Triton's on sm_80 and sm_90a, results in
#      $build_dir/bench/scorecard.{json,md};
#   1. `tessera-bench run` on the quick sizes of every suite on the best
#      device (cuda when a GPU is usable, else cpu), results in
#      $build_dir/bench/results.{json,md,csv};
#   2. `tessera-bench report` on them: $build_dir/bench/report/index.html
#      (self-contained, with plots) and report.md;
#   3. tessera-cpu-bench (compile latency, cache hits, kernels against
#      baselines; Google Benchmark output, then the targets summary).
# Extra arguments go to `tessera-bench run` (e.g. --suite gemm --sizes full).
# SCORECARD=0 skips step 0; CPU_BENCH=0 skips step 3; BASELINES=1 also runs
# the baseline micro-benchmarks.
set -euo pipefail
build_dir=${1:-build/ci}
shift || true
bin="$build_dir/bin"
export TESSERA_KERNELS_DIR="$(cd "$(dirname "$0")/.." && pwd)/kernels_dsl"
out="$build_dir/bench"
mkdir -p "$out"
status=0
if [ "${SCORECARD:-1}" = "1" ]; then
  baseline=triton
  "$(dirname "$0")/setup-triton.sh" "$build_dir" > /dev/null || {
    rc=$?
    [ "$rc" -eq 3 ] || exit "$rc"
    baseline=none
  }
  rm -f "$out/scorecard.json" "$out/scorecard.md"
  "$bin/tessera-bench" sass --baseline "$baseline" \
    --out "$out/scorecard.json" --out "$out/scorecard.md" || status=$?
fi
rm -f "$out/results.json" "$out/results.md" "$out/results.csv"
"$bin/tessera-bench" run --sizes quick --out "$out/results.json" \
  --out "$out/results.md" --out "$out/results.csv" "$@" || status=$?
# A run with FAILED cases still writes its results: report them too.
if [ -f "$out/results.json" ]; then
  "$bin/tessera-bench" report "$out/results.json" --out "$out/report"
fi
if [ "${CPU_BENCH:-1}" = "1" ]; then
  "$bin/tessera-cpu-bench"
fi
if [ "${BASELINES:-0}" = "1" ]; then
  "$bin/tessera-baseline-bench"
fi
exit $status
