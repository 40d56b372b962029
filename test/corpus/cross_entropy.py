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
    program_id = tl.program_id(0).to(tl.int64)
    Y_ptr += program_id * Y_stride
    y = tl.load(Y_ptr)

    X_ptr += program_id * X_stride
    if y == ignore_index:
        # nothing to learn from this row: zero gradient, zero loss
        for i in range(0, n_cols, BLOCK_SIZE):
            X_offsets = i + tl.arange(0, BLOCK_SIZE)
            tl.store(X_ptr + X_offsets, 0.0, mask=X_offsets < n_cols)
        return

    loss_ptr += program_id * loss_stride
    if RETURN_Z_LOSS == _TRUE:
        z_loss_ptr += program_id * loss_stride

    # pass 1: the running max and the sum of exponentials (online softmax)
    m = float("-inf")
    d = 0.0
    ori_X_y = tl.load(X_ptr + y).cast(tl.float32)
    if HAS_SOFTCAPPING:
        ori_X_y = _softcap(ori_X_y, softcap)

    scaled_x_sum = 0.0
    eps = label_smoothing / n_cols
    for i in range(0, n_cols, BLOCK_SIZE):
        X_offsets = i + tl.arange(0, BLOCK_SIZE)
        X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols,
                          other=float("-inf")).cast(tl.float32)
        if HAS_SOFTCAPPING:
            X_block = _softcap(X_block, softcap)
        block_max = tl.max(X_block)
        if label_smoothing > 0:
            scaled_x_sum += tl.sum(tl.where(X_offsets < n_cols, -eps * X_block, 0.0))
        m_new = tl.maximum(m, block_max)
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(X_block - m_new))
        m = m_new

    lse = m + tl.log(d)

    # pass 2: the gradient, written over the logits
    for i in range(0, n_cols, BLOCK_SIZE):
        X_offsets = i + tl.arange(0, BLOCK_SIZE)
        X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols,
                          other=float("-inf")).cast(tl.float32)
        if HAS_SOFTCAPPING:
            intermediate = libdevice.tanh(X_block / softcap)
            X_block = softcap * intermediate
        X_block = tl.exp(X_block - m) / d
        X_block += 2 * lse_square_scale * lse * X_block
        X_block += -eps
        X_block = tl.where(X_offsets != y, X_block, X_block - (1 - label_smoothing))
        if reduction == "mean":
            X_block = X_block / n_non_ignore
        if HAS_SOFTCAPPING:
            X_block = X_block * (1 - intermediate * intermediate)
        tl.store(X_ptr + X_offsets, X_block, mask=X_offsets < n_cols)

    tl.debug_barrier()

    loss = lse - ori_X_y
    if label_smoothing > 0:
        smooth_loss = scaled_x_sum + label_smoothing * lse
        loss = loss * (1 - label_smoothing) + smooth_loss
    z_loss = lse_square_scale * lse * lse
    loss += z_loss
    if reduction == "mean":
        z_loss = z_loss / n_non_ignore
        loss = loss / n_non_ignore

    tl.store(loss_ptr, loss)
    if RETURN_Z_LOSS == _TRUE:
        tl.store(z_loss_ptr, z_loss)


@triton.jit
def element_mul_kernel(X_ptr, X_stride, grad_output_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    """Scales the stored gradient by the upstream gradient (a scalar)."""
    program_id = tl.program_id(0).to(tl.int64)
    X_ptr += program_id * X_stride
    grad_output = tl.load(grad_output_ptr)
    for i in range(0, n_cols, BLOCK_SIZE):
        X_offsets = i + tl.arange(0, BLOCK_SIZE)
        X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols)
        tl.store(X_ptr + X_offsets, X_block * grad_output, mask=X_offsets < n_cols)


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
