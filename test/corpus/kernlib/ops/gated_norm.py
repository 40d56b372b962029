"""RMS norm gated by SiLU(z), as state-space model blocks use it; one row per
program, optional residual input (None when absent)."""
import torch
import triton
import triton.language as tl

from kernlib import ext as tle
from kernlib.utils import calculate_settings, row_stats
from .. import utils


@triton.heuristics({"HAS_RESIDUAL": lambda args: args["R"] is not None})
@triton.jit
def _gated_rms_norm_fwd(X, Z, R, W, Y, stride, n_cols, eps,
                        HAS_RESIDUAL: tl.constexpr, NORM_BEFORE_GATE: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    row = tle.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        x += tl.load(R + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    z = tl.load(Z + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    if not NORM_BEFORE_GATE:
        x *= utils.silu(z)
    _, mean_sq = row_stats(x, n_cols)
    rstd = 1 / tl.sqrt(mean_sq + eps)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    y = x * rstd * w
    if NORM_BEFORE_GATE:
        y *= utils.silu(z)
    tl.store(Y + row * stride + cols, y.to(Y.dtype.element_ty), mask=mask)


def gated_rms_norm(x, z, weight, residual=None, eps=1e-6, norm_before_gate=True):
    x2 = x.reshape(-1, x.shape[-1])
    y = torch.empty_like(x2)
    BLOCK_N, num_warps = calculate_settings(x2.shape[1])
    _gated_rms_norm_fwd[(x2.shape[0],)](x2, z.reshape(x2.shape), residual, weight, y,
                                        x2.stride(0), x2.shape[1], eps,
                                        NORM_BEFORE_GATE=norm_before_gate, BLOCK_N=BLOCK_N,
                                        num_warps=num_warps)
    return y.reshape(x.shape)
