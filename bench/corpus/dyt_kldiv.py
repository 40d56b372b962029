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
    col = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    row = tl.program_id(1).to(tl.int64)
    mask = col < n_cols
    alpha = tl.load(alpha_ptr).to(tl.float32)
    gamma = tl.load(gamma_ptr + col, mask=mask, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + row * x_row_stride + col, mask=mask, other=0.0).to(tl.float32)
    y = gamma * libdevice.tanh(alpha * x)
    if HAVE_BETA:
        y += tl.load(beta_ptr + col, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * y_row_stride + col, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def kldiv_fwd_kernel(y_ptr, y_stride, gt_ptr, gt_stride, loss_ptr, loss_stride, n_cols, eps,
                     BLOCK_SIZE: tl.constexpr, log_target: tl.constexpr = False,
                     REDUCE: tl.constexpr = True):
    row = tl.program_id(0).to(tl.int64)
    y_ptr += row * y_stride
    gt_ptr += row * gt_stride
    loss_ptr += row * loss_stride
    base_offsets = tl.arange(0, BLOCK_SIZE)
    loss_sum = 0.0
    for i in range(0, n_cols, BLOCK_SIZE):
        offsets = i + base_offsets
        mask = offsets < n_cols
        y = tl.load(y_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        y_true = tl.load(gt_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        if not log_target:
            loss = y_true * (tl.log(tl.maximum(y_true, eps)) - y)
        else:
            loss = tl.exp(y_true) * (y_true - y)
        if REDUCE:
            loss_sum += tl.sum(loss, axis=0)
        else:
            tl.store(loss_ptr + offsets, loss, mask=mask)
    if REDUCE:
        tl.store(loss_ptr, loss_sum)


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
