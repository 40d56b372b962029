"""Gated-MLP backward and interleaved rotary. GEGLU backward with the tanh
form of GELU: from dc (the gradient of c = gelu(a) * b) it overwrites a and
b in place with da and db, recomputing gelu(a) rather than storing it.
Rotary in the GPT-J / interleaved layout: pairs (x[2i], x[2i+1]) are rotated
by (cos[i], sin[i]); the even and odd lanes are loaded with stride 2 and put
back together with tl.join before one contiguous store."""
import torch
import triton
import triton.language as tl


@triton.jit
def tanh(x):
    return 2 * tl.sigmoid(2 * x) - 1


@triton.jit
def _geglu_tanh_backward_kernel(dc_ptr, a_ptr, b_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = cols < n_cols
    offs = row * stride + cols
    dc = tl.load(dc_ptr + offs, mask=in_row, other=0.0).to(tl.float32)
    a = tl.load(a_ptr + offs, mask=in_row, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=in_row, other=0.0).to(tl.float32)
    c0 = 0.7978845608028654  # sqrt(2 / pi)
    c1 = 0.044715
    a_sq = a * a
    th = tanh(c0 * a * (1.0 + c1 * a_sq))
    half_gate = 0.5 * (1.0 + th)
    gelu_a = a * half_gate
    # d gelu / d a: the gate plus a times the derivative of the gate
    d_gelu = half_gate + 0.5 * a * (1.0 - th * th) * c0 * (1.0 + 3.0 * c1 * a_sq)
    da = dc * b * d_gelu
    db = dc * gelu_a
    tl.store(a_ptr + offs, da.to(a_ptr.dtype.element_ty), mask=in_row)
    tl.store(b_ptr + offs, db.to(b_ptr.dtype.element_ty), mask=in_row)


@triton.jit
def _rotary_interleaved_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, seqlen, n_heads,
                               stride_xt, stride_xh, stride_ot, stride_oh, stride_cs,
                               HALF_DIM: tl.constexpr, BLOCK_T: tl.constexpr):
    pid_t = tl.program_id(0)
    head = tl.program_id(1)
    t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    i = tl.arange(0, HALF_DIM)
    tmask = t[:, None] < seqlen
    cos = tl.load(cos_ptr + t[:, None] * stride_cs + i[None, :], mask=tmask, other=1.0)
    sin = tl.load(sin_ptr + t[:, None] * stride_cs + i[None, :], mask=tmask, other=0.0)
    base = x_ptr + t[:, None] * stride_xt + head * stride_xh + 2 * i[None, :]
    x0 = tl.load(base, mask=tmask, other=0.0).to(tl.float32)
    x1 = tl.load(base + 1, mask=tmask, other=0.0).to(tl.float32)
    o0 = x0 * cos - x1 * sin
    o1 = x0 * sin + x1 * cos
    o = tl.reshape(tl.join(o0, o1), (BLOCK_T, 2 * HALF_DIM))
    d = tl.arange(0, 2 * HALF_DIM)
    tl.store(out_ptr + t[:, None] * stride_ot + head * stride_oh + d[None, :],
             o.to(out_ptr.dtype.element_ty), mask=tmask)
