"""Attention forward at the hardware's limit: bench/kernels/attention_desc.py
(Triton tutorial 06's shape of source: descriptors, the KV loop as
tl.range(..., warp_specialize=WS)) under tk and under Triton in one process,
sized as FlashAttention-3 measures it (16k tokens a batch: batch = 16384 / S;
a hidden size of 2048: heads = 2048 / D), sequence lengths 512 to 16k.

Every row is checked against an fp32 reference (scaled_dot_product_attention
on the inputs as the kernel sees them) with the output poisoned (NaN) first;
times are CUDA-event medians after warm-up. For each compiler the best of a
few configs (BM, BN, warps, stages) with WS off and on is kept; a config a
compiler refuses or gets wrong counts as nothing. Prints TFLOP/s of each,
tk/Triton, and the share of the H100's dense peak (989 TFLOP/s for fp16 and
bf16, 1979 for fp8).

    python3 bench/attention.py --libtk BUILD/libtk.so [--full] [--out FILE]

fp8 rows (e4m3) take per-tensor scales and V transposed, as the tutorial
does; the output is bf16. Needs torch and triton and a Hopper GPU.
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import tkbind  # noqa: E402
from gemm import load_module, median_ms, rel_err  # noqa: E402

SOURCE = os.path.join(ROOT, "bench", "kernels", "attention_desc.py")
PEAK = {"fp16": 989.0, "bf16": 989.0, "fp8": 1979.0}
TK_DT = {"fp16": "f16", "bf16": "bf16", "fp8": "f8e4"}


def configs(D):
    """(BM, BN, warps, stages) tried for head dim D."""
    if D <= 64:
        return [(128, 64, 4, 3), (128, 128, 8, 3), (128, 128, 8, 2)]
    if D <= 128:
        return [(128, 64, 8, 3), (128, 128, 8, 2)]
    return [(128, 64, 8, 2), (64, 64, 4, 2)]


def default_rows(full):
    rows = []
    seqs = (512, 1024, 2048, 4096, 8192, 16384)
    for dt in ("fp16", "bf16", "fp8"):
        for D in (64, 128, 256):
            for causal in (False, True):
                for S in seqs:
                    keep = full or (dt == "fp16" and D == 128) or S in (2048, 8192, 16384)
                    if dt == "fp8" and D == 256 and not full:
                        keep = False
                    if keep:
                        rows.append((dt, D, causal, S))
    return rows


class Case:
    """Inputs, reference and output of one row."""

    def __init__(self, torch, dt, D, causal, S):
        self.dt, self.D, self.causal, self.S = dt, D, causal, S
        self.Z, self.H = max(1, 16384 // S), 2048 // D
        torch.manual_seed(S * 7 + D + causal)
        shape = (self.Z, self.H, S, D)
        x = [torch.randn(shape, device="cuda", dtype=torch.float32) for _ in range(3)]
        self.sm_scale = D ** -0.5
        if dt == "fp8":
            f8 = torch.float8_e4m3fn
            scales = [t.abs().amax().item() / 448.0 for t in x]
            q8, k8, v8 = ((t / s).to(f8) for t, s in zip(x, scales))
            self.q, self.k = q8, k8
            self.v = v8.transpose(2, 3).contiguous()  # [Z, H, D, S]
            self.descale, self.v_scale = scales[0] * scales[1], scales[2]
            seen = [q8.float() * scales[0], k8.float() * scales[1], v8.float() * scales[2]]
            self.o = torch.empty(shape, device="cuda", dtype=torch.bfloat16)
        else:
            tdt = torch.float16 if dt == "fp16" else torch.bfloat16
            self.q, self.k, self.v = (t.to(tdt) for t in x)
            self.descale = self.v_scale = 1.0
            seen = [self.q.float(), self.k.float(), self.v.float()]
            self.o = torch.empty(shape, device="cuda", dtype=tdt)
        self.ref = torch.nn.functional.scaled_dot_product_attention(
            *seen, is_causal=causal, scale=self.sm_scale)
        self.flops = 4.0 * self.Z * self.H * S * S * D * (0.5 if causal else 1.0)
        self.tol = 6e-2 if dt == "fp8" else 2e-2


def tk_launch(tk, kern, c, cfg, ws):
    BM, BN, warps, stages = cfg
    odt = "bf16" if c.dt == "fp8" else TK_DT[c.dt]
    args = [tkbind.tk_ptr(t.data_ptr(), TK_DT[c.dt]) for t in (c.q, c.k, c.v)]
    args += [tkbind.tk_ptr(c.o.data_ptr(), odt)]
    args += [tkbind.tk_f32(c.sm_scale), tkbind.tk_f32(c.descale), tkbind.tk_f32(c.v_scale)]
    args += [tkbind.tk_i32(c.Z), tkbind.tk_i32(c.H), tkbind.tk_i32(c.S)]
    args += [tkbind.tk_const(n, v) for n, v in (("D", c.D), ("BM", BM), ("BN", BN),
                                                ("CAUSAL", int(c.causal)),
                                                ("V_T", int(c.dt == "fp8")), ("WS", int(ws)))]
    run = tkbind.TkLaunch(tk, kern, (c.S // BM, c.Z * c.H), args, warps)
    run.opts.num_stages = stages
    return run


def triton_launch(tri, c, cfg, ws):
    BM, BN, warps, stages = cfg

    def run():
        tri.attn_fwd_desc[(c.S // BM, c.Z * c.H)](
            c.q, c.k, c.v, c.o, c.sm_scale, c.descale, c.v_scale, c.Z, c.H, c.S, D=c.D, BM=BM,
            BN=BN, CAUSAL=c.causal, V_T=c.dt == "fp8", WS=ws, num_warps=warps,
            num_stages=stages)
    return run


def measure(torch, c, fn, reps, checks=1):
    """TFLOP/s of fn on case c, 0 where it fails or is wrong; and a note."""
    try:
        for _ in range(max(1, checks)):  # each run on a poisoned output
            c.o.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            err = rel_err(torch, c.o, c.ref)
            if not err < c.tol:
                return 0.0, f"WRONG rel.err {err:.2e}"
        return c.flops / median_ms(torch, fn, reps) / 1e9, f"rel.err {err:.2e}"
    except Exception as e:  # a refused config counts as nothing
        return 0.0, str(e).splitlines()[0][:120] if str(e) else type(e).__name__


def run_row(torch, tk, kern, tri, row, reps, a):
    c = Case(torch, *row)
    best = {"tk": (0.0, None), "triton": (0.0, None)}
    for cfg in a.cfg or configs(c.D):
        for ws in (False, True) if a.ws < 0 else (bool(a.ws),):
            for who in ("tk",) if a.tk_only else ("tk", "triton"):
                fn = tk_launch(tk, kern, c, cfg, ws) if who == "tk" else triton_launch(tri, c, cfg,
                                                                                       ws)
                tf, note = measure(torch, c, fn, reps, a.checks)
                print(f"  {c.dt} D{c.D} S{c.S}{' causal' if c.causal else ''} {who:6s} {cfg} "
                      f"ws={int(ws)}: {tf:7.1f} TFLOP/s {note}", flush=True)
                if tf > best[who][0]:
                    best[who] = (tf, cfg + (int(ws),))
    return c, best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--libtk", default=os.environ.get("TK_LIBTK", "build/libtk.so"))
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--full", action="store_true", help="every dtype, head dim and length")
    ap.add_argument("-k", dest="filter", default="", help="substring of a row's name")
    ap.add_argument("--out", help="write the markdown table here")
    ap.add_argument("--cfg", action="append", type=lambda t: tuple(int(x) for x in t.split(",")),
                    help="BM,BN,warps,stages in place of the head dim's configs (repeatable)")
    ap.add_argument("--ws", type=int, default=-1, help="0 or 1: only that WS (both by default)")
    ap.add_argument("--tk-only", action="store_true", help="time tk alone")
    ap.add_argument("--checks", type=int, default=1,
                    help="runs checked against the reference before timing, each poisoned first")
    a = ap.parse_args()
    import torch
    import triton
    # descriptors made on the device take global scratch under Triton
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8,
                                                                 device="cuda"))
    tk = tkbind.Tk(a.libtk)
    kern = tk.kernel(SOURCE, "attn_fwd_desc")
    tri = load_module(SOURCE, "tk_bench_attention_desc")
    lines = [f"device {torch.cuda.get_device_name()}, Triton {triton.__version__}", "",
             "| row | Z x H | tk TFLOP/s | Triton TFLOP/s | tk/Triton | tk % of peak | "
             "tk config (BM, BN, warps, stages, WS) |", "|---|---|---|---|---|---|---|"]
    for row in default_rows(a.full):
        dt, D, causal, S = row
        name = f"{dt} D{D}{' causal' if causal else ''} S{S}"
        if a.filter not in name:
            continue
        c, best = run_row(torch, tk, kern, tri, row, a.reps, a)
        tk_tf, tr_tf = best["tk"][0], best["triton"][0]
        ratio = f"{tk_tf / tr_tf:.3f}" if tr_tf else "-"
        lines.append(f"| {name} | {c.Z}x{c.H} | {tk_tf:.1f} | {tr_tf:.1f} | {ratio} | "
                     f"{100 * tk_tf / PEAK[dt]:.1f}% | {best['tk'][1]} |")
    text = "\n".join(lines)
    print("\n" + text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
