"""Attention backward: bench/kernels/attention_bwd.py (the shape of Triton
tutorial 06's backward: a preprocessing kernel for rowsum(O * dO), then one
kernel that computes dK and dV for a block of keys and dQ for a block of
queries) under tk and under Triton in one process, sized as attention.py
sizes the forward (16k tokens a batch, a hidden size of 2048).

The kernels take the forward's O (rounded to the input type) and its
base-2 log-sum-exp per row, and K multiplied by sm_scale / ln 2, as the
tutorial's host code passes it. Each row checks dQ, dK and dV, poisoned
(NaN) before the run, against a float64 reference computed here from the
same inputs, by relative error. Times are CUDA-event medians after warm-up of both
kernels together (the tutorial's backward less its K scaling); TFLOP/s
counts the five matmuls (2.5 times the forward's FLOPs, halved when
causal). For each compiler the best of a few configs (BM1, BN1, BM2, BN2,
warps, stages) is kept; the first is the tutorial's.

    python3 bench/attention_bwd.py --libtk BUILD/libtk.so [-k FILTER] [--out FILE]
    python3 bench/attention_bwd.py --libtk BUILD/libtk.so -k 'fp16 D64 causal S16384' --profile
"""
import argparse
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import tkbind  # noqa: E402
from gemm import load_module, median_ms, rel_err  # noqa: E402

SOURCE = os.path.join(ROOT, "bench", "kernels", "attention_bwd.py")
TK_DT = {"fp16": "f16", "bf16": "bf16"}
PREP_BM = 128
CONFIGS = [(32, 128, 128, 32, 4, 5), (64, 128, 128, 64, 8, 3), (32, 64, 64, 32, 4, 3)]


def default_rows():
    rows = []
    for dt in ("fp16", "bf16"):
        for D in (64, 128):
            for causal in (False, True):
                for S in (1024, 2048, 4096, 8192, 16384):
                    if dt == "fp16" or S in (4096, 16384):
                        rows.append((dt, D, causal, S))
    return rows


