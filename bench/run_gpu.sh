#!/usr/bin/env bash
# run_gpu.sh BUILD_DIR [membound.py options]: the memory-bound benchmark on a
# machine with a GPU, torch and triton, from a build folder made elsewhere
# (configure with -DTK_BUNDLE=ON so libtk.so carries LLVM; nothing is rebuilt
# here). Prints the table and tees everything to $OUT/membound.txt (with
# membound.csv and membound.md beside it) when $OUT is set, with the PTX
# of both sides for reading the table: tk's in $OUT/tk_dump (TK_DUMP_DIR),
# Triton's in $OUT/triton_dump. Exit status: membound.py's (0 only when every
# row was correct).
set -u -o pipefail

if [ $# -lt 1 ] || [ ! -f "$1/libtk.so" ]; then
  echo "usage: bench/run_gpu.sh BUILD_DIR [options]   (BUILD_DIR holds libtk.so)" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
shift

export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TK_LIBTK="$build/libtk.so"
export PYTHONUNBUFFERED=1
unset TK_INTERPRET
# A fresh JIT cache: tk compiles every kernel in this run, then hits in memory.
if [ -z "${TK_CACHE_DIR:-}" ]; then
  TK_CACHE_DIR=$(mktemp -d /tmp/tk_membound_cache.XXXXXX)
  export TK_CACHE_DIR
fi

conf=""
for d in "${TK_CONFORMANCE_DIR:-}" "$root/test/conformance"; do
  [ -n "$d" ] || continue
  if [ -f "$d/vector_add.tk" ]; then conf=$(cd "$d" && pwd); break; fi
done
if [ -z "$conf" ]; then
  echo "run_gpu.sh: no test/conformance folder in $root (set TK_CONFORMANCE_DIR)" >&2
  exit 2
fi

# A fresh Triton cache too, so what it compiled for this run can be kept.
if [ -z "${TRITON_CACHE_DIR:-}" ]; then
  TRITON_CACHE_DIR=$(mktemp -d /tmp/triton_membound_cache.XXXXXX)
  export TRITON_CACHE_DIR
fi

log=/dev/null
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  log=$OUT/membound.txt
  export TK_DUMP_DIR="${TK_DUMP_DIR:-$OUT/tk_dump}"
fi
{
  echo "== membound: build $build, conformance $conf, TK_CACHE_DIR $TK_CACHE_DIR"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
      --format=csv,noheader 2>&1
  fi
} | tee "$log"
python3 "$root/bench/membound.py" --libtk "$build/libtk.so" --conformance "$conf" "$@" 2>&1 \
  | tee -a "$log"
rc=${PIPESTATUS[0]}

# Triton's PTX, TTGIR and metadata, named <kernel>_<cache entry>.<ext>.
if [ -n "${OUT:-}" ] && [ -d "$TRITON_CACHE_DIR" ]; then
  mkdir -p "$OUT/triton_dump"
  for f in "$TRITON_CACHE_DIR"/*/*.ptx "$TRITON_CACHE_DIR"/*/*.ttgir "$TRITON_CACHE_DIR"/*/*.json; do
    [ -f "$f" ] || continue
    entry=$(basename "$(dirname "$f")" | tr -cd 'A-Za-z0-9' | cut -c1-12)
    name=$(basename "$f")
    case "$name" in __grp__*) continue ;; esac
    cp "$f" "$OUT/triton_dump/${name%.*}_$entry.${name##*.}"
  done
fi
exit "$rc"
