"""Kernels that call @jit helpers of a second module of the same folder
(by `from ... import`, by module attribute, and under another name),
read tl.constexpr globals that module defines, and call libdevice as
Triton scripts import it, each checked against numpy."""
import math

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice

import host_helpers_lib as hl
from host_helpers_lib import ROW_BLOCK, gelu_tanh
from host_helpers_lib import exp_via_exp2 as fast_exp


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, gelu_tanh(tl.load(x_ptr + offs, mask=m)), mask=m)


@triton.jit
def softmax_rows(x_ptr, y_ptr, n_cols, stride):
    row = tl.program_id(0)
    offs = tl.arange(0, ROW_BLOCK)
    m = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=m, other=-float("inf"))
    e = fast_exp(hl.row_max_sub(x))
    tl.store(y_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def special_kernel(x_ptr, erf_ptr, log1p_ptr, pow_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(erf_ptr + offs, libdevice.erf(x), mask=m)
    tl.store(log1p_ptr + offs, libdevice.log1p(tl.abs(x)), mask=m)
    tl.store(pow_ptr + offs, libdevice.pow(tl.abs(x), 1.5), mask=m)


rng = np.random.default_rng(5)
x = rng.standard_normal(300).astype(np.float32)
y = np.empty_like(x)
BLOCK = 128
gelu_kernel[(triton.cdiv(x.size, BLOCK),)](x, y, x.size, BLOCK=BLOCK)
xd = x.astype(np.float64)
want = 0.5 * xd * (1 + np.tanh(0.7978845608028654 * (xd + 0.044715 * xd ** 3)))
np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)

assert ROW_BLOCK == 64 and hl.ROW_BLOCK.value == 64
rows = rng.standard_normal((5, 50)).astype(np.float32)
out = np.zeros_like(rows)
softmax_rows[(rows.shape[0],)](rows, out, rows.shape[1], rows.strides[0] // 4)
e = np.exp(rows - rows.max(axis=1, keepdims=True))
np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)

erf_o, log1p_o, pow_o = (np.empty_like(x) for _ in range(3))
special_kernel[lambda META: (triton.cdiv(x.size, META["BLOCK"]),)](
    x, erf_o, log1p_o, pow_o, x.size, BLOCK=64)
np.testing.assert_allclose(erf_o, [math.erf(v) for v in xd], rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(log1p_o, np.log1p(np.abs(xd)), rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(pow_o, np.abs(xd) ** 1.5, rtol=1e-5, atol=1e-6)
print("helpers OK")
