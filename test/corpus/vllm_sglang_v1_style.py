# Kernels written in the idioms of vLLM's v1 engine (the segmented "3d"
# unified attention over a query-start-loc table and block tables, the
# model-runner-v2 sampling kernels: Gumbel block argmax, top-k logprobs with
# ranks, penalties and temperature over a packed prompt bitmask, slot
# mapping), the Mamba causal-conv1d kernels (varlen prefill and the decode
# update with a pad slot), MLA paged decode and the MLA cache write with an
# fp8 option, and a w8a8 int8 fused MoE with tl.range, plus SGLang's small
# helpers (moe sum reduce, fused softcap, extend positions, req_to_token
# writes, FlashMLA page indices). Written fresh for tk's corpus: names,
# structure and comments are our own; only the calling conventions follow.
import triton
import triton.language as tl

PAD_SLOT = -1


@triton.jit
def _v1_tanh(x):
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


# ---- vLLM v1: segmented unified attention ---------------------------------------------------


@triton.jit
def _v1_locate_seq(qsl_ptr, q_block_idx, num_seqs, BLOCK_Q: tl.constexpr):
    # the last seq whose (start // BLOCK_Q + seq) is <= the global q-block index
    lo = 0
    hi = num_seqs
    while lo < hi:
        mid = (lo + hi) // 2
        first_block = tl.load(qsl_ptr + mid) // BLOCK_Q + mid
        if first_block <= q_block_idx:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@triton.jit
def _v1_unified_attn_segments(
    segm_out_ptr,  # [tokens, q_heads, NUM_SEGMENTS, HEAD_PAD] fp32
    segm_max_ptr,  # [tokens, q_heads, NUM_SEGMENTS]
    segm_sum_ptr,  # [tokens, q_heads, NUM_SEGMENTS]
    q_ptr,  # [tokens, q_heads, head_size]
    k_cache_ptr,  # [blocks, block_size, kv_heads, head_size]
    v_cache_ptr,
    sinks_ptr,  # [q_heads] or None
    block_tables_ptr,  # [seqs, max_blocks] int32
    seq_lens_ptr,
    qsl_ptr,  # query start locations, [seqs + 1]
    k_scale_ptr,
    v_scale_ptr,
    scale,
    num_seqs,
    block_table_stride: tl.int64,
    q_stride_0: tl.int64,
    q_stride_1: tl.int64,
    kc_stride_0: tl.int64,
    kc_stride_1: tl.int64,
    kc_stride_2: tl.int64,
    vc_stride_0: tl.int64,
    vc_stride_1: tl.int64,
    vc_stride_2: tl.int64,
    NUM_Q_HEADS: tl.constexpr,
    NUM_KV_HEADS: tl.constexpr,
    HEAD_SIZE: tl.constexpr,
    HEAD_PAD: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    TILE: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    BLOCK_M: tl.constexpr,
    NUM_SEGMENTS: tl.constexpr,
    USE_SINKS: tl.constexpr,
    KV_FP8: tl.constexpr,
):
    q_block_idx = tl.program_id(0)
    kv_head = tl.program_id(1)
    segment = tl.program_id(2)
    GROUP: tl.constexpr = NUM_Q_HEADS // NUM_KV_HEADS

    seq = _v1_locate_seq(qsl_ptr, q_block_idx, num_seqs, BLOCK_Q)
    q_start = tl.load(qsl_ptr + seq)
    q_len = tl.load(qsl_ptr + seq + 1) - q_start
    local_block = q_block_idx - (q_start // BLOCK_Q + seq)
    if local_block * BLOCK_Q >= q_len:
        return
    seq_len = tl.load(seq_lens_ptr + seq)
    ctx_len = seq_len - q_len
    tiles_per_seg = tl.cdiv(seq_len, NUM_SEGMENTS * TILE)
    if segment * tiles_per_seg * TILE >= seq_len:
        return

    rows = tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_PAD)
    dim_ok = dims < HEAD_SIZE
    q_pos = local_block * BLOCK_Q + rows // GROUP
    q_head = kv_head * GROUP + rows % GROUP
    row_ok = q_pos < q_len
    tok = q_start + q_pos
    q = tl.load(q_ptr + tok[:, None].to(tl.int64) * q_stride_0 + q_head[:, None] * q_stride_1 + dims[None, :],
                mask=row_ok[:, None] & dim_ok[None, :], other=0.0)

    if USE_SINKS:
        if segment == 0:
            m_i = tl.load(sinks_ptr + q_head, mask=row_ok, other=float("-inf")).to(tl.float32)
        else:
            m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    else:
        m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.where(m_i > float("-inf"), 1.0, 0.0)
    acc = tl.zeros([BLOCK_M, HEAD_PAD], dtype=tl.float32)

    # keys a query of this block may see end at ctx_len + its position
    causal_end = ctx_len + tl.minimum((local_block + 1) * BLOCK_Q, q_len)
    t_lo = segment * tiles_per_seg
    t_hi = tl.minimum((segment + 1) * tiles_per_seg, tl.cdiv(causal_end, TILE))
    offs_t = tl.arange(0, TILE)
    bt_row = block_tables_ptr + seq.to(tl.int64) * block_table_stride
    for t in tl.range(t_lo, t_hi):
        kv_pos = t * TILE + offs_t
        kv_ok = kv_pos < seq_len
        phys = tl.load(bt_row + kv_pos // BLOCK_SIZE, mask=kv_ok, other=0).to(tl.int64)
        slot = kv_pos % BLOCK_SIZE
        k_off = phys[None, :] * kc_stride_0 + slot[None, :] * kc_stride_1 + kv_head * kc_stride_2 + dims[:, None]
        v_off = phys[:, None] * vc_stride_0 + slot[:, None] * vc_stride_1 + kv_head * vc_stride_2 + dims[None, :]
        k_raw = tl.load(k_cache_ptr + k_off, mask=dim_ok[:, None] & kv_ok[None, :], other=0)
        v_raw = tl.load(v_cache_ptr + v_off, mask=kv_ok[:, None] & dim_ok[None, :], other=0)
        if KV_FP8:
            k_t = (k_raw.to(tl.float8e4nv, bitcast=True).to(tl.float32) * tl.load(k_scale_ptr)).to(q.dtype)
            v_t = (v_raw.to(tl.float8e4nv, bitcast=True).to(tl.float32) * tl.load(v_scale_ptr)).to(q.dtype)
        else:
            k_t = k_raw
            v_t = v_raw
        s = scale * tl.dot(q, k_t)
        visible = (kv_pos[None, :] <= (ctx_len + q_pos)[:, None]) & row_ok[:, None] & kv_ok[None, :]
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_new = tl.where(m_new > float("-inf"), m_new, 0.0)
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v_t.dtype), v_t)
        m_i = m_new

    base = (tok.to(tl.int64) * NUM_Q_HEADS + q_head) * NUM_SEGMENTS + segment
    tl.store(segm_out_ptr + base[:, None] * HEAD_PAD + dims[None, :], acc, mask=row_ok[:, None] & dim_ok[None, :])
    tl.store(segm_max_ptr + base, m_i, mask=row_ok)
    tl.store(segm_sum_ptr + base, l_i, mask=row_ok)


