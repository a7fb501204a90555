#!/usr/bin/env bash
# Installs the Debian packages Tessera needs to build, test and benchmark.
# A no-op (no apt call at all) when every package is already present.
set -euo pipefail

packages=(
  cmake ninja-build ccache g++ make python3 python3-matplotlib git
  python3-dev python3-venv
  llvm-22-dev libmlir-22-dev mlir-22-tools
  clang-22 libclang-rt-22-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev libcli11-dev libfmt-dev zlib1g-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
