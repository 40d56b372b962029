"""One fused AdamW step over a flat parameter buffer, as the multi-tensor
optimizers of training frameworks apply it once every parameter of a group
has been packed into one contiguous fp32 slab: a 1-D grid of programs,
each updating BLOCK_SIZE consecutive elements of the parameters, the
first moment and the second moment in place from a gradient that may be
in bf16 (read once, widened to fp32).

The hyper-parameters stay runtime scalars so that a learning-rate schedule
does not recompile the kernel, and the step count arrives as an int: the
bias corrections 1 - beta^step are worked out in the kernel with libdevice
pow rather than on the host. Decoupled weight decay scales the parameter
before the Adam update. Purely memory-bound: four streams read, three
written."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


# step changes on every call: no specialisation on its value (1, multiples of 16)
@triton.jit(do_not_specialize=["step"])
def adamw_step_kernel(param_ptr, grad_ptr, exp_avg_ptr, exp_avg_sq_ptr, n_elements, lr, beta1,
                      beta2, eps, weight_decay, step, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements

    param = tl.load(param_ptr + offsets, mask=mask, other=0.0)
    grad = tl.load(grad_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    exp_avg = tl.load(exp_avg_ptr + offsets, mask=mask, other=0.0)
    exp_avg_sq = tl.load(exp_avg_sq_ptr + offsets, mask=mask, other=0.0)

    step_f = step.to(tl.float32)
    bias_correction1 = 1.0 - libdevice.pow(beta1, step_f)
    bias_correction2 = 1.0 - libdevice.pow(beta2, step_f)

    # decoupled weight decay
    param = param * (1.0 - lr * weight_decay)
    exp_avg = beta1 * exp_avg + (1.0 - beta1) * grad
    exp_avg_sq = beta2 * exp_avg_sq + (1.0 - beta2) * grad * grad
    denom = tl.sqrt(exp_avg_sq) / tl.sqrt(bias_correction2) + eps
    param = param - (lr / bias_correction1) * (exp_avg / denom)

    tl.store(param_ptr + offsets, param, mask=mask)
    tl.store(exp_avg_ptr + offsets, exp_avg, mask=mask)
    tl.store(exp_avg_sq_ptr + offsets, exp_avg_sq, mask=mask)


def fused_adamw_step_(params, grads, exp_avg, exp_avg_sq, step, lr=1e-3, betas=(0.9, 0.999),
                      eps=1e-8, weight_decay=1e-2, BLOCK_SIZE=1024, num_warps=4):
    """Updates the flat fp32 params, exp_avg and exp_avg_sq in place from
    grads (fp32 or bf16, same length); step counts from 1."""
    assert params.is_contiguous() and grads.is_contiguous()
    assert params.numel() == grads.numel() == exp_avg.numel() == exp_avg_sq.numel()
    n = params.numel()
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    adamw_step_kernel[grid](params, grads, exp_avg, exp_avg_sq, n, lr, betas[0], betas[1], eps,
                            weight_decay, int(step), BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return params
