"""Cross-entropy over a large vocabulary in one pass per row: the loss and the
gradient of the logits (written over the logits, to save memory), with
label smoothing, an ignored label, an optional logit soft-cap and a z-loss
term. Reductions are chosen by a string constexpr."""
import operator
from typing import Optional

import torch
import triton
import triton.language as tl

from triton.language.extra.cuda import libdevice

_TRUE: tl.constexpr = tl.constexpr(1)
_FALSE: tl.constexpr = tl.constexpr(0)
MAX_FUSED_SIZE = 65536 // 2


def infer_device():
    return "cuda" if torch.cuda.is_available() else "cpu"


def element_mul_kernel_grid(n_rows):
    return (n_rows,)


@triton.jit
def _softcap(x, softcap):
    return softcap * libdevice.tanh(x / softcap)


@triton.jit
def cross_entropy_kernel(
    X_ptr, X_stride,
    Y_ptr, Y_stride,
    loss_ptr, z_loss_ptr, loss_stride,
    n_cols, n_non_ignore,
    ignore_index,
    lse_square_scale: tl.constexpr,
    label_smoothing: tl.constexpr,
    reduction: tl.constexpr,  # "mean" or "sum"
    softcap,
    RETURN_Z_LOSS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    HAS_SOFTCAPPING: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = X_ptr + row * X_stride
    label = tl.load(Y_ptr + row * Y_stride)
    offs = tl.arange(0, BLOCK_SIZE)

    if label == ignore_index:
        # nothing to learn from this row: its gradient is zero, its loss left alone
        for c0 in range(0, n_cols, BLOCK_SIZE):
            cols = c0 + offs
            tl.store(x_row + cols, tl.zeros((BLOCK_SIZE,), dtype=x_row.dtype.element_ty),
                     mask=cols < n_cols)
        return

    # logit of the true class (capped when soft-capping is on)
    x_lab = tl.load(x_row + label).to(tl.float32)
    if HAS_SOFTCAPPING:
        x_lab = _softcap(x_lab, softcap)

    # pass 1: a scalar running max with its rescaled exp-sum, plus the plain sum of logits
    run_max = float("-inf")
    run_den = 0.0
    run_tot = 0.0
    for c0 in range(0, n_cols, BLOCK_SIZE):
        cols = c0 + offs
        valid = cols < n_cols
        v = tl.load(x_row + cols, mask=valid, other=float("-inf")).to(tl.float32)
        if HAS_SOFTCAPPING:
            v = _softcap(v, softcap)
        hi = tl.maximum(run_max, tl.max(v, axis=0))
        run_den = run_den * tl.exp(run_max - hi) + tl.sum(tl.exp(v - hi), axis=0)
        run_max = hi
        if label_smoothing > 0:
            run_tot += tl.sum(tl.where(valid, v, 0.0), axis=0)
    lse = run_max + tl.log(run_den)

    eps = label_smoothing / n_cols
    if reduction == "mean":
        scale = 1.0 / n_non_ignore
    else:
        scale = 1.0

    # pass 2: d(loss)/d(logit), written over the logits
    for c0 in range(0, n_cols, BLOCK_SIZE):
        cols = c0 + offs
        valid = cols < n_cols
        raw = tl.load(x_row + cols, mask=valid, other=0.0).to(tl.float32)
        if HAS_SOFTCAPPING:
            th = libdevice.tanh(raw / softcap)
            v = softcap * th
        else:
            v = raw
        p = tl.exp(v - lse)
        g = p * (1.0 + 2.0 * lse_square_scale * lse) - eps
        g = tl.where(cols == label, g - (1.0 - label_smoothing), g)
        g = g * scale
        if HAS_SOFTCAPPING:
            g = g * (1.0 - th * th)
        tl.store(x_row + cols, g.to(x_row.dtype.element_ty), mask=valid)

    nll = lse - x_lab
    if label_smoothing > 0:
        nll = nll * (1.0 - label_smoothing) + label_smoothing * lse - eps * run_tot
    zl = lse_square_scale * lse * lse
    nll = (nll + zl) * scale
    zl = zl * scale
    tl.store(loss_ptr + row * loss_stride, nll)
    if RETURN_Z_LOSS == _TRUE:
        tl.store(z_loss_ptr + row * loss_stride, zl)


@triton.jit
def element_mul_kernel(X_ptr, X_stride, grad_output_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    """Scales the stored gradient by the upstream gradient (a scalar)."""
    row = tl.program_id(0).to(tl.int64)
    base = X_ptr + row * X_stride
    factor = tl.load(grad_output_ptr)
    for c0 in range(0, n_cols, BLOCK_SIZE):
        cols = c0 + tl.arange(0, BLOCK_SIZE)
        keep = cols < n_cols
        vals = tl.load(base + cols, mask=keep)
        tl.store(base + cols, vals * factor, mask=keep)


def cross_entropy_forward(_input, target, ignore_index, lse_square_scale, label_smoothing,
                          reduction, softcap, return_z_loss):
    BT, V = _input.shape
    n_rows = BT
    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(V))
    loss_1d = torch.zeros(n_rows, dtype=_input.dtype, device=_input.device)
    z_loss_1d = torch.zeros(n_rows, dtype=_input.dtype, device=_input.device) if return_z_loss else None
    n_non_ignore = (target != ignore_index).sum().item()
    if _input.stride(-1) != 1:
        _input = _input.contiguous()
    if target.stride(-1) != 1:
        target = target.contiguous()
    cross_entropy_kernel[(n_rows,)](
        X_ptr=_input, X_stride=_input.stride(-2), Y_ptr=target, Y_stride=target.stride(-1),
        loss_ptr=loss_1d, z_loss_ptr=z_loss_1d, loss_stride=loss_1d.stride(-1), n_cols=V,
        n_non_ignore=n_non_ignore, ignore_index=ignore_index, lse_square_scale=lse_square_scale,
        label_smoothing=label_smoothing, reduction=reduction, softcap=softcap,
        RETURN_Z_LOSS=_TRUE.value if return_z_loss else _FALSE.value, BLOCK_SIZE=BLOCK_SIZE,
        HAS_SOFTCAPPING=True if softcap is not None else False, num_warps=32)
    loss = torch.sum(loss_1d)
    z_loss = torch.sum(z_loss_1d) if return_z_loss else None
    return loss, z_loss, _input


def cross_entropy_backward(_input, grad_output):
    if torch.equal(grad_output, torch.tensor(1.0, device=grad_output.device)):
        return _input
    BT, V = _input.shape
    element_mul_kernel[element_mul_kernel_grid(BT)](
        _input, _input.stride(-2), grad_output, V,
        BLOCK_SIZE=min(MAX_FUSED_SIZE, triton.next_power_of_2(V)), num_warps=32)
    return _input


class CrossEntropyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, _input: torch.Tensor, target: torch.Tensor, ignore_index: int = -100,
                lse_square_scale: float = 0.0, label_smoothing: float = 0.0,
                reduction: str = "mean", softcap: Optional[float] = None,
                return_z_loss: bool = False):
        loss, z_loss, _input = cross_entropy_forward(_input, target, ignore_index,
                                                     lse_square_scale, label_smoothing,
                                                     reduction, softcap, return_z_loss)
        ctx.save_for_backward(_input.detach())
        return loss, z_loss

    @staticmethod
    def backward(ctx, grad_output, grad_output2):
        (_input,) = ctx.saved_tensors
        return cross_entropy_backward(_input, grad_output), *([None] * 7)


if __name__ == "__main__":
    torch.manual_seed(42)
    logits = torch.randn(8, 32000, device=infer_device(), requires_grad=True)
    target = torch.randint(0, 32000, (8,), device=logits.device)
    target[3] = -100
    loss, _ = CrossEntropyFunction.apply(logits.clone(), target)
    ref = torch.nn.functional.cross_entropy(logits, target, ignore_index=-100)
    print("loss", loss.item(), "torch", ref.item(), operator.sub(loss.item(), ref.item()))
