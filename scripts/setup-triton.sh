#!/usr/bin/env bash
# Makes BUILD_DIR/venv-triton, a Python venv with the Triton version pinned
# in benchsuite/triton/requirements.txt, for the Triton baseline of the code
# scorecard (benchsuite/triton/). No GPU is needed.
#
#   scripts/setup-triton.sh BUILD_DIR
#
# On success prints the path of the venv's python (and nothing else when
# the venv is already set up, which takes well under a second).
# Exit status: 0 ready; 2 usage; 3 Triton cannot be installed (no python3
# venv, offline, pip failure): one line on stderr, the caller skips the
# Triton baseline. Installs python3-venv with apt-get when the python3 on
# PATH lacks venv/ensurepip and we are root on Debian.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi

root="$(cd "$(dirname "$0")/.." && pwd)"
requirements="$root/benchsuite/triton/requirements.txt"
venv="$1/venv-triton"
python="$venv/bin/python"
pinned="$(sed -n 's/^triton==\([^ ]*\).*/\1/p' "$requirements")"

skip() {
  echo "setup-triton: cannot install triton ($1); the Triton baseline is skipped" >&2
  exit 3
}

installed() {
  "$python" -c 'import importlib.metadata as m; print(m.version("triton"))' \
    2>/dev/null || true
}

if [ -x "$python" ] && [ "$(installed)" = "$pinned" ]; then
  echo "$python"
  exit 0
fi

command -v python3 >/dev/null || skip "no python3"
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  if command -v apt-get >/dev/null && [ "$(id -u)" -eq 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q python3-venv >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 &&
        apt-get install -y -q python3-venv >/dev/null 2>&1; } ||
      skip "apt-get install python3-venv failed"
  fi
  python3 -c 'import ensurepip, venv' 2>/dev/null ||
    skip "python3 has no venv module (install python3-venv)"
fi

mkdir -p "$1"
if [ ! -x "$python" ]; then
  python3 -m venv --clear "$venv" >/dev/null 2>&1 ||
    skip "python3 -m venv $venv failed"
fi

log="$venv/setup-triton.log"
if ! "$python" -m pip install -q --disable-pip-version-check --retries 1 \
    --timeout 20 -r "$requirements" >"$log" 2>&1; then
  reason="$(grep -m1 '^ERROR' "$log" || tail -n1 "$log")"
  skip "pip: ${reason:-failed}, see $log"
fi
[ "$(installed)" = "$pinned" ] || skip "pip left triton $(installed), not $pinned"

# The driver must find Triton's cuobjdump and nvdisasm.
"$python" "$root/benchsuite/triton/tessera_triton.py" tools >/dev/null ||
  skip "tessera_triton.py tools failed"
echo "$python"
