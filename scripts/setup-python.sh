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

# shellcheck source=venv-lib.sh
. "$root/scripts/venv-lib.sh"
make_venv "$venv" \
  'import ensurepip, venv, sysconfig, os; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' \
  python3-venv python3-dev
pip_requirements "$venv" "$requirements" "$venv/setup-python.log"
echo "$want" >"$stamp"
