"""@jit helpers and tl.constexpr globals of their own file, for
host_helpers.py, whose kernels import them."""
import triton
import triton.language as tl
from triton.language.extra import libdevice

LOG2E: tl.constexpr = tl.constexpr(1.4426950408889634)
ROW_BLOCK = tl.constexpr(64)


@triton.jit
def gelu_tanh(x):
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + libdevice.tanh(inner))


@triton.jit
def exp_via_exp2(x):
    return tl.exp2(x * LOG2E)


@triton.jit
def row_max_sub(x):
    return x - tl.max(x, axis=0)
