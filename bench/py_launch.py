#!/usr/bin/env python3
"""py_launch.py: the host cost of one kernel launch from Python, for tk's
package (tk.jit), Triton (triton.jit) and a bare torch op on the same work
(out = x + y on 4096 floats), and each side's first call in a fresh cache.
The launches are queued back to back without synchronising, so the time
per launch is what the host spends; the GPU finishes each in a few us.

    PYTHONPATH=PACK python3 bench/py_launch.py [--n 20000]

Prints microseconds per launch and the ratios (tk / Triton: the goal is at
most 1/3). Needs torch and a GPU; Triton is optional (its rows are skipped)."""
import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("TK_CACHE_DIR", tempfile.mkdtemp(prefix="tk-pylaunch-"))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="triton-pylaunch-"))

import torch  # noqa: E402
import tk  # noqa: E402
import tk.language as tkl  # noqa: E402

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None


@tk.jit
def add_tk(x_ptr, y_ptr, out_ptr, n, BLOCK: tkl.constexpr):
    offs = tkl.program_id(0) * BLOCK + tkl.arange(0, BLOCK)
    mask = offs < n
    tkl.store(out_ptr + offs, tkl.load(x_ptr + offs, mask=mask) + tkl.load(y_ptr + offs, mask=mask),
              mask=mask)


if triton is not None:
    @triton.jit
    def add_triton(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
                 mask=mask)


def per_launch_us(fn, n):
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def first_ms(fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    args = ap.parse_args()
    size, block = 4096, 1024
    x, y = torch.randn(size, device="cuda"), torch.randn(size, device="cuda")
    out = torch.empty_like(x)
    grid = (size // block,)
    rows = {}
    runs = {"tk": lambda: add_tk[grid](x, y, out, size, BLOCK=block),
            "torch": lambda: torch.add(x, y, out=out)}
    if triton is not None:
        runs["triton"] = lambda: add_triton[grid](x, y, out, size, BLOCK=block)
    for name, fn in runs.items():
        first = first_ms(fn)
        torch.testing.assert_close(out, x + y)
        rows[name] = (first, per_launch_us(fn, args.n))
    print(f"device: {torch.cuda.get_device_name()}, tk {tk.__version__}, "
          f"triton {triton.__version__ if triton else '-'}, torch {torch.__version__}")
    print(f"{'':8} {'first call ms':>14} {'launch us':>10}")
    for name, (first, us) in rows.items():
        print(f"{name:8} {first:14.1f} {us:10.2f}")
    if "triton" in rows:
        r = rows["tk"][1] / rows["triton"][1]
        print(f"launch: tk / triton = {r:.2f} ({'within' if r <= 1 / 3 else 'over'} the 1/3 goal)")
        print(f"first call: tk / triton = {rows['tk'][0] / rows['triton'][0]:.1%}")
    print(f"launch: tk / torch.add = {rows['tk'][1] / rows['torch'][1]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
