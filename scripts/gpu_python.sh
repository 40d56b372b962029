#!/usr/bin/env bash
# gpu_python.sh DIR: on a machine with one or two NVIDIA GPUs, the Python
# package's GPU checks in one go, from a folder holding the bundle build
# (DIR/build, scripts/pack_gpu.sh) and the packed package (DIR/pack,
# scripts/pack_python.sh): every test/corpus case through `python -m tk`
# against Triton (split over the GPUs when there are two), the same cases on
# two devices from two threads, the two-process torchrun example, and the
# host cost of a launch from Python. Logs go to $OUT when it is set.
set -u
dir=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PYTHONPATH=$dir/pack${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
out=${OUT:-$(mktemp -d)}
nvidia-smi --query-gpu=index,name,driver_version --format=csv
ngpu=$(nvidia-smi -L | wc -l)
status=0
echo "=== python -m tk over test/corpus against Triton ($ngpu GPU(s))"
pids=()
for ((d = 0; d < ngpu && d < 2; d++)); do
  timeout 400 python3 python/tests/gpu/run_corpus.py --jobs 6 --device "$d" --split "$d/$((ngpu < 2 ? 1 : 2))" \
    --out "$out/corpus_py_$d.txt" >/dev/null 2>"$out/corpus_py_$d.err" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
grep -h -E "^(FAIL|first call|[0-9]+ failed)" "$out"/corpus_py_*.txt | grep -v "^first call" || true
grep -h -A3 "^FAIL" "$out"/corpus_py_*.txt | head -60
grep -h "^first call" "$out"/corpus_py_*.txt | sort -t= -k2 -n | tail -n 5
echo "=== two devices from two threads"
timeout 240 python3 -m tk python/tests/gpu/two_devices.py >"$out/two_devices.txt" 2>&1
rc=$?
tail -n 3 "$out/two_devices.txt"; grep "^FAIL" "$out/two_devices.txt" | head
echo "two_devices rc $rc"; [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
if [ "$ngpu" -ge 2 ]; then
  echo "=== torchrun, two processes"
  TK_CACHE_DIR=$(mktemp -d) timeout 180 torchrun --nproc_per_node=2 \
    examples/python/allreduce_torchrun.py 2>&1 | tail -n 8 || status=1
fi
echo "=== host cost of a launch from Python"
timeout 180 python3 bench/py_launch.py --breakdown 2>&1 | tee "$out/py_launch.txt" || status=1
echo "=== gpu_python status $status"
exit $status
