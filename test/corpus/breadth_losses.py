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
    for c0 in range(0, n_cols, BLOCK):
        idx = c0 + tl.arange(0, BLOCK)
        inside = idx < n_cols
        logq = tl.load(y_ptr + idx, mask=inside, other=0.0).to(tl.float32)
        tgt = tl.load(gt_ptr + idx, mask=inside, other=0.0).to(tl.float32)
        if log_target:
            term = tl.exp(tgt) * (tgt - logq)
        else:
            term = tgt * (tl.log(tl.maximum(tgt, eps)) - logq)
        term = tl.where(inside, term, 0.0)
        if reduction == _REDUCTION_NONE:
            tl.store(loss_ptr + idx, term, mask=inside)
        else:
            acc += term
    if reduction != _REDUCTION_NONE:
        tl.store(loss_ptr, tl.sum(acc, axis=0))


@triton.heuristics({"DO_SOFTCAPPING": lambda args: args["SOFTCAP"] != 0})
@triton.jit
def ce_softcap_kernel(logits_ptr, logits_row_stride, loss_ptr, lse_ptr, labels_ptr, VOCAB,
                      SOFTCAP, LOGIT_SCALE, BLOCK: tl.constexpr, DO_SOFTCAPPING: tl.constexpr,
                      DO_LOGIT_SCALING: tl.constexpr):
    # one row of logits per program; rows labelled -100 give a zero loss
    row = tl.program_id(0).to(tl.int64)
    logits_ptr += row * logits_row_stride
    label = tl.load(labels_ptr + row).to(tl.int32)
    idx = tl.arange(0, BLOCK)
    inside = idx < VOCAB
    z = tl.load(logits_ptr + idx, mask=inside, other=0.0).to(tl.float32)
    if DO_LOGIT_SCALING:
        z = LOGIT_SCALE * z
    if DO_SOFTCAPPING:
        z = SOFTCAP * triton_tanh(z / SOFTCAP)
    z = tl.where(inside, z, -float("inf"))
    zmax = tl.max(z, axis=0)
    lse = zmax + tl.log(tl.sum(tl.exp(z - zmax), axis=0))
    tl.store(lse_ptr + row, lse)
    ignored = label == -100
    safe_label = tl.where(ignored, 0, label)
    picked = tl.sum(tl.where(idx == safe_label, z, 0.0), axis=0)
    tl.store(loss_ptr + row, tl.where(ignored, 0.0, lse - picked))


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
    row = tl.program_id(0).to(tl.int64)
    Y += row * Y_row_stride
    X += row * X_row_stride
    idx = tl.arange(0, BLOCK_SIZE)
    inside = idx < n_cols
    xv = tl.load(X + idx, mask=inside, other=0.0).to(tl.float32)
    wv = tl.load(W + idx, mask=inside, other=0.0).to(tl.float32)
    ms = tl.sum(xv * xv, axis=0) / n_cols
    inv_rms = 1.0 / tl.sqrt(ms + eps)
    tl.store(r + row, inv_rms)
    yv = xv * inv_rms * (1.0 + wv)
    tl.store(Y + idx, yv.to(Y.dtype.element_ty), mask=inside)
