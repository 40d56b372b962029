#!/usr/bin/env python3
"""gemm_fp8.py: bench/kernels/matmul_fp8.py (an e4m3 GEMM with per-tensor
scales and a bf16 result) under tk and Triton in one process, beside
torch._scaled_mm (cuBLAS's fp8 GEMM) on the same inputs. Every output is
poisoned (NaN) first and checked against the fp32 product of the same fp8
values times the scales, by relative error; times are CUDA-event medians
of --reps runs after warm-up; the best of a few configs per compiler.

    python3 bench/gemm_fp8.py --libtk BUILD/libtk.so [--out FILE]
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import tkbind  # noqa: E402
from gemm import load_module, median_ms, timed_check  # noqa: E402

KERNEL = os.path.join(ROOT, "bench", "kernels", "matmul_fp8.py")
# (BM, BN, BK, GROUP, warps, stages)
CONFIGS = [(128, 256, 128, 8, 8, 3), (128, 256, 64, 8, 8, 4), (128, 128, 128, 8, 4, 4),
           (256, 128, 128, 8, 8, 3)]
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (16384, 1024, 4096), (4096, 14336, 4096)]


class Case:
    def __init__(self, torch, M, N, K):
        torch.manual_seed(M * 3 + N + K)
        f8 = torch.float8_e4m3fn
        self.M, self.N, self.K = M, N, K
        self.a = (torch.randn(M, K, device="cuda") * 2).to(f8)
        self.b = (torch.randn(N, K, device="cuda") * 2).to(f8).t()  # K x N, column-major
        self.sa = torch.tensor([0.37], device="cuda")
        self.sb = torch.tensor([0.81], device="cuda")
        self.ref = (self.a.float() @ self.b.float()) * (0.37 * 0.81)
        self.c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        self.flops = 2.0 * M * N * K
        self.strides = [self.a.stride(0), self.a.stride(1), self.b.stride(0), self.b.stride(1),
                        self.c.stride(0), self.c.stride(1)]


def tk_run(tk, kern, c, cfg):
    BM, BN, BK, G, warps, stages = cfg
    grid = (((c.M + BM - 1) // BM) * ((c.N + BN - 1) // BN),)
    p = tkbind.tk_ptr
    args = [p(c.a.data_ptr(), "f8e4"), p(c.b.data_ptr(), "f8e4"), p(c.c.data_ptr(), "bf16"),
            p(c.sa.data_ptr(), "f32"), p(c.sb.data_ptr(), "f32")]
    args += [tkbind.tk_i32(v) for v in [c.M, c.N, c.K] + c.strides]
    args += [tkbind.tk_const(n, v) for n, v in (("BM", BM), ("BN", BN), ("BK", BK), ("GROUP", G))]
    run = tkbind.TkLaunch(tk, kern, grid, args, warps)
    run.opts.num_stages = stages
    return run


def triton_run(tri, c, cfg):
    BM, BN, BK, G, warps, stages = cfg
    grid = (((c.M + BM - 1) // BM) * ((c.N + BN - 1) // BN),)

    def run():
        tri.matmul_fp8[grid](c.a, c.b, c.c, c.sa, c.sb, c.M, c.N, c.K, *c.strides, BM=BM, BN=BN,
                             BK=BK, GROUP=G, num_warps=warps, num_stages=stages)
    return run


def row(torch, tk, kern, tri, shape, reps):
    c = Case(torch, *shape)
    name = f"fp8 gemm {c.M}x{c.N}x{c.K}"
    best = {"tk": (0.0, None), "triton": (0.0, None)}
    for cfg in CONFIGS:
        for who in ("tk", "triton"):
            fn = tk_run(tk, kern, c, cfg) if who == "tk" else triton_run(tri, c, cfg)
            tf = timed_check(torch, f"{name} {who:6s} {cfg}", fn, [c.c], [c.ref], c.flops, reps)
            if tf > best[who][0]:
                best[who] = (tf, cfg)

    def scaled_mm():
        torch._scaled_mm(c.a, c.b, scale_a=c.sa, scale_b=c.sb, out_dtype=torch.bfloat16, out=c.c)
    cub = timed_check(torch, f"{name} torch._scaled_mm", scaled_mm, [c.c], [c.ref], c.flops, reps)
    return name, best, cub


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--libtk", default=os.environ.get("TK_LIBTK", "build/libtk.so"))
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--out", help="write the markdown table here")
    args = ap.parse_args()
    import torch
    import triton
    tk = tkbind.Tk(args.libtk)
    kern = tk.kernel(KERNEL, "matmul_fp8")
    tri = load_module(KERNEL, "tk_bench_matmul_fp8")
    lines = [f"device {torch.cuda.get_device_name()}, Triton {triton.__version__}", "",
             "| workload | tk TFLOP/s | Triton TFLOP/s | torch._scaled_mm TFLOP/s | tk/Triton | "
             "tk/_scaled_mm | tk config |", "|---|---|---|---|---|---|---|"]
    for shape in SHAPES:
        name, best, cub = row(torch, tk, kern, tri, shape, args.reps)
        t, tr = best["tk"][0], best["triton"][0]
        r1 = f"{t / tr:.3f}" if tr else "-"
        r2 = f"{t / cub:.3f}" if cub else "-"
        lines.append(f"| {name} | {t:.1f} | {tr:.1f} | {cub:.1f} | {r1} | {r2} | {best['tk'][1]} |")
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
