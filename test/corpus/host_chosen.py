"""Row norms and a tanh-GELU for a library that supports several Triton
releases: the fast reciprocal square root and tanh come from libdevice,
whose module moved between releases, and the choice is made by comparing
Triton's version when the module is imported. A debug switch in the
environment picks a plainer activation helper."""
import os
import functools

import triton
import triton.language as tl
from packaging import version


@functools.lru_cache(maxsize=None)
def _triton_newer_than(release):
    return version.parse(triton.__version__) > version.parse(release)


_IS_TRITON_3 = version.parse(triton.__version__).major >= 3
_PLAIN_ACT = os.getenv("HOSTCHOSEN_PLAIN_ACT", "0") == "1"

if _IS_TRITON_3 and _triton_newer_than("3.1.0"):
    from triton.language.extra.libdevice import rsqrt, tanh
elif _IS_TRITON_3:
    from triton.language.extra.cuda.libdevice import rsqrt, tanh
else:
    from triton.language.math import rsqrt, tanh

if hasattr(tl, "fma"):
    @triton.jit
    def _axpy(a, x, y):
        return tl.fma(a, x, y)
else:
    @triton.jit
    def _axpy(a, x, y):
        return a * x + y

if _PLAIN_ACT:
    @triton.jit
    def _gelu(x):
        return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
else:
    @triton.jit
    def _gelu(x):
        inner = 0.7978845608028654 * _axpy(0.044715 * x, x * x, x)
        return 0.5 * x * (1.0 + tanh(inner))


@triton.jit
def _rms_norm_rows(y_ptr, x_ptr, w_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    inv = rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(y_ptr + row * stride + cols, (x * inv * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _gelu_tanh_fwd(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, _gelu(x).to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x, w, eps=1e-6):
    y = x.new_empty(x.shape)
    _rms_norm_rows[(x.shape[0],)](y, x, w, x.shape[1], x.stride(0), eps,
                                  BLOCK=triton.next_power_of_2(x.shape[1]))
    return y
