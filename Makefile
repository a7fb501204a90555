# Thin wrapper over the CMake presets. `make test` and `make bench` work on a
# fresh Debian 12 machine: they install missing packages, configure and build.
PRESET ?= ci
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 60
# Lets ccache reuse objects across checkouts in different directories.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: all deps configure build test bench fuzz format clean

all: build

deps:
	@scripts/install-deps.sh

# The Python package's venv (python/requirements-dev.txt) comes first: the
# configure step builds python/ only when it exists.
configure: deps
	@scripts/setup-python.sh $(BUILD_DIR) || true
	@cmake --preset $(PRESET) > /dev/null

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

test: build
	@ctest --preset $(PRESET) -j $(JOBS)

bench: build
	@scripts/run-bench.sh $(BUILD_DIR) $(BENCH_ARGS)

# The fuzzer has its own preset (clang-22, sanitizers, build/fuzz) whatever
# $(PRESET) is; it builds only the fuzz target and runs it for FUZZ_SECONDS.
fuzz: deps
	@cmake --preset fuzz > /dev/null
	@cmake --build --preset fuzz -j $(JOBS) --target tessera-fuzz-frontend
	@scripts/run-fuzz.sh build/fuzz $(FUZZ_SECONDS)

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf build
