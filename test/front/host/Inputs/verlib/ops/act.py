import operator

import triton
import triton.language as tl

from ..utils import IS_TRITON_3, compare_version, torch_at_least, triton_major
from verlib.utils import installed_at_least as have

if compare_version("triton", operator.ge, "3.0.0") and not compare_version("triton", operator.lt, "3.6"):
    from triton.language.extra.libdevice import tanh
else:
    from triton.language.math import tanh as slow_tanh

if have("triton", "3.1") and triton_major() == 3 and IS_TRITON_3:
    @triton.jit
    def act(x):
        return tanh(x) * 2.0
else:
    @triton.jit
    def act(x):
        return x

if torch_at_least("2.0"):
    from triton.language.extra.libdevice import exp2 as pick
else:
    from triton.language.extra.libdevice import sin as pick


@triton.jit
def act_kernel(x_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(x_ptr + o, act(tl.load(x_ptr + o)))


@triton.jit
def pick_kernel(x_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(x_ptr + o, pick(tl.load(x_ptr + o)))
