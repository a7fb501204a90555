# Shared by scripts/setup-triton.sh and scripts/setup-python.sh (sourced):
# a Python venv made from the python3 on PATH with pinned requirements.
# Each function calls the caller's `skip REASON` (which exits) on failure.

# make_venv VENV PYTHON_CHECK APT_PACKAGES...: the venv at VENV, after
# making sure `python3 -c PYTHON_CHECK` passes (installing APT_PACKAGES with
# apt-get when it does not, we are root and apt-get exists).
make_venv() {
  local venv="$1" check="$2"
  shift 2
  command -v python3 >/dev/null || skip "no python3"
  if ! python3 -c "$check" 2>/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" -eq 0 ]; then
      export DEBIAN_FRONTEND=noninteractive
      apt-get install -y -q "$@" >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 &&
          apt-get install -y -q "$@" >/dev/null 2>&1; } ||
        skip "apt-get install $* failed"
    fi
    python3 -c "$check" 2>/dev/null ||
      skip "python3 lacks what the venv needs (install $*)"
  fi
  mkdir -p "$(dirname "$venv")"
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv --clear "$venv" >/dev/null 2>&1 ||
      skip "python3 -m venv $venv failed"
  fi
}

# pip_requirements VENV REQUIREMENTS LOG: pip install -r REQUIREMENTS.
pip_requirements() {
  local venv="$1" requirements="$2" log="$3"
  if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check \
      --retries 1 --timeout 20 -r "$requirements" >"$log" 2>&1; then
    local reason
    reason="$(grep -m1 '^ERROR' "$log" || tail -n1 "$log")"
    skip "pip: ${reason:-failed}, see $log"
  fi
}
