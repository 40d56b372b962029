#!/usr/bin/env bash
# gpu_workflows.sh BUILD_DIR: the GPU checks of the autotuning and
# benchmarking workflows, on a machine with an NVIDIA GPU, from a bundle
# build made elsewhere (BUILD_DIR holds libtk.so, tkc and examples/, or is a
# folder from scripts/pack_gpu.sh with them under build/). Prints one
# PASS/FAIL line per check and a total; exits 1 on any failure. Checks:
#   - the autotuned matmul (examples/matmul_autotune) tunes, caches the
#     choice on disk and matches the float64 reference;
#   - a second process does no tuning (its choice comes from disk), with
#     both first-launch times printed;
#   - the tuned kernel is within 5% of the best config run by hand;
#   - a new problem size (a changed key) tunes again;
#   - tkc -run --gpu --bench reports CUDA-event times (and the interpreter's
#     are labelled wall-clock);
#   - AOT: tkc --emit=cubin --arch sm_90a assembles through the driver (no
#     ptxas on PATH); tkc --emit=header embeds a driver-assembled sm_90a
#     cubin; the header compiles as C11 and C++ with -Werror; the example
#     examples/aot/vector_add_aot.c, built with `cc ... -ldl` (no libtk),
#     runs from the cubin on Hopper and passes.
set -u -o pipefail

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: scripts/gpu_workflows.sh BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$build/libtk.so" ] || [ ! -f "$build/build/libtk.so" ] || build=$build/build
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset TK_INTERPRET TK_PRINT_AUTOTUNING TK_CACHE_DISABLE TK_ALWAYS_COMPILE
TK_CACHE_DIR=$(mktemp -d /tmp/tk_gpu_workflows.XXXXXX)
export TK_CACHE_DIR
work=$(mktemp -d /tmp/tk_gpu_workflows_out.XXXXXX)
mm=$build/examples/matmul_autotune
size="2048 2048 2048"

passed=0
failed=0
check() { # check NAME CONDITION-EXIT-STATUS [DETAIL]
  if [ "$2" -eq 0 ]; then
    echo "PASS: $1${3:+ ($3)}"
    passed=$((passed + 1))
  else
    echo "FAIL: $1${3:+ ($3)}"
    failed=$((failed + 1))
  fi
}
has() { grep -q -- "$2" "$1"; }
first_ms() { sed -n 's/.*first launch \([0-9.]*\) ms.*/\1/p' "$1" | head -1; }

# 1. The first process tunes, caches and matches the reference.
TK_PRINT_AUTOTUNING=1 "$mm" $size > "$work/p1.out" 2> "$work/p1.err"
rc=$?
cat "$work/p1.out" "$work/p1.err"
has "$work/p1.out" "tuned-here" && has "$work/p1.err" "chose config"
check "autotuned matmul tunes on the first launch" $? "timings above"
[ $rc -eq 0 ] && has "$work/p1.out" "relative error .*: OK"
check "autotuned matmul matches the float64 reference" $?
ls "$TK_CACHE_DIR"/*.tkc > /dev/null 2>&1
check "the choice is cached on disk" $? "$(ls "$TK_CACHE_DIR" | wc -l) entries in $TK_CACHE_DIR"

# 2. A second process reads the choice and does no tuning.
TK_PRINT_AUTOTUNING=1 "$mm" $size > "$work/p2.out" 2> "$work/p2.err"
rc=$?
cat "$work/p2.out" "$work/p2.err"
[ $rc -eq 0 ] && has "$work/p2.out" "from-disk (no tuning)" && has "$work/p2.err" "from the disk cache" &&
  ! has "$work/p2.err" "chose config"
check "a second process does no tuning" $? \
  "first launch $(first_ms "$work/p1.out") ms when tuning, $(first_ms "$work/p2.out") ms from the cache"
c1=$(sed -n 's/.*: config \([0-9]*\) {.*/\1/p' "$work/p1.out" | head -1)
c2=$(sed -n 's/.*: config \([0-9]*\) {.*/\1/p' "$work/p2.out" | head -1)
[ -n "$c1" ] && [ "$c1" = "$c2" ]
check "both processes run the same config" $? "config $c1 / $c2"

# 3. The tuned kernel against every config by hand.
"$mm" $size --compare > "$work/p3.out" 2>&1
rc=$?
cat "$work/p3.out"
[ $rc -eq 0 ] && has "$work/p3.out" "within 5%" && ! has "$work/p3.out" "NOT within 5%"
check "the tuned kernel is within 5% of the best config by hand" $?

# 4. A changed key (another size) tunes again.
TK_PRINT_AUTOTUNING=1 "$mm" 1024 512 768 > "$work/p4.out" 2> "$work/p4.err"
rc=$?
cat "$work/p4.out"
[ $rc -eq 0 ] && has "$work/p4.out" "tuned-here" && has "$work/p4.out" "OK"
check "a new problem size tunes again and matches" $?

