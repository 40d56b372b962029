#!/usr/bin/env python3
"""py_launch.py: the host cost of one kernel launch from Python, for tk's
package (tk.jit), Triton (triton.jit) and a bare torch op on the same work
(out = x + y on 4096 floats), and each side's first call in a fresh cache.
The launches are queued back to back in batches (the GPU drained between
batches, untimed), so the time per launch is what the host spends; the GPU
finishes each in a few us. bench/launch_overhead (C) gives the floor on the
same machine: a bare cuLaunchKernel of the same kind of kernel.

    PYTHONPATH=PACK python3 bench/py_launch.py [--n 20000] [--breakdown]

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


BATCHES = 50


def per_launch_us(fn, n):
    """The median over BATCHES batches of n / BATCHES launches, the GPU
    drained between batches (untimed): one long run swung by 15% from one
    run to the next, and a queue that fills would time the GPU."""
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    per = max(1, n // BATCHES)
    times = []
    for _ in range(BATCHES):
        t0 = time.perf_counter()
        for _ in range(per):
            fn()
        times.append((time.perf_counter() - t0) / per * 1e6)
        torch.cuda.synchronize()
    times.sort()
    return times[len(times) // 2]


def breakdown(x, y, out, size, block, grid, n):
    """Where tk's launch time goes, each stage timed alone (us per call):
    the bench's own lambda, kernel[grid], the tensor reads the argument
    parsing needs, torch's current stream, the whole launch stopped short
    of tk_launch (the Python side), and the whole launch."""
    from tk import _tk
    getstream = getattr(torch._C, "_cuda_getCurrentRawStream", None)

    def reads():
        for t in (x, y, out):
            t.data_ptr(), t.dtype, t.get_device()
    stages = [("python call of the bench lambda", lambda: None),
              ("kernel[grid] (the Bound object)", lambda: add_tk[grid]),
              ("data_ptr/dtype/get_device of 3 tensors", reads)]
    if getstream:
        stages.append(("torch current raw stream", lambda: getstream(0)))
    rows = [(name, per_launch_us(fn, n)) for name, fn in stages]
    _tk._skip_launch(True)
    try:
        py = per_launch_us(lambda: add_tk[grid](x, y, out, size, BLOCK=block), n)
    finally:
        _tk._skip_launch(False)
    full = per_launch_us(lambda: add_tk[grid](x, y, out, size, BLOCK=block), n)
    rows += [("tk launch stopped short of tk_launch", py), ("tk launch", full),
             ("tk_launch itself (the difference)", full - py)]
    print("breakdown of a tk launch (us per call):")
    for name, us in rows:
        print(f"  {name:42} {us:7.2f}")


def first_ms(fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--breakdown", action="store_true", help="also time the stages of tk's launch")
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
    if args.breakdown:
        breakdown(x, y, out, size, block, grid, args.n)


if __name__ == "__main__":
    sys.exit(main())
