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
    program_id = tl.program_id(0).to(tl.int64)
    dc_ptr += program_id * stride
    a_ptr += program_id * stride
    b_ptr += program_id * stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    dc_row = tl.load(dc_ptr + col_offsets, mask=mask, other=0)
    a_row = tl.load(a_ptr + col_offsets, mask=mask, other=0).to(tl.float32)
    b_row = tl.load(b_ptr + col_offsets, mask=mask, other=0)
    sqrt_2_over_pi = 0.7978845608028654
    a_cubed = a_row * a_row * a_row
    inner = sqrt_2_over_pi * (a_row + 0.044715 * a_cubed)
    tanh_inner = tanh(inner)
    gelu_a = 0.5 * a_row * (1 + tanh_inner)
    db_row = dc_row * gelu_a
    term1 = 0.5 * (1 + tanh_inner)
    term2 = 0.5 * a_row * (1 - tanh_inner * tanh_inner) * \
        (sqrt_2_over_pi * (1 + 3 * 0.044715 * a_row * a_row))
    da_row = dc_row * b_row * (term1 + term2)
    tl.store(a_ptr + col_offsets, da_row, mask=mask)
    tl.store(b_ptr + col_offsets, db_row, mask=mask)


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
