"""Liger-style fused linear cross-entropy forward for one chunk of rows,
with the vocabulary split across programs (a chunk of a few hundred rows
alone would leave most of the GPU idle). Program (m, s) computes the bf16
logits x @ W^T of its rows over its slice of the vocabulary (W is the
[vocab, hidden] weight of nn.Linear, read tile by tile and transposed in
registers), folds them into an online max / sum of exponentials, the sum
of the logits (for label smoothing) and the target's logit when it falls in
the slice, all in fp32, and writes these partials. It then takes a ticket
from a per-row-block counter; the program that takes the last ticket merges
the partials of all slices and writes the logsumexp and the loss per row:
(1 - eps) * (lse - z_target) + eps * (lse - mean(z)) + z_scale * lse^2, and
0 for ignored targets."""
import torch
import triton
import triton.language as tl


@triton.jit
def flce_split_vocab_fwd_kernel(x_ptr, w_ptr, target_ptr, part_max_ptr, part_sum_ptr,
                                part_zsum_ptr, part_tgt_ptr, ticket_ptr, loss_ptr, lse_ptr,
                                n_rows, vocab, hidden, vocab_per_split, n_splits, stride_xm,
                                stride_wv, ignore_index, label_smoothing, lse_square_scale,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                BLOCK_K: tl.constexpr, SPLITS_PAD: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_s = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < n_rows
    target = tl.load(target_ptr + rows, mask=row_ok, other=ignore_index)
    offs_k = tl.arange(0, BLOCK_K)
    x_base = x_ptr + rows.to(tl.int64)[:, None] * stride_xm
    v_begin = pid_s * vocab_per_split
    v_end = tl.minimum(v_begin + vocab_per_split, vocab)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    s_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    zsum = tl.zeros((BLOCK_M,), dtype=tl.float32)
    z_t = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for v_start in range(v_begin, v_end, BLOCK_N):
        cols = v_start + tl.arange(0, BLOCK_N)
        col_ok = cols < v_end
        w_base = w_ptr + cols.to(tl.int64)[:, None] * stride_wv
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k_start in range(0, hidden, BLOCK_K):
            kk = k_start + offs_k
            k_ok = kk < hidden
            x = tl.load(x_base + kk[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            w = tl.load(w_base + kk[None, :], mask=col_ok[:, None] & k_ok[None, :], other=0.0)
            acc = tl.dot(x, tl.trans(w), acc)
        zsum += tl.sum(tl.where(col_ok[None, :], acc, 0.0), axis=1)
        z_t += tl.sum(tl.where(cols[None, :] == target[:, None], acc, 0.0), axis=1)
        acc = tl.where(col_ok[None, :], acc, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(acc, axis=1))
        s_i = s_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(acc - m_new[:, None]), axis=1)
        m_i = m_new

    part = pid_s * n_rows + rows
    tl.store(part_max_ptr + part, m_i, mask=row_ok)
    tl.store(part_sum_ptr + part, s_i, mask=row_ok)
    tl.store(part_zsum_ptr + part, zsum, mask=row_ok)
    tl.store(part_tgt_ptr + part, z_t, mask=row_ok)

    # the partials are released with the ticket; the last slice to finish merges them
    ticket = tl.atomic_add(ticket_ptr + pid_m, 1, sem="acq_rel")
    if ticket == n_splits - 1:
        splits = tl.arange(0, SPLITS_PAD)
        pidx = splits[None, :] * n_rows + rows[:, None]
        pmask = row_ok[:, None] & (splits < n_splits)[None, :]
        pm = tl.load(part_max_ptr + pidx, mask=pmask, other=float("-inf"))
        ps = tl.load(part_sum_ptr + pidx, mask=pmask, other=0.0)
        row_max = tl.max(pm, axis=1)
        scale = tl.where(pmask, tl.exp(pm - row_max[:, None]), 0.0)
        lse = row_max + tl.log(tl.sum(ps * scale, axis=1))
        total_z = tl.sum(tl.load(part_zsum_ptr + pidx, mask=pmask, other=0.0), axis=1)
        tgt_z = tl.sum(tl.load(part_tgt_ptr + pidx, mask=pmask, other=0.0), axis=1)
        loss = (1.0 - label_smoothing) * (lse - tgt_z) + \
            label_smoothing * (lse - total_z / vocab) + lse_square_scale * lse * lse
        loss = tl.where(target == ignore_index, 0.0, loss)
        tl.store(loss_ptr + rows, loss, mask=row_ok)
        tl.store(lse_ptr + rows, lse, mask=row_ok)


def flce_split_vocab_fwd(x, weight, target, ignore_index=-100, label_smoothing=0.0,
                         lse_square_scale=0.0, n_splits=32, BLOCK_M=64, BLOCK_N=128,
                         BLOCK_K=64):
    rows, hidden = x.shape
    vocab = weight.shape[0]
    per_split = triton.cdiv(triton.cdiv(vocab, n_splits), BLOCK_N) * BLOCK_N
    n_splits = triton.cdiv(vocab, per_split)
    parts = [torch.empty((n_splits, rows), device=x.device, dtype=torch.float32)
             for _ in range(4)]
    tickets = torch.zeros(triton.cdiv(rows, BLOCK_M), device=x.device, dtype=torch.int32)
    loss = torch.empty(rows, device=x.device, dtype=torch.float32)
    lse = torch.empty(rows, device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(rows, BLOCK_M), n_splits)
    flce_split_vocab_fwd_kernel[grid](x, weight, target, *parts, tickets, loss, lse, rows, vocab,
                                      hidden, per_split, n_splits, x.stride(0), weight.stride(0),
                                      ignore_index, label_smoothing, lse_square_scale,
                                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                                      SPLITS_PAD=triton.next_power_of_2(n_splits),
                                      num_warps=4, num_stages=3)
    return loss, lse
