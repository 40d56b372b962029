"""Decode attention over a paged KV cache, split along the sequence
(flash-decoding), as serving engines write their Triton decode: stage 1
takes BLOCK_H query heads that share one KV head (GQA's group, or all of
MLA's heads over its one latent head) and one of NUM_SPLITS slices of
the sequence, gathers BLOCK_N keys a step through the block table (each
key's page looked up, `page * PAGE + n % PAGE`), reads K transposed
([D, BLOCK_N]) and an optional rope part (BLOCK_DPE) as a second dot,
and writes the slice's normalised output with its log-sum-exp; stage 2
merges the slices. With Lv < Lk (MLA), V is the first Lv channels of the
same cache rows as K."""
import torch
import triton
import triton.language as tl


@triton.jit
def _decode_split_stage1(Q, K_cache, V_cache, sm_scale, block_table, seq_lens, part, stride_tb,
                         stride_qb, stride_qh, stride_kt, stride_kh, stride_vt, stride_vh,
                         stride_pb, stride_ph, stride_ps, group: tl.constexpr,
                         n_q_heads: tl.constexpr, BLOCK_DMODEL: tl.constexpr,
                         BLOCK_DPE: tl.constexpr, BLOCK_DV: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_H: tl.constexpr, NUM_SPLITS: tl.constexpr, PAGE: tl.constexpr,
                         Lk: tl.constexpr, Lv: tl.constexpr):
    b = tl.program_id(0)
    head_blk = tl.program_id(1)
    split = tl.program_id(2)
    if group > BLOCK_H:
        HEADS: tl.constexpr = BLOCK_H
    else:
        HEADS: tl.constexpr = group
    kv_head = head_blk // tl.cdiv(group, BLOCK_H)
    heads = head_blk * HEADS + tl.arange(0, BLOCK_H)
    live_h = (heads < (head_blk + 1) * HEADS) & (heads < n_q_heads)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_dv = tl.arange(0, BLOCK_DV)
    live_d = offs_d < Lk
    live_dv = offs_dv < Lv
    seq_len = tl.load(seq_lens + b)
    q = tl.load(Q + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :],
                mask=live_h[:, None] & live_d[None, :], other=0.0)
    if BLOCK_DPE > 0:
        offs_pe = BLOCK_DMODEL + tl.arange(0, BLOCK_DPE)
        q_pe = tl.load(Q + b * stride_qb + heads[:, None] * stride_qh + offs_pe[None, :],
                       mask=live_h[:, None], other=0.0)
    per_split = tl.cdiv(seq_len, NUM_SPLITS)
    lo = per_split * split
    hi = tl.minimum(lo + per_split, seq_len)
    m_i = tl.full([BLOCK_H], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_DV], dtype=tl.float32)
    if hi > lo:
        for start in range(lo, hi, BLOCK_N):
            offs_n = start + tl.arange(0, BLOCK_N)
            live_n = offs_n < hi
            page = tl.load(block_table + b * stride_tb + offs_n // PAGE, mask=live_n, other=0)
            slot = page * PAGE + offs_n % PAGE
            k = tl.load(K_cache + slot[None, :] * stride_kt + kv_head * stride_kh + offs_d[:, None],
                        mask=live_n[None, :] & live_d[:, None], other=0.0)
            s = tl.dot(q, k.to(q.dtype))
            if BLOCK_DPE > 0:
                k_pe = tl.load(K_cache + slot[None, :] * stride_kt + kv_head * stride_kh +
                               offs_pe[:, None], mask=live_n[None, :], other=0.0)
                s += tl.dot(q_pe, k_pe.to(q_pe.dtype))
            s *= sm_scale
            s = tl.where(live_h[:, None] & live_n[None, :], s, float("-inf"))
            v = tl.load(V_cache + slot[:, None] * stride_vt + kv_head * stride_vh + offs_dv[None, :],
                        mask=live_n[:, None] & live_dv[None, :], other=0.0)
            m_new = tl.maximum(tl.max(s, 1), m_i)
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            acc *= alpha[:, None]
            acc += tl.dot(p.to(v.dtype), v)
            l_i = l_i * alpha + tl.sum(p, 1)
            m_i = m_new
        base = part + b * stride_pb + heads * stride_ph + split * stride_ps
        tl.store(base[:, None] + offs_dv[None, :], acc / l_i[:, None],
                 mask=live_h[:, None] & live_dv[None, :])
        tl.store(base + Lv, m_i + tl.log(l_i), mask=live_h)


@triton.jit
def _decode_split_stage2(part, out, seq_lens, stride_pb, stride_ph, stride_ps, stride_ob,
                         stride_oh, NUM_SPLITS: tl.constexpr, BLOCK_DV: tl.constexpr,
                         Lv: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    seq_len = tl.load(seq_lens + b)
    offs_dv = tl.arange(0, BLOCK_DV)
    live_dv = offs_dv < Lv
    m = float("-inf")
    total = 0.0
    acc = tl.zeros([BLOCK_DV], dtype=tl.float32)
    base = part + b * stride_pb + h * stride_ph
    for s in range(NUM_SPLITS):
        lo = tl.cdiv(seq_len, NUM_SPLITS) * s
        if lo < seq_len:
            o = tl.load(base + s * stride_ps + offs_dv, mask=live_dv, other=0.0)
            lse = tl.load(base + s * stride_ps + Lv)
            m_new = tl.maximum(m, lse)
            scale = tl.exp(m - m_new)
            w = tl.exp(lse - m_new)
            acc = acc * scale + w * o
            total = total * scale + w
            m = m_new
    tl.store(out + b * stride_ob + h * stride_oh + offs_dv, acc / total, mask=live_dv)


def decode_split_kv(q, k_cache, v_cache, block_table, seq_lens, sm_scale, num_splits, page,
                    lv=None, block_n=32, block_h=16):
    """q [B, Hq, Lk]; k_cache [slots, Hk, Lk] and v_cache [slots, Hk, Lv]
    (slot = page * page_size + offset); block_table [B, pages];
    returns [B, Hq, Lv] in q's type."""
    B, Hq, Lk = q.shape
    Hk = k_cache.shape[1]
    Lv = lv or v_cache.shape[-1]
    group = Hq // Hk
    dpe = 64 if Lk == 576 else 0
    dm = triton.next_power_of_2(Lk - dpe)
    dv = triton.next_power_of_2(Lv)
    part = torch.empty((B, Hq, num_splits, Lv + 1), device=q.device, dtype=torch.float32)
    out = torch.empty((B, Hq, Lv), device=q.device, dtype=q.dtype)
    grid = (B, triton.cdiv(Hq, min(block_h, group)), num_splits)
    _decode_split_stage1[grid](
        q, k_cache, v_cache, sm_scale, block_table, seq_lens, part, block_table.stride(0),
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), v_cache.stride(0),
        v_cache.stride(1), part.stride(0), part.stride(1), part.stride(2), group=group,
        n_q_heads=Hq, BLOCK_DMODEL=dm, BLOCK_DPE=dpe, BLOCK_DV=dv, BLOCK_N=block_n,
        BLOCK_H=block_h, NUM_SPLITS=num_splits, PAGE=page, Lk=Lk - dpe, Lv=Lv, num_warps=4,
        num_stages=2)
    _decode_split_stage2[(B, Hq)](part, out, seq_lens, part.stride(0), part.stride(1),
                                  part.stride(2), out.stride(0), out.stride(1),
                                  NUM_SPLITS=num_splits, BLOCK_DV=dv, Lv=Lv)
    return out
