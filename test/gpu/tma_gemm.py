"""tma_gemm.py: the tutorial GEMM (examples/matmul.tk) on sm_90a with its
tiles copied by TMA, checked on the GPU against a float64 reference on fresh
random inputs, the output poisoned (NaN) first. fp16 and bf16; M, N, K that
are not multiples of the tile (leading dimensions padded to 16 elements, as
TMA's 16-byte strides want, and unpadded, which compiles without TMA); a K
loop of one iteration; K = 0, whose tensor maps cannot be built (the launch
falls back to the kernel compiled without TMA: C = 0); B read K-contiguous
(a transposed view). The PTX of every kernel built goes to TK_DUMP_DIR, and
the check asserts which used TMA. With --time it also times 4096^3 fp16,
TMA against cp.async (TK_NO_TMA=1, in a second process).

usage: python3 test/gpu/tma_gemm.py --libtk BUILD/libtk.so [--time]
prints `PASS case` / `FAIL case: why` and `N passed, N failed`; exit 1 on a failure.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
MATMUL = os.path.join(ROOT, "examples", "matmul.tk")


def padded(torch, rows, cols, dt, pad):
    """A rows x cols matrix whose rows are `pad`-rounded apart (a view)."""
    ld = (cols + pad - 1) // pad * pad
    full = torch.randn(rows, ld, device="cuda", dtype=torch.float64).to(dt)
    return full[:, :cols]


def run_gemm(torch, tk, tkbind, kern, a, b, cfg):
    c = torch.full((a.shape[0], b.shape[1]), float("nan"), device="cuda", dtype=a.dtype)
    return tkbind.matmul_launch(tk, kern, a, b, c, cfg), c


def ptx_files(dump):
    return set(glob.glob(os.path.join(dump, "*.ptx")))


def check(args):
    import torch
    import tkbind
    dump = tempfile.mkdtemp(prefix="tk-tma-")
    os.environ["TK_DUMP_DIR"] = dump
    os.environ["TK_CACHE_DISABLE"] = "1"
    tk = tkbind.Tk(args.libtk)
    kern = tk.kernel(MATMUL, "matmul")
    cfgs = [(128, 128, 64, 8, 4, 3), (128, 256, 64, 8, 8, 3), (128, 128, 32, 8, 4, 4),
            (64, 128, 32, 8, 4, 4)]
    # (M, N, K, padded leading dims, B K-contiguous, expect TMA; None: both
    # variants are built, the one with TMA unused)
    shapes = [(300, 200, 150, True, False, True), (257, 129, 64, True, False, True),
              (129, 70, 40, True, False, True), (1000, 1000, 1000, True, False, True),
              (300, 200, 150, True, True, True), (200, 300, 150, False, False, False),
              (64, 64, 0, True, False, None)]
    passed = failed = 0
    torch.manual_seed(1)
    for dt in (torch.float16, torch.bfloat16):
        for (M, N, K, pad, bt, want_tma) in shapes:
            for cfg in cfgs:
                name = f"{str(dt)[6:]} {M}x{N}x{K}{' padded' if pad else ''}" \
                       f"{' Bt' if bt else ''} {cfg}"
                p = 16 if pad else 1
                a = padded(torch, M, K, dt, p)
                b = padded(torch, N, K, dt, p).t() if bt else padded(torch, K, N, dt, p)
                before = ptx_files(dump)
                try:
                    launch, c = run_gemm(torch, tk, tkbind, kern, a, b, cfg)
                    launch()
                    torch.cuda.synchronize()
                except Exception as e:
                    print(f"FAIL {name}: {e}", flush=True)
                    failed += 1
                    continue
                ref = a.double() @ b.double()
                out = c.double()
                why = None
                if not torch.isfinite(out).all():
                    why = "non-finite output (poison left)"
                else:
                    scale = max(ref.abs().max().item(), 1.0)
                    err = (out - ref).abs().max().item() / scale
                    if err > 1e-2:
                        why = f"max error {err:.2e} of the largest value"
                new = ptx_files(dump) - before
                if why is None and new and want_tma is not None:
                    text = "".join(open(f).read() for f in new)
                    used = "cp.async.bulk.tensor" in text
                    if used != want_tma:
                        why = f"TMA {'used' if used else 'not used'}, expected the opposite"
                if why:
                    print(f"FAIL {name}: {why}", flush=True)
                    failed += 1
                else:
                    print(f"PASS {name}", flush=True)
                    passed += 1
    print(f"{passed} passed, {failed} failed", flush=True)
    return failed == 0


def time_one(args):
    import torch
    import tkbind
    from gemm import median_ms  # bench/gemm.py, the benchmark's own timing
    tk = tkbind.Tk(args.libtk)
    kern = tk.kernel(MATMUL, "matmul")
    torch.manual_seed(0)
    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    for cfg in [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 4, 4), (128, 128, 32, 8, 4, 4)]:
        launch, c = run_gemm(torch, tk, tkbind, kern, a, b, cfg)
        ms = median_ms(torch, launch, 30)
        err = ((c.float() - (a.float() @ b.float())).norm() / (a.float() @ b.float()).norm()).item()
        mode = "cp.async" if os.environ.get("TK_NO_TMA") == "1" else "TMA"
        print(f"time {mode:8s} {cfg}: {2.0 * M * N * K / ms / 1e9:7.1f} TFLOP/s rel.err {err:.1e}",
              flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--libtk", default=os.environ.get("TK_LIBTK", "build/libtk.so"))
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--time-one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.time_one:
        time_one(args)
        return 0
    ok = check(args)
    if args.time:
        for off in ("0", "1"):
            env = dict(os.environ, TK_NO_TMA=off, TK_CACHE_DISABLE="1")
            env.pop("TK_DUMP_DIR", None)
            subprocess.run([sys.executable, __file__, "--libtk", args.libtk, "--time-one"],
                           env=env, check=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
