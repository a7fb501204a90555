#!/usr/bin/env bash
# Runs the frontend fuzz target for a bounded time. Used by `make fuzz`.
#
#   scripts/run-fuzz.sh [BUILD_DIR [SECONDS [extra libFuzzer flags...]]]
#
# BUILD_DIR (default build/fuzz) holds bin/tessera-fuzz-frontend (the `fuzz`
# preset). The seed corpus (kernels_dsl/*.tile, tests/lit/**/*.tile and the
# saved reproducers in tests/fuzz/regressions/) is copied into a work corpus
# under BUILD_DIR/fuzz-work/corpus, which persists between runs so later runs
# start from what earlier ones found. Fails when libFuzzer reports a crash,
# timeout, leak or OOM; the reproducer is left under
# BUILD_DIR/fuzz-work/artifacts/<run>/ (minimise it with
#   bin/tessera-fuzz-frontend -minimize_crash=1 -runs=10000 <file>
# and save it to tests/fuzz/regressions/).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-build/fuzz}
seconds=${2:-${FUZZ_SECONDS:-60}}
shift $(( $# < 2 ? $# : 2 ))
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac

fuzzer="$build_dir/bin/tessera-fuzz-frontend"
if [ ! -x "$fuzzer" ]; then
  echo "run-fuzz: $fuzzer not found; build it with" >&2
  echo "  cmake --preset fuzz && cmake --build --preset fuzz" >&2
  exit 2
fi

work="$build_dir/fuzz-work"
corpus="$work/corpus"
run_id=$(date +%Y%m%d-%H%M%S)-$$
artifacts="$work/artifacts/$run_id"
mkdir -p "$corpus" "$artifacts"

# Seeds: copied under content-derived names so reruns do not duplicate them.
seed_count=0
while IFS= read -r -d '' f; do
  sum=$(sha1sum "$f" | cut -c1-40)
  cp -n "$f" "$corpus/seed-$sum" 2>/dev/null || true
  seed_count=$((seed_count + 1))
done < <(
  { find "$root/kernels_dsl" -maxdepth 1 -name '*.tile' -type f -print0
    [ -d "$root/tests/lit" ] && find "$root/tests/lit" -name '*.tile' -type f -print0
    [ -d "$root/tests/fuzz/regressions" ] &&
      find "$root/tests/fuzz/regressions" -type f ! -name 'README.md' -print0
  } 2>/dev/null)

echo "run-fuzz: ${seconds}s, $seed_count seeds, corpus $corpus ($(ls "$corpus" | wc -l) files)"

export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:detect_odr_violation=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=0
"$fuzzer" \
  -max_len=8192 -timeout=10 -rss_limit_mb=4096 \
  -max_total_time="$seconds" \
  -dict="$root/tests/fuzz/tile.dict" \
  -artifact_prefix="$artifacts/" \
  -print_final_stats=1 \
  "$@" "$corpus" || status=$?

found=$(find "$artifacts" -type f | sort)
if [ -n "$found" ]; then
  echo "run-fuzz: FAILED, libFuzzer left these reproducers:" >&2
  echo "$found" | sed 's/^/  /' >&2
  exit 1
fi
rmdir "$artifacts" 2>/dev/null || true
if [ "$status" -ne 0 ]; then
  echo "run-fuzz: FAILED, the fuzzer exited with status $status" >&2
  exit "$status"
fi
echo "run-fuzz: no crashes in ${seconds}s"
