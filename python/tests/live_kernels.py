"""Kernels whose helpers and flags are chosen by host code that tk does
not run (a host function's result, a name bound under such a condition).
Triton reads them from the live module when it compiles; so does tk's
Python route."""
import tk
import tk.language as tl


def _has_fast_path():
    # host code: a call tk's compiler cannot evaluate
    return sorted([3, 1, 2])[0] == 1


USE_DOUBLE = _has_fast_path()
import numpy as np  # noqa: E402

SCALE = np.float64(len("four"))  # a float subclass (numpy 2 prints np.float64(4.0))
OUT_DTYPE = tl.float16 if USE_DOUBLE else tl.float32
if USE_DOUBLE:
    libdevice = tl.extra.cuda.libdevice
    fast_exp = libdevice.exp
else:
    fast_exp = tl.exp


@tk.jit
def _double(x):
    return x * 2


@tk.jit
def _increment(x):
    return x + 1


helper = _double if USE_DOUBLE else _increment


@tk.jit
def apply_helper(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = helper(tl.load(x_ptr + offs))
    if USE_DOUBLE:
        y = y * SCALE + fast_exp(y * 0.0)
    tl.store(out_ptr + offs, y.to(OUT_DTYPE))
