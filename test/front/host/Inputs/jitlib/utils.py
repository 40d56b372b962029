import importlib.util

import triton

HAS_TRITON = importlib.util.find_spec("triton") is not None
# a decorator that is triton.jit where triton is there and a stand-in else
jit_decorator = triton.jit if HAS_TRITON else (lambda f: f)
