"""Cross-entropy with the gradient written in place of the logits, as
memory-lean training libraries do: one program per row, an online
logsumexp over the vocabulary in BLOCK_SIZE chunks, ignore_index and label
smoothing, the loss per row stored, then a second pass overwriting the
logits with d(loss)/d(logits) (divided by the number of valid rows)."""
import torch
import triton
import triton.language as tl


@triton.jit
def liger_style_cross_entropy_kernel(X_ptr, X_stride, Y_ptr, loss_ptr, n_cols, n_non_ignore,
                                     ignore_index, label_smoothing: tl.constexpr,
                                     BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)
    Y_ptr += program_id
    y = tl.load(Y_ptr)
    X_ptr += program_id * X_stride
    if y == ignore_index:
        for i in range(0, n_cols, BLOCK_SIZE):
            X_offsets = i + tl.arange(0, BLOCK_SIZE)
            tl.store(X_ptr + X_offsets, 0.0, mask=X_offsets < n_cols)
        tl.store(loss_ptr + program_id, 0.0)
        return
    m = float("-inf")
    d = 0.0
    ori_X_y = tl.load(X_ptr + y).cast(tl.float32)
    eps = label_smoothing / n_cols
    scaled_x_sum = 0.0
    for i in range(0, n_cols, BLOCK_SIZE):
        X_offsets = i + tl.arange(0, BLOCK_SIZE)
        X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols,
                          other=float("-inf")).cast(tl.float32)
        block_max = tl.max(X_block)
        if label_smoothing > 0:
            scaled_x_sum += tl.sum(tl.where(X_offsets < n_cols, -eps * X_block, 0.0))
        m_new = tl.maximum(m, block_max)
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(X_block - m_new))
        m = m_new
    lse = m + tl.log(d)
    for i in range(0, n_cols, BLOCK_SIZE):
        X_offsets = i + tl.arange(0, BLOCK_SIZE)
        X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols,
                          other=float("-inf")).cast(tl.float32)
        X_block = tl.exp(X_block - m) / d - eps
        X_block = tl.where(X_offsets == y, X_block - (1 - label_smoothing), X_block)
        X_block = X_block / n_non_ignore
        tl.store(X_ptr + X_offsets, X_block, mask=X_offsets < n_cols)
    loss = lse - ori_X_y
    if label_smoothing > 0:
        smooth_loss = scaled_x_sum + label_smoothing * lse
        loss = loss * (1 - label_smoothing) + smooth_loss
    tl.store(loss_ptr + program_id, loss / n_non_ignore)
