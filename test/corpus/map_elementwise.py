# Element-wise functions written as scalar functions and mapped over blocks
# with tl.map_elementwise, the way a kernel library writes code whose
# control flow depends on each element: a piecewise soft clip
# (if/elif/else), SELU with early returns, bit statistics of integers
# (while loops that run a different number of times per element), a cube
# root by a bounded Newton iteration, an interleaved rotary embedding that
# rotates (even, odd) pairs with pack=2, and a group-of-4 absmax
# normalisation with pack=4. Each kernel has the host function a library
# would export around it.
import torch
import triton
import triton.language as tl


@triton.jit
def _soft_clip_scalar(x, lo, hi):
    # identity inside [lo, hi]; logarithmic below, saturating above
    if x < lo:
        y = lo - tl.log(1.0 + (lo - x))
    elif x > hi:
        d = x - hi
        y = hi + d / (1.0 + d)
    else:
        y = x
    return y


@triton.jit
def soft_clip_kernel(x_ptr, y_ptr, n_elements, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.map_elementwise(_soft_clip_scalar, x, lo, hi)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _selu_scalar(x):
    alpha = 1.6732632423543772
    scale = 1.0507009873554805
    if x > 0:
        return scale * x
    return scale * alpha * (tl.exp(x) - 1.0)


@triton.jit
def selu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.map_elementwise(_selu_scalar, x)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _bit_stats_scalar(v):
    # Kernighan's loop: one iteration per set bit
    n = 0
    w = v
    while w != 0:
        w = w & (w - 1)
        n += 1
    # the index of the highest set bit (-1 for zero): one iteration per bit
    msb = -1
    while v != 0:
        v = v >> 1
        msb += 1
    return n, msb


@triton.jit
def bit_stats_kernel(v_ptr, count_ptr, msb_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    v = tl.load(v_ptr + offs, mask=mask, other=0)
    count, msb = tl.map_elementwise(_bit_stats_scalar, v)
    tl.store(count_ptr + offs, count, mask=mask)
    tl.store(msb_ptr + offs, msb, mask=mask)


@triton.jit
def _cbrt_scalar(a):
    if a == 0.0:
        return 0.0
    t = tl.abs(a)
    # from above the root Newton's steps decrease monotonically
    y = tl.maximum(t, 1.0)
    it = 0
    while (tl.abs(y * y * y - t) > 1e-6 * t) & (it < 60):
        y = y - (y * y * y - t) / (3.0 * y * y)
        it += 1
    if a < 0:
        y = -y
    return y


@triton.jit
def cbrt_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.map_elementwise(_cbrt_scalar, x), mask=mask)


@triton.jit
def _rotate_pair(x0, x1, c0, c1, s0, s1):
    # one (even, odd) pair of an interleaved rotary embedding; the angle
    # tables repeat each pair's value, so c1 == c0 and s1 == s0
    return x0 * c0 - x1 * s0, x1 * c1 + x0 * s1


@triton.jit
def rope_interleaved_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, seq_len, stride_tok,
                            HEAD_DIM: tl.constexpr, BLOCK_T: tl.constexpr):
    toks = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, HEAD_DIM)
    mask = (toks < seq_len)[:, None]
    x = tl.load(x_ptr + toks[:, None] * stride_tok + cols[None, :], mask=mask, other=0.0)
    angle = toks[:, None] * HEAD_DIM + cols[None, :]
    c = tl.load(cos_ptr + angle, mask=mask, other=1.0)
    s = tl.load(sin_ptr + angle, mask=mask, other=0.0)
    y = tl.map_elementwise(_rotate_pair, x.to(tl.float32), c, s, pack=2)[0]
    tl.store(out_ptr + toks[:, None] * stride_tok + cols[None, :], y.to(out_ptr.dtype.element_ty),
             mask=mask)


@triton.jit
def _absmax_normalize4(x0, x1, x2, x3):
    m = tl.maximum(tl.maximum(tl.abs(x0), tl.abs(x1)), tl.maximum(tl.abs(x2), tl.abs(x3)))
    if m > 0:
        inv = 127.0 / m
    else:
        inv = 0.0
    return x0 * inv, x1 * inv, x2 * inv, x3 * inv, m, m, m, m


@triton.jit
def absmax4_kernel(x_ptr, y_ptr, scale_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y, m = tl.map_elementwise(_absmax_normalize4, x, pack=4)
    tl.store(y_ptr + offs, y, mask=mask)
    # one scale per group of four
    tl.store(scale_ptr + offs // 4, m, mask=mask & (offs % 4 == 0))


def soft_clip(x: torch.Tensor, lo: float = -1.5, hi: float = 2.0) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    soft_clip_kernel[(triton.cdiv(n, 1024), )](x, y, n, lo, hi, BLOCK=1024)
    return y


def selu(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    selu_kernel[(triton.cdiv(n, 1024), )](x, y, n, BLOCK=1024)
    return y


def bit_stats(v: torch.Tensor):
    count, msb = torch.empty_like(v), torch.empty_like(v)
    n = v.numel()
    bit_stats_kernel[(triton.cdiv(n, 512), )](v, count, msb, n, BLOCK=512)
    return count, msb


def cbrt(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    cbrt_kernel[(triton.cdiv(n, 1024), )](x, y, n, BLOCK=1024)
    return y


def rope_interleaved(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x: (seq_len, head_dim); cos, sin: (seq_len, head_dim // 2), one angle per pair."""
    seq_len, head_dim = x.shape
    cos = cos.repeat_interleave(2, dim=-1).contiguous()
    sin = sin.repeat_interleave(2, dim=-1).contiguous()
    out = torch.empty_like(x)
    rope_interleaved_kernel[(triton.cdiv(seq_len, 16), )](x, cos, sin, out, seq_len, x.stride(0),
                                                          HEAD_DIM=head_dim, BLOCK_T=16)
    return out


def absmax_normalize4(x: torch.Tensor):
    n = x.numel()
    y = torch.empty_like(x)
    scale = torch.empty(n // 4, dtype=x.dtype, device=x.device)
    absmax4_kernel[(triton.cdiv(n, 1024), )](x, y, scale, n, BLOCK=1024)
    return y, scale
