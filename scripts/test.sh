#!/usr/bin/env bash
# Runs every test this machine supports: lit/FileCheck golden and
# diagnostics tests, C unit tests, numeric tests on the interpreter (and on
# the GPU when there is one), the Python package's pytest suite (built into
# build/pyvenv), the installed tree (symbols, pkg-config and
# CMake packages, static library, manual page, Debian package); then the
# same suite in an ASan+UBSan build, and a minute of each fuzz target where
# clang-19 is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

run_suite() {
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  ninja -C "$dir"
  (cd "$dir" && ctest --output-on-failure -j"$jobs")
}

echo "== release build"
run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTK_STATIC=ON
echo "== the Python package: built into build/pyvenv, pytest on the interpreter"
scripts/pack_python.sh --venv build --test
echo "== ASan+UBSan build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  run_suite build-san -DCMAKE_BUILD_TYPE=Debug -DTK_SANITIZE=ON
if command -v clang-19 >/dev/null 2>&1; then
  echo "== fuzzing, 60 seconds per target"
  scripts/fuzz.sh 60
fi
if ls /dev/nvidia0 >/dev/null 2>&1 && [ -x scripts/gpu_suite.sh ]; then
  echo "== GPU suite"
  scripts/gpu_suite.sh build
fi
echo "== all tests passed"