# ---- vLLM v1 model runner: sampling helpers --------------------------------------------------


@triton.jit
def _v1_gumbel_block_argmax(
    local_idx_ptr, local_idx_stride,
    local_max_ptr, local_max_stride,
    logits_ptr, logits_stride,
    seeds_ptr, pos_ptr, temp_ptr,
    vocab_size,
    BLOCK_SIZE: tl.constexpr,
    APPLY_TEMPERATURE: tl.constexpr,
):
    req = tl.program_id(0)
    blk = tl.program_id(1)
    cols = blk * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_vocab = cols < vocab_size
    x = tl.load(logits_ptr + req * logits_stride + cols, mask=in_vocab, other=float("-inf")).to(tl.float32)
    temp = tl.load(temp_ptr + req).to(tl.float32)
    if temp != 0.0:
        # a per-step key from (seed, position), then noise per vocab entry
        key = tl.randint(tl.load(seeds_ptr + req), tl.load(pos_ptr + req))
        u = tl.rand(key, cols).to(tl.float64)
        noise = (-tl.log(-tl.log(u + 1e-20) + 1e-20)).to(tl.float32)
        if APPLY_TEMPERATURE:
            x = x / temp
        x = tl.where(in_vocab, x + noise, float("-inf"))
    best = tl.argmax(x, axis=0)
    tl.store(local_idx_ptr + req * local_idx_stride + blk, (blk * BLOCK_SIZE + best).to(tl.int64))
    tl.store(local_max_ptr + req * local_max_stride + blk, tl.max(x, axis=0))


