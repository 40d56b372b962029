"""A kernel written as bitonic sorts in kernel libraries are: names taken
from the modules Triton's language is written in (triton.language.core and
.standard), helpers included, and an f-string in a compile-time check."""
import numpy as np
import triton
import triton.language as tl
import triton.language.core as core
from triton.language import standard
from triton.language.standard import _log2, sum, zeros_like


@triton.jit
def _flip_rows(x, n_dims: core.constexpr):
    tl.static_assert(standard._is_power_of_two(x.numel), f"{x.numel} is not a power of two")
    idtype = core.get_int_dtype(bitwidth=x.dtype.primitive_bitwidth, signed=True)
    y = core.reshape(x.to(idtype, bitcast=True), [2, x.numel // 2])
    return tl.core.reshape(y, [x.numel]).to(x.dtype, bitcast=True)


@triton.jit
def k(X, Y, N: core.constexpr):
    n_dims: core.constexpr = _log2(N)
    x = _flip_rows(tl.load(X + tl.arange(0, N)), n_dims)
    s = sum(core.reshape(x, [2, N // 2]), 1)
    s = s + zeros_like(s) + n_dims
    tl.store(Y + core.arange(0, 2), s)


x = np.arange(16, dtype=np.float32)
y = np.zeros(2, np.float32)
k[(1,)](x, y, N=16)
want = x.reshape(2, 8).sum(1) + 4
assert np.array_equal(y, want), (y, want)
print("modules OK")
