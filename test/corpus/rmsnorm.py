"""RMS normalisation (forward and backward) in the way LLM training libraries
ship it: a settings helper, an autograd Function, casting modes for Llama and
Gemma checkpoints, and a small correctness check under __main__."""
import math
import operator
from functools import reduce
from typing import Optional

import torch
import triton
import triton.language as tl

try:
    # Triton 3.x keeps libdevice here
    from triton.language.extra.libdevice import rsqrt
except ModuleNotFoundError:
    from triton.language.math import rsqrt

MAX_FUSED_SIZE = 65536
_CASTING_MODE_NONE: tl.constexpr = tl.constexpr(-1)
_CASTING_MODE_LLAMA: tl.constexpr = tl.constexpr(0)
_CASTING_MODE_GEMMA: tl.constexpr = tl.constexpr(1)
_str_to_casting_mode = {"llama": _CASTING_MODE_LLAMA.value, "gemma": _CASTING_MODE_GEMMA.value,
                        "none": _CASTING_MODE_NONE.value}


def calculate_settings(n):
    block = triton.next_power_of_2(n)
    if block > MAX_FUSED_SIZE:
        raise RuntimeError(f"a row of {n} elements does not fit one block ({MAX_FUSED_SIZE})")
    warps = 4
    if block >= 32768:
        warps = 32
    elif block >= 8192:
        warps = 16
    elif block >= 2048:
        warps = 8
    return block, warps


