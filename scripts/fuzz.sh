#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-19 (build-fuzz/) and runs each for
# SECONDS (default 60), one after the other, from the seed corpora in the
# tree (whole kernel-library modules among them: test/corpus, its package
# kernlib, and the host-code tests; IR text for the reader); new inputs go to build-fuzz/corpus*/ and a crash, hang or leak
# leaves its input in build-fuzz/artifacts/ and fails the script.
#   scripts/fuzz.sh [SECONDS] [EXTRA LIBFUZZER FLAGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
root=$PWD
out=build-fuzz
CC=clang-19 CXX=clang++-19 cmake -S . -B "$out" -G Ninja -DTK_FUZZ=ON -DTK_WERROR=OFF >/dev/null
ninja -C "$out" tk_fuzz_frontend tk_fuzz_sema tk_fuzz_ir
mkdir -p "$out/corpus" "$out/corpus-sema" "$out/corpus-ir" "$out/artifacts"
common=(-max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -max_len=16384
        -artifact_prefix="$root/$out/artifacts/" -print_final_stats=1)
run() {
  local name=$1; shift
  echo "== $name for ${secs}s"
  if ! "$out/$name" "${common[@]}" "$@" >"$out/$name.log" 2>&1; then
    tail -n 40 "$out/$name.log"
    echo "$name: failed (input in $out/artifacts/)"
    return 1
  fi
  grep -E '^stat::(number_of_executed_units|new_units_added)|^Done [0-9]+ runs|DONE' "$out/$name.log" | tail -n 4
}
tk_dict=-dict="$root/test/fuzz/tk.dict"
run tk_fuzz_frontend "$tk_dict" "$@" "$out/corpus" test/fuzz/corpus test/conformance test/front/lex \
  test/front/parse test/front/diag test/front/host test/corpus
run tk_fuzz_sema "$tk_dict" "$@" "$out/corpus-sema" test/fuzz/corpus-sema test/conformance test/ir test/sema \
  examples test/gpu/kernels test/corpus
run tk_fuzz_ir -dict="$root/test/fuzz/ir.dict" "$@" "$out/corpus-ir" test/fuzz/corpus-ir test/ir
