#!/usr/bin/env python3
"""py_launch_host.py: the host cost of a launch from Python on tk's own side,
with no GPU and no torch: the extension's launch path (binding, argument
conversion, placement, options, grid) timed with tk_launch skipped
(_tk._skip_launch), on the interpreter. bench/launch_host (C) times the
runtime's part, from tk_launch to the backend; bench/py_launch.py times the
whole launch on a GPU. Not a test: it prints ns per launch, the fastest of
several batches (the others were disturbed), for comparing before and
after a change; with --row I it times one row only, so that
`perf stat -e instructions:u` over two values of --n gives the
instructions per launch, which a busy machine does not disturb.

    PYTHONPATH=PACK python3 bench/py_launch_host.py [--n 20000] [--batches 15] [--row I]

Rows: a kernel of four scalar arguments and one constexpr (the wrapper
alone), the same launch with the grid as a callable, and the add kernel of
py_launch.py on numpy arrays, and on stand-ins for CPU torch tensors of 16
elements (a Python class with data_ptr(), dtype, get_device(), shape and
stride(), read as tk reads torch's; its accessors are Python functions,
slower than torch's). Both buffer rows add staging the host buffers (the
small ones mostly the interpreter's allocations), a cost GPU tensors do not
have."""
import argparse
import os
import sys
import tempfile
import time

os.environ["TK_INTERPRET"] = "1"
os.environ.setdefault("TK_CACHE_DIR", tempfile.mkdtemp(prefix="tk-pylaunch-host-"))

import numpy as np  # noqa: E402
import tk  # noqa: E402
import tk.language as tkl  # noqa: E402
from tk import _tk  # noqa: E402


@tk.jit
def scalars_tk(a, b, c, n, BLOCK: tkl.constexpr):
    pass


@tk.jit
def add_tk(x_ptr, y_ptr, out_ptr, n, BLOCK: tkl.constexpr):
    offs = tkl.program_id(0) * BLOCK + tkl.arange(0, BLOCK)
    mask = offs < n
    tkl.store(out_ptr + offs, tkl.load(x_ptr + offs, mask=mask) + tkl.load(y_ptr + offs, mask=mask),
              mask=mask)


class _TorchDtype:
    def __str__(self):
        return "torch.float32"


class TorchLike:
    """A CPU tensor as tk reads a torch one (tk never imports torch)."""
    dtype = _TorchDtype()

    def __init__(self, array):
        self.array, self.shape, self.ptr = array, array.shape, array.ctypes.data

    def data_ptr(self):
        return self.ptr

    def get_device(self):
        return -1

    def stride(self):
        return (1,)


def per_launch_ns(fn, n, batches):
    for _ in range(200):
        fn()
    times = []
    for _ in range(batches):
        t0 = time.thread_time()  # CPU time: the time others held the CPU is left out
        for _ in range(n):
            fn()
        times.append((time.thread_time() - t0) / n * 1e9)
    return min(times)  # the machine may be shared: the least disturbed batch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--batches", type=int, default=15)
    ap.add_argument("--row", type=int, help="time only this row (0-based)")
    args = ap.parse_args()
    size, block = 4096, 1024
    x, y = np.ones(size, np.float32), np.ones(size, np.float32)
    out = np.empty_like(x)
    tx, ty, tout = (TorchLike(np.ones(16, np.float32)) for _ in range(3))
    grid = (size // block,)
    meta_grid = lambda meta: (size // meta["BLOCK"],)  # noqa: E731
    rows = [("empty python call (the loop's own cost)", lambda: None),
            ("kernel[grid] (the Bound object)", lambda: scalars_tk[grid]),
            ("4 scalars + constexpr, grid tuple", lambda: scalars_tk[grid](1, 2, 3, size, BLOCK=block)),
            ("4 scalars + constexpr, grid callable",
             lambda: scalars_tk[meta_grid](1, 2, 3, size, BLOCK=block)),
            ("add on 3 numpy arrays (stages them)", lambda: add_tk[grid](x, y, out, size, BLOCK=block)),
            ("add on 3 torch stand-ins of 16 (stages them)",
             lambda: add_tk[(1,)](tx, ty, tout, 16, BLOCK=16))]
    _tk._skip_launch(True)
    try:
        print(f"tk {tk.__version__}, the Python side of a launch (tk_launch skipped), "
              f"ns per launch, fastest of {args.batches} batches of {args.n}:")
        for name, fn in rows if args.row is None else rows[args.row:args.row + 1]:
            print(f"  {name:42} {per_launch_ns(fn, args.n, args.batches):8.0f}")
    finally:
        _tk._skip_launch(False)


if __name__ == "__main__":
    sys.exit(main())
