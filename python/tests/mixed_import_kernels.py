"""A kernel file whose import statement names a host module and tk's
modules together, as scripts write `import torch, triton, triton.language
as tl`."""
import os, tk, tk.language as tl  # noqa: E401,F401


@tk.jit
def double(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
