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

# shellcheck source=venv-lib.sh
. "$root/scripts/venv-lib.sh"
make_venv "$venv" 'import ensurepip, venv' python3-venv
log="$venv/setup-triton.log"
pip_requirements "$venv" "$requirements" "$log"
[ "$(installed)" = "$pinned" ] || skip "pip left triton $(installed), not $pinned"

# The driver must find Triton's cuobjdump and nvdisasm.
"$python" "$root/benchsuite/triton/tessera_triton.py" tools >/dev/null ||
  skip "tessera_triton.py tools failed"
echo "$python"
