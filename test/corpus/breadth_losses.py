# Losses and a normalisation in the manner of fine-tuning libraries: reduction
# modes as module-level constexprs with a default argument, a builtin bound to
# a module name (an alias chosen by Triton version), row pointers advanced in
# place, ignore_index rows, softcapping, and a Gemma-style RMS norm.
import triton
import triton.language as tl
from triton.language.extra import libdevice

triton_tanh = libdevice.tanh

_REDUCTION_NONE = tl.constexpr(0)
_REDUCTION_SUM = tl.constexpr(1)
_REDUCTION_BATCHMEAN: tl.constexpr = 2


@triton.jit
def kl_div_kernel(y_ptr, y_stride, gt_ptr, gt_stride, loss_ptr, loss_stride, n_cols, eps,
                  BLOCK: tl.constexpr, log_target: tl.constexpr = False,
                  reduction: tl.constexpr = _REDUCTION_BATCHMEAN):
    # KL(target || input) with the input as log-probabilities; per element
    # under NONE, else a per-row partial sum the host adds up
    row = tl.program_id(0).to(tl.int64)
    y_ptr += row * y_stride
    gt_ptr += row * gt_stride
    loss_ptr += row * loss_stride
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        t = tl.load(gt_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        if not log_target:
            kl = t * (tl.log(tl.maximum(t, eps)) - y)
        else:
            kl = tl.exp(t) * (t - y)
        if reduction == _REDUCTION_NONE:
            tl.store(loss_ptr + offs, kl, mask=mask)
        else:
            acc += tl.where(mask, kl, 0.0)
    if reduction != _REDUCTION_NONE:
        tl.store(loss_ptr, tl.sum(acc, axis=0))


@triton.heuristics({"DO_SOFTCAPPING": lambda args: args["SOFTCAP"] != 0})
@triton.jit
def ce_softcap_kernel(logits_ptr, logits_row_stride, loss_ptr, lse_ptr, labels_ptr, VOCAB,
                      SOFTCAP, LOGIT_SCALE, BLOCK: tl.constexpr, DO_SOFTCAPPING: tl.constexpr,
                      DO_LOGIT_SCALING: tl.constexpr):
    # one row of logits per program; rows labelled -100 give a zero loss
    row = tl.program_id(0)
    logits_ptr += row * logits_row_stride.to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < VOCAB
    label = tl.load(labels_ptr + row).to(tl.int32)
    logits = tl.load(logits_ptr + cols, mask=mask, other=-float("inf")).to(tl.float32)
    if DO_LOGIT_SCALING:
        logits = LOGIT_SCALE * logits
    if DO_SOFTCAPPING:
        logits = SOFTCAP * triton_tanh(logits / SOFTCAP)
    c = tl.max(logits, 0)
    lse = c + tl.log(tl.sum(tl.exp(logits - c), 0))
    if label != -100:
        x = tl.load(logits_ptr + label).to(tl.float32)
        if DO_LOGIT_SCALING:
            x = LOGIT_SCALE * x
        if DO_SOFTCAPPING:
            x = SOFTCAP * triton_tanh(x / SOFTCAP)
        loss = lse - x
    else:
        loss = 0.0
    tl.store(lse_ptr + row, lse)
    tl.store(loss_ptr + row, loss)


@triton.jit
def smooth_l1_kernel(x_ptr, y_ptr, out_ptr, n_elements, beta, BLOCK: tl.constexpr):
    # Huber-style loss summed over the tensor with one atomic per program
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    d = tl.abs(tl.load(x_ptr + offs, mask=mask, other=0.0) - tl.load(y_ptr + offs, mask=mask, other=0.0))
    l = tl.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    tl.atomic_add(out_ptr, tl.sum(l, axis=0))


@triton.jit
def gemma_rms_norm_kernel(Y, Y_row_stride, X, X_row_stride, W, r, n_cols, eps,
                          BLOCK_SIZE: tl.constexpr):
    # y = x * rsqrt(mean(x^2) + eps) * (1 + w), computed in fp32, stored in
    # the input dtype; the inverse rms is kept for the backward
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    Y += row_idx * Y_row_stride
    X += row_idx * X_row_stride
    r += row_idx
    X_row = tl.load(X + col_offsets, mask=mask, other=0).to(tl.float32)
    W_row = tl.load(W + col_offsets, mask=mask, other=0).to(tl.float32)
    row_var = tl.sum(X_row * X_row, axis=0) / n_cols
    inv_var = tl.math.rsqrt(row_var + eps)
    tl.store(r, inv_var)
    normed = X_row * inv_var
    output = normed * (W_row + 1.0)
    tl.store(Y + col_offsets, output.to(Y.dtype.element_ty), mask=mask)
