# Serving kernels written in the manner of vLLM's Triton code: unified
# paged attention whose programs find their sequence by a binary search over
# the query start offsets (GQA heads packed into the rows of a q-block,
# sliding windows, soft-capping, attention sinks, ALiBi), the reduction of
# its split-KV segments, single-token decode and prefix prefill over a key
# cache split into x-wide chunks (fp16, fp8 with a scale, fp32 with IEEE
# dots), the merge of two attention states whose log-sum-exps may be +inf,
# the flash KV-cache write at slot indices with fp8 quantisation, LoRA
# shrink and expand over per-adapter token segments (per-slice weight
# pointers read from a table, split-K through atomics, per-slice strides
# read from memory, dependent-launch waits), the top-k / top-p logit mask
# found by a pivot search, the speculative decoding rejection samplers
# (greedy, random, recovered tokens), the expansion of per-request values
# and the next-token pick of the draft model, the batch-invariant
# persistent matmul with its fixed tile order, row log-softmax, RMS norm
# and a strided mean, the int8 scaled matmul with per-token / per-channel
# scales, the int4/int8 weight-only MoE GEMM over block-aligned routed
# tokens, Mamba's single-step selective state update, the recurrent gated
# delta rule over packed sequences with state slots, and multimodal rotary
# embedding with t/h/w sections.
import os

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice as tldevice

_FP8_INFO = torch.finfo(torch.float8_e4m3fn)

# the linear-attention ops pick their math once, by an environment switch
if os.environ.get("FLA_USE_FAST_OPS", "0") == "1":
    div = tldevice.fast_dividef
    exp = tldevice.fast_expf
else:

    @triton.jit
    def _vl_div_normal(x, y):
        return x / y

    div = _vl_div_normal
    exp = tl.exp


@triton.jit
def _vl_cdiv(x, y):
    return (x + y - 1) // y


# ---- attention ------------------------------------------------------------------------------


@triton.jit
def _vl_softcap(s, cap):
    # cap * tanh(s / cap), written through a sigmoid
    return cap * (2.0 * tl.sigmoid(2.0 * s / cap) - 1.0)


@triton.jit
def _vl_find_seq_idx(cu_seqlens_ptr, target, num_seqs, BLOCK_Q: tl.constexpr,
                     Q_BLOCK_MODE: tl.constexpr):
    # the last sequence whose start (in tokens, or in q-blocks when each
    # sequence's blocks are counted from start // BLOCK_Q + index) is <= target
    lo: tl.int32 = 0
    hi = num_seqs
    while lo < hi:
        mid = (lo + hi) // 2
        start = tl.load(cu_seqlens_ptr + mid)
        key = start // BLOCK_Q + mid if Q_BLOCK_MODE else start
        if key <= target:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@triton.jit