# 5. tkc -run --bench on the GPU, and labelled wall-clock on the interpreter.
va=$build/examples/vector_add.tk
"$build/tkc" -run "$va" -k vector_add --grid 1024 -D BLOCK=1024 --gpu -o "$work/va" \
  x=randn:f32:1048576 y=randn:f32:1048576 out=zeros:f32:1048576 1048576 --bench > "$work/b1.out" 2>&1
rc=$?
cat "$work/b1.out"
[ $rc -eq 0 ] && has "$work/b1.out" "CUDA events" && ! has "$work/b1.out" "wall-clock"
check "tkc -run --gpu --bench gives CUDA-event times" $?
TK_INTERPRET=1 "$build/tkc" -run "$va" -k vector_add --grid 1 -D BLOCK=64 -o "$work/vi" \
  x=randn:f32:64 y=randn:f32:64 out=zeros:f32:64 64 --bench --bench-ms 10 > "$work/b2.out" 2>&1
rc=$?
cat "$work/b2.out"
[ $rc -eq 0 ] && has "$work/b2.out" "host wall-clock time (not GPU time)"
check "tkc -run --bench on the interpreter is labelled wall-clock" $?

# 6. AOT: a cubin through the driver, with no ptxas to fall back on.
mkdir -p "$work/nobin"
PATH="$work/nobin" "$build/tkc" --emit=cubin --arch sm_90a "$va" -k vector_add -D BLOCK=1024 \
  -s '*fp32:16,*fp32:16,*fp32:16,i32' -o "$work/va.cubin" > "$work/c1.out" 2>&1
rc=$?
cat "$work/c1.out"
[ $rc -eq 0 ] && [ "$(od -A n -c -N 4 "$work/va.cubin" 2>/dev/null | tr -d ' ')" = "177ELF" ]
check "tkc --emit=cubin --arch sm_90a assembles through the driver" $? \
  "$(stat -c %s "$work/va.cubin" 2>/dev/null || echo no) bytes"

# 7. AOT: a header with an sm_90a cubin, compiled as C and C++, and the
#    example built with cc -ldl alone, run.
PATH="$work/nobin" "$build/tkc" --emit=header "$va" -k vector_add -D BLOCK=1024 \
  -s '*fp32:16,*fp32:16,*fp32:16,i32:16' -s '*fp32,*fp32,*fp32,i32' --out-name vector_add_1024 \
  --arch sm_80 --cubin-arch sm_90a -o "$work/vector_add_1024.h" > "$work/h1.out" 2>&1
rc=$?
cat "$work/h1.out"
[ $rc -eq 0 ] && ! has "$work/h1.out" "warning" && has "$work/vector_add_1024.h" '{"sm_90a", 9, 0, 1,'
check "tkc --emit=header embeds an sm_90a cubin assembled by the driver" $?
printf '#include "vector_add_1024.h"\nint main(void) { return vector_add_1024_load(NULL) == TK_OK; }\n' \
  > "$work/hc.c"
cp "$work/hc.c" "$work/hc.cc"
cc -std=c11 -Wall -Wextra -Werror -I"$work" "$work/hc.c" -ldl -pthread -o "$work/hc" &&
  c++ -Wall -Wextra -Werror -I"$work" "$work/hc.cc" -ldl -pthread -o "$work/hcc"
check "the header compiles as C11 and as C++ with -Wall -Wextra -Werror" $?
cc -std=c11 -Wall -Wextra -Werror -I"$work" "$root/examples/aot/vector_add_aot.c" -ldl -pthread \
  -o "$work/vector_add_aot" > "$work/e1.out" 2>&1
rc=$?
cat "$work/e1.out"
linked=$(ldd "$work/vector_add_aot" 2>/dev/null | grep -c -E 'libtk|libcuda')
[ $rc -eq 0 ] && [ "$linked" -eq 0 ]
check "examples/aot/vector_add_aot.c builds with cc -ldl, linking no libtk or libcuda" $?
"$work/vector_add_aot" > "$work/e2.out" 2>&1
rc=$?
sed "s/^/    /" "$work/e2.out"
[ $rc -eq 0 ] && has "$work/e2.out" "^PASS: vector_add_aot"
check "vector_add_aot runs and matches the CPU" $?
cc_major=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
if [ "$cc_major" = "9.0" ]; then
  has "$work/e2.out" "runs from: sm_90a (:16 launcher), sm_90a (plain)"
  check "on Hopper the launchers run the embedded sm_90a cubin" $?
fi

echo "$passed passed, $failed failed"
rm -rf "$work" "$TK_CACHE_DIR"
[ $failed -eq 0 ]
