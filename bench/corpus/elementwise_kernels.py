"""Element-wise kernels from model code: NeoX-style rotary embedding of
queries and keys in place (cos/sin cache indexed by position, the two
halves rotated), SiLU-and-mul for gated MLPs, dynamic per-token fp8
quantisation, per-token-group int8 quantisation (scale per group of a
row), and the weighted sum of a token's top-k expert outputs."""
import torch
import triton
import triton.language as tl


@triton.jit
def rotary_neox_kernel(q_ptr, k_ptr, cos_sin_ptr, pos_ptr, q_stride, k_stride, num_q_heads,
                       num_k_heads, HEAD_DIM: tl.constexpr, BLOCK_H: tl.constexpr):
    tok = tl.program_id(0)
    pos = tl.load(pos_ptr + tok)
    half: tl.constexpr = HEAD_DIM // 2
    d = tl.arange(0, half)
    cos = tl.load(cos_sin_ptr + pos * HEAD_DIM + d).to(tl.float32)
    sin = tl.load(cos_sin_ptr + pos * HEAD_DIM + half + d).to(tl.float32)
    h = tl.arange(0, BLOCK_H)
    qm = h[:, None] < num_q_heads
    q1p = q_ptr + tok * q_stride + h[:, None] * HEAD_DIM + d[None, :]
    q1 = tl.load(q1p, mask=qm, other=0.0).to(tl.float32)
    q2 = tl.load(q1p + half, mask=qm, other=0.0).to(tl.float32)
    tl.store(q1p, (q1 * cos - q2 * sin).to(q_ptr.dtype.element_ty), mask=qm)
    tl.store(q1p + half, (q2 * cos + q1 * sin).to(q_ptr.dtype.element_ty), mask=qm)
    km = h[:, None] < num_k_heads
    k1p = k_ptr + tok * k_stride + h[:, None] * HEAD_DIM + d[None, :]
    k1 = tl.load(k1p, mask=km, other=0.0).to(tl.float32)
    k2 = tl.load(k1p + half, mask=km, other=0.0).to(tl.float32)
    tl.store(k1p, (k1 * cos - k2 * sin).to(k_ptr.dtype.element_ty), mask=km)
    tl.store(k1p + half, (k2 * cos + k1 * sin).to(k_ptr.dtype.element_ty), mask=km)


@triton.jit
def silu_and_mul_kernel(x_ptr, out_ptr, d, stride_x, stride_o, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    col = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = col < d
    gate = tl.load(x_ptr + row * stride_x + col, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * stride_x + d + col, mask=mask, other=0.0)
    y = (gate * tl.sigmoid(gate)).to(up.dtype) * up
    tl.store(out_ptr + row * stride_o + col, y, mask=mask)


@triton.jit
def per_token_quant_fp8_kernel(x_ptr, q_ptr, scale_ptr, n, stride, FP8_MAX: tl.constexpr,
                               BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x)), 1e-10)
    scale = amax / FP8_MAX
    q = tl.clamp(x / scale, -FP8_MAX, FP8_MAX)
    tl.store(q_ptr + row * stride + cols, q.to(q_ptr.dtype.element_ty), mask=mask)
    tl.store(scale_ptr + row, scale)


@triton.jit
def per_token_group_quant_int8_kernel(y_ptr, y_q_ptr, y_s_ptr, group_size, eps,
                                      BLOCK: tl.constexpr):
    grp = tl.program_id(0).to(tl.int64)
    lane = tl.arange(0, BLOCK)
    in_grp = lane < group_size
    base = grp * group_size
    v = tl.load(y_ptr + base + lane, mask=in_grp, other=0.0).to(tl.float32)
    absmax = tl.max(tl.abs(v), axis=0)
    step = tl.maximum(absmax, eps) / 127.0
    scaled = tl.clamp(v / step, -128.0, 127.0)
    # round half away from zero, then convert (the conversion itself truncates)
    rounded = tl.floor(tl.abs(scaled) + 0.5)
    q = tl.where(scaled < 0, -rounded, rounded)
    tl.store(y_q_ptr + base + lane, q.to(y_q_ptr.dtype.element_ty), mask=in_grp)
    tl.store(y_s_ptr + grp, step)


@triton.jit
def moe_sum_kernel(inp_ptr, weights_ptr, out_ptr, hidden, TOPK: tl.constexpr,
                   BLOCK: tl.constexpr):
    tok = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < hidden
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for j in tl.static_range(TOPK):
        w = tl.load(weights_ptr + tok * TOPK + j)
        x = tl.load(inp_ptr + (tok * TOPK + j) * hidden + offs, mask=mask, other=0.0)
        acc += w * x.to(tl.float32)
    tl.store(out_ptr + tok * hidden + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)
