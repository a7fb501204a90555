#!/usr/bin/env bash
# Makes BUILD_DIR/venv-python, the Python venv the `python/` package is
# built and tested with (python/requirements-dev.txt: nanobind, NumPy,
# ml_dtypes, pytest).
#
#   scripts/setup-python.sh BUILD_DIR
#
# Exit status: 0 ready (or already set up); 2 usage; 3 the venv cannot be
# made (no python3 venv, offline, pip failure): one line on stderr, and the
# build configures without the Python package.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi

root="$(cd "$(dirname "$0")/.." && pwd)"
requirements="$root/python/requirements-dev.txt"
venv="$1/venv-python"
python="$venv/bin/python"
stamp="$venv/requirements.sha"

skip() {
  echo "setup-python: cannot set up $venv ($1); the Python package is not built" >&2
  exit 3
}

want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ -x "$python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi

command -v python3 >/dev/null || skip "no python3"
if ! python3 -c 'import ensurepip, venv, sysconfig, os; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null; then
  if command -v apt-get >/dev/null && [ "$(id -u)" -eq 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q python3-venv python3-dev >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 &&
        apt-get install -y -q python3-venv python3-dev >/dev/null 2>&1; } ||
      skip "apt-get install python3-venv python3-dev failed"
  fi
  python3 -c 'import ensurepip, venv' 2>/dev/null ||
    skip "python3 has no venv module (install python3-venv)"
fi

mkdir -p "$1"
if [ ! -x "$python" ]; then
  python3 -m venv --clear "$venv" >/dev/null 2>&1 ||
    skip "python3 -m venv $venv failed"
fi
log="$venv/setup-python.log"
if ! "$python" -m pip install -q --disable-pip-version-check --retries 1 \
    --timeout 20 -r "$requirements" >"$log" 2>&1; then
  reason="$(grep -m1 '^ERROR' "$log" || tail -n1 "$log")"
  skip "pip: ${reason:-failed}, see $log"
fi
echo "$want" >"$stamp"
