"""GEMM and attention on tensor cores: the same source under tk and under
Triton, in one process, on the same inputs, with cuBLAS (torch.matmul)
alongside. Each result is checked against an fp32 reference on fresh random
inputs, the output poisoned (NaN) first; times are CUDA-event medians over
many runs after warm-up. Prints TFLOP/s per compiler and tk/Triton.

    TK_ARCH=sm_80 TRITON_OVERRIDE_ARCH=sm80 python3 bench/gemm.py --libtk BUILD/libtk.so
    python3 bench/gemm.py --libtk BUILD/libtk.so     # native: sm_90a (wgmma) on Hopper

Needs torch and triton on a machine with an NVIDIA GPU.
"""
import argparse
import importlib.machinery
import importlib.util
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import tkbind  # noqa: E402

MATMUL = os.path.join(ROOT, "examples", "matmul.tk")
ATTENTION = os.path.join(ROOT, "bench", "kernels", "attention.tk")
GROUPED = os.path.join(ROOT, "bench", "kernels", "grouped_gemm.tk")
PERSISTENT = os.path.join(ROOT, "bench", "kernels", "matmul_persistent.tk")
PERSISTENT_TMA = os.path.join(ROOT, "bench", "kernels", "matmul_persistent_tma.tk")
MATMUL_WS = os.path.join(ROOT, "bench", "kernels", "matmul_ws.tk")

# (BM, BN, BK, GROUP, warps, stages): Triton tutorial 03's configs for fp16
CONFIGS = [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 4, 4), (128, 128, 32, 8, 4, 4),
           (64, 128, 32, 8, 4, 4)]