def _vl_unified_attention_2d(
    out_ptr,  # [num_tokens, num_q_heads, head_size]
    q_ptr,  # [num_tokens, num_q_heads, head_size]
    k_cache_ptr,  # [num_blocks, block_size, num_kv_heads, head_size]
    v_cache_ptr,  # [num_blocks, block_size, num_kv_heads, head_size]
    sinks_ptr,  # [num_q_heads] or None
    block_table_ptr,  # [num_seqs, max_blocks_per_seq]
    seq_lens_ptr,  # [num_seqs], context + new tokens
    alibi_slopes_ptr,  # [num_q_heads] or None
    cu_seqlens_q_ptr,  # [num_seqs + 1]
    scale,
    softcap,
    num_seqs: tl.int32,
    NUM_Q_HEADS: tl.constexpr,
    Q_PER_KV: tl.constexpr,
    block_table_stride: tl.int64,
    q_stride_0: tl.int64,
    q_stride_1: tl.int64,
    o_stride_0: tl.int64,
    o_stride_1: tl.int64,
    k_stride_0: tl.int64,
    k_stride_1: tl.int64,
    k_stride_2: tl.int64,
    k_stride_3: tl.constexpr,
    v_stride_0: tl.int64,
    v_stride_1: tl.int64,
    v_stride_2: tl.int64,
    v_stride_3: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    TILE_SIZE: tl.constexpr,
    HEAD_SIZE: tl.constexpr,
    HEAD_SIZE_PADDED: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    BLOCK_M: tl.constexpr,
    SLIDING_WINDOW: tl.constexpr,
    USE_SOFTCAP: tl.constexpr,
    USE_SINKS: tl.constexpr,
    USE_ALIBI: tl.constexpr,
):
    q_block_global = tl.program_id(0)
    kv_head = tl.program_id(1)

    seq = _vl_find_seq_idx(cu_seqlens_q_ptr, q_block_global, num_seqs, BLOCK_Q, True)
    q_start = tl.load(cu_seqlens_q_ptr + seq)
    q_len = tl.load(cu_seqlens_q_ptr + seq + 1) - q_start
    q_block_local = q_block_global - (q_start // BLOCK_Q + seq)
    if q_block_local * BLOCK_Q >= q_len:
        return

    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_SIZE_PADDED)
    offs_t = tl.arange(0, TILE_SIZE)
    # the rows of a q-block are (query position, head of this kv head's group)
    q_pos = q_block_local * BLOCK_Q + offs_m // Q_PER_KV
    q_head = kv_head * Q_PER_KV + offs_m % Q_PER_KV
    q_tok = q_start + q_pos
    row_ok = tl.where(q_pos < q_len, 1, 0).to(tl.int1) & (q_head < NUM_Q_HEADS)
    dim_ok = tl.where(offs_d < HEAD_SIZE, 1, 0).to(tl.int1)

    Q = tl.load(q_ptr + q_tok[:, None] * q_stride_0 + q_head[:, None] * q_stride_1 + offs_d[None, :],
                mask=row_ok[:, None] & dim_ok[None, :], other=0.0)

    if USE_SINKS:
        M = tl.load(sinks_ptr + q_head, mask=q_head < NUM_Q_HEADS, other=float("-inf")).to(dtype=tl.float32)
    else:
        M = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    L = tl.full([BLOCK_M], 1.0, dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_SIZE_PADDED], dtype=tl.float32)

    seq_len = tl.load(seq_lens_ptr + seq)
    ctx_len = seq_len - q_len
    if USE_ALIBI:
        slope = tl.load(alibi_slopes_ptr + q_head, mask=q_head < NUM_Q_HEADS, other=0.0)

    # keys past the last query of the block are never visible
    kv_end = tl.minimum(ctx_len + q_block_local * BLOCK_Q + (BLOCK_M - 1) // Q_PER_KV + 1, seq_len)
    n_tiles = _vl_cdiv(kv_end, TILE_SIZE)
    tile_lo = 0
    tile_hi = n_tiles
    if SLIDING_WINDOW > 0:
        first_q = q_block_local * BLOCK_Q
        last_q = tl.minimum(first_q + (BLOCK_M - 1) // Q_PER_KV, q_len - 1)
        tile_lo = tl.maximum(0, (ctx_len + first_q - SLIDING_WINDOW + 1) // TILE_SIZE)
        tile_hi = tl.minimum((ctx_len + last_q) // TILE_SIZE + 1, n_tiles)

    table_row = block_table_ptr + seq * block_table_stride
    for j in range(tile_lo, tile_hi):
        kv_pos = j * TILE_SIZE + offs_t
        kv_ok = kv_pos < kv_end
        page = tl.load(table_row + kv_pos // BLOCK_SIZE).to(tl.int64)
        in_page = kv_pos % BLOCK_SIZE

        # K: (HEAD_SIZE_PADDED, TILE_SIZE), V: (TILE_SIZE, HEAD_SIZE_PADDED)
        K = tl.load(k_cache_ptr + page[None, :] * k_stride_0 + in_page[None, :] * k_stride_1
                    + kv_head * k_stride_2 + offs_d[:, None] * k_stride_3,
                    mask=dim_ok[:, None] & kv_ok[None, :], other=0.0)
        V = tl.load(v_cache_ptr + page[:, None] * v_stride_0 + in_page[:, None] * v_stride_1
                    + kv_head * v_stride_2 + offs_d[None, :] * v_stride_3,
                    mask=kv_ok[:, None] & dim_ok[None, :], other=0.0)

        S = tl.zeros(shape=(BLOCK_M, TILE_SIZE), dtype=tl.float32)
        S += scale * tl.dot(Q, K)
        if USE_SOFTCAP:
            S = _vl_softcap(S, softcap)
        causal = kv_pos[None, :] < ctx_len + q_pos[:, None] + 1
        S = tl.where(row_ok[:, None] & causal, S, float("-inf"))
        if SLIDING_WINDOW > 0:
            S = tl.where((ctx_len + q_pos[:, None] - kv_pos[None, :]) < SLIDING_WINDOW, S, float("-inf"))
        if USE_ALIBI:
            S += slope[:, None] * (kv_pos - ctx_len)[None, :]

        m_j = tl.maximum(M, tl.max(S, axis=1))
        # a row that sees nothing yet keeps a finite reference
        m_j = tl.where(m_j > float("-inf"), m_j, 0.0)
        P = tl.exp(S - m_j[:, None])
        l_j = tl.sum(P, axis=1)
        alpha = tl.exp(M - m_j)
        acc = acc * alpha[:, None]
        L = L * alpha + l_j
        M = m_j
        acc += tl.dot(P.to(V.dtype), V)

    acc = acc / L[:, None]
    tl.store(out_ptr + q_tok[:, None] * o_stride_0 + q_head[:, None] * o_stride_1 + offs_d[None, :],
             acc, mask=row_ok[:, None] & dim_ok[None, :])


@triton.jit
def _vl_reduce_segments(
    out_ptr,  # [num_tokens, num_q_heads, head_size]
    segm_out_ptr,  # [num_tokens, num_q_heads, NUM_SEGMENTS, HEAD_SIZE_PADDED]
    segm_max_ptr,  # [num_tokens, num_q_heads, NUM_SEGMENTS]
    segm_expsum_ptr,  # [num_tokens, num_q_heads, NUM_SEGMENTS]
    seq_lens_ptr,
    cu_seqlens_q_ptr,
    out_scale_inv,  # [1]
    num_seqs,
    NUM_Q_HEADS: tl.constexpr,
    o_stride_0: tl.int64,
    o_stride_1: tl.int64,
    TILE_SIZE: tl.constexpr,
    HEAD_SIZE: tl.constexpr,
    HEAD_SIZE_PADDED: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    NUM_SEGMENTS: tl.constexpr,
    USE_FP8: tl.constexpr,
    FP8_MIN: tl.constexpr = _FP8_INFO.min,
    FP8_MAX: tl.constexpr = _FP8_INFO.max,
):
    tok = tl.program_id(0)
    head = tl.program_id(1)
    seq = _vl_find_seq_idx(cu_seqlens_q_ptr, tok, num_seqs, BLOCK_Q, False)
    seq_len = tl.load(seq_lens_ptr + seq)

    # the segments the split pass actually filled
    tiles_per_segment = _vl_cdiv(seq_len, NUM_SEGMENTS * TILE_SIZE)
    n_active = _vl_cdiv(seq_len, tiles_per_segment * TILE_SIZE)
    segs = tl.arange(0, NUM_SEGMENTS)
    seg_ok = segs < tl.full([NUM_SEGMENTS], n_active, dtype=tl.int32)
    offs_d = tl.arange(0, HEAD_SIZE_PADDED)
    dim_ok = tl.where(offs_d < HEAD_SIZE, 1, 0).to(tl.int1)

    base = tok.to(tl.int64) * (NUM_Q_HEADS * NUM_SEGMENTS) + head * NUM_SEGMENTS
    seg_max = tl.load(segm_max_ptr + base + segs, mask=seg_ok, other=float("-inf"))
    top = tl.max(seg_max)
    seg_sum = tl.load(segm_expsum_ptr + base + segs, mask=seg_ok, other=0.0)
    seg_sum = seg_sum * tl.exp(seg_max - top)
    total = tl.sum(seg_sum)

    seg_out = tl.load(segm_out_ptr + (base + segs)[:, None] * HEAD_SIZE_PADDED + offs_d[None, :],
                      mask=seg_ok[:, None] & dim_ok[None, :], other=0.0)
    seg_out *= tl.exp(seg_max - top)[:, None]
    acc_sum = tl.sum(seg_out, axis=0)
    acc = tl.where(total == 0.0, 0.0, acc_sum / total)
    if USE_FP8:
        acc = acc * tl.load(out_scale_inv)
        acc = tl.clamp(acc, FP8_MIN, FP8_MAX)
    tl.store(out_ptr + tok * o_stride_0 + head * o_stride_1 + offs_d, acc, mask=dim_ok)


@triton.jit
def _vl_paged_decode_x_layout(
    out_ptr,  # [num_tokens, num_q_heads, head_size]
    q_ptr,  # [num_tokens, num_q_heads, head_size]
    k_cache_ptr,  # [num_blocks, num_kv_heads, head_size // X, block_size, X]
    v_cache_ptr,  # [num_blocks, num_kv_heads, head_size, block_size]
    block_table_ptr,
    seq_lens_ptr,
    cu_seqlens_q_ptr,
    k_scale,  # [1]
    v_scale,  # [1]
    scale,
    num_q_heads,
    block_table_stride: tl.int64,
    q_stride_0: tl.int64,
    q_stride_1: tl.int64,
    o_stride_0: tl.int64,
    o_stride_1: tl.int64,
    k_stride_0: tl.int64,
    k_stride_1: tl.int64,
    k_stride_2: tl.int64,
    k_stride_3: tl.int64,
    k_stride_4: tl.constexpr,
    v_stride_0: tl.int64,
    v_stride_1: tl.int64,
    v_stride_2: tl.int64,
    v_stride_3: tl.constexpr,
    Q_PER_KV: tl.constexpr,
    Q_PER_KV_PADDED: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    HEAD_SIZE: tl.constexpr,
    HEAD_SIZE_PADDED: tl.constexpr,
    X: tl.constexpr,
    SLIDING_WINDOW: tl.constexpr,
    FILTER_BY_QUERY_LEN: tl.constexpr,
    KV_FP8: tl.constexpr,
):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    if FILTER_BY_QUERY_LEN:
        # sequences with more than one new token belong to the prefill kernel
        tok = tl.load(cu_seqlens_q_ptr + seq)
        if tl.load(cu_seqlens_q_ptr + seq + 1) - tok > 1:
            return
    else:
        tok = seq
    if KV_FP8:
        # the fp8 cache is allocated as bytes
        k_cache_ptr = k_cache_ptr.to(tl.pointer_type(tl.float8e4nv))
        v_cache_ptr = v_cache_ptr.to(tl.pointer_type(tl.float8e4nv))

    q_head = kv_head * Q_PER_KV + tl.arange(0, Q_PER_KV_PADDED)
    head_ok = (q_head < (kv_head + 1) * Q_PER_KV) & (q_head < num_q_heads)
    offs_d = tl.arange(0, HEAD_SIZE_PADDED)
    dim_ok = tl.where(offs_d < HEAD_SIZE, 1, 0).to(tl.int1)
    Q = tl.load(q_ptr + tok * q_stride_0 + q_head[:, None] * q_stride_1 + offs_d[None, :],
                mask=head_ok[:, None] & dim_ok[None, :], other=0.0)

    M = tl.full([Q_PER_KV_PADDED], float("-inf"), dtype=tl.float32)
    L = tl.zeros([Q_PER_KV_PADDED], dtype=tl.float32)
    acc = tl.zeros([Q_PER_KV_PADDED, HEAD_SIZE_PADDED], dtype=tl.float32)
    seq_len = tl.load(seq_lens_ptr + seq)
    offs_n = tl.arange(0, BLOCK_SIZE)
    for j in range(0, _vl_cdiv(seq_len, BLOCK_SIZE)):
        page = tl.load(block_table_ptr + seq * block_table_stride + j).to(tl.int64)
        k_off = (page * k_stride_0 + kv_head * k_stride_1 + (offs_d[:, None] // X) * k_stride_2
                 + offs_n[None, :] * k_stride_3 + (offs_d[:, None] % X) * k_stride_4)
        K_load = tl.load(k_cache_ptr + k_off, mask=dim_ok[:, None], other=0.0)
        if K_load.dtype.is_fp8():
            K = (K_load.to(tl.float32) * tl.load(k_scale)).to(Q.dtype)
        else:
            K = K_load
        v_off = (page * v_stride_0 + kv_head * v_stride_1 + offs_d[None, :] * v_stride_2
                 + offs_n[:, None] * v_stride_3)
        V_load = tl.load(v_cache_ptr + v_off, mask=dim_ok[None, :], other=0.0)
        if V_load.dtype.is_fp8():
            V = (V_load.to(tl.float32) * tl.load(v_scale)).to(Q.dtype)
        else:
            V = V_load

        kv_pos = j * BLOCK_SIZE + offs_n
        boundary = tl.full([BLOCK_SIZE], seq_len, dtype=tl.int32)
        S = tl.zeros([Q_PER_KV_PADDED, BLOCK_SIZE], dtype=tl.float32)
        S += scale * tl.dot(Q, K)
        S = tl.where(head_ok[:, None] & (kv_pos < boundary)[None, :], S, float("-inf"))
        if SLIDING_WINDOW > 0:
            S = tl.where((seq_len - 1 - kv_pos)[None, :] < SLIDING_WINDOW, S, -10000.0)

        m_j = tl.maximum(M, tl.max(S, axis=1))
        m_j = tl.where(m_j > float("-inf"), m_j, 0.0)
        P = tl.exp(S - m_j[:, None])
        l_j = tl.sum(P, axis=1)
        alpha = tl.exp(M - m_j)
        acc = acc * alpha[:, None]
        L = L * alpha + l_j
        M = m_j
        acc += tl.dot(P.to(V.dtype), V)

    acc = acc / L[:, None]
    tl.store(out_ptr + tok * o_stride_0 + q_head[:, None] * o_stride_1 + offs_d[None, :], acc,
             mask=head_ok[:, None] & dim_ok[None, :])


@triton.jit
def _vl_prefix_prefill(
    Q,  # [num_tokens, num_heads, head_size]
    K,  # [num_tokens, num_kv_heads, head_size], the new tokens
    V,
    K_cache,  # [num_blocks, num_kv_heads, head_size // x, block_size, x]
    V_cache,  # [num_blocks, num_kv_heads, head_size, block_size]
    B_Loc,  # block table
    sm_scale,
    B_Start_Loc,  # [num_seqs + 1]
    B_Seqlen,  # [num_seqs], context + new tokens
    x: tl.constexpr,
    Out,
    stride_b_loc_b,
    stride_b_loc_s,
    stride_qbs,
    stride_qh,
    stride_qd,
    stride_kbs,
    stride_kh,
    stride_kd,
    stride_vbs,
    stride_vh,
    stride_vd,
    stride_obs,
    stride_oh,
    stride_od,
    stride_k_cache_bs,
    stride_k_cache_h,
    stride_k_cache_d,
    stride_k_cache_bl: tl.constexpr,
    stride_k_cache_x,
    stride_v_cache_bs,
    stride_v_cache_h,
    stride_v_cache_d,
    stride_v_cache_bl,
    num_queries_per_kv: int,
    IN_PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_DMODEL_PADDED: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    BLOCK_N: tl.constexpr,
    SLIDING_WINDOW: tl.constexpr,
    SKIP_DECODE: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    start_m = tl.program_id(2)
    cur_kv_head = cur_head // num_queries_per_kv

    cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)
    q_start = tl.load(B_Start_Loc + cur_batch)
    q_len = tl.load(B_Start_Loc + cur_batch + 1) - q_start
    ctx_len = cur_batch_seq_len - q_len
    if SKIP_DECODE and q_len == 1:
        return

    block_start_loc = BLOCK_M * start_m
    offs_n = tl.arange(0, BLOCK_N)
    offs_bs_n = tl.arange(0, BLOCK_SIZE)
    offs_d = tl.arange(0, BLOCK_DMODEL_PADDED)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dim_mask = tl.where(tl.arange(0, BLOCK_DMODEL_PADDED) < BLOCK_DMODEL, 1, 0).to(tl.int1)
    q = tl.load(Q + (q_start + offs_m[:, None]) * stride_qbs + cur_head * stride_qh + offs_d[None, :] * stride_qd,
                mask=dim_mask[None, :] & (offs_m[:, None] < q_len), other=0.0)

    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL_PADDED], dtype=tl.float32)

    # the cached context, a page at a time
    for start_n in tl.range(0, ctx_len, BLOCK_SIZE):
        start_n = tl.multiple_of(start_n, BLOCK_SIZE)
        bn = tl.load(B_Loc + cur_batch * stride_b_loc_b + (start_n // BLOCK_SIZE) * stride_b_loc_s).to(tl.int64)
        off_k = (bn * stride_k_cache_bs + cur_kv_head * stride_k_cache_h
                 + (offs_d[:, None] // x) * stride_k_cache_d + offs_bs_n[None, :] * stride_k_cache_bl
                 + (offs_d[:, None] % x) * stride_k_cache_x)
        off_v = (bn * stride_v_cache_bs + cur_kv_head * stride_v_cache_h + offs_d[None, :] * stride_v_cache_d
                 + offs_bs_n[:, None] * stride_v_cache_bl)
        in_ctx = start_n + offs_bs_n < ctx_len
        k = tl.load(K_cache + off_k, mask=dim_mask[:, None] & in_ctx[None, :], other=0.0)
        qk = tl.zeros([BLOCK_M, BLOCK_SIZE], dtype=tl.float32)
        qk = tl.dot(q, k, acc=qk, input_precision=IN_PRECISION)
        qk = tl.where(in_ctx[None, :], qk, float("-inf"))
        qk *= sm_scale
        if SLIDING_WINDOW > 0:
            qk = tl.where((ctx_len + offs_m[:, None]) - (start_n + offs_bs_n[None, :]) < SLIDING_WINDOW, qk,
                          float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, axis=1))
        m_ij = tl.where(m_ij > float("-inf"), m_ij, 0.0)
        p = tl.exp(qk - m_ij[:, None])
        l_ij = tl.sum(p, axis=1)
        alpha = tl.exp(m_i - m_ij)
        acc = acc * alpha[:, None]
        v = tl.load(V_cache + off_v, mask=dim_mask[None, :] & in_ctx[:, None], other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc=acc, input_precision=IN_PRECISION)
        l_i = l_i * alpha + l_ij
        m_i = m_ij

    # the new tokens, causally
    k_ptrs = K + offs_n[None, :] * stride_kbs + cur_kv_head * stride_kh + offs_d[:, None] * stride_kd
    v_ptrs = V + offs_n[:, None] * stride_vbs + cur_kv_head * stride_vh + offs_d[None, :] * stride_vd
    block_mask = tl.where(block_start_loc < q_len, 1, 0)
    for start_n in tl.range(0, block_mask * (start_m + 1) * BLOCK_M, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        in_q = start_n + offs_n < q_len
        k = tl.load(k_ptrs + (q_start + start_n) * stride_kbs, mask=dim_mask[:, None] & in_q[None, :], other=0.0)
        qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        qk = tl.dot(q, k, acc=qk, input_precision=IN_PRECISION)
        qk *= sm_scale
        qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
        if SLIDING_WINDOW > 0:
            qk = tl.where(offs_m[:, None] - (start_n + offs_n[None, :]) < SLIDING_WINDOW, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, axis=1))
        m_ij = tl.where(m_ij > float("-inf"), m_ij, 0.0)
        p = tl.exp(qk - m_ij[:, None])
        l_ij = tl.sum(p, axis=1)
        alpha = tl.exp(m_i - m_ij)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs + (q_start + start_n) * stride_vbs, mask=dim_mask[None, :] & in_q[:, None], other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc=acc, input_precision=IN_PRECISION)
        l_i = l_i * alpha + l_ij
        m_i = m_ij

    acc = acc / l_i[:, None]
    tl.store(Out + (q_start + offs_m[:, None]) * stride_obs + cur_head * stride_oh + offs_d[None, :] * stride_od,
             acc, mask=dim_mask[None, :] & (offs_m[:, None] < q_len))


@triton.jit
def _vl_merge_attn_states(
    output,  # [num_tokens, num_heads, HEAD_SIZE]
    output_lse,  # [num_heads, num_tokens] or None
    prefix_output,
    prefix_lse,  # [num_heads, num_tokens]
    suffix_output,
    suffix_lse,
    HEAD_SIZE: tl.constexpr,
    PADDED_HEAD_SIZE: tl.constexpr,
    OUTPUT_LSE: tl.constexpr,
):
    token = tl.program_id(0)
    num_tokens = tl.num_programs(0)
    head = tl.program_id(1)
    num_heads = tl.num_programs(1)

    p_lse = tl.load(prefix_lse + head * num_tokens + token)
    s_lse = tl.load(suffix_lse + head * num_tokens + token)
    # an empty partial may report +inf: it weighs nothing
    p_lse = float("-inf") if p_lse == float("inf") else p_lse
    s_lse = float("-inf") if s_lse == float("inf") else s_lse

    max_lse = tl.maximum(p_lse, s_lse)
    p_lse = p_lse - max_lse
    s_lse = s_lse - max_lse
    out_se = tl.exp(p_lse) + tl.exp(s_lse)
    if OUTPUT_LSE:
        tl.store(output_lse + head * num_tokens + token, tl.log(out_se) + max_lse)

    offs = tl.arange(0, PADDED_HEAD_SIZE)
    ok = offs < HEAD_SIZE
    base = token * num_heads * HEAD_SIZE + head * HEAD_SIZE
    p_out = tl.load(prefix_output + base + offs, mask=ok)
    s_out = tl.load(suffix_output + base + offs, mask=ok)
    # the weights first, then the products
    p_scale = tl.exp(p_lse) / out_se
    s_scale = tl.exp(s_lse) / out_se
    tl.store(output + base + offs, p_out * p_scale + s_out * s_scale, mask=ok)


# ---- KV cache -------------------------------------------------------------------------------


@triton.jit
def _vl_reshape_and_cache_flash(
    key_ptr,  # [num_tokens, num_heads, head_size]
    value_ptr,
    key_cache_ptr,  # [num_blocks, block_size, num_heads, head_size]
    value_cache_ptr,
    slot_mapping_ptr,  # [num_tokens], -1 for padding
    k_scale,  # [1]
    v_scale,  # [1]
    key_stride: tl.int64,
    value_stride: tl.int64,
    block_stride: tl.int64,
    page_stride: tl.int64,
    num_heads: tl.constexpr,
    head_size: tl.constexpr,
    block_size: tl.constexpr,
    FP8_KV_CACHE: tl.constexpr,
    TILE_SIZE: tl.constexpr,
):
    token = tl.program_id(axis=0)
    slot = tl.load(slot_mapping_ptr + token).to(tl.int64)
    if slot < 0:
        return
    if FP8_KV_CACHE:
        key_cache_ptr = key_cache_ptr.to(tl.pointer_type(tl.float8e4nv))
        value_cache_ptr = value_cache_ptr.to(tl.pointer_type(tl.float8e4nv))

    tile = tl.program_id(axis=1)
    offs = tile * TILE_SIZE + tl.arange(0, TILE_SIZE)
    ok = offs < num_heads * head_size
    block_idx = slot // block_size
    block_off = slot % block_size
    dst = block_idx * block_stride + block_off * page_stride + offs

    key = tl.load(key_ptr + token * key_stride + offs, mask=ok)
    value = tl.load(value_ptr + token * value_stride + offs, mask=ok)
    if FP8_KV_CACHE:
        if key.dtype.is_fp8():
            key_tile = key
            value_tile = value
        else:
            key_tile = key.to(tl.float32) / tl.load(k_scale)
            value_tile = value.to(tl.float32) / tl.load(v_scale)
    else:
        key_tile = key
        value_tile = value
    tl.store(key_cache_ptr + dst, key_tile, mask=ok)
    tl.store(value_cache_ptr + dst, value_tile, mask=ok)


# ---- LoRA -----------------------------------------------------------------------------------


@triton.jit
def _vl_lora_mm_k(
    a_ptr,
    b_ptr,
    ak_stride,
    bk_stride,
    K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
    CAST_TYPE: tl.constexpr,
    b_dtype: tl.constexpr,
    USE_GDC: tl.constexpr,
    base_k,
):
    # a_ptr: (BLOCK_M, BLOCK_K) rows of A, b_ptr: (BLOCK_K, BLOCK_N) columns of B
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    STEP_K = BLOCK_K * SPLIT_K
    for k in range(tl.cdiv(K, STEP_K)):
        k_lo = k * STEP_K + base_k
        if EVEN_K:
            tiled_b = tl.load(b_ptr)
            if USE_GDC:
                # the weights need nothing from the previous kernel; the input does
                tl.extra.cuda.gdc_wait()
            tiled_a = tl.load(a_ptr)
            if CAST_TYPE:
                tiled_a = tiled_a.to(b_dtype)
            accumulator += tl.dot(tiled_a, tiled_b)
        else:
            if k_lo >= K:
                pass
            elif k_lo + BLOCK_K <= K:
                tiled_b = tl.load(b_ptr)
                if USE_GDC:
                    tl.extra.cuda.gdc_wait()
                tiled_a = tl.load(a_ptr)
                if CAST_TYPE:
                    tiled_a = tiled_a.to(b_dtype)
                accumulator += tl.dot(tiled_a, tiled_b)
            else:
                k_ok = k_lo + tl.arange(0, BLOCK_K) < K
                tiled_b = tl.load(b_ptr, mask=k_ok[:, None], other=0.0)
                if USE_GDC:
                    tl.extra.cuda.gdc_wait()
                tiled_a = tl.load(a_ptr, mask=k_ok[None, :], other=0.0)
                if CAST_TYPE:
                    tiled_a = tiled_a.to(b_dtype)
                accumulator += tl.dot(tiled_a, tiled_b)
        a_ptr += STEP_K * ak_stride
        b_ptr += STEP_K * bk_stride
    return accumulator


@triton.jit
def _vl_lora_shrink(
    input_ptr,  # [num_tokens, hidden]
    lora_ptr,  # the slices' weights, [SLICE_NUM][num_loras, rank, hidden]
    out_ptr,  # [SLICE_NUM, num_tokens, rank]
    lora_ptr_table,  # [SLICE_NUM] int64 addresses, or None for one slice
    M,
    N,
    K,
    token_indices_sorted_by_lora_ids,
    num_tokens_per_lora,
    lora_token_start_loc,
    lora_ids,
    scaling,
    input_d0_stride,
    input_d1_stride,
    lora_slice_stride,
    lora_d0_stride,
    lora_d1_stride,
    lora_d2_stride,
    output_d0_stride,
    output_d1_stride,
    output_d2_stride,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    SLICE_NUM: tl.constexpr,
    USE_GDC: tl.constexpr,
):
    cta_n_num = tl.cdiv(N, BLOCK_N)
    cta_m_num = tl.cdiv(M, BLOCK_M)
    pid_sk_m_n = tl.program_id(axis=0)
    pid_sk = pid_sk_m_n % SPLIT_K
    pid_m_n = pid_sk_m_n // SPLIT_K
    num_pid_in_group = GROUP_SIZE_M * cta_n_num
    first_pid_m = (pid_m_n // num_pid_in_group) * GROUP_SIZE_M
    group_size_m = min(cta_m_num - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid_m_n % num_pid_in_group) % group_size_m)
    pid_n = (pid_m_n % num_pid_in_group) // group_size_m

    slice_id = tl.program_id(axis=1)
    lora_idx = tl.program_id(axis=2)
    lora_id = tl.load(lora_ids + lora_idx)
    if lora_id == -1:
        return
    lora_m_size = tl.load(num_tokens_per_lora + lora_idx)
    cta_m_offset = pid_m * BLOCK_M
    if cta_m_offset >= lora_m_size:
        return
    cta_m_len = min(BLOCK_M, lora_m_size - cta_m_offset)
    seg_start = tl.load(lora_token_start_loc + lora_idx)
    # a short tail repeats its rows; the store leaves the repeats out
    offset_m = tl.arange(0, BLOCK_M) % cta_m_len
    ram = tl.load(token_indices_sorted_by_lora_ids + seg_start + cta_m_offset + offset_m)

    if SLICE_NUM == 1:
        cur_lora_ptr = lora_ptr
    else:
        # the table of slice weight addresses, as the host builds it from
        # each weight's data pointer; every slice lives in one allocation here
        tl.store(lora_ptr_table + slice_id, (lora_ptr + slice_id * lora_slice_stride).to(tl.int64))
        tl.debug_barrier()
        cur_lora_ptr = tl.load(lora_ptr_table + slice_id).to(tl.pointer_type(input_ptr.dtype.element_ty))

    offset_n = tl.arange(0, BLOCK_N) + pid_n * BLOCK_N
    rbn = tl.max_contiguous(tl.multiple_of(offset_n % N, BLOCK_N), BLOCK_N)
    offset_k = pid_sk * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptr = input_ptr + ram[:, None].to(tl.int64) * input_d0_stride + offset_k[None, :] * input_d1_stride
    b_ptr = (cur_lora_ptr + lora_d0_stride * lora_id + rbn[None, :] * lora_d1_stride
             + offset_k[:, None] * lora_d2_stride)
    accumulator = _vl_lora_mm_k(a_ptr, b_ptr, input_d1_stride, lora_d2_stride, K, BLOCK_M, BLOCK_N,
                                BLOCK_K, EVEN_K, SPLIT_K, False, cur_lora_ptr.dtype.element_ty, False,
                                base_k=pid_sk * BLOCK_K)
    if USE_GDC:
        tl.extra.cuda.gdc_launch_dependents()

    offset_cn = tl.arange(0, BLOCK_N) + pid_n * BLOCK_N
    offset_cm = tl.arange(0, BLOCK_M)
    cur_out_ptr = out_ptr if SLICE_NUM == 1 else out_ptr + slice_id * output_d0_stride
    c_ptr = cur_out_ptr + ram[:, None] * output_d1_stride + offset_cn[None, :] * output_d2_stride
    c_mask = (offset_cm[:, None] < cta_m_len) & (offset_cn[None, :] < N)
    accumulator *= scaling
    if SPLIT_K == 1:
        tl.store(c_ptr, accumulator, mask=c_mask)
    else:
        tl.atomic_add(c_ptr, accumulator, mask=c_mask, sem="relaxed")


@triton.jit
def _vl_lora_expand(
    input_ptr,  # [SLICE_NUM, num_tokens, rank]
    lora_ptr,  # the slices' weights, [SLICE_NUM][num_loras, hidden_slice, rank]
    out_ptr,  # [num_tokens, total hidden]
    lora_ptr_table,  # [SLICE_NUM] int64 addresses, or None for one slice
    lora_slice_offsets,  # [SLICE_NUM] element offsets of the slices, or None
    M,
    N,
    K,
    token_indices_sorted_by_lora_ids,
    num_tokens_per_lora,
    lora_token_start_loc,
    lora_ids,
    slice_start_loc,  # int, or [SLICE_NUM] column starts
    input_d0_stride,
    input_d1_stride,
    input_d2_stride,
    ls_d0_ptr,  # int, or [SLICE_NUM] per-slice strides
    ls_d1_ptr,
    ls_d2_ptr,
    output_d0_stride,
    output_d1_stride,
    output_hs_ptr,  # [SLICE_NUM] hidden size of each slice, or None
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    ADD_INPUTS: tl.constexpr,
    CAST_TYPE: tl.constexpr,
    SLICE_NUM: tl.constexpr,
    SAME_STRIDE: tl.constexpr,
    USE_GDC: tl.constexpr,
    launch_pdl: tl.constexpr,
):
    cta_n_num = tl.cdiv(N, BLOCK_N)
    pid_mn = tl.program_id(axis=0)
    pid_m = pid_mn // cta_n_num
    pid_n = pid_mn % cta_n_num
    slice_id = tl.program_id(axis=1)
    lora_idx = tl.program_id(axis=2)

    lora_id = tl.load(lora_ids + lora_idx)
    if lora_id == -1:
        return
    lora_m_size = tl.load(num_tokens_per_lora + lora_idx)
    cta_m_offset = pid_m * BLOCK_M
    if cta_m_offset >= lora_m_size:
        return
    cur_n = N if SAME_STRIDE else tl.load(output_hs_ptr + slice_id)
    if pid_n * BLOCK_N >= cur_n:
        return
    cta_m_len = min(BLOCK_M, lora_m_size - cta_m_offset)
    seg_start = tl.load(lora_token_start_loc + lora_idx)
    offset_m = tl.arange(0, BLOCK_M) % cta_m_len
    ram = tl.load(token_indices_sorted_by_lora_ids + seg_start + cta_m_offset + offset_m)

    if SAME_STRIDE:
        cur_d0 = ls_d0_ptr
        cur_d1 = ls_d1_ptr
        cur_d2 = ls_d2_ptr
    else:
        cur_d0 = tl.load(ls_d0_ptr + slice_id)
        cur_d1 = tl.load(ls_d1_ptr + slice_id)
        cur_d2 = tl.load(ls_d2_ptr + slice_id)
    if SLICE_NUM == 1:
        cur_input_ptr = input_ptr
        cur_lora_ptr = lora_ptr
        cur_slice_start = slice_start_loc
    else:
        cur_input_ptr = input_ptr + slice_id * input_d0_stride
        tl.store(lora_ptr_table + slice_id,
                 (lora_ptr + tl.load(lora_slice_offsets + slice_id)).to(tl.int64))
        tl.debug_barrier()
        cur_lora_ptr = tl.load(lora_ptr_table + slice_id).to(tl.pointer_type(out_ptr.dtype.element_ty))
        cur_slice_start = tl.load(slice_start_loc + slice_id)

    offset_n = tl.arange(0, BLOCK_N) + pid_n * BLOCK_N
    rbn = tl.max_contiguous(tl.multiple_of(offset_n % cur_n, BLOCK_N), BLOCK_N)
    offset_k = tl.arange(0, BLOCK_K)
    a_ptr = cur_input_ptr + ram[:, None] * input_d1_stride + offset_k[None, :] * input_d2_stride
    b_ptr = cur_lora_ptr + cur_d0 * lora_id + offset_k[:, None] * cur_d2 + rbn[None, :] * cur_d1
    SPLIT_K = 1
    accumulator = _vl_lora_mm_k(a_ptr, b_ptr, input_d2_stride, cur_d2, K, BLOCK_M, BLOCK_N, BLOCK_K,
                                EVEN_K, SPLIT_K, CAST_TYPE, cur_lora_ptr.dtype.element_ty, USE_GDC,
                                base_k=0)
    tiled_c = accumulator.to(cur_lora_ptr.dtype.element_ty)

    offset_cn = tl.arange(0, BLOCK_N) + pid_n * BLOCK_N + cur_slice_start
    offset_cm = tl.arange(0, BLOCK_M)
    c_ptr = out_ptr + ram[:, None].to(tl.int64) * output_d0_stride + offset_cn[None, :] * output_d1_stride
    c_mask = (offset_cm[:, None] < cta_m_len) & (offset_cn[None, :] < (cur_slice_start + cur_n))
    if ADD_INPUTS:
        tiled_c += tl.load(c_ptr, mask=c_mask)
    tl.store(c_ptr, tiled_c, mask=c_mask)


# ---- speculative decoding ---------------------------------------------------------------------


@triton.jit(do_not_specialize=["max_spec_len"])
def _vl_rejection_greedy_sample(
    output_token_ids_ptr,  # [batch, max_spec_len + 1]
    cu_num_draft_tokens_ptr,  # [batch], inclusive
    draft_token_ids_ptr,  # [num_tokens]
    target_argmax_ptr,  # [num_tokens]
    bonus_token_ids_ptr,  # [batch]
    is_greedy_ptr,  # [batch] or None
    max_spec_len,
):
    req = tl.program_id(0)
    if is_greedy_ptr is None:
        is_greedy = True
    else:
        # a bool tensor, held as bytes
        is_greedy = tl.load(is_greedy_ptr + req).to(tl.int1)
    if not is_greedy:
        return
    if req == 0:
        start = 0
    else:
        start = tl.load(cu_num_draft_tokens_ptr + req - 1)
    end = tl.load(cu_num_draft_tokens_ptr + req)
    n_draft = end - start

    rejected = False
    for pos in range(n_draft):
        if not rejected:
            draft = tl.load(draft_token_ids_ptr + start + pos)
            target = tl.load(target_argmax_ptr + start + pos)
            tl.store(output_token_ids_ptr + req * (max_spec_len + 1) + pos, target)
            if draft != target:
                rejected = True
    if not rejected:
        bonus = tl.load(bonus_token_ids_ptr + req)
        tl.store(output_token_ids_ptr + req * (max_spec_len + 1) + n_draft, bonus)


@triton.jit(do_not_specialize=["max_spec_len"])
def _vl_rejection_random_sample(
    output_token_ids_ptr,  # [batch, max_spec_len + 1]
    cu_num_draft_tokens_ptr,
    draft_token_ids_ptr,
    draft_probs_ptr,  # [num_tokens, vocab] or None
    target_probs_ptr,  # [num_tokens, vocab]
    bonus_token_ids_ptr,
    recovered_token_ids_ptr,  # [num_tokens]
    uniform_probs_ptr,  # [num_tokens]
    is_greedy_ptr,  # [batch]
    max_spec_len,
    vocab_size,
    IS_NGRAM: tl.constexpr,
):
    req = tl.program_id(0)
    is_greedy = tl.load(is_greedy_ptr + req)
    if is_greedy:
        return
    if req == 0:
        start = 0
    else:
        start = tl.load(cu_num_draft_tokens_ptr + req - 1)
    n_draft = tl.load(cu_num_draft_tokens_ptr + req) - start

    rejected = False
    for pos in range(n_draft):
        if not rejected:
            draft = tl.load(draft_token_ids_ptr + start + pos)
            if IS_NGRAM:
                draft_prob = 1
            else:
                draft_prob = tl.load(draft_probs_ptr + (start + pos) * vocab_size + draft)
            target_prob = tl.load(target_probs_ptr + (start + pos) * vocab_size + draft)
            u = tl.load(uniform_probs_ptr + start + pos)
            if draft_prob > 0 and target_prob / draft_prob >= u:
                token = draft
            else:
                rejected = True
                token = tl.load(recovered_token_ids_ptr + start + pos)
            tl.store(output_token_ids_ptr + req * (max_spec_len + 1) + pos, token)
    if not rejected:
        bonus = tl.load(bonus_token_ids_ptr + req)
        tl.store(output_token_ids_ptr + req * (max_spec_len + 1) + n_draft, bonus)


@triton.jit
def _vl_sample_recovered_tokens(
    output_token_ids_ptr,  # [num_tokens]
    cu_num_draft_tokens_ptr,
    draft_token_ids_ptr,
    draft_probs_ptr,  # [num_tokens, vocab] or None
    target_probs_ptr,  # [num_tokens, vocab]
    q_ptr,  # [batch, vocab], exponential noise
    vocab_size,
    PADDED_VOCAB_SIZE: tl.constexpr,
    IS_NGRAM: tl.constexpr,
):
    req = tl.program_id(0)
    if req == 0:
        start = 0
    else:
        start = tl.load(cu_num_draft_tokens_ptr + req - 1)
    n_draft = tl.load(cu_num_draft_tokens_ptr + req) - start
    pos = tl.program_id(1)
    if pos >= n_draft:
        return

    row = (start + pos) * vocab_size
    vocab = tl.arange(0, PADDED_VOCAB_SIZE)
    if IS_NGRAM:
        # the draft token's probability is taken out for the draw, then put back
        draft = tl.load(draft_token_ids_ptr + start + pos)
        kept = tl.load(target_probs_ptr + row + draft)
        tl.store(target_probs_ptr + row + draft, 0)
        prob = tl.load(target_probs_ptr + row + vocab, mask=vocab < vocab_size, other=0)
    else:
        draft_prob = tl.load(draft_probs_ptr + row + vocab, mask=vocab < vocab_size, other=0)
        target_prob = tl.load(target_probs_ptr + row + vocab, mask=vocab < vocab_size, other=0)
        prob = tl.maximum(target_prob - draft_prob, 0)
    q = tl.load(q_ptr + req * vocab_size + vocab, mask=vocab < vocab_size, other=float("-inf"))
    recovered = tl.argmax(prob / q, axis=-1)
    tl.store(output_token_ids_ptr + start + pos, recovered)
    if IS_NGRAM:
        tl.store(target_probs_ptr + row + draft, kept)


@triton.jit
def _vl_min_above(x, above, min_above, n_min_above):
    # the smallest value above a pivot over the tiles seen so far, and how
    # often it occurs
    tile_min = tl.min(tl.where(above, x, float("inf")))
    tile_n = tl.sum(above & (x == tile_min))
    is_new = tile_min < min_above
    is_same = tile_min == min_above
    n_min_above = tl.where(is_new, tile_n, n_min_above + tile_n * is_same)
    return tl.minimum(min_above, tile_min), n_min_above


@triton.jit(do_not_specialize_on_alignment=["batch_size"])
def _vl_topk_topp_mask(
    logits_ptr,  # [batch, VOCAB_SIZE], masked in place
    logits_stride,
    k_ptr,  # [batch] int32
    p_ptr,  # [batch] fp32
    batch_size,
    VOCAB_SIZE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    TOPK_ENABLED: tl.constexpr,
    TOPP_ENABLED: tl.constexpr,
    MAX_ITERS: tl.constexpr,
    TOPP_ITERS: tl.constexpr,
    MASK_VALUE: tl.constexpr = float("-inf"),
):
    NUM_TILES: tl.constexpr = (VOCAB_SIZE + BLOCK_SIZE - 1) // BLOCK_SIZE
    pid = tl.program_id(0)
    for row in tl.range(pid, batch_size, tl.num_programs(0)):
        row_ptr = logits_ptr + row.to(tl.int64) * logits_stride

        max_logit = -float("inf")
        min_logit = float("inf")
        n_finite = tl.zeros((), dtype=tl.uint32)
        for i in range(0, NUM_TILES):
            offs = i * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            ok = offs < VOCAB_SIZE
            x = tl.load(row_ptr + offs, mask=ok, other=-float("inf"))
            max_logit = tl.maximum(max_logit, tl.max(x))
            finite = x > -float("inf")
            # masked-out (-inf) logits stay out of the search bounds
            min_logit = tl.minimum(min_logit, tl.min(tl.where(finite, x, float("inf"))))
            n_finite += tl.sum(finite & ok)

        k_pivot = -float("inf")
        if TOPK_ENABLED:
            k = tl.load(k_ptr + row)
            if k < n_finite:
                # ternary search for the k-th largest logit: the smallest value
                # above a pivot with k values above it
                lo = min_logit
                hi = max_logit
                found = 0
                iters = 0
                while found == 0:
                    p0 = (hi - lo) * 1.0 / 3.0 + lo
                    p1 = (hi - lo) * 2.0 / 3.0 + lo
                    n0 = tl.zeros((), dtype=tl.uint32)
                    n1 = tl.zeros((), dtype=tl.uint32)
                    min0 = float("inf")
                    min1 = float("inf")
                    nmin0 = tl.zeros((), dtype=tl.uint32)
                    nmin1 = tl.zeros((), dtype=tl.uint32)
                    for i in range(0, NUM_TILES):
                        offs = i * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                        x = tl.load(row_ptr + offs, mask=offs < VOCAB_SIZE, other=-float("inf"))
                        above0 = x > p0
                        above1 = x > p1
                        n0 += tl.sum(above0)
                        n1 += tl.sum(above1)
                        min0, nmin0 = _vl_min_above(x, above0, min0, nmin0)
                        min1, nmin1 = _vl_min_above(x, above1, min1, nmin1)
                    if n0 >= k and n0 - nmin0 < k:
                        k_pivot = min0
                        found = 1
                    if n1 >= k and n1 - nmin1 < k:
                        k_pivot = min1
                        found = 1
                    if n1 > k:
                        lo = p1
                    elif n0 > k:
                        lo = p0
                    if n0 < k:
                        hi = p0
                    elif n1 < k:
                        hi = p1
                    iters += 1
                    if iters >= MAX_ITERS or tl.abs(hi - lo) < 1e-9:
                        k_pivot = lo
                        found = 1

        if TOPP_ENABLED:
            p = tl.load(p_ptr + row)
            sum_exp = 0.0
            for i in range(0, NUM_TILES):
                offs = i * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                x = tl.load(row_ptr + offs, mask=offs < VOCAB_SIZE, other=-float("inf"))
                sum_exp += tl.sum(tl.where(x >= k_pivot, tl.exp(x - max_logit), 0.0))
            # bisection for the largest threshold whose kept mass reaches p
            lo = tl.maximum(min_logit, k_pivot)
            hi = max_logit + 1.0
            for _ in range(TOPP_ITERS):
                mid = (lo + hi) * 0.5
                mass = 0.0
                for i in range(0, NUM_TILES):
                    offs = i * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                    x = tl.load(row_ptr + offs, mask=offs < VOCAB_SIZE, other=-float("inf"))
                    keep = (x >= mid) & (x >= k_pivot)
                    mass += tl.sum(tl.where(keep, tl.exp(x - max_logit), 0.0))
                if mass / sum_exp >= p:
                    lo = mid
                else:
                    hi = mid
            k_pivot = tl.maximum(k_pivot, lo)

        for i in range(0, NUM_TILES):
            offs = i * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            ok = offs < VOCAB_SIZE
            x = tl.load(row_ptr + offs, mask=ok)
            tl.store(row_ptr + offs, tl.where(x >= k_pivot, x, MASK_VALUE), mask=ok)


@triton.jit(do_not_specialize=["replace_from", "replace_to"])
def _vl_expand_per_request(
    output_ptr,  # [num_tokens]
    input_ptr,  # [batch]
    cu_num_tokens_ptr,  # [batch], inclusive
    replace_from,
    replace_to,
    MAX_NUM_TOKENS: tl.constexpr,
):
    req = tl.program_id(0)
    if req == 0:  # noqa: SIM108
        start = 0
    else:
        start = tl.load(cu_num_tokens_ptr + req - 1)
    n = tl.load(cu_num_tokens_ptr + req) - start
    value = tl.load(input_ptr + req)
    value = tl.where(value == replace_from, replace_to, value)
    offs = tl.arange(0, MAX_NUM_TOKENS)
    tl.store(output_ptr + start + offs, value, mask=offs < n)


@triton.jit
def _vl_eagle_next_token(
    sampled_token_ids_ptr,  # [batch, max_gen_len], -1 where rejected
    backup_next_token_ids_ptr,  # [batch]
    next_token_ids_ptr,  # [batch]
    valid_count_ptr,  # [batch]
    sampled_stride,
    max_gen_len,
    vocab_size,
    BLOCK_SIZE_TOKENS: tl.constexpr,
):
    req = tl.program_id(axis=0)
    offs = tl.arange(0, BLOCK_SIZE_TOKENS)
    in_row = offs < max_gen_len
    ids = tl.load(sampled_token_ids_ptr + req * sampled_stride + offs, mask=in_row, other=-1)
    valid = (ids != -1) & (ids < vocab_size)
    n_valid = tl.sum(valid)
    if n_valid > 0:
        last = tl.max(tl.where(valid, offs, -1))
        token = tl.sum(tl.where(offs == last, ids, 0))
    else:
        token = tl.load(backup_next_token_ids_ptr + req)
    tl.store(next_token_ids_ptr + req, token)
    tl.store(valid_count_ptr + req, n_valid)


@triton.jit
def _vl_prepare_eagle_input(
    out_ptr,  # [num_kept_tokens]
    cu_query_lens_ptr,  # [batch + 1]
    cu_num_tokens_ptr,  # [batch + 1]
    BLOCK_SIZE: tl.constexpr,
):
    req = tl.program_id(0)
    start = tl.load(cu_num_tokens_ptr + req)
    n = tl.load(cu_num_tokens_ptr + req + 1) - start
    first_index = tl.load(cu_query_lens_ptr + req)
    for i in tl.range(tl.cdiv(n, BLOCK_SIZE)):
        offs = i * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        tl.store(out_ptr + start + offs, first_index + offs, mask=offs < n)


# ---- batch-invariant ops ----------------------------------------------------------------------


def _matmul_launch_metadata(grid, kernel, args):
    m, n, k = args["M"], args["N"], args["K"]
    return {"name": f"{kernel.name} [M={m}, N={n}, K={k}]", "flops16": 2.0 * m * n * k}


@triton.jit
def _vl_compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit(launch_metadata=_matmul_launch_metadata)
def _vl_matmul_persistent(
    a_ptr,
    b_ptr,
    c_ptr,
    bias_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    NUM_SMS: tl.constexpr,
    A_LARGE: tl.constexpr,
    B_LARGE: tl.constexpr,
    C_LARGE: tl.constexpr,
    HAS_BIAS: tl.constexpr,
):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    # the epilogue walks the same tiles with its own counter
    tile_id_c = start_pid - NUM_SMS
    offs_k_for_mask = tl.arange(0, BLOCK_SIZE_K)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n

    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _vl_compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        if A_LARGE:
            offs_am = offs_am.to(tl.int64)
        if B_LARGE:
            offs_bn = offs_bn.to(tl.int64)
        offs_am = tl.where(offs_am < M, offs_am, 0)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_SIZE_M), BLOCK_SIZE_M)
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_SIZE_N), BLOCK_SIZE_N)

        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            if A_LARGE or B_LARGE:
                offs_k = ki * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K).to(tl.int64)
            else:
                offs_k = ki * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
            a = tl.load(a_ptrs, mask=offs_k_for_mask[None, :] < K - ki * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k_for_mask[:, None] < K - ki * BLOCK_SIZE_K, other=0.0)
            accumulator = tl.dot(a, b, accumulator)

        tile_id_c += NUM_SMS
        pid_m, pid_n = _vl_compute_pid(tile_id_c, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        if C_LARGE:
            offs_cm = offs_cm.to(tl.int64)
            offs_cn = offs_cn.to(tl.int64)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        if HAS_BIAS:
            bias = tl.load(bias_ptr + offs_cn, mask=offs_cn < N, other=0.0).to(tl.float32)
            accumulator += bias
        tl.store(c_ptrs, accumulator.to(c_ptr.dtype.element_ty), mask=c_mask)


@triton.jit
def _vl_log_softmax(input_ptr, output_ptr, input_row_stride, output_row_stride, n_cols,
                    BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    in_row = input_ptr + row * input_row_stride
    out_row = output_ptr + row * output_row_stride

    # three passes in a fixed order: max, sum of exponentials, output
    max_val = -float("inf")
    for col0 in range(0, n_cols, BLOCK_SIZE):
        cols = col0 + tl.arange(0, BLOCK_SIZE)
        vals = tl.load(in_row + cols, mask=cols < n_cols, other=-float("inf"))
        max_val = tl.max(tl.maximum(vals, max_val))
    sum_exp = 0.0
    for col0 in range(0, n_cols, BLOCK_SIZE):
        cols = col0 + tl.arange(0, BLOCK_SIZE)
        ok = cols < n_cols
        vals = tl.load(in_row + cols, mask=ok, other=0.0)
        sum_exp += tl.sum(tl.where(ok, tl.exp(vals - max_val), 0.0))
    log_sum_exp = tl.log(sum_exp)
    for col0 in range(0, n_cols, BLOCK_SIZE):
        cols = col0 + tl.arange(0, BLOCK_SIZE)
        ok = cols < n_cols
        vals = tl.load(in_row + cols, mask=ok)
        tl.store(out_row + cols, vals - max_val - log_sum_exp, mask=ok)


@triton.jit
def _vl_rms_norm(input_ptr, weight_ptr, output_ptr, input_row_stride, output_row_stride, n_cols, eps,
                 BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    in_row = input_ptr + row * input_row_stride
    out_row = output_ptr + row * output_row_stride

    # a one-element block carries the sum of squares in fp32
    sum_sq = tl.zeros([1], dtype=tl.float32)
    for col0 in range(0, n_cols, BLOCK_SIZE):
        cols = col0 + tl.arange(0, BLOCK_SIZE)
        ok = cols < n_cols
        vals = tl.load(in_row + cols, mask=ok, other=0.0).to(tl.float32)
        sum_sq += tl.sum(tl.where(ok, vals * vals, 0.0))
    inv_rms = 1.0 / tl.sqrt(sum_sq / n_cols + eps)
    for col0 in range(0, n_cols, BLOCK_SIZE):
        cols = col0 + tl.arange(0, BLOCK_SIZE)
        ok = cols < n_cols
        vals = tl.load(in_row + cols, mask=ok, other=0.0)
        weight = tl.load(weight_ptr + cols, mask=ok, other=1.0)
        out = vals.to(tl.float32) * inv_rms * weight.to(tl.float32)
        tl.store(out_row + cols, out.to(vals.dtype), mask=ok)


@triton.jit
def _vl_mean_dim(input_ptr, output_ptr, input_stride0, input_stride1, input_stride2,
                 output_stride0, output_stride1, M, N, K, BLOCK_SIZE: tl.constexpr):
    # the input seen as (M, N, K), reduced over N
    pid = tl.program_id(0)
    m_idx = pid // K
    k_idx = pid % K
    if m_idx >= M or k_idx >= K:
        return
    acc = 0.0
    for n0 in range(0, N, BLOCK_SIZE):
        n_offs = n0 + tl.arange(0, BLOCK_SIZE)
        vals = tl.load(input_ptr + m_idx * input_stride0 + n_offs * input_stride1 + k_idx * input_stride2,
                       mask=n_offs < N, other=0.0)
        acc += tl.sum(vals)
    tl.store(output_ptr + m_idx * output_stride0 + k_idx * output_stride1, acc / N)


# ---- quantised GEMMs ----------------------------------------------------------------------------


@triton.jit
def _vl_scaled_mm(
    a_ptr,
    b_ptr,
    scale_a_ptr,  # [1] or [M]
    scale_b_ptr,  # [1] or [N]
    c_ptr,
    bias_ptr,  # [N] or None
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    BLOCK_SIZE_SCALE_A: tl.constexpr,
    BLOCK_SIZE_SCALE_B: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    acc_type: tl.constexpr = tl.float32 if a_ptr.dtype.element_ty.is_floating() else tl.int32
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=acc_type)

    offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    am_ok = offs_am < M
    offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
    bn_ok = offs_bn < N
    offs_k = tl.arange(0, BLOCK_SIZE_K).to(tl.int64)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn

    # a scale block is either one value or one per row of the tile
    offs_sa = tl.arange(0, BLOCK_SIZE_SCALE_A) + (BLOCK_SIZE_SCALE_A > 1) * pid_m * BLOCK_SIZE_M
    sa_ok = offs_sa < M
    offs_sb = tl.arange(0, BLOCK_SIZE_SCALE_B) + (BLOCK_SIZE_SCALE_B > 1) * pid_n * BLOCK_SIZE_N
    sb_ok = offs_sb < N

    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_ok = offs_k < K
        a = tl.load(a_ptrs, am_ok[:, None] & k_ok[None, :], other=0)
        b = tl.load(b_ptrs, k_ok[:, None] & bn_ok[None, :], other=0)
        accumulator = tl.dot(a, b, accumulator, out_dtype=acc_type)
        offs_k += BLOCK_SIZE_K
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    scale_a = tl.load(scale_a_ptr + offs_sa[:, None], sa_ok[:, None] & (tl.arange(0, 1) < 1)[None, :])
    scale_a = scale_a.broadcast_to((BLOCK_SIZE_M, 1))
    accumulator = scale_a * accumulator.to(tl.float32)
    scale_b = tl.load(scale_b_ptr + offs_sb[:, None], sb_ok[:, None] & (tl.arange(0, 1) < 1)[None, :])
    scale_b = scale_b.broadcast_to((BLOCK_SIZE_N, 1))
    accumulator = scale_b.T * accumulator.to(tl.float32)

    c = accumulator.to(c_ptr.type.element_ty)
    # the bias is in the output type: added after the conversion
    if bias_ptr:
        c += tl.load(bias_ptr + offs_bn, bn_ok)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm < M)[:, None] & (offs_cn < N)[None, :])


@triton.jit
def _vl_write_zeros_to_output(c_ptr, stride_cm, stride_cn, pid_n, N, offs_token, token_mask,
                              BLOCK_SIZE_M, BLOCK_SIZE_N, compute_type):
    zeros = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=compute_type)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, zeros, mask=token_mask[:, None] & (offs_cn[None, :] < N))