@triton.jit
def _v1_topk_logprobs_and_rank(
    out_logprobs_ptr,  # [reqs, NUM_IDS]
    out_rank_ptr,  # [reqs]
    logits_ptr,
    logits_stride,
    ids_ptr,  # [reqs, NUM_IDS] int64, column 0 is the sampled token
    ids_stride,
    vocab_size,
    NUM_IDS: tl.constexpr,
    NUM_IDS_PAD: tl.constexpr,
    BLOCK: tl.constexpr,
):
    req = tl.program_id(0)
    row = logits_ptr + req.to(tl.int64) * logits_stride
    which = tl.arange(0, NUM_IDS_PAD)
    ids = tl.load(ids_ptr + req * ids_stride + which, mask=which < NUM_IDS, other=0)
    picked = tl.load(row + ids, mask=which < NUM_IDS, other=0.0).to(tl.float32)
    sampled = tl.load(row + tl.load(ids_ptr + req * ids_stride)).to(tl.float32)

    run_max = float("-inf")
    run_sum = 0.0
    n_above = 0
    for start in tl.range(0, vocab_size, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(row + cols, mask=cols < vocab_size, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(run_max, tl.max(x, axis=0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(x - new_max), axis=0)
        run_max = new_max
        n_above += tl.sum((x > sampled).to(tl.int32), axis=0)
    lse = run_max + tl.log(run_sum)
    tl.store(out_logprobs_ptr + req * NUM_IDS + which, picked - lse, mask=which < NUM_IDS)
    tl.store(out_rank_ptr + req, n_above + 1)


@triton.jit
def _v1_penalties_and_temperature(
    logits_ptr,
    logits_stride,
    rep_ptr,
    freq_ptr,
    pres_ptr,
    temp_ptr,
    out_counts_ptr,  # [reqs, vocab] int32 counts of generated tokens
    counts_stride,
    prompt_bits_ptr,  # [reqs, cdiv(vocab, 32)] int32, bit v%32 of word v//32
    bits_stride,
    vocab_size,
    BLOCK_SIZE: tl.constexpr,
):
    req = tl.program_id(0)
    blk = tl.program_id(1)
    cols = blk * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    ok = cols < vocab_size
    ptrs = logits_ptr + req * logits_stride + cols
    x = tl.load(ptrs, mask=ok, other=0.0).to(tl.float32)
    rep = tl.load(rep_ptr + req)
    freq = tl.load(freq_ptr + req)
    pres = tl.load(pres_ptr + req)
    counts = tl.load(out_counts_ptr + req * counts_stride + cols, mask=ok, other=0)
    if rep != 1.0:
        word = tl.load(prompt_bits_ptr + req * bits_stride + cols // 32, mask=ok, other=0)
        in_prompt = ((word >> (cols % 32)) & 1) != 0
        seen = in_prompt | (counts > 0)
        factor = tl.where(seen, rep, 1.0)
        x = tl.where(x > 0, x / factor, x * factor)
    x -= freq * counts
    x -= pres * (counts > 0).to(tl.float32)
    temp = tl.load(temp_ptr + req)
    if temp != 0.0:
        x = x / temp
    tl.store(ptrs, x.to(logits_ptr.dtype.element_ty), mask=ok)


@triton.jit
def _v1_slot_mapping(
    slot_ptr,  # [max_tokens] int64
    positions_ptr,  # [tokens] int64
    qsl_ptr,
    block_table_ptr,
    block_table_stride,
    num_tokens,
    max_num_tokens,
    BLOCK_SIZE_KV: tl.constexpr,
    PAD_ID: tl.constexpr,
    TILE: tl.constexpr,
):
    req = tl.program_id(0)
    if req == tl.num_programs(0) - 1:
        # the last program pads the tail for a CUDA-graph-sized batch
        for i in tl.range(num_tokens, max_num_tokens, TILE):
            offs = i + tl.arange(0, TILE)
            tl.store(slot_ptr + offs, PAD_ID, mask=offs < max_num_tokens)
        return
    start = tl.load(qsl_ptr + req)
    end = tl.load(qsl_ptr + req + 1)
    row = block_table_ptr + req * block_table_stride
    for i in tl.range(start, end, TILE):
        offs = i + tl.arange(0, TILE)
        ok = offs < end
        pos = tl.load(positions_ptr + offs, mask=ok, other=0)
        blk = tl.load(row + pos // BLOCK_SIZE_KV, mask=ok, other=0).to(tl.int64)
        tl.store(slot_ptr + offs, blk * BLOCK_SIZE_KV + pos % BLOCK_SIZE_KV, mask=ok)


# ---- vLLM Mamba: causal conv1d -------------------------------------------------------------


@triton.jit()
def _v1_conv1d_varlen_fwd(
    x_ptr,  # [dim, total_tokens]
    w_ptr,  # [dim, width]
    bias_ptr,
    conv_states_ptr,  # [lines, dim, width - 1], read as the initial state, then overwritten
    cache_indices_ptr,
    has_init_ptr,
    qsl_ptr,
    o_ptr,  # [dim, total_tokens]
    dim: tl.constexpr,
    total_tokens: tl.int32,
    stride_x_dim: tl.constexpr,
    stride_x_token: tl.constexpr,
    stride_w_dim: tl.constexpr,
    stride_w_width: tl.constexpr,
    stride_st_seq: tl.constexpr,
    stride_st_dim: tl.constexpr,
    stride_st_tok: tl.constexpr,
    pad_slot_id: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    KERNEL_WIDTH: tl.constexpr,
    SILU_ACTIVATION: tl.constexpr,
    NP2_STATELEN: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    seq = tl.program_id(0)
    ch = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ch_ok = ch < dim
    line = tl.load(cache_indices_ptr + seq).to(tl.int64)
    if line == pad_slot_id:
        return
    start = tl.load(qsl_ptr + seq)
    seqlen = tl.load(qsl_ptr + seq + 1) - start
    use_init = tl.load(has_init_ptr + seq) != 0
    STATE_LEN: tl.constexpr = KERNEL_WIDTH - 1
    x_base = x_ptr + start.to(tl.int64) * stride_x_token + ch[:, None] * stride_x_dim
    st_base = conv_states_ptr + line * stride_st_seq + ch[:, None] * stride_st_dim
    if HAS_BIAS:
        b = tl.load(bias_ptr + ch, mask=ch_ok, other=0.0).to(tl.float32)
    else:
        b = tl.zeros([BLOCK_N], dtype=tl.float32)

    for m0 in tl.range(0, seqlen, BLOCK_M):
        t = m0 + tl.arange(0, BLOCK_M)
        acc = tl.zeros([BLOCK_N, BLOCK_M], dtype=tl.float32) + b[:, None]
        for k in tl.static_range(KERNEL_WIDTH):
            src = t - (STATE_LEN - k)
            from_x = (src >= 0) & (src < seqlen) & (start + src < total_tokens)
            xv = tl.load(x_base + src[None, :] * stride_x_token, mask=ch_ok[:, None] & from_x[None, :], other=0.0)
            from_st = (src < 0) & use_init
            sv = tl.load(st_base + (STATE_LEN + src)[None, :] * stride_st_tok,
                         mask=ch_ok[:, None] & from_st[None, :], other=0.0)
            wk = tl.load(w_ptr + ch * stride_w_dim + k * stride_w_width, mask=ch_ok, other=0.0).to(tl.float32)
            acc += wk[:, None] * (xv.to(tl.float32) + sv.to(tl.float32))
        if SILU_ACTIVATION:
            acc = acc / (1.0 + tl.exp(-acc))
        t_ok = t < seqlen
        tl.store(o_ptr + (start + t)[None, :].to(tl.int64) * stride_x_token + ch[:, None] * stride_x_dim,
                 acc.to(o_ptr.dtype.element_ty), mask=ch_ok[:, None] & t_ok[None, :])

    # the last STATE_LEN inputs become the new state (older ones from the old state)
    j = tl.arange(0, NP2_STATELEN)
    src = seqlen - STATE_LEN + j
    j_ok = j < STATE_LEN
    xv = tl.load(x_base + src[None, :] * stride_x_token, mask=ch_ok[:, None] & (j_ok & (src >= 0))[None, :], other=0.0)
    sv = tl.load(st_base + (STATE_LEN + src)[None, :] * stride_st_tok,
                 mask=ch_ok[:, None] & (j_ok & (src < 0) & use_init)[None, :], other=0.0)
    tl.debug_barrier()
    tl.store(st_base + j[None, :] * stride_st_tok, (xv + sv).to(conv_states_ptr.dtype.element_ty),
             mask=ch_ok[:, None] & j_ok[None, :])


@triton.jit()
def _v1_conv1d_update(
    x_ptr,  # [batch, dim, seqlen]
    w_ptr,
    bias_ptr,
    conv_state_ptr,  # [lines, dim, KERNEL_WIDTH - 1]
    state_indices_ptr,
    o_ptr,
    batch: int,
    dim: tl.constexpr,
    seqlen: tl.constexpr,
    stride_x_seq: tl.constexpr,
    stride_x_dim: tl.constexpr,
    stride_x_token: tl.constexpr,
    stride_w_dim: tl.constexpr,
    stride_w_width: tl.constexpr,
    stride_st_seq: tl.constexpr,
    stride_st_dim: tl.constexpr,
    stride_st_tok: tl.constexpr,
    pad_slot_id: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    KERNEL_WIDTH: tl.constexpr,
    SILU_ACTIVATION: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    b_idx = tl.program_id(0)
    if b_idx >= batch:
        return
    ch = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ok = ch < dim
    line = tl.load(state_indices_ptr + b_idx).to(tl.int64)
    if line == pad_slot_id:
        return
    st = conv_state_ptr + line * stride_st_seq + ch * stride_st_dim
    col0 = tl.load(st, mask=ok, other=0.0).to(tl.float32)
    if KERNEL_WIDTH >= 3:
        col1 = tl.load(st + stride_st_tok, mask=ok, other=0.0).to(tl.float32)
    if KERNEL_WIDTH >= 4:
        col2 = tl.load(st + 2 * stride_st_tok, mask=ok, other=0.0).to(tl.float32)
    w0 = tl.load(w_ptr + ch * stride_w_dim, mask=ok, other=0.0).to(tl.float32)
    w1 = tl.load(w_ptr + ch * stride_w_dim + stride_w_width, mask=ok, other=0.0).to(tl.float32)
    if KERNEL_WIDTH >= 3:
        w2 = tl.load(w_ptr + ch * stride_w_dim + 2 * stride_w_width, mask=ok, other=0.0).to(tl.float32)
    if KERNEL_WIDTH >= 4:
        w3 = tl.load(w_ptr + ch * stride_w_dim + 3 * stride_w_width, mask=ok, other=0.0).to(tl.float32)
    if HAS_BIAS:
        bias = tl.load(bias_ptr + ch, mask=ok, other=0.0).to(tl.float32)
    else:
        bias = tl.zeros([BLOCK_N], dtype=tl.float32)
    x_row = x_ptr + b_idx * stride_x_seq + ch * stride_x_dim
    o_row = o_ptr + b_idx * stride_x_seq + ch * stride_x_dim
    for t in tl.static_range(seqlen):
        xt = tl.load(x_row + t * stride_x_token, mask=ok, other=0.0).to(tl.float32)
        if KERNEL_WIDTH == 2:
            acc = bias + col0 * w0 + xt * w1
            col0 = xt
        elif KERNEL_WIDTH == 3:
            acc = bias + col0 * w0 + col1 * w1 + xt * w2
            col0 = col1
            col1 = xt
        else:
            acc = bias + col0 * w0 + col1 * w1 + col2 * w2 + xt * w3
            col0 = col1
            col1 = col2
            col2 = xt
        if SILU_ACTIVATION:
            acc = acc * tl.sigmoid(acc)
        tl.store(o_row + t * stride_x_token, acc.to(o_ptr.dtype.element_ty), mask=ok)
    out_ty = conv_state_ptr.dtype.element_ty
    tl.store(st, col0.to(out_ty), mask=ok)
    if KERNEL_WIDTH >= 3:
        tl.store(st + stride_st_tok, col1.to(out_ty), mask=ok)
    if KERNEL_WIDTH >= 4:
        tl.store(st + 2 * stride_st_tok, col2.to(out_ty), mask=ok)


# ---- MLA: paged grouped decode and the cache write ---------------------------------------------


@triton.jit
def _v1_mla_decode_grouped(
    q_ptr,  # [batch, heads, LK]
    kv_buffer_ptr,  # [slots, 1, LK]: latent (first LV) then rope part
    sm_scale,
    page_table_ptr,  # [batch, max_pages]
    seq_lens_ptr,
    att_out_ptr,  # [batch, heads, NUM_KV_SPLITS, LV + 1]
    stride_req_page,
    stride_qb,
    stride_qh,
    stride_buf_kbs,
    stride_mid_ob,
    stride_mid_oh,
    stride_mid_os,
    q_head_num: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_DPE: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_H: tl.constexpr,
    NUM_KV_SPLITS: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    logit_cap: tl.constexpr,
    LK: tl.constexpr,
    LV: tl.constexpr,
):
    b = tl.program_id(0)
    head_blk = tl.program_id(1)
    split = tl.program_id(2)
    heads = head_blk * BLOCK_H + tl.arange(0, BLOCK_H)
    h_ok = heads < q_head_num
    offs_d = tl.arange(0, BLOCK_DMODEL)
    d_ok = offs_d < LV
    offs_dv = tl.arange(0, BLOCK_DV)
    dv_ok = offs_dv < LV
    seq_len = tl.load(seq_lens_ptr + b)

    q_row = q_ptr + b * stride_qb + heads[:, None] * stride_qh
    q = tl.load(q_row + offs_d[None, :], mask=h_ok[:, None] & d_ok[None, :], other=0.0)
    if BLOCK_DPE > 0:
        offs_pe = LV + tl.arange(0, BLOCK_DPE)
        pe_ok = offs_pe < LK
        qpe = tl.load(q_row + offs_pe[None, :], mask=h_ok[:, None] & pe_ok[None, :], other=0.0)

    per_split = tl.cdiv(seq_len, NUM_KV_SPLITS)
    lo = split * per_split
    hi = tl.minimum(lo + per_split, seq_len)
    e_max = tl.full([BLOCK_H], float("-inf"), tl.float32)
    e_sum = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_DV], dtype=tl.float32)
    if hi > lo:
        for n0 in range(lo, hi, BLOCK_N):
            offs_n = n0 + tl.arange(0, BLOCK_N)
            n_ok = offs_n < hi
            page = tl.load(page_table_ptr + b * stride_req_page + offs_n // PAGE_SIZE, mask=n_ok, other=0)
            kv_loc = page * PAGE_SIZE + offs_n % PAGE_SIZE
            k = tl.load(kv_buffer_ptr + kv_loc[None, :] * stride_buf_kbs + offs_d[:, None],
                        mask=n_ok[None, :] & d_ok[:, None], other=0.0)
            qk = tl.dot(q, k.to(q.dtype))
            if BLOCK_DPE > 0:
                kpe = tl.load(kv_buffer_ptr + kv_loc[None, :] * stride_buf_kbs + offs_pe[:, None],
                              mask=n_ok[None, :] & pe_ok[:, None], other=0.0)
                qk += tl.dot(qpe, kpe.to(qpe.dtype))
            qk *= sm_scale
            if logit_cap > 0:
                qk = logit_cap * _v1_tanh(qk / logit_cap)
            qk = tl.where(h_ok[:, None] & n_ok[None, :], qk, float("-inf"))
            v = tl.load(kv_buffer_ptr + kv_loc[:, None] * stride_buf_kbs + offs_dv[None, :],
                        mask=n_ok[:, None] & dv_ok[None, :], other=0.0)
            n_max = tl.maximum(tl.max(qk, 1), e_max)
            rescale = tl.exp(e_max - n_max)
            p = tl.exp(qk - n_max[:, None])
            acc *= rescale[:, None]
            acc += tl.dot(p.to(v.dtype), v)
            e_sum = e_sum * rescale + tl.sum(p, 1)
            e_max = n_max
        mid = att_out_ptr + b * stride_mid_ob + heads * stride_mid_oh + split * stride_mid_os
        tl.store(mid[:, None] + offs_dv[None, :], acc / e_sum[:, None], mask=h_ok[:, None] & dv_ok[None, :])
        tl.store(mid + LV, e_max + tl.log(e_sum), mask=h_ok)


@triton.jit
def _v1_concat_and_cache_mla(
    kv_c_ptr,  # [tokens, LC]
    k_pe_ptr,  # [tokens, LR]
    cache_ptr,  # [blocks, block_size, LC + LR]
    slot_mapping_ptr,
    scale_ptr,
    kv_c_stride,
    k_pe_stride,
    block_stride,
    entry_stride,
    LC: tl.constexpr,
    LR: tl.constexpr,
    BLOCK_C: tl.constexpr,
    BLOCK_R: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    FP8_CACHE: tl.constexpr,
):
    tok = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_mapping_ptr + tok).to(tl.int64)
    if slot < 0:
        return
    dst = cache_ptr + (slot // BLOCK_SIZE) * block_stride + (slot % BLOCK_SIZE) * entry_stride
    oc = tl.arange(0, BLOCK_C)
    orr = tl.arange(0, BLOCK_R)
    c = tl.load(kv_c_ptr + tok * kv_c_stride + oc, mask=oc < LC, other=0.0)
    r = tl.load(k_pe_ptr + tok * k_pe_stride + orr, mask=orr < LR, other=0.0)
    if FP8_CACHE:
        inv = 1.0 / tl.load(scale_ptr)
        c = (c.to(tl.float32) * inv).to(tl.float8e4nv).to(tl.uint8, bitcast=True)
        r = (r.to(tl.float32) * inv).to(tl.float8e4nv).to(tl.uint8, bitcast=True)
    tl.store(dst + oc, c, mask=oc < LC)
    tl.store(dst + LC + orr, r, mask=orr < LR)


# ---- vLLM fused MoE, w8a8 (int8, or fp8 e4m3 as bytes) with per-token / per-channel scales ----


@triton.jit
def _v1_fused_moe_w8a8(
    a_ptr, b_ptr, c_ptr, bias_ptr, a_scale_ptr, b_scale_ptr, topk_weights_ptr,
    sorted_token_ids_ptr, expert_ids_ptr, num_tokens_post_padded_ptr,
    N, K, EM, num_valid_tokens,
    stride_am, stride_ak,
    stride_be, stride_bk, stride_bn,
    stride_cm, stride_cn,
    stride_bse, stride_bsn,
    stride_bias_e,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    MUL_ROUTED_WEIGHT: tl.constexpr,
    top_k: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    USE_INT8: tl.constexpr,
):
    compute_type = c_ptr.dtype.element_ty
    ACC_TYPE: tl.constexpr = tl.int32 if USE_INT8 else tl.float32
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(EM, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    per_group = GROUP_SIZE_M * num_pid_n
    first_m = (pid // per_group) * GROUP_SIZE_M
    gsize = min(num_pid_m - first_m, GROUP_SIZE_M)
    pid_m = first_m + ((pid % per_group) % gsize)
    pid_n = (pid % per_group) // gsize

    padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_SIZE_M >= padded:
        return
    offs_tid = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)).to(tl.int64)
    offs_token = tl.load(sorted_token_ids_ptr + offs_tid)
    token_mask = offs_token < num_valid_tokens
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + stride_cn * offs_cn[None, :]
    c_mask = token_mask[:, None] & (offs_cn[None, :] < N)
    expert = tl.load(expert_ids_ptr + pid_m).to(tl.int64)
    if expert == -1:
        # a block of another rank's expert: its rows are zero here
        tl.store(c_ptrs, tl.zeros([BLOCK_SIZE_M, BLOCK_SIZE_N], dtype=compute_type), mask=c_mask)
        return

    offs_bn = offs_cn % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_token[:, None] // top_k * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + expert * stride_be + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    a_scale = tl.load(a_scale_ptr + offs_token // top_k, mask=token_mask, other=0.0)
    b_scale = tl.load(b_scale_ptr + expert * stride_bse + offs_bn * stride_bsn)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=ACC_TYPE)
    for kb in tl.range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_left = K - kb * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < k_left), other=0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0)
        if not USE_INT8:
            a = a.to(tl.float8e4nv, bitcast=True)
            b = b.to(tl.float8e4nv, bitcast=True)
        acc = tl.dot(a, b, acc=acc, out_dtype=ACC_TYPE)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    out = acc.to(tl.float32) * a_scale[:, None] * b_scale[None, :]
    if HAS_BIAS:
        out = out + tl.load(bias_ptr + expert * stride_bias_e + offs_bn).to(tl.float32)[None, :]
    if MUL_ROUTED_WEIGHT:
        w = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0)
        out = out * w[:, None]
    tl.store(c_ptrs, out.to(compute_type), mask=c_mask)


# ---- SGLang helpers ---------------------------------------------------------------------------


@triton.jit
def _v1_moe_sum_reduce(
    in_ptr,  # [tokens, topk, hidden]
    in_stride_0,
    in_stride_1,
    in_stride_2,
    out_ptr,
    out_stride_0,
    out_stride_1,
    token_num: int,
    topk_num: int,
    hidden_dim: int,
    routed_scaling_factor: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_DIM: tl.constexpr,
    NUM_STAGE: tl.constexpr,
):
    in_stride_0 = tl.cast(in_stride_0, dtype=tl.int64)
    out_stride_0 = tl.cast(out_stride_0, dtype=tl.int64)
    tok0 = tl.program_id(0) * BLOCK_M
    d = tl.program_id(1) * BLOCK_DIM + tl.arange(0, BLOCK_DIM)
    d_ok = d < hidden_dim
    for tok in range(tok0, min(tok0 + BLOCK_M, token_num)):
        acc = tl.zeros((BLOCK_DIM,), dtype=tl.float32)
        src = in_ptr + tok * in_stride_0 + d * in_stride_2
        for e in tl.range(0, topk_num, num_stages=NUM_STAGE):
            acc += tl.load(src + e * in_stride_1, mask=d_ok, other=0.0)
        acc *= routed_scaling_factor
        tl.store(out_ptr + tok * out_stride_0 + d * out_stride_1, acc.to(in_ptr.dtype.element_ty), mask=d_ok)


@triton.jit
def _v1_fused_softcap(x_ptr, softcapping_value, n_elements, BLOCK_SIZE: tl.constexpr):
    start = tl.program_id(0) * BLOCK_SIZE
    step = tl.num_programs(0) * BLOCK_SIZE
    for off in tl.range(start, n_elements, step):
        offs = off + tl.arange(0, BLOCK_SIZE)
        ok = offs < n_elements
        x = tl.load(x_ptr + offs, mask=ok).to(tl.float32)
        y = x / softcapping_value
        e2 = tl.exp(2.0 * y)
        y = softcapping_value * (1.0 - 2.0 / (e2 + 1.0))
        tl.store(x_ptr + offs, y.to(x_ptr.dtype.element_ty), mask=ok)


@triton.jit
def _v1_compute_extend_positions(
    positions_ptr,
    extend_start_loc_ptr,
    extend_prefix_lens_ptr,
    extend_seq_lens_ptr,
    has_prefix: tl.constexpr,
):
    BLOCK: tl.constexpr = 64
    pid = tl.program_id(0).to(tl.int64)
    prefix = tl.load(extend_prefix_lens_ptr + pid) if has_prefix else 0
    n = tl.load(extend_seq_lens_ptr + pid)
    start = 0
    for i in range(pid):
        start += tl.load(extend_seq_lens_ptr + i)
    for blk in range(tl.cdiv(n, BLOCK)):
        offs = blk * BLOCK + tl.arange(0, BLOCK)
        tl.store(positions_ptr + start + offs, (prefix + offs).to(tl.int64), mask=offs < n)
    tl.store(extend_start_loc_ptr + pid, start)


@triton.jit
def _v1_write_req_to_token(
    req_to_token_ptr,  # [pool, max_context]
    req_pool_indices,
    pre_lens,
    seq_lens,
    extend_lens,
    out_cache_loc,
    req_to_token_stride: tl.constexpr,
):
    BLOCK: tl.constexpr = 32
    pid = tl.program_id(0)
    pool_idx = tl.load(req_pool_indices + pid)
    pre = tl.load(pre_lens + pid)
    end = tl.load(seq_lens + pid)
    # where this request's new locations start in out_cache_loc
    earlier = tl.arange(0, 64)
    before = tl.sum(tl.load(extend_lens + earlier, mask=earlier < pid, other=0))
    dst = req_to_token_ptr + pool_idx * req_to_token_stride
    for i in range(tl.cdiv(end - pre, BLOCK)):
        offs = i * BLOCK + tl.arange(0, BLOCK)
        ok = offs < end - pre
        loc = tl.load(out_cache_loc + before + offs, mask=ok)
        tl.store(dst + pre + offs, loc, mask=ok)


@triton.jit
def _v1_flashmla_page_indices(
    req_to_token_ptr,
    req_pool_indices_ptr,
    page_kernel_lens_ptr,
    kv_start_idx,
    kv_indices_ptr,  # [batch, max_pages]
    req_to_token_stride: tl.constexpr,
    kv_indices_stride: tl.constexpr,
    PAGED_SIZE: tl.constexpr = 64,
):
    BLOCK: tl.constexpr = 4096
    PER_BLOCK: tl.constexpr = BLOCK // PAGED_SIZE
    pid = tl.program_id(axis=0)
    pool_idx = tl.load(req_pool_indices_ptr + pid)
    kv_start = 0
    kv_end = 0
    if kv_start_idx:
        kv_start = tl.load(kv_start_idx + pid).to(tl.int32)
        kv_end = kv_start
    kv_end += tl.load(page_kernel_lens_ptr + pid).to(tl.int32)
    n_pages = tl.cdiv(kv_end - kv_start, PAGED_SIZE)
    for i in range(tl.cdiv(n_pages, PER_BLOCK)):
        pages = i * PER_BLOCK + tl.arange(0, PER_BLOCK)
        ok = pages < n_pages
        first_tok = tl.load(req_to_token_ptr + pool_idx * req_to_token_stride + kv_start + pages * PAGED_SIZE,
                            mask=ok)
        tl.store(kv_indices_ptr + pid * kv_indices_stride + pages, first_tok // PAGED_SIZE, mask=ok)
