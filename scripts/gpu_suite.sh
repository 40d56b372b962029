#!/usr/bin/env bash
# gpu_suite.sh BUILD_DIR: the whole GPU suite in one command, on a machine
# with a GPU, from a build folder made elsewhere (configure with
# -DTK_BUNDLE=ON so libtk.so carries LLVM; nothing is rebuilt here).
# Runs the conformance runner, the per-construct runner and every example
# program on the GPU, prints their output, then one total line
# `N passed, N failed`; exits 1 on any failure. With $OUT set, the same text
# also goes to $OUT/gpu_suite.log. The conformance kernels come from
# $TK_CONFORMANCE_DIR, else test/conformance in the source tree.
set -u -o pipefail

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: scripts/gpu_suite.sh BUILD_DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
log=/dev/null
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  log=$OUT/gpu_suite.log
  : > "$log"
fi

# The binaries find libtk.so here whatever path the build was made at.
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset TK_INTERPRET
# A fresh JIT cache: every kernel is compiled by this run.
if [ -z "${TK_CACHE_DIR:-}" ]; then
  TK_CACHE_DIR=$(mktemp -d /tmp/tk_gpu_suite_cache.XXXXXX)
  export TK_CACHE_DIR
fi

say() { printf '%s\n' "$*" | tee -a "$log"; }

passed=0
failed=0
summary=()

# run_runner NAME CMD...: a runner that ends with `N passed, N failed`.
run_runner() {
  local name=$1; shift
  say "== $name: $*"
  local out rc
  out=$(mktemp)
  timeout 900 "$@" 2>&1 | tee -a "$log" | tee "$out"
  rc=${PIPESTATUS[0]}
  local line p f
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
  rm -f "$out"
  if [ -n "$line" ]; then
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
  else
    p=0; f=0
  fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    say "FAIL $name: exited with status $rc without reporting a failed case"
    f=1
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  summary+=("$name: $p passed, $f failed")
}

say "== gpu_suite: build $build, source $root"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$log"
fi

# 1. The conformance kernels.
conf_dir=""
for d in "${TK_CONFORMANCE_DIR:-}" "$root/test/conformance"; do
  [ -n "$d" ] || continue
  if [ -d "$d" ]; then conf_dir=$(cd "$d" && pwd); break; fi
done
if [ -x "$build/test/conformance/conformance" ]; then
  if [ -n "$conf_dir" ]; then
    run_runner conformance "$build/test/conformance/conformance" --gpu "$conf_dir"
  else
    say "FAIL conformance: no test/conformance folder in $root"
    failed=$((failed + 1))
    summary+=("conformance: kernels not found")
  fi
else
  say "== conformance: not built in $build (skipped)"
fi

# 2. The per-construct suite.
if [ -x "$build/test/gpu/constructs" ]; then
  run_runner constructs "$build/test/gpu/constructs" --gpu --kernels "$root/test/gpu/kernels"
else
  say "FAIL constructs: $build/test/gpu/constructs is missing"
  failed=$((failed + 1))
  summary+=("constructs: missing")
fi

# 2b. The JIT's registers against ptxas's for the same PTX, where ptxas is on PATH.
if [ -x "$build/test/gpu/jit_registers" ] && command -v ptxas >/dev/null; then
  run_runner jit_registers "$build/test/gpu/jit_registers"
fi

# 3. Every example program, at its default (GPU) sizes; one case each.
ex_pass=0
ex_fail=0
if [ -d "$build/examples" ]; then
  for exe in "$build"/examples/*; do
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    name=$(basename "$exe")
    say "== example $name"
    timeout 600 "$exe" 2>&1 | tee -a "$log"
    rc=${PIPESTATUS[0]}
    if [ "$rc" -eq 0 ]; then
      say "PASS example $name"
      ex_pass=$((ex_pass + 1))
    else
      say "FAIL example $name: exit status $rc"
      ex_fail=$((ex_fail + 1))
    fi
  done
fi
passed=$((passed + ex_pass))
failed=$((failed + ex_fail))
summary+=("examples: $ex_pass passed, $ex_fail failed")

say "== summary"
for s in "${summary[@]}"; do say "  $s"; done
say "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
