#!/usr/bin/env bash
# Packs the built test binaries and tessera-bench, with the shared
# libraries they need from this machine (libLLVM, libMLIR and their
# dependencies), into DIR (default .gpu, which git ignores), so that they
# run on a GPU machine that has the CUDA driver and toolkit but no LLVM/MLIR.
# There, from a checkout of the same commit:
#   bash DIR/run.sh            # unpack, then the cuda tests and the bench
#   bash DIR/run.sh tests|bench
# Everything is xz-compressed (about 62 MB; python3's lzma unpacks it when
# xz is missing). BUILD defaults to build/ci.
set -euo pipefail
DIR=${1:-.gpu}
BUILD=${BUILD:-build/ci}
mkdir -p "$DIR/libs" "$DIR/bin"
bins="KernelsCpuTest CudaDriverTest CudaToolsTest RuntimeApiTest tessera-compile tessera-bench"
tar -C "$BUILD/bin" -cf - $bins | xz -9 -T0 > "$DIR/bin/bin.tar.xz"
# The libraries KernelsCpuTest loads, except the C/C++ runtime itself.
libs=$(ldd "$BUILD/bin/KernelsCpuTest" | awk '/=> \// {print $3}' |
       grep -v -E '/lib(c|m|gcc_s|stdc\+\+|pthread|dl|rt)\.so')
for l in $libs; do
  out="$DIR/libs/$(basename "$l").xz"
  [ -e "$out" ] || xz -9 -T0 -c "$(readlink -f "$l")" > "$out"
done
cat > "$DIR/run.sh" <<'RUN'
#!/bin/bash
set -u
here=$(cd "$(dirname "$0")" && pwd)
T=/tmp/tessera-gpu-run; mkdir -p $T/lib $T/bin
python3 - "$here" "$T" <<'PY'
import glob, lzma, os, shutil, sys, tarfile
src, dst = sys.argv[1], sys.argv[2]
tarfile.open(src + '/bin/bin.tar.xz').extractall(dst + '/bin')
for f in glob.glob(src + '/libs/*.xz'):
    out = dst + '/lib/' + os.path.basename(f)[:-3]
    if not os.path.exists(out):
        with lzma.open(f) as i, open(out, 'wb') as o:
            shutil.copyfileobj(i, o, 1 << 24)
PY
export LD_LIBRARY_PATH=$T/lib TESSERA_SOURCE_DIR=$PWD TESSERA_CACHE_DIR=/tmp/tessera-cache
step=${1:-all}
if [ $step = tests ] || [ $step = all ]; then
  for t in CudaDriverTest CudaToolsTest RuntimeApiTest KernelsCpuTest; do
    echo "=== $t (cuda)"; TESSERA_DEVICE=cuda $T/bin/$t --gtest_brief=1
  done
fi
if [ $step = bench ] || [ $step = all ]; then
  # The cases recorded on GPUs (docs/bench.md), at the kernels' defaults.
  $T/bin/tessera-bench --kernels "$PWD/kernels_dsl" run --device cuda \
    --sizes gpu --tune off --out /tmp/tessera-bench-gpu.json
fi
RUN
du -sh "$DIR"
