#!/usr/bin/env python3
"""even_k_gemm.py: bench/kernels/matmul_even_k.py (a GEMM whose K loop loads
without masks) under tk and Triton in one process, on the same inputs, each
output poisoned and checked against an fp32 product; TFLOP/s of the best of
a few configs per compiler, the median of --reps CUDA-event-timed runs.

    python3 bench/even_k_gemm.py --libtk .carry/build/libtk.so
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import tkbind  # noqa: E402
from gemm import load_module, median_ms, timed_check  # noqa: E402

KERNEL = os.path.join(ROOT, "bench", "kernels", "matmul_even_k.py")
CONFIGS = [(128, 128, 64, 4, 3), (128, 256, 64, 8, 3), (128, 128, 64, 4, 4)]


def row(torch, tk, kern, tri, M, N, K, dtype, reps):
    torch.manual_seed(M + N + K)
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    c = torch.empty(M, N, device="cuda", dtype=dtype)
    ref = a.float() @ b.float()
    flops = 2.0 * M * N * K
    name = "f16" if dtype == torch.float16 else "bf16"
    strides = [a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)]
    best = {}
    for BM, BN, BK, warps, stages in CONFIGS:
        grid = ((M + BM - 1) // BM, (N + BN - 1) // BN)
        args = [tkbind.tk_ptr(x.data_ptr(), name) for x in (a, b, c)]
        args += [tkbind.tk_i32(v) for v in [M, N, K] + strides]
        args += [tkbind.tk_const("BLOCK_M", BM), tkbind.tk_const("BLOCK_N", BN),
                 tkbind.tk_const("BLOCK_K", BK)]
        tk_run = tkbind.TkLaunch(tk, kern, grid, args, warps)
        tk_run.opts.num_stages = stages

        def tri_run():
            tri.matmul_even_k[grid](a, b, c, M, N, K, *strides, BLOCK_M=BM, BLOCK_N=BN,
                                    BLOCK_K=BK, num_warps=warps, num_stages=stages)
        cfg = (BM, BN, BK, warps, stages)
        for who, fn in (("tk", tk_run), ("triton", tri_run)):
            tf = timed_check(torch, f"even-K gemm {name} {M}x{N}x{K} {who:6s} {cfg}", fn, [c],
                             [ref], flops, reps)
            best[who] = max(best.get(who, 0), tf)
    cub = flops / median_ms(torch, lambda: torch.matmul(a, b), reps) / 1e9
    return f"even-K gemm {name} {M}x{N}x{K}", best.get("tk", 0), best.get("triton", 0), cub


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--libtk", default=os.environ.get("TK_LIBTK", "build/libtk.so"))
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--profile", action="store_true",
                    help="one launch of each compiler, for ncu (the shape, dtype and config below)")
    ap.add_argument("--profile-shape", default="4096,4096,4096", help="M,N,K for --profile")
    ap.add_argument("--profile-dtype", default="f16", choices=("f16", "bf16"))
    ap.add_argument("--profile-config", type=int, default=0, help="index into CONFIGS")
    args = ap.parse_args()
    import torch
    tk = tkbind.Tk(args.libtk)
    kern = tk.kernel(KERNEL, "matmul_even_k")
    tri = load_module(KERNEL, "tk_bench_even_k")
    print(f"device {torch.cuda.get_device_name()}", flush=True)
    if args.profile:
        global CONFIGS
        CONFIGS = CONFIGS[args.profile_config:args.profile_config + 1]
        M, N, K = (int(x) for x in args.profile_shape.split(","))
        dt = torch.float16 if args.profile_dtype == "f16" else torch.bfloat16
        row(torch, tk, kern, tri, M, N, K, dt, 1)
        return
    rows = [row(torch, tk, kern, tri, M, N, K, dt, args.reps)
            for (M, N, K) in [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 4096, 1024)]
            for dt in (torch.float16, torch.bfloat16)]
    print("| workload | tk | Triton | cuBLAS | tk/Triton |")
    print("|---|---|---|---|---|")
    for name, t, tr, cub in rows:
        ratio = t / tr if tr else float("nan")
        print(f"| {name} | {t:.1f} | {tr:.1f} | {cub:.1f} | {ratio:.3f} |")


if __name__ == "__main__":
    main()
