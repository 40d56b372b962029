"""A kernel whose helpers another file of its package defines under host
conditions, imported by absolute and by relative module paths."""
import tk
import tk.language as tl

from live_pkg.op import scale
from .op import shift


@tk.jit
def scaled_shift(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, shift(scale(tl.load(x_ptr + offs))))