class Case:
    """Inputs, forward results, reference gradients and outputs of one row."""

    def __init__(self, torch, dt, D, causal, S):
        self.dt, self.D, self.causal, self.S = dt, D, causal, S
        self.Z, self.H = max(1, 16384 // S), 2048 // D
        torch.manual_seed(S * 11 + D + causal)
        tdt = torch.float16 if dt == "fp16" else torch.bfloat16
        shape = (self.Z, self.H, S, D)
        self.q, self.k, self.v, self.do = (torch.randn(shape, device="cuda", dtype=torch.float32)
                                           .to(tdt) for _ in range(4))
        self.sm_scale = D ** -0.5
        self.o = torch.empty(shape, device="cuda", dtype=tdt)
        self.m = torch.empty((self.Z, self.H, S), device="cuda", dtype=torch.float32)
        self.refs = [torch.empty(shape, device="cuda", dtype=torch.float64) for _ in range(3)]
        for z in range(self.Z):
            for h in range(self.H):
                self.reference(torch, z, h)
        self.k_scaled = (self.k.float() * (self.sm_scale / math.log(2.0))).to(tdt)
        self.delta = torch.empty((self.Z * self.H, S), device="cuda", dtype=torch.float32)
        self.grads = [torch.empty(shape, device="cuda", dtype=tdt) for _ in range(3)]
        self.flops = 2.5 * 4.0 * self.Z * self.H * S * S * D * (0.5 if causal else 1.0)

    def reference(self, torch, z, h, chunk=2048):
        """Head (z, h) in float64, in chunks of rows: the forward's O and
        base-2 log-sum-exp (the kernels' inputs) and dQ, dK, dV."""
        q, k, v, do = (t[z, h].double() for t in (self.q, self.k, self.v, self.do))
        dq, dk, dv = (r[z, h] for r in self.refs)
        dk.zero_()
        dv.zero_()
        cols = torch.arange(self.S, device="cuda")
        for r0 in range(0, self.S, chunk):
            r = slice(r0, r0 + chunk)
            s = (q[r] @ k.T) * self.sm_scale
            if self.causal:
                s = s.masked_fill(cols[None, :] > cols[r, None], float("-inf"))
            lse = torch.logsumexp(s, dim=1)
            p = torch.exp(s - lse[:, None])
            o = p @ v
            self.o[z, h, r] = o.to(self.o.dtype)
            self.m[z, h, r] = (lse / math.log(2.0)).float()
            dv += p.T @ do[r]
            ds = p * (do[r] @ v.T - (o * do[r]).sum(1)[:, None])
            dq[r] = (ds @ k) * self.sm_scale
            dk += (ds.T @ q[r]) * self.sm_scale


def tk_runs(tk, kerns, c, cfg):
    BM1, BN1, BM2, BN2, warps, stages = cfg
    dt = TK_DT[c.dt]
    p = tkbind.tk_ptr
    prep_args = [p(c.o.data_ptr(), dt), p(c.do.data_ptr(), dt), p(c.delta.data_ptr(), "f32"),
                 tkbind.tk_i32(c.S), tkbind.tk_const("D", c.D), tkbind.tk_const("BM", PREP_BM)]
    prep = tkbind.TkLaunch(tk, kerns[0], (c.S // PREP_BM, c.Z * c.H), prep_args, 4)
    dq, dk, dv = c.grads
    st = c.q.stride()
    args = [p(c.q.data_ptr(), dt), p(c.k_scaled.data_ptr(), dt), p(c.v.data_ptr(), dt),
            tkbind.tk_f32(c.sm_scale), p(c.do.data_ptr(), dt), p(dq.data_ptr(), dt),
            p(dk.data_ptr(), dt), p(dv.data_ptr(), dt), p(c.m.data_ptr(), "f32"),
            p(c.delta.data_ptr(), "f32")]
    args += [tkbind.tk_i32(x) for x in st] + [tkbind.tk_i32(c.H), tkbind.tk_i32(c.S)]
    args += [tkbind.tk_const(n, v) for n, v in (("D", c.D), ("BM1", BM1), ("BN1", BN1),
                                                ("BM2", BM2), ("BN2", BN2), ("SLICE", 2),
                                                ("CAUSAL", int(c.causal)))]
    main = tkbind.TkLaunch(tk, kerns[1], (c.S // BN1, 1, c.Z * c.H), args, warps)
    main.opts.num_stages = stages

    def run():
        prep()
        main()
    return run


def triton_runs(tri, c, cfg):
    BM1, BN1, BM2, BN2, warps, stages = cfg
    dq, dk, dv = c.grads

    def run():
        tri.attn_bwd_prep[(c.S // PREP_BM, c.Z * c.H)](c.o, c.do, c.delta, c.S, D=c.D,
                                                       BM=PREP_BM)
        tri.attn_bwd[(c.S // BN1, 1, c.Z * c.H)](
            c.q, c.k_scaled, c.v, c.sm_scale, c.do, dq, dk, dv, c.m, c.delta, *c.q.stride(),
            c.H, c.S, D=c.D, BM1=BM1, BN1=BN1, BM2=BM2, BN2=BN2, SLICE=2, CAUSAL=c.causal,
            num_warps=warps, num_stages=stages)
    return run


def measure(torch, c, fn, reps):
    """TFLOP/s of fn on case c, 0 where it fails or is wrong; and a note."""
    try:
        for g in c.grads:
            g.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        errs = [rel_err(torch, g, r) for g, r in zip(c.grads, c.refs)]
        if not max(errs) < 2e-2:
            return 0.0, "WRONG rel.err dq/dk/dv " + " ".join(f"{e:.2e}" for e in errs)
        note = "rel.err " + " ".join(f"{e:.1e}" for e in errs)
        return c.flops / median_ms(torch, fn, reps) / 1e9, note
    except Exception as e:  # a refused config counts as nothing
        return 0.0, str(e).splitlines()[0][:120] if str(e) else type(e).__name__


def once(torch, c, fn, name):
    """One checked run of fn, for a profiler: the gradients poisoned, then
    their relative errors printed."""
    for g in c.grads:
        g.fill_(float("nan"))
    fn()
    torch.cuda.synchronize()
    errs = " ".join(f"{rel_err(torch, g, r):.2e}" for g, r in zip(c.grads, c.refs))
    print(f"  {name}: rel.err dq/dk/dv {errs}", flush=True)


def print_profile(a):
    base = (f"python3 bench/attention_bwd.py --libtk {a.libtk} -k '{a.filter}' "
            f"--config {a.config} --once")
    print(f"# one launch of each side after a warm-up launch (config {CONFIGS[a.config]})")
    for who in ("tk", "triton"):
        print(f"ncu --set full --import-source yes -k regex:'^attn_bwd$' --launch-skip 1 -c 1 "
              f"-o attn_bwd_{who} {base} --side {who}")
    print("# side by side: ncu --import attn_bwd_tk.ncu-rep --page details (and _triton); "
          "--page source --csv --print-source sass for the loops' instructions")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--libtk", default=os.environ.get("TK_LIBTK", "build/libtk.so"))
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("-k", dest="filter", default="", help="substring of a row's name")
    ap.add_argument("--out", help="write the markdown table here")
    ap.add_argument("--once", action="store_true",
                    help="two checked launches of each side per row (a warm-up, then the one "
                    "to profile), no timing")
    ap.add_argument("--side", choices=("tk", "triton", "both"), default="both")
    ap.add_argument("--config", type=int, help="only CONFIGS[N] (the tutorial's is 0)")
    ap.add_argument("--profile", action="store_true",
                    help="print the ncu commands for the rows -k selects and --config (0)")
    a = ap.parse_args()
    if a.config is not None and not 0 <= a.config < len(CONFIGS):
        ap.error(f"--config wants 0 to {len(CONFIGS) - 1}")
    if a.profile:
        a.config = a.config or 0
        print_profile(a)
        return
    configs = CONFIGS if a.config is None else [CONFIGS[a.config]]
    import torch
    import triton
    tk = tkbind.Tk(a.libtk)
    kerns = (tk.kernel(SOURCE, "attn_bwd_prep"), tk.kernel(SOURCE, "attn_bwd"))
    tri = load_module(SOURCE, "tk_bench_attention_bwd")
    lines = [f"device {torch.cuda.get_device_name()}, Triton {triton.__version__}", "",
             "| row | Z x H | tk TFLOP/s | Triton TFLOP/s | tk/Triton | tk config | "
             "Triton config |", "|---|---|---|---|---|---|---|"]
    for row in default_rows():
        dt, D, causal, S = row
        name = f"{dt} D{D}{' causal' if causal else ''} S{S}"
        if a.filter not in name:
            continue
        c = Case(torch, *row)
        best = {"tk": (0.0, None), "triton": (0.0, None)}
        sides = ("tk", "triton") if a.side == "both" else (a.side,)
        for cfg in configs:
            for who in sides:
                fn = tk_runs(tk, kerns, c, cfg) if who == "tk" else triton_runs(tri, c, cfg)
                if a.once:
                    for _ in range(2):
                        once(torch, c, fn, f"{name} {who} {cfg}")
                    continue
                tf, note = measure(torch, c, fn, a.reps)
                print(f"  {name} {who:6s} {cfg}: {tf:7.1f} TFLOP/s {note}", flush=True)
                if tf > best[who][0]:
                    best[who] = (tf, cfg)
        tk_tf, tr_tf = best["tk"][0], best["triton"][0]
        ratio = f"{tk_tf / tr_tf:.3f}" if tr_tf else "-"
        if not a.once:
            lines.append(f"| {name} | {c.Z}x{c.H} | {tk_tf:.1f} | {tr_tf:.1f} | {ratio} | "
                         f"{best['tk'][1]} | {best['triton'][1]} |")
        del c
        torch.cuda.empty_cache()
    if a.once:
        return
    text = "\n".join(lines)
    print("\n" + text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
