"""RMSNorm forward and backward in the manner of training-kernel libraries:
one row per program, the reciprocal RMS kept for the backward, the weight
applied with an offset (Gemma uses 1 + w), casting to fp32 for the
statistics; the backward writes dX and per-program partial dW rows that
the host sums."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_forward_kernel(Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr, n_cols,
                             eps, offset, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = cols < n_cols
    x = tl.load(X_ptr + row * X_row_stride + cols, mask=in_row, other=0.0).to(tl.float32)
    scale = tl.load(W_ptr + cols, mask=in_row, other=0.0).to(tl.float32) + offset
    # mean of squares over the true row length; padded lanes contribute zero
    inv_rms = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(RSTD_ptr + row, inv_rms)
    y = (x * inv_rms) * scale
    tl.store(Y_ptr + row * Y_row_stride + cols, y.to(Y_ptr.dtype.element_ty), mask=in_row)


@triton.jit
def _rms_norm_backward_kernel(dY_ptr, dY_row_stride, dX_ptr, dX_row_stride, X_ptr, X_row_stride,
                              W_ptr, RSTD_ptr, dW_ptr, dW_row_stride, n_rows, n_cols, offset,
                              rows_per_program, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    row_lo = pid * rows_per_program
    row_hi = tl.minimum(row_lo + rows_per_program, n_rows)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = cols < n_cols
    scale = tl.load(W_ptr + cols, mask=in_row, other=0.0).to(tl.float32) + offset
    dw_part = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for r in range(row_lo, row_hi):
        r64 = r.to(tl.int64)
        dy = tl.load(dY_ptr + r64 * dY_row_stride + cols, mask=in_row, other=0.0).to(tl.float32)
        x = tl.load(X_ptr + r64 * X_row_stride + cols, mask=in_row, other=0.0).to(tl.float32)
        inv_rms = tl.load(RSTD_ptr + r64)
        xn = x * inv_rms
        g = dy * scale
        # remove the component of g along the normalised row, then rescale
        proj = tl.sum(g * xn, axis=0) / n_cols
        dx = (g - xn * proj) * inv_rms
        tl.store(dX_ptr + r64 * dX_row_stride + cols, dx.to(dX_ptr.dtype.element_ty), mask=in_row)
        dw_part += dy * xn
    tl.store(dW_ptr + pid.to(tl.int64) * dW_row_stride + cols, dw_part, mask=in_row)


def rms_norm_forward(X, W, eps=1e-6, offset=0.0):
    n_rows, n_cols = X.shape
    Y = torch.empty_like(X)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=X.device)
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 4 if BLOCK_SIZE <= 2048 else (8 if BLOCK_SIZE <= 8192 else 16)
    _rms_norm_forward_kernel[(n_rows,)](Y, Y.stride(0), X, X.stride(0), W, rstd, n_cols, eps,
                                        offset, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return Y, rstd
