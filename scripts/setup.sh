#!/usr/bin/env bash
# Installs what tk needs on Debian 12 (as root), builds it, and runs the
# main job: compile examples/vector_add.tk to PTX and, when a GPU is
# present, run it.
set -euo pipefail
cd "$(dirname "$0")/.."

# g++: the AOT tests compile generated headers as C++ too (build-essential has it)
packages=(build-essential g++ cmake ninja-build flex bison python3 llvm-19-dev llvm-19-tools
          clang-19 libclang-rt-19-dev libzstd-dev zlib1g-dev
          clang-format-19  # scripts/check_format.sh: the C sources follow .clang-format
          pkg-config man-db groff-base dpkg-dev file  # these five: the install tests
          python3-numpy   # the corpus harness's interpreter test (test/corpus/run_gpu.py)
          python3-dev python3-venv python3-pytest)  # the Python package (python/)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# a python3 other than Debian's (pyenv) gets numpy from PyPI; without it
# the corpus harness's test is skipped
python3 -c 'import numpy' 2>/dev/null || python3 -m pip install -q numpy ||
  echo "numpy not installed: the corpus_interpret test will be skipped"

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
ninja -C build

echo "== the Python package into build/pyvenv (pip install ./python against build/libtk.so)"
scripts/pack_python.sh --venv build

echo "== tkc examples/vector_add.tk -> build/vector_add.ptx"
build/tkc examples/vector_add.tk -k vector_add -D BLOCK=1024 \
  -s '*fp32:16,*fp32:16,*fp32:16,i32' -o build/vector_add.ptx
grep -m3 -E '^\.(version|target|visible)' build/vector_add.ptx
if [ -x build/examples/vector_add ]; then
  if ls /dev/nvidia0 >/dev/null 2>&1; then
    echo "== running vector_add on the GPU"
    build/examples/vector_add
  else
    echo "== no GPU here: running vector_add on the reference interpreter"
    TK_INTERPRET=1 build/examples/vector_add
  fi
fi
