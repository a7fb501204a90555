#!/usr/bin/env bash
# Installs the build BUILD_DIR into a temporary prefix, checks the installed
# headers, then configures, builds and runs examples/embed against the
# installation on cpu and sim (cuda when a GPU is there), as an application
# would. Usage: run-embed-example.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1 build=$2 work=$3
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"

cmake --install "$build" --prefix "$prefix" > "$work/install.log"
python3 "$src/tests/integration/Embed/check_headers.py" --self-test
python3 "$src/tests/integration/Embed/check_headers.py" "$prefix/include"
# The C++ examples of the embedding guide compile against them.
python3 "$src/tests/integration/Embed/compile_doc_snippets.py" \
  "$src/docs/embedding.md" "$prefix/include"
test -f "$prefix/lib/cmake/Tessera/TesseraConfig.cmake"
ls "$prefix"/lib/libtessera_runtime.so* "$prefix"/lib/libtessera_autotune.so* \
  > /dev/null

generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
cmake -S "$src/examples/embed" -B "$work/build" "${generator[@]}" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"
# The example loads the installed library (not the build tree's).
# (ldd's output is read whole: grep -q stopping early would fail the pipe.)
libs=$(ldd "$work/build/embed_example")
if ! grep -q "libtessera_runtime.so.* => $prefix/lib/" <<< "$libs"; then
  echo "embed_example does not load the installed runtime:"
  echo "$libs"
  exit 1
fi
for device in cpu sim cuda; do
  "$work/build/embed_example" "$device" "$work"
done
# The installed tools run from the prefix and find their kernels.
"$prefix/bin/tessera-compile" "$prefix/share/tessera/kernels_dsl/vector_ops.tile" \
  --kernel axpy --emit tile > /dev/null
echo "embed example: ok"
