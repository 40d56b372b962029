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
    row = tl.program_id(0).to(tl.int64)
    x_row = X_ptr + row * X_stride
    label = tl.load(Y_ptr + row)
    cols = tl.arange(0, BLOCK_SIZE)

    # Ignored row: zero loss and an all-zero gradient row.
    if label == ignore_index:
        tl.store(loss_ptr + row, 0.0)
        for start in range(0, n_cols, BLOCK_SIZE):
            offs = start + cols
            tl.store(x_row + offs, tl.zeros([BLOCK_SIZE], dtype=tl.float32)
                     .to(X_ptr.dtype.element_ty), mask=offs < n_cols)
        return

    eps = label_smoothing / n_cols
    inv_n = 1.0 / n_non_ignore.to(tl.float32)
    x_label = tl.load(x_row + label).to(tl.float32)

    # Pass 1: running max, rescaled running sum of exponentials and (for
    # label smoothing) the plain sum of the logits.
    run_max = -float("inf")
    run_sum = 0.0
    x_total = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + cols
        inb = offs < n_cols
        xb = tl.load(x_row + offs, mask=inb, other=-float("inf")).to(tl.float32)
        new_max = tl.maximum(run_max, tl.max(xb, axis=0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(xb - new_max), axis=0)
        run_max = new_max
        if label_smoothing > 0:
            x_total += tl.sum(tl.where(inb, xb, 0.0), axis=0)
    lse = run_max + tl.log(run_sum)

    # loss = (1-ls)*(lse - x_y) + ls*lse - eps*sum(x), averaged over valid rows
    row_loss = lse - (1.0 - label_smoothing) * x_label
    if label_smoothing > 0:
        row_loss = row_loss - eps * x_total
    tl.store(loss_ptr + row, row_loss * inv_n)

    # Pass 2: overwrite the logits with (softmax - eps - (1-ls)*onehot) / n.
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + cols
        inb = offs < n_cols
        xb = tl.load(x_row + offs, mask=inb, other=0.0).to(tl.float32)
        g = tl.exp(xb - lse) - eps
        g = tl.where(offs == label, g - (1.0 - label_smoothing), g)
        tl.store(x_row + offs, (g * inv_n).to(X_ptr.dtype.element_ty), mask=inb)
