"""Two row-wise training kernels in the manner of Liger-Kernel.

- DyT (Dynamic Tanh, the normalisation-free replacement of LayerNorm):
  y = gamma * tanh(alpha * x) + beta, with one learned scalar alpha and
  per-channel gamma and beta. The grid is (column blocks, rows), each
  program one BLOCK_N slice of one row; tanh from libdevice, fp32
  arithmetic, bf16 in and out.
- KL divergence forward with log_target=False: the input y_pred holds
  log-probabilities and the target y_true probabilities, the pointwise loss
  is y_true * (log(max(y_true, eps)) - y_pred). With a reducing reduction
  ('batchmean', 'sum', 'mean') each program walks one row over the
  vocabulary in BLOCK_SIZE chunks and stores that row's sum as its partial;
  the host adds the partials and divides by the batch size."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def dyt_fwd_kernel(x_ptr, x_row_stride, alpha_ptr, gamma_ptr, beta_ptr, y_ptr, y_row_stride, n_cols,
                   HAVE_BETA: tl.constexpr, BLOCK_N: tl.constexpr):
    # one BLOCK_N slice of one row: columns from the first grid axis, row from the second
    col_block = tl.program_id(0)
    row = tl.program_id(1).to(tl.int64)
    cols = col_block * BLOCK_N + tl.arange(0, BLOCK_N)
    in_row = cols < n_cols

    alpha = tl.load(alpha_ptr).to(tl.float32)
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=0.0).to(tl.float32)
    gamma = tl.load(gamma_ptr + cols, mask=in_row, other=0.0).to(tl.float32)

    y = gamma * libdevice.tanh(alpha * x)
    if HAVE_BETA:
        y += tl.load(beta_ptr + cols, mask=in_row, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=in_row)


@triton.jit
def kldiv_fwd_kernel(y_ptr, y_stride, gt_ptr, gt_stride, loss_ptr, loss_stride, n_cols, eps,
                     BLOCK_SIZE: tl.constexpr, log_target: tl.constexpr = False,
                     REDUCE: tl.constexpr = True):
    # one program per row, walking the vocabulary in BLOCK_SIZE chunks
    row = tl.program_id(0).to(tl.int64)
    pred_row = y_ptr + row * y_stride
    tgt_row = gt_ptr + row * gt_stride
    out_row = loss_ptr + row * loss_stride
    lanes = tl.arange(0, BLOCK_SIZE)

    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + lanes
        valid = cols < n_cols
        pred = tl.load(pred_row + cols, mask=valid, other=0.0).to(tl.float32)
        tgt = tl.load(tgt_row + cols, mask=valid, other=0.0).to(tl.float32)
        if log_target:
            # target given as log-probabilities: exp(t) * (t - pred)
            pointwise = tl.exp(tgt) * (tgt - pred)
        else:
            # target given as probabilities, clamped by eps inside the log
            pointwise = tgt * (tl.log(tl.maximum(tgt, eps)) - pred)
        pointwise = tl.where(valid, pointwise, 0.0)
        if REDUCE:
            acc += pointwise
        else:
            tl.store(out_row + cols, pointwise, mask=valid)

    if REDUCE:
        tl.store(out_row, tl.sum(acc, axis=0))


def dyt_forward(x, alpha, gamma, beta=None, BLOCK_N=1024, num_warps=4):
    """x [..., N] -> gamma * tanh(alpha * x) + beta, same shape and dtype."""
    shape = x.shape
    x = x.reshape(-1, shape[-1])
    rows, n = x.shape
    y = torch.empty_like(x)
    grid = (triton.cdiv(n, BLOCK_N), rows)
    dyt_fwd_kernel[grid](x, x.stride(0), alpha, gamma, beta if beta is not None else gamma, y,
                         y.stride(0), n, HAVE_BETA=beta is not None, BLOCK_N=BLOCK_N,
                         num_warps=num_warps)
    return y.reshape(shape)


def kldiv_batchmean(y_pred, y_true, eps=1e-10, BLOCK_SIZE=4096, num_warps=8):
    """y_pred (log-probabilities) and y_true (probabilities), both [BT, V] ->
    KL(y_true || exp(y_pred)) summed over the vocabulary, averaged over rows."""
    bt, v = y_pred.shape
    partial = torch.empty(bt, dtype=torch.float32, device=y_pred.device)
    kldiv_fwd_kernel[(bt,)](y_pred, y_pred.stride(0), y_true, y_true.stride(0), partial, 1, v,
                            eps, BLOCK_SIZE=BLOCK_SIZE, log_target=False, REDUCE=True,
                            num_warps=num_warps)
    return partial.sum() / bt
