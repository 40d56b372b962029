#!/usr/bin/env bash
# dot_prec.sh BUILD_DIR [KERNELS_DIR]: on a machine with a GPU, the cases of
# cases_dot_prec.c (tf32x3 against float64 and against tf32, tf32 and int8
# with operands in either order) on the GPU, after showing which tensor-core
# instructions their kernels compile to for sm_90a (wgmma for tf32, tf32x3
# and int8). BUILD_DIR is a bundle build (-DTK_BUNDLE=ON);
# KERNELS_DIR defaults to test/gpu/kernels beside this script. With $OUT
# set, the output also goes to $OUT/dot_prec.log. Exits 1 on any failure.
set -u -o pipefail

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: test/gpu/dot_prec.sh BUILD_DIR [KERNELS_DIR]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
kernels=${2:-$(cd "$(dirname "$0")" && pwd)/kernels}
log=/dev/null
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  log=$OUT/dot_prec.log
fi
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset TK_INTERPRET
export TK_CACHE_DISABLE=1

{
  # The instructions of some of the cases' specialisations (a :16 or :1
  # in the signature where the runtime finds one).
  f32="*fp32:16,*fp32:16,*fp32:16,i32,i32,i32,i32,i32:1,i32,i32:1,i32,i32:1"
  i8="*i8:16,*i8:16,*i32:16,i32,i32,i32,i32,i32:1,i32,i32:1,i32,i32:1"
  f32k="*fp32:16,*fp32:16,*fp32:16,i32,i32,i32:16,i32:16,i32:1,i32:1,i32:16,i32:16,i32:1"
  for spec in "tf32 $f32 32 64 4" "tf32x3 $f32 32 64 4" "tf32 $i8 64 64 4" \
      "tf32x3 $f32k 32 128 8"; do
    set -- $spec
    echo "== sm_90a dot_gemm_prec PREC=$1 -s $2 BK=$3 BM=BN=$4 warps=$5"
    "$build/tkc" --emit=ptx --arch sm_90a -k dot_gemm_prec -D BM="$4" -D BN="$4" -D BK="$3" \
      -D NS=3 -D PREC="\"$1\"" --num-warps "$5" -s "$2" "$kernels/dot.tk" -o - |
      grep -o 'wgmma.mma_async[a-z0-9.]*\|mma.sync.aligned[a-z0-9.]*' | sort | uniq -c
  done
  "$build/test/gpu/constructs" --gpu --filter dot_prec --kernels "$kernels"
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