@triton.jit
def _vl_fused_moe_wna16(
    a_ptr,  # [num_tokens, K]
    b_ptr,  # [E, N, K // 2] (int4, two along K per byte) or [E, N, K] (uint8)
    c_ptr,  # [num_tokens * top_k, N]
    b_scale_ptr,  # [E, N, K // group_size]
    b_zp_ptr,  # [E, N // 2, K // group_size] (int4 pairs along N) or None
    topk_weights_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    num_tokens_post_padded_ptr,
    N: tl.constexpr,
    K: tl.constexpr,
    EM,
    num_valid_tokens,
    stride_am,
    stride_ak,
    stride_be,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    stride_bse,
    stride_bsk,
    stride_bsn,
    stride_bze,
    stride_bzk,
    stride_bzn,
    group_size: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    MUL_ROUTED_WEIGHT: tl.constexpr,
    top_k: tl.constexpr,
    has_zp: tl.constexpr,
    use_int4_w4a16: tl.constexpr,
    use_int8_w8a16: tl.constexpr,
    even_Ks: tl.constexpr,
):
    compute_type: tl.constexpr = a_ptr.dtype.element_ty
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(EM, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded:
        return
    offs_token_id = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid_tokens

    off_experts = tl.load(expert_ids_ptr + pid_m).to(tl.int64)
    if off_experts == -1:
        # an expert held elsewhere: its rows are zero here
        _vl_write_zeros_to_output(c_ptr, stride_cm, stride_cn, pid_n, N, offs_token, token_mask,
                                  BLOCK_SIZE_M, BLOCK_SIZE_N, compute_type)
        return

    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_token[:, None] // top_k * stride_am + offs_k[None, :] * stride_ak)
    if use_int4_w4a16:
        b_ptrs = (b_ptr + off_experts * stride_be + (offs_k[:, None] // 2) * stride_bk
                  + offs_bn[None, :] * stride_bn)
        b_shifter = (offs_k[:, None] % 2) * 4
    elif use_int8_w8a16:
        b_ptrs = b_ptr + off_experts * stride_be + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn

    if not has_zp and use_int4_w4a16:
        b_zp_num = 8
    if not has_zp and use_int8_w8a16:
        b_zp_num = 128
    elif has_zp and use_int4_w4a16:
        b_zp_shifter = (offs_bn[None, :] % 2) * 4

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        if not even_Ks:
            k_mask = offs_k[:, None] < (K - k * BLOCK_SIZE_K)
            k_other = 0.0
        else:
            k_mask = None
            k_other = None
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < K - k * BLOCK_SIZE_K), other=0.0)
        b = tl.load(b_ptrs, mask=k_mask, other=k_other)
        if use_int4_w4a16:
            b = (b >> b_shifter) & 0xF

        b_scale_ptrs = (b_scale_ptr + off_experts * stride_bse + offs_bn[None, :] * stride_bsn
                        + ((offs_k[:, None] + BLOCK_SIZE_K * k) // group_size) * stride_bsk)
        b_scale = tl.load(b_scale_ptrs, mask=k_mask, other=k_other).to(tl.float32)
        if has_zp and use_int4_w4a16:
            offs_k_true = (offs_k[:, None] + BLOCK_SIZE_K * k) // group_size
            b_zp_ptrs = (b_zp_ptr + off_experts * stride_bze + (offs_bn[None, :] // 2) * stride_bzn
                         + offs_k_true * stride_bzk)
            b_zp = tl.load(b_zp_ptrs, mask=k_mask, other=k_other)
            b_zp = ((b_zp >> b_zp_shifter) & 0xF).to(tl.float32)
        if has_zp:
            b = ((b.to(tl.float32) - b_zp) * b_scale).to(compute_type)
        else:
            b = ((b.to(tl.float32) - b_zp_num) * b_scale).to(compute_type)
        accumulator = tl.dot(a, b, acc=accumulator)

        a_ptrs += BLOCK_SIZE_K * stride_ak
        if use_int4_w4a16:
            b_ptrs += (BLOCK_SIZE_K // 2) * stride_bk
        else:
            b_ptrs += BLOCK_SIZE_K * stride_bk

    if MUL_ROUTED_WEIGHT:
        w = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0)
        accumulator = accumulator * w[:, None]
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, accumulator.to(compute_type), mask=token_mask[:, None] & (offs_cn[None, :] < N))


# ---- Mamba ----------------------------------------------------------------------------------


@triton.jit
def _vl_softplus(dt):
    return tl.where(dt <= 20.0, tl.math.log(tl.math.exp(dt) + 1), dt)


@triton.heuristics({"HAS_DT_BIAS": lambda args: args["dt_bias_ptr"] is not None})
@triton.heuristics({"HAS_D": lambda args: args["D_ptr"] is not None})
@triton.heuristics({"HAS_Z": lambda args: args["z_ptr"] is not None})
@triton.heuristics({"HAS_STATE_BATCH_INDICES": lambda args: args["state_batch_indices_ptr"] is not None})
@triton.heuristics({"BLOCK_SIZE_DSTATE": lambda args: triton.next_power_of_2(args["dstate"])})
@triton.jit
def _vl_selective_state_update(
    state_ptr,  # [n_slots, nheads, dim, dstate]
    x_ptr,  # [batch, nheads, dim]
    dt_ptr,  # [batch, nheads, dim]
    dt_bias_ptr,  # [nheads, dim] or None
    A_ptr,  # [nheads, dim, dstate]
    B_ptr,  # [batch, ngroups, dstate]
    C_ptr,  # [batch, ngroups, dstate]
    D_ptr,  # [nheads, dim] or None
    z_ptr,  # [batch, nheads, dim] or None
    out_ptr,  # [batch, nheads, dim]
    state_batch_indices_ptr,  # [batch] or None
    pad_slot_id,
    dim,
    dstate,
    nheads_ngroups_ratio,
    stride_state_batch,
    stride_state_head,
    stride_state_dim,
    stride_state_dstate,
    stride_x_batch,
    stride_x_head,
    stride_x_dim,
    stride_dt_batch,
    stride_dt_head,
    stride_dt_dim,
    stride_dt_bias_head,
    stride_dt_bias_dim,
    stride_A_head,
    stride_A_dim,
    stride_A_dstate,
    stride_B_batch,
    stride_B_group,
    stride_B_dstate,
    stride_C_batch,
    stride_C_group,
    stride_C_dstate,
    stride_D_head,
    stride_D_dim,
    stride_z_batch,
    stride_z_head,
    stride_z_dim,
    stride_out_batch,
    stride_out_head,
    stride_out_dim,
    DT_SOFTPLUS: tl.constexpr,
    TIE_HDIM: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    HAS_DT_BIAS: tl.constexpr,
    HAS_D: tl.constexpr,
    HAS_Z: tl.constexpr,
    HAS_STATE_BATCH_INDICES: tl.constexpr,
    BLOCK_SIZE_DSTATE: tl.constexpr,
):
    pid_m = tl.program_id(axis=0)
    pid_b = tl.program_id(axis=1)
    pid_h = tl.program_id(axis=2)

    if HAS_STATE_BATCH_INDICES:
        state_batch_indices_ptr += pid_b
        state_batch_idx = tl.load(state_batch_indices_ptr).to(tl.int64)
        state_ptr += state_batch_idx * stride_state_batch + pid_h * stride_state_head
    else:
        state_ptr += pid_b * stride_state_batch + pid_h * stride_state_head
    x_ptr += pid_b * stride_x_batch + pid_h * stride_x_head
    dt_ptr += pid_b * stride_dt_batch + pid_h * stride_dt_head
    if HAS_DT_BIAS:
        dt_bias_ptr += pid_h * stride_dt_bias_head
    A_ptr += pid_h * stride_A_head
    B_ptr += pid_b * stride_B_batch + (pid_h // nheads_ngroups_ratio) * stride_B_group
    C_ptr += pid_b * stride_C_batch + (pid_h // nheads_ngroups_ratio) * stride_C_group
    if HAS_Z:
        z_ptr += pid_b * stride_z_batch + pid_h * stride_z_head
    out_ptr += pid_b * stride_out_batch + pid_h * stride_out_head

    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = tl.arange(0, BLOCK_SIZE_DSTATE)
    state_ptrs = state_ptr + offs_m[:, None] * stride_state_dim + offs_n[None, :] * stride_state_dstate
    mask = (offs_m[:, None] < dim) & (offs_n[None, :] < dstate)
    if HAS_STATE_BATCH_INDICES:
        # a padded request has no state slot
        mask &= state_batch_idx != pad_slot_id
    state = tl.load(state_ptrs, mask=mask, other=0.0)

    x = tl.load(x_ptr + offs_m * stride_x_dim, mask=offs_m < dim, other=0.0).to(tl.float32)
    if not TIE_HDIM:
        dt = tl.load(dt_ptr + offs_m * stride_dt_dim, mask=offs_m < dim, other=0.0).to(tl.float32)
        if HAS_DT_BIAS:
            dt += tl.load(dt_bias_ptr + offs_m * stride_dt_bias_dim, mask=offs_m < dim, other=0.0).to(tl.float32)
        if DT_SOFTPLUS:
            dt = _vl_softplus(dt)
        A = tl.load(A_ptr + offs_m[:, None] * stride_A_dim + offs_n[None, :] * stride_A_dstate,
                    mask=(offs_m[:, None] < dim) & (offs_n[None, :] < dstate), other=0.0).to(tl.float32)
        dA = tl.exp(A * dt[:, None])
    else:
        # one dt and one A for the whole head
        dt = tl.load(dt_ptr).to(tl.float32)
        if HAS_DT_BIAS:
            dt += tl.load(dt_bias_ptr).to(tl.float32)
        if DT_SOFTPLUS:
            dt = _vl_softplus(dt)
        A = tl.load(A_ptr).to(tl.float32)
        dA = tl.exp(A * dt)

    B = tl.load(B_ptr + offs_n * stride_B_dstate, mask=offs_n < dstate, other=0.0).to(tl.float32)
    C = tl.load(C_ptr + offs_n * stride_C_dstate, mask=offs_n < dstate, other=0.0).to(tl.float32)
    if HAS_D:
        D = tl.load(D_ptr + pid_h * stride_D_head + offs_m * stride_D_dim, mask=offs_m < dim, other=0.0).to(tl.float32)
    if HAS_Z:
        z = tl.load(z_ptr + offs_m * stride_z_dim, mask=offs_m < dim, other=0.0).to(tl.float32)

    dB = B[None, :] * dt[:, None] if not TIE_HDIM else B * dt
    state = state * dA + dB * x[:, None]
    tl.store(state_ptrs, state.to(state_ptr.dtype.element_ty), mask=mask)
    out = tl.sum(state * C[None, :], axis=1)
    if HAS_D:
        out += x * D
    if HAS_Z:
        out *= z * tl.sigmoid(z)
    tl.store(out_ptr + offs_m * stride_out_dim, out.to(out_ptr.dtype.element_ty), mask=offs_m < dim)


@triton.heuristics({
    "USE_INITIAL_STATE": lambda args: args["h0"] is not None,
    "IS_VARLEN": lambda args: args["cu_seqlens"] is not None,
    "IS_CONTINUOUS_BATCHING": lambda args: args["ssm_state_indices"] is not None,
})
@triton.jit(do_not_specialize=["N", "T"])
def _vl_fused_recurrent_gated_delta_rule(
    q,  # [B, T, H, K]
    k,  # [B, T, H, K]
    v,  # [B, T, HV, V]
    g,  # [B, T, HV], log decay
    beta,  # [B, T, HV] or [B, T, HV, V]
    o,  # [NK, B, T, HV, V]
    h0,  # initial states or None
    ht,  # final states
    cu_seqlens,  # [N + 1] or None
    ssm_state_indices,  # [N] state slot of each sequence, or None
    scale,
    N: tl.int64,
    T: tl.int64,
    B: tl.constexpr,
    H: tl.constexpr,
    HV: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
    USE_INITIAL_STATE: tl.constexpr,
    STORE_FINAL_STATE: tl.constexpr,
    IS_BETA_HEADWISE: tl.constexpr,
    USE_QK_L2NORM_IN_KERNEL: tl.constexpr,
    IS_VARLEN: tl.constexpr,
    IS_CONTINUOUS_BATCHING: tl.constexpr,
):
    i_k, i_v, i_nh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_n, i_hv = i_nh // HV, i_nh % HV
    i_h = i_hv // (HV // H)
    if IS_VARLEN:
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int64), tl.load(cu_seqlens + i_n + 1).to(tl.int64)
        all = T
        T = eos - bos
    else:
        bos, eos = i_n * T, i_n * T + T
        all = B * T

    o_k = i_k * BK + tl.arange(0, BK)
    o_v = i_v * BV + tl.arange(0, BV)
    p_q = q + (bos * H + i_h) * K + o_k
    p_k = k + (bos * H + i_h) * K + o_k
    p_v = v + (bos * HV + i_hv) * V + o_v
    if IS_BETA_HEADWISE:
        p_beta = beta + (bos * HV + i_hv) * V + o_v
    else:
        p_beta = beta + bos * HV + i_hv
    p_g = g + bos * HV + i_hv
    p_o = o + ((i_k * all + bos) * HV + i_hv) * V + o_v

    mask_k = o_k < K
    mask_v = o_v < V
    mask_h = mask_k[:, None] & mask_v[None, :]

    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    if USE_INITIAL_STATE:
        if IS_CONTINUOUS_BATCHING:
            slot = tl.load(ssm_state_indices + i_n).to(tl.int64)
            p_h0 = h0 + slot * HV * K * V
        else:
            p_h0 = h0 + i_n * HV * K * V
        p_h0 = p_h0 + i_hv * K * V + o_k[:, None] * V + o_v[None, :]
        b_h += tl.load(p_h0, mask=mask_h, other=0).to(tl.float32)

    for _ in range(0, T):
        b_q = tl.load(p_q, mask=mask_k, other=0).to(tl.float32)
        b_k = tl.load(p_k, mask=mask_k, other=0).to(tl.float32)
        b_v = tl.load(p_v, mask=mask_v, other=0).to(tl.float32)
        b_g = tl.load(p_g).to(tl.float32)
        if USE_QK_L2NORM_IN_KERNEL:
            b_q = div(b_q, tl.sqrt(tl.sum(b_q * b_q) + 1e-6))
            b_k = div(b_k, tl.sqrt(tl.sum(b_k * b_k) + 1e-6))
        b_q = b_q * scale
        # decay, then the delta rule's correction of what the state recalls for k
        b_h *= exp(b_g)
        b_v -= tl.sum(b_h * b_k[:, None], 0)
        if IS_BETA_HEADWISE:
            b_beta = tl.load(p_beta, mask=mask_v, other=0).to(tl.float32)
        else:
            b_beta = tl.load(p_beta).to(tl.float32)
        b_v *= b_beta
        b_h += b_k[:, None] * b_v[None, :]
        b_o = tl.sum(b_h * b_q[:, None], 0)
        tl.store(p_o, b_o.to(p_o.dtype.element_ty), mask=mask_v)

        p_q += H * K
        p_k += H * K
        p_o += HV * V
        p_v += HV * V
        p_g += HV
        p_beta += HV * (V if IS_BETA_HEADWISE else 1)

    if STORE_FINAL_STATE:
        if IS_CONTINUOUS_BATCHING:
            p_ht = ht + slot * HV * K * V
        else:
            p_ht = ht + i_n * HV * K * V
        p_ht = p_ht + i_hv * K * V + o_k[:, None] * V + o_v[None, :]
        tl.store(p_ht, b_h.to(p_ht.dtype.element_ty), mask=mask_h)


# ---- rotary ---------------------------------------------------------------------------------


@triton.jit
def _vl_mrope(
    q_ptr,  # [num_tokens, n_qh * hd], rotated in place
    k_ptr,  # [num_tokens, n_kh * hd]
    cos,  # [3, num_tokens, rd // 2]: rows for the t, h and w positions
    sin,
    num_tokens,
    n_qh: tl.constexpr,
    n_kh: tl.constexpr,
    hd: tl.constexpr,
    rd: tl.constexpr,
    pad_n_qh: tl.constexpr,
    pad_n_kh: tl.constexpr,
    pad_hd: tl.constexpr,
    mrope_section_t: tl.constexpr,
    mrope_section_h: tl.constexpr,
    mrope_section_w: tl.constexpr,
    is_interleaved: tl.constexpr,
):
    pid = tl.program_id(0)
    q_ptr = q_ptr + pid * (n_qh * hd)
    k_ptr = k_ptr + pid * (n_kh * hd)

    half_rd = rd // 2
    t_cos = cos + pid * half_rd
    h_cos = t_cos + num_tokens * half_rd
    w_cos = h_cos + num_tokens * half_rd
    t_sin = sin + pid * half_rd
    h_sin = t_sin + num_tokens * half_rd
    w_sin = h_sin + num_tokens * half_rd

    # each frequency takes its angle from one of the three position rows
    offs = tl.arange(0, pad_hd // 2)
    in_rot = offs < half_rd
    if is_interleaved:
        h_mask = ((offs % 3) == 1) & (offs <= 3 * mrope_section_h) & in_rot
        w_mask = ((offs % 3) == 2) & (offs <= 3 * mrope_section_w) & in_rot
        t_mask = ~(h_mask | w_mask) & in_rot
    else:
        t_end = mrope_section_t
        h_end = t_end + mrope_section_h
        t_mask = offs < mrope_section_t
        h_mask = (t_end <= offs) & (offs < h_end)
        w_mask = (h_end <= offs) & (offs < half_rd)
    cos_row = (tl.load(t_cos + offs, mask=t_mask, other=0) + tl.load(h_cos + offs, mask=h_mask, other=0)
               + tl.load(w_cos + offs, mask=w_mask, other=0))
    sin_row = (tl.load(t_sin + offs, mask=t_mask, other=0) + tl.load(h_sin + offs, mask=h_mask, other=0)
               + tl.load(w_sin + offs, mask=w_mask, other=0))

    q_first = tl.arange(0, pad_n_qh)[:, None] * hd + offs[None, :]
    k_first = tl.arange(0, pad_n_kh)[:, None] * hd + offs[None, :]
    q_mask = (tl.arange(0, pad_n_qh)[:, None] < n_qh) & in_rot[None, :]
    k_mask = (tl.arange(0, pad_n_kh)[:, None] < n_kh) & in_rot[None, :]
    q1 = tl.load(q_ptr + q_first, mask=q_mask, other=0).to(sin_row.dtype)
    k1 = tl.load(k_ptr + k_first, mask=k_mask, other=0).to(sin_row.dtype)
    q2 = tl.load(q_ptr + q_first + half_rd, mask=q_mask, other=0).to(sin_row.dtype)
    k2 = tl.load(k_ptr + k_first + half_rd, mask=k_mask, other=0).to(sin_row.dtype)

    tl.store(q_ptr + q_first, q1 * cos_row - q2 * sin_row, mask=q_mask)
    tl.store(q_ptr + q_first + half_rd, q2 * cos_row + q1 * sin_row, mask=q_mask)
    tl.store(k_ptr + k_first, k1 * cos_row - k2 * sin_row, mask=k_mask)
    tl.store(k_ptr + k_first + half_rd, k2 * cos_row + k1 * sin_row, mask=k_mask)
