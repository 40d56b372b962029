"""Attention in the forms serving engines use: a causal prefill forward
with grouped-query heads (kv head = q head // group) over packed varlen
sequences (cu_seqlens), and a paged decode kernel that walks a block
table of KV-cache pages for one query token per sequence, with GQA."""
import torch
import triton
import triton.language as tl


@triton.jit
def _fwd_varlen_gqa(Q, K, V, Out, cu_seqlens, sm_scale, stride_qt, stride_qh, stride_kt,
                    stride_kh, stride_ot, stride_oh, kv_group_num: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr,
                    IS_CAUSAL: tl.constexpr):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    start_m = tl.program_id(2)
    cur_kv_head = cur_head // kv_group_num
    seq_start = tl.load(cu_seqlens + cur_batch)
    seq_len = tl.load(cu_seqlens + cur_batch + 1) - seq_start
    block_start_loc = BLOCK_M * start_m
    if block_start_loc >= seq_len:
        return
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    off_q = (seq_start + offs_m[:, None]) * stride_qt + cur_head * stride_qh + offs_d[None, :]
    q = tl.load(Q + off_q, mask=offs_m[:, None] < seq_len, other=0.0)
    k_ptrs = K + (seq_start + offs_n[None, :]) * stride_kt + cur_kv_head * stride_kh + \
        offs_d[:, None]
    v_ptrs = V + (seq_start + offs_n[:, None]) * stride_kt + cur_kv_head * stride_kh + \
        offs_d[None, :]
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    end_n = tl.minimum((start_m + 1) * BLOCK_M, seq_len) if IS_CAUSAL else seq_len
    for start_n in range(0, end_n, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(k_ptrs + start_n * stride_kt, mask=(start_n + offs_n[None, :]) < seq_len,
                    other=0.0)
        qk = tl.dot(q, k)
        mask = (start_n + offs_n[None, :]) < seq_len
        if IS_CAUSAL:
            mask = mask & (offs_m[:, None] >= (start_n + offs_n[None, :]))
        qk = tl.where(mask, qk * qk_scale, -1.0e8)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs + start_n * stride_kt, mask=(start_n + offs_n[:, None]) < seq_len,
                    other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    off_o = (seq_start + offs_m[:, None]) * stride_ot + cur_head * stride_oh + offs_d[None, :]
    tl.store(Out + off_o, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < seq_len)


@triton.jit
def _paged_decode_gqa(Q, K_cache, V_cache, block_tables, seq_lens, Out, sm_scale,
                      stride_qb, stride_qh, stride_bt, stride_kb, stride_kt, stride_kh,
                      stride_ob, stride_oh, QUERY_GROUP: tl.constexpr, PAGE_SIZE: tl.constexpr,
                      HEAD_DIM: tl.constexpr, PADDED_GROUP: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    seq_len = tl.load(seq_lens + seq)
    offs_g = tl.arange(0, PADDED_GROUP)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_t = tl.arange(0, PAGE_SIZE)
    g_mask = offs_g < QUERY_GROUP
    q_heads = kv_head * QUERY_GROUP + offs_g
    q = tl.load(Q + seq * stride_qb + q_heads[:, None] * stride_qh + offs_d[None, :],
                mask=g_mask[:, None], other=0.0)
    m_i = tl.full([PADDED_GROUP], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([PADDED_GROUP], dtype=tl.float32)
    acc = tl.zeros([PADDED_GROUP, HEAD_DIM], dtype=tl.float32)
    num_pages = tl.cdiv(seq_len, PAGE_SIZE)
    for page in range(0, num_pages):
        phys = tl.load(block_tables + seq * stride_bt + page).to(tl.int64)
        kv_off = phys * stride_kb + offs_t[:, None] * stride_kt + kv_head * stride_kh + \
            offs_d[None, :]
        t_mask = page * PAGE_SIZE + offs_t < seq_len
        k = tl.load(K_cache + kv_off, mask=t_mask[:, None], other=0.0)
        v = tl.load(V_cache + kv_off, mask=t_mask[:, None], other=0.0)
        qk = tl.dot(q, tl.trans(k)).to(tl.float32) * sm_scale
        qk = tl.where(t_mask[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_ob + q_heads[:, None] * stride_oh + offs_d[None, :],
             out.to(Out.dtype.element_ty), mask=g_mask[:, None])


@triton.jit
def _decode_split_kv_stage1(Q, K, V, Mid_O, Mid_LSE, seq_lens, sm_scale, stride_qb,
                            stride_kb, stride_kt, stride_mb, stride_mh, stride_ms, num_heads,
                            KV_SPLITS: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    # program (b, h, s): head h of sequence b against the s-th equal slice of its keys
    b = tl.program_id(0)
    h = tl.program_id(1)
    s = tl.program_id(2)
    kv_len = tl.load(seq_lens + b)
    chunk = tl.cdiv(kv_len, KV_SPLITS)
    lo = s * chunk
    hi = tl.minimum(lo + chunk, kv_len)
    cols = tl.arange(0, HEAD_DIM)
    rows = tl.arange(0, BLOCK_N)
    # scores are kept in base 2: fold log2(e) into the query once
    q = tl.load(Q + b * stride_qb + h * HEAD_DIM + cols).to(tl.float32)
    q = q * (sm_scale * 1.4426950408889634)
    # the slice's keys/values as [rows, HEAD_DIM] tiles; rows past `hi` read as zero
    k_tile = tl.make_block_ptr(K + b * stride_kb + h * HEAD_DIM, (hi, HEAD_DIM), (stride_kt, 1),
                               (lo, 0), (BLOCK_N, HEAD_DIM), (1, 0))
    v_tile = tl.make_block_ptr(V + b * stride_kb + h * HEAD_DIM, (hi, HEAD_DIM), (stride_kt, 1),
                               (lo, 0), (BLOCK_N, HEAD_DIM), (1, 0))
    run_max = tl.full((), float("-inf"), tl.float32)
    run_sum = tl.zeros((), tl.float32)
    acc = tl.zeros((HEAD_DIM,), tl.float32)
    for pos in range(lo, hi, BLOCK_N):
        k = tl.load(k_tile, boundary_check=(0,), padding_option="zero").to(tl.float32)
        score = tl.sum(k * q[None, :], axis=1)
        score = tl.where(pos + rows < hi, score, float("-inf"))
        new_max = tl.maximum(run_max, tl.max(score, axis=0))
        w = tl.math.exp2(score - new_max)
        rescale = tl.math.exp2(run_max - new_max)
        v = tl.load(v_tile, boundary_check=(0,), padding_option="zero").to(tl.float32)
        acc = acc * rescale + tl.sum(w[:, None] * v, axis=0)
        run_sum = run_sum * rescale + tl.sum(w, axis=0)
        run_max = new_max
        k_tile = tl.advance(k_tile, (BLOCK_N, 0))
        v_tile = tl.advance(v_tile, (BLOCK_N, 0))
    # an empty slice leaves run_sum = 0: it stores zeros and lse = -inf
    inv = tl.where(run_sum > 0, 1.0 / run_sum, 0.0)
    tl.store(Mid_O + b * stride_mb + h * stride_mh + s * stride_ms + cols, acc * inv)
    lse = (run_max + tl.math.log2(run_sum)) * 0.6931471805599453
    tl.store(Mid_LSE + (b * num_heads + h) * KV_SPLITS + s, lse)


@triton.jit
def _decode_split_kv_stage2(Mid_O, Mid_LSE, O, stride_mb, stride_mh, stride_ms, stride_ob,
                            num_heads, KV_SPLITS: tl.constexpr, HEAD_DIM: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_s = tl.arange(0, KV_SPLITS)
    lse = tl.load(Mid_LSE + (b * num_heads + h) * KV_SPLITS + offs_s)
    o = tl.load(Mid_O + b * stride_mb + h * stride_mh + offs_s[:, None] * stride_ms +
                offs_d[None, :])
    m = tl.max(lse, 0)
    w = tl.exp(lse - m)
    out = tl.sum(w[:, None] * o, 0) / tl.sum(w, 0)
    tl.store(O + b * stride_ob + h * HEAD_DIM + offs_d, out.to(O.dtype.element_ty))


@triton.jit
def _topk_block_decode(Q, K, V, block_idx, seq_lens, Out, sm_scale, stride_qb, stride_qh,
                       stride_kb, stride_kn, stride_kh, stride_ib, stride_ih, stride_ob,
                       stride_oh, GROUP, HEAD_DIM: tl.constexpr, BLOCK_K: tl.constexpr,
                       BLOCK_H: tl.constexpr, TOPK: tl.constexpr):
    # one token's query heads of one KV head attend to the KV blocks a
    # selector picked for them (block numbers, -1 past the picks)
    b = tl.program_id(0)
    kv_head = tl.program_id(1)
    kv_len = tl.load(seq_lens + b)
    picks = block_idx + b * stride_ib + kv_head * stride_ih
    chosen = tl.load(picks + tl.arange(0, TOPK))
    valid = (chosen >= 0) & (chosen <= (kv_len - 1) // BLOCK_K)
    n_blocks = tl.sum(valid.to(tl.int32), axis=0)
    q_blk = tl.make_block_ptr(Q + b * stride_qb + kv_head * GROUP * stride_qh, (GROUP, HEAD_DIM),
                              (stride_qh, 1), (0, 0), (BLOCK_H, HEAD_DIM), (1, 0))
    kt_blk = tl.make_block_ptr(K + b * stride_kb + kv_head * stride_kh, (HEAD_DIM, kv_len),
                               (1, stride_kn), (0, 0), (HEAD_DIM, BLOCK_K), (0, 1))
    v_blk = tl.make_block_ptr(V + b * stride_kb + kv_head * stride_kh, (kv_len, HEAD_DIM),
                              (stride_kn, 1), (0, 0), (BLOCK_K, HEAD_DIM), (1, 0))
    q = tl.load(q_blk, boundary_check=(0, 1), padding_option="zero")
    qk_scale = sm_scale * 1.4426950408889634
    cols = tl.arange(0, BLOCK_K)
    m_i = tl.full((BLOCK_H,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_H,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_H, HEAD_DIM), dtype=tl.float32)
    for j in range(n_blocks):
        start = tl.load(picks + j) * BLOCK_K
        kt = tl.load(tl.advance(kt_blk, (0, start)), boundary_check=(0, 1),
                     padding_option="zero")
        s = tl.dot(q, kt) * qk_scale
        s = tl.where((start + cols < kv_len)[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(tl.advance(v_blk, (start, 0)), boundary_check=(0, 1), padding_option="zero")
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    o_blk = tl.make_block_ptr(Out + b * stride_ob + kv_head * GROUP * stride_oh,
                              (GROUP, HEAD_DIM), (stride_oh, 1), (0, 0), (BLOCK_H, HEAD_DIM),
                              (1, 0))
    tl.store(o_blk, (acc / l_i[:, None]).to(Out.dtype.element_ty), boundary_check=(0, 1))
