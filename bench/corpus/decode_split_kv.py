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
    # program (b, j, s): query heads [j * HEADS, (j + 1) * HEADS) of sequence b, all reading
    # one KV head, against the s-th slice of the sequence's tokens
    HEADS: tl.constexpr = BLOCK_H if BLOCK_H < group else group
    b = tl.program_id(0)
    j = tl.program_id(1)
    s = tl.program_id(2)
    first_head = j * HEADS
    kv_head = first_head // group
    kv_len = tl.load(seq_lens + b)
    chunk = tl.cdiv(kv_len, NUM_SPLITS)
    lo = s * chunk
    hi = tl.minimum(lo + chunk, kv_len)
    if lo >= hi:
        return
    r = tl.arange(0, BLOCK_H)
    heads = first_head + r
    live_h = (r < HEADS) & (heads < n_q_heads)
    dk = tl.arange(0, BLOCK_DMODEL)
    dv = tl.arange(0, BLOCK_DV)
    tok = tl.arange(0, BLOCK_N)
    q_rows = Q + b * stride_qb + heads[:, None] * stride_qh
    q = tl.load(q_rows + dk[None, :], mask=live_h[:, None] & (dk[None, :] < Lk), other=0.0)
    if BLOCK_DPE > 0:
        dpe = Lk + tl.arange(0, BLOCK_DPE)
        q_pe = tl.load(q_rows + dpe[None, :], mask=live_h[:, None], other=0.0)
    pages = block_table + b * stride_tb
    k_base = K_cache + kv_head * stride_kh
    v_base = V_cache + kv_head * stride_vh
    scale2 = sm_scale * 1.4426950408889634  # scores in base 2
    row_max = tl.full((BLOCK_H,), float("-inf"), tl.float32)
    row_sum = tl.zeros((BLOCK_H,), tl.float32)
    acc = tl.zeros((BLOCK_H, BLOCK_DV), tl.float32)
    for start in range(lo, hi, BLOCK_N):
        n = start + tok
        in_slice = n < hi
        # cache row of each token: its page from the table, then its offset in the page
        page = tl.load(pages + n // PAGE, mask=in_slice, other=0)
        slot = page * PAGE + n % PAGE
        kt = tl.load(k_base + slot[None, :] * stride_kt + dk[:, None],
                     mask=in_slice[None, :] & (dk[:, None] < Lk), other=0.0)
        if BLOCK_DPE > 0:
            kt_pe = tl.load(k_base + slot[None, :] * stride_kt + dpe[:, None],
                            mask=in_slice[None, :], other=0.0)
            qk = tl.dot(q, kt, tl.dot(q_pe, kt_pe))
        else:
            qk = tl.dot(q, kt)
        qk = tl.where(in_slice[None, :], qk * scale2, float("-inf"))
        top = tl.maximum(row_max, tl.max(qk, axis=1))
        p = tl.math.exp2(qk - top[:, None])
        shrink = tl.math.exp2(row_max - top)
        row_sum = row_sum * shrink + tl.sum(p, axis=1)
        v = tl.load(v_base + slot[:, None] * stride_vt + dv[None, :],
                    mask=in_slice[:, None] & (dv[None, :] < Lv), other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * shrink[:, None])
        row_max = top
    dst = part + b * stride_pb + heads[:, None] * stride_ph + s * stride_ps
    tl.store(dst + dv[None, :], acc / row_sum[:, None],
             mask=live_h[:, None] & (dv[None, :] < Lv))
    lse = (row_max + tl.math.log2(row_sum)) * 0.6931471805599453
    tl.store(part + b * stride_pb + heads * stride_ph + s * stride_ps + Lv, lse, mask=live_h)


@triton.jit
def _decode_split_stage2(part, out, seq_lens, stride_pb, stride_ph, stride_ps, stride_ob,
                         stride_oh, NUM_SPLITS: tl.constexpr, BLOCK_DV: tl.constexpr,
                         Lv: tl.constexpr):
    # program (b, h): weighted merge of the non-empty slices' outputs by exp(lse)
    b = tl.program_id(0)
    h = tl.program_id(1)
    kv_len = tl.load(seq_lens + b)
    chunk = tl.cdiv(kv_len, NUM_SPLITS)
    n_live = tl.cdiv(kv_len, chunk)
    dv = tl.arange(0, BLOCK_DV)
    dmask = dv < Lv
    src = part + b * stride_pb + h * stride_ph
    # slice 0 starts the running merge; slices 1.. fold in with a rescale
    best = tl.load(src + Lv)
    total = tl.full((), 1.0, tl.float32)
    acc = tl.load(src + dv, mask=dmask, other=0.0)
    for i in range(1, n_live):
        row = src + i * stride_ps
        lse = tl.load(row + Lv)
        o = tl.load(row + dv, mask=dmask, other=0.0)
        top = tl.maximum(best, lse)
        keep = tl.exp(best - top)
        w = tl.exp(lse - top)
        acc = acc * keep + o * w
        total = total * keep + w
        best = top
    tl.store(out + b * stride_ob + h * stride_oh + dv, (acc / total).to(out.dtype.element_ty),
             mask=dmask)


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
