#!/usr/bin/env bash
# gpu_lineinfo.sh BUILD_DIR [CASE]: on a machine with a GPU, ncu and the
# corpus' Python (torch, triton), checks that Nsight Compute maps a tk
# kernel's instructions to its source lines, and (where nsys is installed)
# that TK_NVTX=1 puts tk's ranges in an Nsight Systems report. BUILD_DIR
# holds a bundle libtk.so (-DTK_BUNDLE=ON); CASE is a bench/corpus case
# (default rmsnorm_fwd_offset). Writes the reports and their text under
# $OUT (default /tmp/tk_lineinfo) and prints the first rows of the source
# page. Exit status 0 when the source page names lines of the kernel's file.
set -u -o pipefail
if [ $# -lt 1 ] || [ ! -f "$1/libtk.so" ]; then
  echo "usage: scripts/gpu_lineinfo.sh BUILD_DIR [CASE]   (BUILD_DIR holds libtk.so)" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
case=${2:-rmsnorm_fwd_offset}
out=${OUT:-/tmp/tk_lineinfo}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TK_CACHE_DIR=$(mktemp -d /tmp/tk_lineinfo_cache.XXXXXX)
cd "$root"
line=$(python3 bench/corpus.py --list | awk -v c="$case" '$1 == c { print $3 }')
file=${line%%:*}
kernel=${line##*:}
if [ -z "$kernel" ]; then
  echo "gpu_lineinfo.sh: no corpus case '$case'" >&2
  exit 2
fi
echo "== $case: $file:$kernel"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$ncu" ]; then
  echo "gpu_lineinfo.sh: no ncu here" >&2
  exit 2
fi
"$ncu" --set full --import-source yes -k regex:"^$kernel\$" -c 1 -f -o "$out/lineinfo" \
  python3 bench/corpus.py --libtk "$build/libtk.so" -k "^$case\$" --once --side tk \
  > "$out/ncu_run.txt" 2>&1
echo "ncu exit $? (log: $out/ncu_run.txt)"
tail -5 "$out/ncu_run.txt"
"$ncu" --import "$out/lineinfo.ncu-rep" --page source --csv > "$out/source.csv" 2>&1
echo "== source page (first rows)"
head -15 "$out/source.csv"
"$ncu" --import "$out/lineinfo.ncu-rep" --page source --csv --print-source cuda,sass \
  > "$out/source_sass.csv" 2>&1
head -8 "$out/source_sass.csv"
status=1
if grep -q "$file" "$out/source.csv" "$out/source_sass.csv" ||
   grep -q "$(sed -n 2p "bench/corpus/$file" | cut -c1-30)" "$out/source.csv"; then
  echo "OK: the source page shows $file"
  status=0
else
  echo "FAIL: no line of $file on the source page"
fi
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$nsys" ]; then
  TK_NVTX=1 "$nsys" profile --trace=cuda,nvtx -f true -o "$out/nvtx" \
    python3 bench/corpus.py --libtk "$build/libtk.so" -k "^$case\$" --once --side tk \
    > "$out/nsys_run.txt" 2>&1
  "$nsys" stats --report nvtx_sum "$out/nvtx.nsys-rep" > "$out/nvtx_sum.txt" 2>&1
  echo "== NVTX ranges (TK_NVTX=1)"
  grep -E "tk (launch|compile|load|autotune)|Range" "$out/nvtx_sum.txt" | head -12
else
  echo "(no nsys here: NVTX not checked)"
fi
exit $status
