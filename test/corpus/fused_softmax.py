"""Scaled, optionally causal softmax over the last dimension of attention
scores, fused into one pass per row, with its backward; exposed as an
autograd Function the way model code calls it."""
import math
from typing import Optional

import torch
import triton
from triton import language as tl

NEG_INF = tl.constexpr(float("-inf"))


def _row_settings(n_cols: int):
    block = triton.next_power_of_2(n_cols)
    num_warps = 4 if block <= 2048 else 8 if block <= 8192 else 16
    return block, num_warps


@triton.jit
def _masked_scores(x, cols, row, n_cols, seq_len, scale, CAUSAL: tl.constexpr):
    """The scaled scores of one row, -inf past the row's length and, for a
    causal mask, past the query's position (rows are (batch, head, query))."""
    s = x * scale
    keep = cols < n_cols
    if CAUSAL:
        keep = keep & (cols <= row % seq_len)
    return tl.where(keep, s, NEG_INF)


@triton.jit
def _softmax_fwd_kernel(y_ptr, x_ptr, stride, n_cols, seq_len, scale,
                        CAUSAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    s = _masked_scores(x, cols, row, n_cols, seq_len, scale, CAUSAL)
    s = s - tl.max(s, axis=0)
    num = tl.exp(s)
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


@triton.jit
def _softmax_bwd_kernel(dx_ptr, dy_ptr, y_ptr, stride, n_cols, scale, BLOCK: tl.constexpr):
    """dx = scale * y * (dy - sum(dy * y)); masked positions have y = 0."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    dot = tl.sum(dy * y, axis=0)
    dx = scale * y * (dy - dot)
    tl.store(dx_ptr + row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)


class ScaledSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, scale: float, causal: bool = False):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1]).contiguous()
        n_rows, n_cols = x2.shape
        block, num_warps = _row_settings(n_cols)
        y = torch.empty_like(x2)
        seq_len = shape[-2] if x.dim() >= 2 else 1
        _softmax_fwd_kernel[(n_rows,)](y, x2, x2.stride(0), n_cols, seq_len, scale,
                                       CAUSAL=causal, BLOCK=block, num_warps=num_warps)
        ctx.save_for_backward(y)
        ctx.scale, ctx.block, ctx.num_warps = scale, block, num_warps
        return y.view(shape)

    @staticmethod
    def backward(ctx, dy: torch.Tensor):
        (y,) = ctx.saved_tensors
        dy2 = dy.reshape(y.shape).contiguous()
        dx = torch.empty_like(y)
        _softmax_bwd_kernel[(y.shape[0],)](dx, dy2, y, y.stride(0), y.shape[1], ctx.scale,
                                           BLOCK=ctx.block, num_warps=ctx.num_warps)
        return dx.view(dy.shape), None, None


def scaled_softmax(x: torch.Tensor, scale: Optional[float] = None, causal: bool = False):
    if scale is None:
        scale = 1.0 / math.sqrt(x.shape[-1])
    return ScaledSoftmax.apply(x, scale, causal)


if __name__ == "__main__":
    torch.manual_seed(0)
    s = torch.randn(2, 4, 128, 128, device="cuda", requires_grad=True)
    y = scaled_softmax(s, 0.125, causal=True)
    mask = torch.ones(128, 128, device="cuda", dtype=torch.bool).tril()
    ref = torch.softmax((s * 0.125).masked_fill(~mask, float("-inf")), dim=-1)
    print("max error", (y - ref).abs().max().item())
    y.sum().backward()