@triton.jit
def _rms_norm_forward_kernel(
    Y_ptr, Y_row_stride,
    X_ptr, X_row_stride,
    W_ptr,
    RSTD_ptr, RSTD_row_stride,
    n_cols,
    eps,
    offset,
    casting_mode: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    r = tl.program_id(0).to(tl.int64)
    idx = tl.arange(0, BLOCK_SIZE)
    live = idx < n_cols
    x_in = tl.load(X_ptr + r * X_row_stride + idx, mask=live, other=0.0)
    g_in = tl.load(W_ptr + idx, mask=live, other=0.0)
    out_ty = Y_ptr.dtype.element_ty
    if casting_mode == _CASTING_MODE_NONE:
        # no casting: the whole row stays in the input's own type
        ms = tl.sum(x_in * x_in, axis=0) / n_cols
        inv = rsqrt(ms + eps).to(x_in.dtype)
        gain = (g_in + offset).to(x_in.dtype)
        res = (x_in * inv) * gain
        tl.store(RSTD_ptr + r * RSTD_row_stride, inv.to(RSTD_ptr.dtype.element_ty))
    else:
        xf = x_in.to(tl.float32)
        ms = tl.sum(xf * xf, axis=0) / n_cols
        inv = rsqrt(ms + eps)
        if casting_mode == _CASTING_MODE_LLAMA:
            # normalise in fp32, drop back to the input type, then apply the gain
            xn = (xf * inv).to(x_in.dtype)
            res = xn * (g_in + offset).to(x_in.dtype)
        else:
            # Gemma: the gain is applied in fp32 too
            res = (xf * inv) * (g_in.to(tl.float32) + offset)
        tl.store(RSTD_ptr + r * RSTD_row_stride, inv.to(RSTD_ptr.dtype.element_ty))
    tl.store(Y_ptr + r * Y_row_stride + idx, res.to(out_ty), mask=live)


@triton.jit
def _rms_norm_backward_kernel(
    dY_ptr, dY_row_stride,
    dX_ptr, dX_row_stride,
    X_ptr, X_row_stride,
    W_ptr,
    RSTD_ptr, RSTD_row_stride,
    dW_ptr, dW_row_stride,
    n_rows, n_cols,
    offset,
    rows_per_program,
    BLOCK_SIZE: tl.constexpr,
):
    """Each program walks `rows_per_program` rows and keeps a partial dW row
    in registers; the host sums the partial rows."""
    prog = tl.program_id(0)
    first = prog * rows_per_program
    last = tl.minimum(first + rows_per_program, n_rows)
    idx = tl.arange(0, BLOCK_SIZE)
    live = idx < n_cols
    gain = tl.load(W_ptr + idx, mask=live, other=0.0).to(tl.float32) + offset
    acc_dw = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for r in range(first, last):
        r64 = r.to(tl.int64)
        xv = tl.load(X_ptr + r64 * X_row_stride + idx, mask=live, other=0.0).to(tl.float32)
        gv = tl.load(dY_ptr + r64 * dY_row_stride + idx, mask=live, other=0.0).to(tl.float32)
        s = tl.load(RSTD_ptr + r64 * RSTD_row_stride).to(tl.float32)
        xhat = xv * s
        gw = gv * gain
        # d/dx of x*s: s*gw minus the projection of gw onto xhat
        proj = tl.sum(gw * xhat, axis=0) / n_cols
        dxv = s * (gw - xhat * proj)
        acc_dw += gv * xhat
        tl.store(dX_ptr + r64 * dX_row_stride + idx, dxv.to(dX_ptr.dtype.element_ty), mask=live)
    tl.store(dW_ptr + prog.to(tl.int64) * dW_row_stride + idx, acc_dw, mask=live)


def rms_norm_forward(X, W, eps, offset, casting_mode):
    if not isinstance(casting_mode, int):
        casting_mode = _str_to_casting_mode[casting_mode]
    shape = X.shape
    dim = shape[-1]
    X = X.view(-1, dim)
    n_rows, n_cols = X.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
    rstd_dtype = torch.float32 if casting_mode in (0, 1) else X.dtype
    RSTD = torch.empty(n_rows, dtype=rstd_dtype, device=X.device)
    _rms_norm_forward_kernel[(n_rows,)](
        Y, Y.stride(0), X, X.stride(0), W, RSTD, RSTD.stride(0), n_cols, eps, offset,
        casting_mode, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return Y.view(*shape), X, RSTD, BLOCK_SIZE, num_warps, casting_mode


def rms_norm_backward(dY, X, W, RSTD, offset, BLOCK_SIZE, num_warps):
    shape = dY.shape
    dim = shape[-1]
    dY = dY.view(-1, dim)
    n_rows, n_cols = dY.shape
    sm_count = torch.cuda.get_device_properties(X.device).multi_processor_count
    rows_per_program = math.ceil(n_rows / sm_count)
    grid = (sm_count,)
    _dW = torch.empty((sm_count, n_cols), dtype=torch.float32, device=W.device)
    dX = torch.empty_like(dY)
    _rms_norm_backward_kernel[grid](
        dY, dY.stride(0), dX, dX.stride(0), X, X.stride(0), W, RSTD, RSTD.stride(0),
        _dW, _dW.stride(0), n_rows, n_cols, offset, rows_per_program,
        BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return dX.view(*shape), _dW.sum(dim=0).to(W.dtype)


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, W, eps=1e-6, offset=0.0, casting_mode="llama"):
        Y, X, RSTD, BLOCK_SIZE, num_warps, casting_mode = rms_norm_forward(
            X, W, eps, offset, casting_mode)
        ctx.offset = offset
        ctx.BLOCK_SIZE, ctx.num_warps = BLOCK_SIZE, num_warps
        ctx.save_for_backward(X, W, RSTD)
        return Y

    @staticmethod
    def backward(ctx, dY):
        X, W, RSTD = ctx.saved_tensors
        dX, dW = rms_norm_backward(dY, X, W, RSTD, ctx.offset, ctx.BLOCK_SIZE, ctx.num_warps)
        return dX, dW, None, None, None


class RMSNorm(torch.nn.Module):
    def __init__(self, hidden_size, eps=1e-6, offset=0.0, casting_mode="llama"):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon, self.offset, self.casting_mode = eps, offset, casting_mode

    def forward(self, hidden_states):
        return RMSNormFunction.apply(hidden_states, self.weight, self.variance_epsilon,
                                     self.offset, self.casting_mode)

    def extra_repr(self):
        return f"{tuple(self.weight.shape)}, eps={self.variance_epsilon}, offset={self.offset}"


def _numel(shape):
    return reduce(operator.mul, shape, 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    for shape in [(4, 1000), (2, 7, 4096)]:
        x = torch.randn(*shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        norm = RMSNorm(shape[-1]).cuda().to(torch.bfloat16)
        ref = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
        err = (norm(x).float() - ref * norm.weight.float()).abs().max().item()
        print(f"{str(shape):>16} {_numel(shape):>8} max err {err:.2e}")