def load_module(path, name):
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def median_ms(torch, fn, reps, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def rel_err(torch, out, ref):
    out = out.float()
    if not torch.isfinite(out).all():
        return float("inf")
    return (torch.linalg.norm(out - ref) / torch.linalg.norm(ref)).item()


class Gemm:
    def __init__(self, torch, tk, triton_mod, path=MATMUL, num_ctas=1):
        self.torch, self.tk, self.tri = torch, tk, triton_mod
        self.kernel = tk.kernel(path, "matmul")
        self.num_ctas = num_ctas

    def tk_launch(self, a, b, c, cfg):
        launch = tkbind.matmul_launch(self.tk, self.kernel, a, b, c, cfg)
        launch.opts.num_ctas = self.num_ctas
        return launch

    def triton_launch(self, a, b, c, cfg):
        BM, BN, BK, G, warps, stages = cfg
        M, K = a.shape
        N = b.shape[1]
        grid = (((M + BM - 1) // BM) * ((N + BN - 1) // BN),)

        def run():
            self.tri.matmul[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                  b.stride(1), c.stride(0), c.stride(1), BM=BM, BN=BN, BK=BK,
                                  GROUP=G, num_warps=warps, num_stages=stages)
        return run


def gemm_rows(torch, g, shapes, dtypes, configs, reps):
    rows = []
    for (M, N, K) in shapes:
        for dt in dtypes:
            torch.manual_seed(M + N + K)
            a = torch.randn(M, K, device="cuda", dtype=dt)
            b = torch.randn(K, N, device="cuda", dtype=dt)
            ref = a.float() @ b.float()
            c = torch.empty(M, N, device="cuda", dtype=dt)
            flops = 2.0 * M * N * K
            best = {"tk": (0, None), "triton": (0, None)}
            errs = {}
            for cfg in configs:
                for who, make in (("tk", g.tk_launch), ("triton", g.triton_launch)):
                    try:
                        fn = make(a, b, c, cfg)
                        c.fill_(float("nan"))
                        fn()
                        torch.cuda.synchronize()
                        err = rel_err(torch, c, ref)
                        ms = median_ms(torch, fn, reps)
                    except Exception as e:  # a config one compiler cannot run
                        print(f"  {who} {cfg}: {e}", flush=True)
                        continue
                    tf = flops / ms / 1e9
                    errs[(who, cfg)] = err
                    ok = err < 2e-2
                    print(f"  {M}x{N}x{K} {str(dt)[6:]} {who:6s} {cfg}: {tf:7.1f} TFLOP/s "
                          f"rel.err {err:.2e}{'' if ok else '  WRONG'}", flush=True)
                    if ok and tf > best[who][0]:
                        best[who] = (tf, cfg)
            cub = flops / median_ms(torch, lambda: torch.matmul(a, b), reps) / 1e9
            nc = f" num_ctas={g.num_ctas}" if g.num_ctas > 1 else ""
            rows.append((f"gemm{nc} {str(dt)[6:]} {M}x{N}x{K}", best["tk"], best["triton"], cub))
    return rows


def attention_rows(torch, tk, tri, shapes, reps):
    rows = []
    kern = tk.kernel(ATTENTION, "attn_fwd")
    for (Z, H, S, D, causal) in shapes:
        torch.manual_seed(S + D)
        q, k, v = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
        o = torch.empty_like(q)
        scale = D ** -0.5
        BM, BN, warps, stages = (128, 64, 8, 3) if D >= 128 else (128, 64, 4, 3)
        grid = ((S + BM - 1) // BM, Z * H)
        strides = [q.stride(i) for i in range(4)]

        def tri_run():
            tri.attn_fwd[grid](q, k, v, o, scale, *strides, H, S, D=D, BM=BM, BN=BN,
                               CAUSAL=causal, num_warps=warps, num_stages=stages)
        args = [tkbind.tk_ptr(x.data_ptr(), "f16") for x in (q, k, v, o)]
        args += [tkbind.tk_f32(scale)] + [tkbind.tk_i32(s) for s in strides]
        args += [tkbind.tk_i32(H), tkbind.tk_i32(S), tkbind.tk_const("D", D),
                 tkbind.tk_const("BM", BM), tkbind.tk_const("BN", BN),
                 tkbind.tk_const("CAUSAL", 1 if causal else 0)]
        tk_run = tkbind.TkLaunch(tk, kern, grid, args, warps)
        tk_run.opts.num_stages = stages
        ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                               is_causal=causal, scale=scale)
        flops = 4.0 * Z * H * S * S * D * (0.5 if causal else 1.0)
        res = {}
        for who, fn in (("tk", tk_run), ("triton", tri_run)):
            try:
                o.fill_(float("nan"))
                fn()
                torch.cuda.synchronize()
                err = rel_err(torch, o, ref)
                ms = median_ms(torch, fn, reps)
            except Exception as e:
                print(f"  attention {who}: {e}", flush=True)
                res[who] = (0, None)
                continue
            tf = flops / ms / 1e9
            print(f"  attention Z{Z} H{H} S{S} D{D} causal={causal} {who:6s}: {tf:7.1f} TFLOP/s "
                  f"rel.err {err:.2e}{'' if err < 2e-2 else '  WRONG'}", flush=True)
            res[who] = (tf if err < 2e-2 else 0, (BM, BN, warps, stages))
        rows.append((f"attention fwd D{D}{' causal' if causal else ''} S{S}", res["tk"],
                     res["triton"], None))
    return rows


def timed_check(torch, label, fn, outs, refs, flops, reps):
    """Poisons the outputs, runs fn once and checks each output against its
    reference, then times fn. Prints one line; returns TFLOP/s, or 0 where
    the result is wrong or the run failed."""
    try:
        for o in outs:
            o.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        err = max(rel_err(torch, o, r) for o, r in zip(outs, refs))
        ms = median_ms(torch, fn, reps)
    except Exception as e:  # a config one compiler cannot run
        print(f"  {label}: {e}", flush=True)
        return 0
    tf = flops / ms / 1e9
    ok = err < 2e-2
    print(f"  {label}: {tf:7.1f} TFLOP/s rel.err {err:.2e}{'' if ok else '  WRONG'}", flush=True)
    return tf if ok else 0


def grouped_rows(torch, tk, tri, groups, reps):
    """One persistent launch over every tile of every (M, N, K) problem."""
    kern = tk.kernel(GROUPED, "grouped_gemm")
    torch.manual_seed(len(groups))
    A = [torch.randn(m, k, device="cuda", dtype=torch.float16) for m, n, k in groups]
    B = [torch.randn(k, n, device="cuda", dtype=torch.float16) for m, n, k in groups]
    C = [torch.empty(m, n, device="cuda", dtype=torch.float16) for m, n, k in groups]
    refs = [a.float() @ b.float() for a, b in zip(A, B)]
    flops = sum(2.0 * m * n * k for m, n, k in groups)
    ptrs = [torch.tensor([x.data_ptr() for x in L], device="cuda", dtype=torch.int64)
            for L in (A, B, C)]
    dims = torch.tensor([v for g in groups for v in g], device="cuda", dtype=torch.int32)
    res = {}
    for cfg in [(128, 128, 32, 4, 4), (128, 128, 64, 8, 3), (64, 128, 32, 4, 4)]:
        BM, BN, BK, warps, stages = cfg
        starts = [0]
        for m, n, k in groups:
            starts.append(starts[-1] + ((m + BM - 1) // BM) * ((n + BN - 1) // BN))
        tile_start = torch.tensor(starts, device="cuda", dtype=torch.int32)
        programs = torch.cuda.get_device_properties(0).multi_processor_count
        args = [tkbind.tk_ptr(p.data_ptr(), "i64") for p in ptrs]
        args += [tkbind.tk_ptr(dims.data_ptr(), "i32"), tkbind.tk_ptr(tile_start.data_ptr(), "i32"),
                 tkbind.tk_i32(starts[-1]), tkbind.tk_i32(programs), tkbind.tk_const("BM", BM),
                 tkbind.tk_const("BN", BN), tkbind.tk_const("BK", BK)]
        tk_run = tkbind.TkLaunch(tk, kern, (programs,), args, warps)
        tk_run.opts.num_stages = stages

        def tri_run():
            tri.grouped_gemm[(programs,)](ptrs[0], ptrs[1], ptrs[2], dims, tile_start, starts[-1],
                                          programs, BM=BM, BN=BN, BK=BK, num_warps=warps,
                                          num_stages=stages)
        for who, fn in (("tk", tk_run), ("triton", tri_run)):
            tf = timed_check(torch, f"grouped gemm {who:6s} {cfg}", fn, C, refs, flops, reps)
            if tf > res.get(who, (0, None))[0]:
                res[who] = (tf, cfg)
    name = "grouped gemm fp16 " + ",".join(f"{m}x{n}x{k}" for m, n, k in groups)
    return [(name, res.get("tk", (0, None)), res.get("triton", (0, None)), None)]


def persistent_rows(torch, tk, tri, shapes, reps, path=PERSISTENT, name="matmul_persistent",
                    ws=None):
    """Tutorial 09's shape of kernel: one program per SM walking the tiles.
    ws is the WS constexpr of matmul_persistent_tma.tk (affine tiles, which
    TMA copies on sm_90a; WS asks for warp specialization), None for the
    kernel with clamped rows, which has none."""
    kern = tk.kernel(path, name)
    tri_kernel = getattr(tri, name)
    extra = {} if ws is None else {"WS": ws}
    label = "persistent" if ws is None else f"persistent tma{' ws' if ws else ''}"
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for (M, N, K) in shapes:
        torch.manual_seed(M + N + K + 9)
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        ref = a.float() @ b.float()
        flops = 2.0 * M * N * K
        res = {}
        for cfg in [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 8, 3), (128, 128, 64, 8, 4, 4)]:
            BM, BN, BK, G, warps, stages = cfg
            grid = (min(sms, ((M + BM - 1) // BM) * ((N + BN - 1) // BN)),)
            strides = [a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                       c.stride(1)]
            args = [tkbind.tk_ptr(x.data_ptr(), "f16") for x in (a, b, c)]
            args += [tkbind.tk_i32(v) for v in [M, N, K] + strides]
            args += [tkbind.tk_const(n, v) for n, v in (("BM", BM), ("BN", BN), ("BK", BK),
                                                         ("GROUP", G), ("NUM_SMS", grid[0]))]
            args += [tkbind.tk_const(n, int(v)) for n, v in extra.items()]
            tk_run = tkbind.TkLaunch(tk, kern, grid, args, warps)
            tk_run.opts.num_stages = stages

            def tri_run():
                tri_kernel[grid](a, b, c, M, N, K, *strides, BM=BM, BN=BN, BK=BK, GROUP=G,
                                 NUM_SMS=grid[0], num_warps=warps, num_stages=stages, **extra)
            for who, fn in (("tk", tk_run), ("triton", tri_run)):
                tf = timed_check(torch, f"{label} gemm {M}x{N}x{K} {who:6s} {cfg}", fn, [c],
                                 [ref], flops, reps)
                if tf > res.get(who, (0, None))[0]:
                    res[who] = (tf, cfg)
        cub = flops / median_ms(torch, lambda: torch.matmul(a, b), reps) / 1e9
        rows.append((f"{label} gemm fp16 {M}x{N}x{K}", res.get("tk", (0, None)),
                     res.get("triton", (0, None)), cub))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--libtk", default=os.environ.get("TK_LIBTK", "build/libtk.so"))
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="4096^3 fp16 and one attention shape")
    ap.add_argument("--no-attention", action="store_true")
    ap.add_argument("--only", choices=("gemm", "attention", "grouped", "persistent", "ws"),
                    help="run one kind of workload")
    ap.add_argument("--num-ctas", type=int, default=1,
                    help="tk's plain GEMMs in clusters of this many CTAs (Triton's num_ctas; "
                         "Triton's side stays at 1)")
    args = ap.parse_args()
    import torch
    tk = tkbind.Tk(args.libtk)
    tri_mm = load_module(MATMUL, "tk_bench_matmul")
    g = Gemm(torch, tk, tri_mm, num_ctas=args.num_ctas)
    print(f"device {torch.cuda.get_device_name()}, TK_ARCH={os.environ.get('TK_ARCH')}, "
          f"TRITON_OVERRIDE_ARCH={os.environ.get('TRITON_OVERRIDE_ARCH')}", flush=True)
    rows = []
    if args.only not in (None, "gemm"):
        pass
    elif args.quick:
        rows = gemm_rows(torch, g, [(4096, 4096, 4096)], [torch.float16], CONFIGS, args.reps)
    else:
        rows = gemm_rows(torch, g, [(4096, 4096, 4096), (8192, 8192, 8192), (16384, 1024, 4096)],
                         [torch.float16, torch.bfloat16], CONFIGS, args.reps)
    if args.only == "ws":  # the K loop warp-specialized, under both compilers
        g_ws = Gemm(torch, tk, load_module(MATMUL_WS, "tk_bench_matmul_ws"), MATMUL_WS)
        rows = gemm_rows(torch, g_ws, [(4096, 4096, 4096), (8192, 8192, 8192)],
                         [torch.float16, torch.bfloat16], CONFIGS, args.reps)
        rows = [(f"ws {r[0]}",) + r[1:] for r in rows]
    if not args.no_attention and args.only in (None, "attention") and os.path.exists(ATTENTION):
        tri_at = load_module(ATTENTION, "tk_bench_attention")
        shapes = [(4, 32, 4096, 64, False)] if args.quick else \
            [(4, 32, 4096, d, c) for d in (64, 128) for c in (False, True)]
        rows += attention_rows(torch, tk, tri_at, shapes, args.reps)
    if args.only in (None, "grouped") and os.path.exists(GROUPED):
        tri_gg = load_module(GROUPED, "tk_bench_grouped")
        groups = [(1024, 1024, 1024), (2048, 1024, 2048), (512, 2048, 1024), (4096, 512, 2048)]
        rows += grouped_rows(torch, tk, tri_gg, groups, args.reps)
    if args.only in (None, "persistent") and os.path.exists(PERSISTENT):
        tri_pm = load_module(PERSISTENT, "tk_bench_persistent")
        # a short K loop per tile (8192x8192x512) is where flattening pays
        shapes = [(4096, 4096, 4096)] if args.quick else \
            [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 512)]
        rows += persistent_rows(torch, tk, tri_pm, shapes, args.reps)
        if os.path.exists(PERSISTENT_TMA):  # affine tiles: TMA, then warp specialization
            tri_pt = load_module(PERSISTENT_TMA, "tk_bench_persistent_tma")
            for ws in (False, True):
                rows += persistent_rows(torch, tk, tri_pt, shapes, args.reps, PERSISTENT_TMA,
                                        "matmul_persistent_tma", ws)
    print("\n| workload | tk TFLOP/s | Triton TFLOP/s | cuBLAS TFLOP/s | tk/Triton | tk config |")
    print("|---|---|---|---|---|---|")
    for name, (tk_tf, tk_cfg), (tr_tf, _), cub in rows:
        ratio = f"{tk_tf / tr_tf:.3f}" if tr_tf else "-"
        cubs = f"{cub:.1f}" if cub else "-"
        print(f"| {name} | {tk_tf:.1f} | {tr_tf:.1f} | {cubs} | {ratio} | {tk_cfg} |")


if __name__ == "__main__":
    main()
