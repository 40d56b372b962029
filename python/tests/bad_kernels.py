"""A kernel with a source error (an undefined name) for the error tests."""
import tk
import tk.language as tl


@tk.jit
def broken(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, undefined_name + 1.0, mask=offs < n)
