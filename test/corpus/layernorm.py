"""Fused layer norm: forward and backward kernels, an autograd Function and a
small benchmark. Written for tk's corpus in the style of kernel libraries."""
import math
from typing import Optional, Tuple

import torch
import triton
import triton.language as tl

try:
    from triton.language.extra import libdevice
except ImportError:
    from triton.language.math import libdevice

MAX_FUSED_SIZE = 65536 // 4
DEFAULT_EPS: float = 1e-5


def calculate_settings(n: int) -> Tuple[int, int]:
    block = triton.next_power_of_2(n)
    if block > MAX_FUSED_SIZE:
        raise RuntimeError(f"feature dim {n} exceeds the fused size {MAX_FUSED_SIZE}")
    num_warps = 4 if block < 2048 else (8 if block < 8192 else 16)
    return block, num_warps


@triton.jit
def _row_stats(x, mask, N, eps):
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    return mean, xc, rstd


@triton.jit
def _ln_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, HAS_BIAS: tl.constexpr,
            BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean, xc, rstd = _row_stats(x, mask, N, eps)
    w = tl.load(W + cols, mask=mask, other=1.0)
    y = xc * rstd * w
    if HAS_BIAS:
        y += tl.load(B + cols, mask=mask, other=0.0)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    tl.store(Y + row * stride + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _ln_bwd_dx(DY, DX, X, W, Mean, Rstd, stride, N, BLOCK_N: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    idx = tl.arange(0, BLOCK_N)
    live = idx < N
    xv = tl.load(X + r * stride + idx, mask=live, other=0.0).to(tl.float32)
    gv = tl.load(DY + r * stride + idx, mask=live, other=0.0).to(tl.float32)
    gain = tl.load(W + idx, mask=live, other=0.0).to(tl.float32)
    mu = tl.load(Mean + r)
    inv = tl.load(Rstd + r)
    xhat = tl.where(live, (xv - mu) * inv, 0.0)
    g = tl.where(live, gv * gain, 0.0)
    # subtract the mean of g and the component of g along xhat
    g_mean = tl.sum(g, axis=0) / N
    g_proj = tl.sum(g * xhat, axis=0) / N
    dxv = (g - g_mean - xhat * g_proj) * inv
    tl.store(DX + r * stride + idx, dxv.to(DX.dtype.element_ty), mask=live)


class LayerNormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None, eps=DEFAULT_EPS):
        shape = x.shape
        x = x.reshape(-1, shape[-1]).contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        mean = torch.empty(M, dtype=torch.float32, device=x.device)
        rstd = torch.empty_like(mean)
        BLOCK_N, num_warps = calculate_settings(N)
        _ln_fwd[(M,)](x, y, weight, bias, mean, rstd, x.stride(0), N, eps,
                      HAS_BIAS=bias is not None, BLOCK_N=BLOCK_N, num_warps=num_warps)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.BLOCK_N, ctx.num_warps = BLOCK_N, num_warps
        return y.reshape(*shape)

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved_tensors
        dx = torch.empty_like(x)
        _ln_bwd_dx[(x.shape[0],)](dy.contiguous(), dx, x, weight, mean, rstd, x.stride(0),
                                  x.shape[1], BLOCK_N=ctx.BLOCK_N, num_warps=ctx.num_warps)
        return dx, None, None, None


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None,
               eps: float = DEFAULT_EPS) -> torch.Tensor:
    return LayerNormFn.apply(x, weight, bias, eps)


if __name__ == "__main__":
    torch.manual_seed(0)
    for n in [512, 1024, 4096]:
        x = torch.randn(256, n, device="cuda", requires_grad=True)
        w = torch.rand(n, device="cuda")
        ref = torch.nn.functional.layer_norm(x, (n,), w, None, DEFAULT_EPS)
        out = layer_norm(x, w)
        print(f"N={n:5d} max err {(out - ref).abs().max().item():.3e}")
