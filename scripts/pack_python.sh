#!/usr/bin/env bash
# pack_python.sh: the Python package (python/) built against a libtk that
# is built already, in one of two ways.
#   scripts/pack_python.sh BUILD DEST    a folder DEST/tk (the .py files,
#       _tk.abi3.so, libtk.so.0 from BUILD) to copy to a machine with a GPU
#       and use with PYTHONPATH=DEST; BUILD is the GPU bundle
#       (cmake -DTK_BUNDLE=ON: LLVM inside libtk.so), so the machine needs no
#       LLVM and no compiler; the abi3 module serves any CPython >= 3.9.
#   scripts/pack_python.sh --venv BUILD [--test]    installs the package with
#       pip into BUILD/pyvenv (Debian's python3 with its numpy and pytest,
#       scikit-build-core from PyPI), then with --test runs its pytest suite
#       on the interpreter; what scripts/setup.sh and scripts/test.sh call.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${TK_PYTHON:-/usr/bin/python3}
launcher=$(command -v ccache || true)

venv_install() {
  local build venv
  build=$(cd "$1" && pwd)
  venv=$build/pyvenv
  [ -x "$venv/bin/python" ] || "$py" -m venv --system-site-packages "$venv"
  "$venv/bin/python" -c 'import scikit_build_core' 2>/dev/null ||
    "$venv/bin/pip" install -q 'scikit-build-core>=0.8'
  "$venv/bin/pip" install -q --no-build-isolation --force-reinstall --no-deps "$root/python" \
    --config-settings=build-dir="$build/pywheel" \
    --config-settings=cmake.define.TK_PREBUILT_LIB="$build/libtk.so" \
    --config-settings=cmake.define.CMAKE_C_COMPILER_LAUNCHER="$launcher"
  if [ "${2:-}" = --test ]; then
    (cd "$root/python/tests" && "$venv/bin/python" -m pytest -q -p no:cacheprovider .)
  fi
}

pack() {
  local build dest
  build=$(cd "$1" && pwd)
  dest=$2
  [ -f "$build/libtk.so" ] || { echo "pack_python.sh: no $build/libtk.so" >&2; exit 2; }
  cmake -S "$root/python" -B "$build/pypack" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPython_EXECUTABLE="$py" -DTK_PREBUILT_LIB="$build/libtk.so" \
    -DCMAKE_C_COMPILER_LAUNCHER="$launcher" >/dev/null
  cmake --build "$build/pypack"
  rm -rf "$dest/tk"
  cmake --install "$build/pypack" --prefix "$dest" >/dev/null
  strip --strip-unneeded "$dest/tk/_tk.abi3.so"
  echo "packed $dest/tk: PYTHONPATH=$dest python3 -m tk script.py"
  du -sh "$dest/tk"
}

case "${1:-}" in
  --venv) venv_install "$2" "${3:-}" ;;
  ""|-h|--help) sed -n '2,14p' "$0"; exit 2 ;;
  *) pack "$1" "$2" ;;
esac
