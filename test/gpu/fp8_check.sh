#!/usr/bin/env bash
# fp8_check.sh BUILD_DIR: the fp8 cases of the per-construct suite
# (cases_fp8.c, kernels/fp8.tk and kernels/dot.tk) on the GPU and on the
# reference interpreter, after showing which tensor-core instructions the
# dot compiles to for sm_90a (wgmma) and sm_89 (mma.sync); then, where Triton and PyTorch are installed, Triton's own fp8 conversions
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
# One of the cases' specialisations (a :16 or :1 in the signature where
# the runtime finds one), each fp8 format on each side.
strides="i32,i32,i32:16,i32:16,i32:1,i32:1,i32:16,i32:16,i32:1"
for arch in sm_90a sm_89; do
  for f in "fp8e4nv fp8e4nv" "fp8e5 fp8e5" "fp8e4nv fp8e5" "fp8e5 fp8e4nv"; do
    set -- $f
    echo "== $arch dot_gemm_prec $1 x $2"
    "$build/tkc" --emit=ptx --arch $arch -k dot_gemm_prec -D BM=128 -D BN=128 -D BK=64 -D NS=3 \
      -D PREC='"tf32"' --num-warps 8 -s "*$1:16,*$2:16,*fp32:16,$strides" \
      "$here/kernels/dot.tk" -o - |
      grep -o 'wgmma.mma_async[a-z0-9.]*\|mma.sync.aligned[a-z0-9.]*' | sort | uniq -c
  done
done
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
