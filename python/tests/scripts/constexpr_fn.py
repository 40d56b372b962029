"""A @jit function of another file passed as a constexpr (Triton
specialises on it): tk names it as the kernel's module imports it, and
refuses one that module does not name. And @triton.constexpr_function
spelled as Triton spells it."""
import numpy as np
import triton
import triton.language as tl

import constexpr_acts
from constexpr_acts import negate as flip  # noqa: F401 (the name the kernel sees)


@triton.constexpr_function
def half(n):
    return n // 2


@triton.jit
def apply(x_ptr, out_ptr, BLOCK: tl.constexpr, ACT: tl.constexpr):
    offs = tl.arange(0, half(BLOCK) * 2)
    tl.store(out_ptr + offs, ACT(tl.load(x_ptr + offs)))


x = np.linspace(-2, 2, 16).astype(np.float32)
out = np.zeros(16, np.float32)
apply[(1,)](x, out, BLOCK=16, ACT=constexpr_acts.negate)
assert np.array_equal(out, -x), out
assert ("ACT", "flip") in apply.warmup(x, out, BLOCK=16, ACT=flip, grid=(1,)).defines
try:
    apply[(1,)](x, out, BLOCK=16, ACT=constexpr_acts.unused_here)
    raise AssertionError("a function the module does not name was taken")
except TypeError as e:
    assert "which the module of kernel 'apply' does not name" in str(e), e
assert half(9) == 4 and isinstance(half, triton.runtime.jit.ConstexprFunction)
print("constexpr functions OK")
