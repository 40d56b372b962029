"""A kernel made by `kern = tk.jit(_impl)`: Triton names it after the
function (_impl), and the module binds it to kern; tk compiles this file."""
import tk
import tk.language as tl


def _impl(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1.0)


kern = tk.jit(_impl)


@tk.jit
def twice(x_ptr, out_ptr, BLOCK: tl.constexpr):
    kern(x_ptr, out_ptr, BLOCK)
    kern(out_ptr, out_ptr, BLOCK)
