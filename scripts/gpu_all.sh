#!/usr/bin/env bash
# gpu_all.sh DIR: on a machine with a GPU, everything in one go from a folder
# made by pack_gpu.sh: the GPU suite (conformance, constructs, examples), the
# memory-bound benchmark against Triton and PyTorch, the tensor-core
# benchmark (bench/gemm.py) against Triton and cuBLAS, at sm_80 and native,
# and the launch-overhead
# benchmark against a bare cuLaunchKernel and Triton. Logs go to $OUT.
set -u
dir=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export LD_LIBRARY_PATH=$dir/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
status=0
echo "=== GPU suite"
scripts/gpu_suite.sh "$dir/build" || status=1
echo "=== memory-bound benchmark"
bench/run_gpu.sh "$dir/build" || status=1
echo "=== tensor cores: GEMM, attention, grouped GEMM (both compilers at sm_80)"
TK_ARCH=sm_80 TRITON_OVERRIDE_ARCH=sm80 python3 bench/gemm.py --libtk "$dir/build/libtk.so" 2>&1 \
  | tee ${OUT:+$OUT/gemm.txt} || status=1
echo "=== tensor cores, native (tk at sm_90a with wgmma on Hopper, Triton's default)"
python3 bench/gemm.py --libtk "$dir/build/libtk.so" 2>&1 \
  | tee ${OUT:+$OUT/gemm_native.txt} || status=1
echo "=== launch overhead"
TK_EXAMPLES_DIR=$root/examples "$dir/build/bench/launch_overhead" 2>&1 | tee ${OUT:+$OUT/launch_overhead.txt} || status=1
python3 bench/launch_triton.py examples 2>&1 | tee ${OUT:+$OUT/launch_triton.txt} || status=1
echo "=== gpu_all status $status"
exit $status
