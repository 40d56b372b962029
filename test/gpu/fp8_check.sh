#!/usr/bin/env bash
# fp8_check.sh BUILD_DIR: the fp8 cases of the per-construct suite
# (cases_fp8.c, kernels/fp8.tk) on the GPU and on the reference interpreter,
# then, where Triton and PyTorch are installed, Triton's own fp8 conversions
# and dot on the same kernels against the same reference. BUILD_DIR is a
# build made elsewhere (-DTK_BUNDLE=ON carries LLVM inside libtk.so).
# Exits 1 when anything failed.
set -u -o pipefail
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: test/gpu/fp8_check.sh BUILD_DIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TK_CACHE_DISABLE=1
unset TK_INTERPRET
status=0
echo "== fp8 cases on the GPU"
"$build/test/gpu/constructs" --gpu --filter fp8 --kernels "$here/kernels" || status=1
echo "== fp8 cases on the interpreter"
"$build/test/gpu/constructs" --filter fp8 --kernels "$here/kernels" || status=1
if python3 -c "import triton, torch" 2>/dev/null; then
  echo "== Triton on the same kernels"
  (cd "$here" && python3 -c '
import sys
sys.argv = ["triton_check.py", "kernels"]
import triton_check as t
t.case("fp8.tk: conversions and dot", t.check_fp8)
for name, why in t.results:
    print(("FAIL %s: %s" % (name, why)) if why else ("PASS %s" % name))
sys.exit(1 if any(w for _, w in t.results) else 0)
') || status=1
fi
exit $status
