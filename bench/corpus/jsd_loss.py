"""Generalised Jensen-Shannon divergence for distillation, in the manner of
the fused-loss libraries used for LLM fine-tuning: the student's and the
teacher's log-probabilities [BT, V] come in (already log-softmaxed by the
caller), one program walks one row over the vocabulary in BLOCK_V chunks
and, in the same pass, writes the gradient with respect to the student's
log-probabilities and accumulates the row's loss.

With Q = exp(student), P = exp(teacher) and the mixture M = beta P +
(1 - beta) Q, the loss is beta KL(P || M) + (1 - beta) KL(Q || M); beta
is a runtime float, 0 and 1 select the plain forward KL(P || Q) and
reverse KL(Q || P) (the mixture degenerates there). log M is formed as a
log-add-exp of the two shifted log-probabilities, so vanishing
probabilities never reach a log(0). Rows whose label is ignore_index
contribute nothing; loss and gradient are divided by the number of rows
that count. fp32 arithmetic, gradient stored in the inputs' dtype."""
import torch
import triton
import triton.language as tl


@triton.jit
def jsd_fwd_bwd_kernel(student_ptr, stride_student, teacher_ptr, stride_teacher, loss_ptr,
                       dstudent_ptr, stride_dstudent, label_ptr, beta, n_non_ignore,
                       ignore_index, n_cols, HAS_LABEL: tl.constexpr, BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    student_ptr += row * stride_student
    teacher_ptr += row * stride_teacher
    dstudent_ptr += row * stride_dstudent

    if HAS_LABEL:
        label = tl.load(label_ptr + row)
        if label == ignore_index:
            for start in range(0, n_cols, BLOCK_V):
                cols = start + tl.arange(0, BLOCK_V)
                tl.store(dstudent_ptr + cols, 0.0, mask=cols < n_cols)
            tl.store(loss_ptr + row, 0.0)
            return

    inv_n = 1.0 / n_non_ignore
    log_w_teacher = tl.log(beta)
    log_w_student = tl.log(1.0 - beta)
    acc = tl.zeros([BLOCK_V], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        live = cols < n_cols
        s = tl.load(student_ptr + cols, mask=live, other=0.0).to(tl.float32)
        t = tl.load(teacher_ptr + cols, mask=live, other=0.0).to(tl.float32)
        q = tl.exp(s)
        if beta == 0.0:
            # forward KL(P || Q)
            p = tl.exp(t)
            elem = p * (t - s)
            grad = -p
        elif beta == 1.0:
            # reverse KL(Q || P)
            elem = q * (s - t)
            grad = elem + q
        else:
            a = t + log_w_teacher
            b = s + log_w_student
            top = tl.maximum(a, b)
            log_m = top + tl.log(tl.exp(a - top) + tl.exp(b - top))
            p = tl.exp(t)
            grad = (1.0 - beta) * q * (s - log_m)
            elem = beta * p * (t - log_m) + grad
        acc += tl.where(live, elem, 0.0)
        tl.store(dstudent_ptr + cols, (grad * inv_n).to(dstudent_ptr.dtype.element_ty),
                 mask=live)
    tl.store(loss_ptr + row, tl.sum(acc, axis=0) * inv_n)


def jsd_loss_with_grad(student_logp, teacher_logp, labels=None, beta=0.5, ignore_index=-100,
                       BLOCK_V=2048, num_warps=8):
    """student_logp, teacher_logp [BT, V] log-probabilities (fp32 or bf16),
    labels [BT] int64 or None -> (the mean loss, d loss / d student_logp),
    the gradient kept for the backward pass to scale by grad_output."""
    assert student_logp.shape == teacher_logp.shape
    bt, vocab = student_logp.shape
    loss_rows = torch.empty(bt, dtype=torch.float32, device=student_logp.device)
    dstudent = torch.empty_like(student_logp)
    if labels is not None:
        n_non_ignore = int((labels != ignore_index).sum().item())
    else:
        n_non_ignore = bt
    jsd_fwd_bwd_kernel[(bt,)](student_logp, student_logp.stride(0), teacher_logp,
                              teacher_logp.stride(0), loss_rows, dstudent, dstudent.stride(0),
                              labels if labels is not None else loss_rows, float(beta),
                              max(n_non_ignore, 1), ignore_index, vocab,
                              HAS_LABEL=labels is not None, BLOCK_V=BLOCK_V,
                              num_warps=num_warps)
    return loss_rows.sum(), dstudent
