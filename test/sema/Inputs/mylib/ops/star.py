import triton
import triton.language as tl
from ..utils import *


@triton.jit
def star_kernel(x_ptr):
    # scaled and SCALE come from ..utils through the star import
    i = tl.arange(0, 4)
    tl.store(x_ptr + i, scaled(tl.load(x_ptr + i)) + SCALE)
