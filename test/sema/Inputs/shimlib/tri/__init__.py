"""triton and triton.language for the package's kernels, or stand-ins."""
from typing import TYPE_CHECKING

from shimlib.tri.importing import (
    HAS_TRITON,
    Placeholder,
)

if TYPE_CHECKING or HAS_TRITON:
    import triton
    import triton.language as tl
else:
    triton = Placeholder()
    tl = Placeholder()
