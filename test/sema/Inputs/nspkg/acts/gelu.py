# A module of a namespace package: nspkg/ and nspkg/acts/ have no __init__.py.
import triton
import triton.language as tl


@triton.jit
def gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
