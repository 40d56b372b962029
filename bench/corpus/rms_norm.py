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
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0)
    X_row_dtype = X_row.dtype
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)
    X_row = X_row.to(tl.float32)
    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = tl.math.rsqrt(mean_square + eps)
    tl.store(RSTD_ptr + row_idx, rstd)
    Y_row = (X_row * rstd).to(X_row_dtype)
    Y_row = Y_row * (offset + W_row)
    tl.store(Y_ptr + row_idx * Y_row_stride + col_offsets, Y_row, mask=mask)


@triton.jit
def _rms_norm_backward_kernel(dY_ptr, dY_row_stride, dX_ptr, dX_row_stride, X_ptr, X_row_stride,
                              W_ptr, RSTD_ptr, dW_ptr, dW_row_stride, n_rows, n_cols, offset,
                              rows_per_program, BLOCK_SIZE: tl.constexpr):
    row_block_id = tl.program_id(0)
    row_start = row_block_id * rows_per_program
    row_end = min((row_block_id + 1) * rows_per_program, n_rows)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    dW_row = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0.0).to(tl.float32) + offset
    for row_idx in range(row_start, row_end):
        dY_row = tl.load(dY_ptr + row_idx * dY_row_stride + col_offsets, mask=mask, other=0.0)
        X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0.0)
        rstd_row = tl.load(RSTD_ptr + row_idx)
        X_row = X_row.to(tl.float32)
        m = dY_row.to(tl.float32) * W_row
        dX_row = rstd_row * m
        dX_row += rstd_row * (-(1 / n_cols) * rstd_row * rstd_row *
                              tl.sum(m * X_row, axis=0) * X_row)
        dW_row += dY_row.to(tl.float32) * (X_row * rstd_row)
        tl.store(dX_ptr + row_idx * dX_row_stride + col_offsets, dX_row.to(X_ptr.dtype.element_ty),
                 mask=mask)
    tl.store(dW_ptr + row_block_id * dW_row_stride + col_offsets, dW_row, mask=mask)


def rms_norm_forward(X, W, eps=1e-6, offset=0.0):
    n_rows, n_cols = X.shape
    Y = torch.empty_like(X)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=X.device)
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 4 if BLOCK_SIZE <= 2048 else (8 if BLOCK_SIZE <= 8192 else 16)
    _rms_norm_forward_kernel[(n_rows,)](Y, Y.stride(0), X, X.stride(0), W, rstd, n_cols, eps,
                                        offset, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return Y, rstd
