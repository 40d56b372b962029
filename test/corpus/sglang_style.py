# Serving-engine kernels written in the manner of SGLang's Triton layers:
# MoE block alignment of routed tokens,
# per-token-group fp8 quantisation with row- or column-major scales, fused
# residual-add RMSNorm over a tile of rows, rotary embedding from a
# cos/sin cache indexed by positions (neox and interleaved, partial rotary),
# the LSE merge of two attention partials, the split-KV decode reduction
# with attention sinks, extend (prefill-with-prefix) attention over a paged
# KV pool with sliding windows, logit caps and custom masks, MLA KV-buffer
# writes at slot indices, top-k/top-p/min-p renormalisation of sorted
# probabilities, activation-and-mul fused with group fp8 quantisation and
# the gather of request-to-token tables into flat KV indices.
import triton
import triton.language as tl


# ---- MoE ------------------------------------------------------------------------------------


@triton.jit
def _sg_moe_align_block_size(
    topk_ids_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    num_tokens_post_pad_ptr,
    numel,
    NUM_EXPERTS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    NUMEL_P2: tl.constexpr,
    MAX_BLOCKS: tl.constexpr,
):
    # one program: counts per expert, padded to BLOCK_SIZE, their running
    # offsets, then every routed slot scattered to its expert's segment in
    # the order the slots come (the host filled sorted ids with numel)
    offs = tl.arange(0, NUMEL_P2)
    valid = offs < numel
    eid = tl.load(topk_ids_ptr + offs, mask=valid, other=0).to(tl.int32)
    counts = tl.histogram(eid, NUM_EXPERTS, mask=valid)
    padded = tl.cdiv(counts, BLOCK_SIZE) * BLOCK_SIZE
    ends = tl.cumsum(padded, axis=0)
    starts = ends - padded
    total = tl.sum(padded, axis=0)
    tl.store(num_tokens_post_pad_ptr, total)

    experts = tl.arange(0, NUM_EXPERTS)
    onehot = (eid[:, None] == experts[None, :]) & valid[:, None]
    base = tl.sum(tl.where(onehot, starts[None, :], 0), axis=1)
    before = (eid[:, None] == eid[None, :]) & (offs[None, :] < offs[:, None]) & valid[None, :]
    rank = tl.sum(before.to(tl.int32), axis=1)
    tl.store(sorted_token_ids_ptr + base + rank, offs, mask=valid)

    blocks = tl.arange(0, MAX_BLOCKS)
    owner = tl.sum((ends[None, :] <= blocks[:, None] * BLOCK_SIZE).to(tl.int32), axis=1)
    tl.store(expert_ids_ptr + blocks, owner, mask=blocks * BLOCK_SIZE < total)


# ---- quantisation ---------------------------------------------------------------------------


@triton.jit
def _sg_per_token_group_quant_fp8(
    y_ptr,
    y_q_ptr,
    y_s_ptr,
    group_size,
    groups_per_row,
    y_row_stride,
    y_s_col_stride,
    eps,
    fp8_min,
    fp8_max,
    BLOCK: tl.constexpr,
    SCALE_UE8M0: tl.constexpr,
    COLUMN_MAJOR_SCALES: tl.constexpr,
):
    g = tl.program_id(0)
    row = g // groups_per_row
    col_group = g % groups_per_row
    y_ptr += row.to(tl.int64) * y_row_stride + col_group * group_size
    y_q_ptr += g.to(tl.int64) * group_size

    cols = tl.arange(0, BLOCK)
    mask = cols < group_size
    y = tl.load(y_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(y)), eps)
    y_s = absmax / fp8_max
    if SCALE_UE8M0:
        y_s = tl.exp2(tl.ceil(tl.log2(y_s)))
    y_q = tl.clamp(y / y_s, fp8_min, fp8_max).to(tl.float8e4nv)
    # the fp8 tensor travels as bytes
    tl.store(y_q_ptr + cols, y_q.to(tl.uint8, bitcast=True), mask=mask)
    if COLUMN_MAJOR_SCALES:
        tl.store(y_s_ptr + col_group * y_s_col_stride + row, y_s)
    else:
        tl.store(y_s_ptr + g, y_s)


@triton.jit
def _sg_gelu_tanh(x):
    k: tl.constexpr = 0.7978845608028654
    inner = k * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))


@triton.jit
def _sg_act_and_mul_group_quant(
    x_ptr,
    q_ptr,
    s_ptr,
    d,
    stride_x,
    stride_q,
    stride_s,
    fp8_max,
    eps,
    ACT: tl.constexpr,
    GROUP: tl.constexpr,
    NUM_GROUPS: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, NUM_GROUPS * GROUP)
    gate = tl.load(x_ptr + row * stride_x + offs).to(tl.float32)
    up = tl.load(x_ptr + row * stride_x + d + offs).to(tl.float32)
    if ACT == "silu":
        act = gate * tl.sigmoid(gate)
    else:
        act = _sg_gelu_tanh(gate)
    y = tl.reshape(act * up, (NUM_GROUPS, GROUP))
    absmax = tl.maximum(tl.max(tl.abs(y), axis=1), eps)
    scale = absmax / fp8_max
    q = tl.clamp(y / scale[:, None], -fp8_max, fp8_max).to(tl.float8e4nv)
    q = tl.reshape(q, (NUM_GROUPS * GROUP,))
    tl.store(q_ptr + row * stride_q + offs, q.to(tl.uint8, bitcast=True))
    tl.store(s_ptr + row * stride_s + tl.arange(0, NUM_GROUPS), scale)


# ---- normalisation and rotary ---------------------------------------------------------------


@triton.jit
def _sg_fused_add_rmsnorm(
    x_ptr,
    residual_ptr,
    w_ptr,
    out_ptr,
    n_rows,
    hidden,
    stride_x,
    stride_r,
    stride_o,
    eps,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    GEMMA: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < hidden
    m = (rows < n_rows)[:, None] & cmask[None, :]
    rows = rows.to(tl.int64)
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=m, other=0.0).to(tl.float32)
    r_ptrs = residual_ptr + rows[:, None] * stride_r + cols[None, :]
    x += tl.load(r_ptrs, mask=m, other=0.0).to(tl.float32)
    # the sum goes back into the residual stream in place
    tl.store(r_ptrs, x.to(residual_ptr.dtype.element_ty), mask=m)
    var = tl.sum(x * x, axis=1) / hidden
    rstd = tl.rsqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    if GEMMA:
        w = w + 1.0
    y = x * rstd[:, None] * w[None, :]
    tl.store(out_ptr + rows[:, None] * stride_o + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=m)


@triton.jit
def _sg_rotate_heads(base, head_stride, off1, off2, dmask, cos, sin,
                     NUM_HEADS: tl.constexpr, BLOCK_H: tl.constexpr):
    for h0 in tl.static_range(0, NUM_HEADS, BLOCK_H):
        h = h0 + tl.arange(0, BLOCK_H)
        m = (h < NUM_HEADS)[:, None] & dmask[None, :]
        p1 = base + h[:, None] * head_stride + off1[None, :]
        p2 = base + h[:, None] * head_stride + off2[None, :]
        x1 = tl.load(p1, mask=m, other=0.0).to(tl.float32)
        x2 = tl.load(p2, mask=m, other=0.0).to(tl.float32)
        y1 = x1 * cos[None, :] - x2 * sin[None, :]
        y2 = x2 * cos[None, :] + x1 * sin[None, :]
        tl.store(p1, y1.to(base.dtype.element_ty), mask=m)
        tl.store(p2, y2.to(base.dtype.element_ty), mask=m)


@triton.jit
def _sg_rotary_qk_cache(
    positions_ptr,
    q_ptr,
    k_ptr,
    cos_sin_cache_ptr,
    q_token_stride,
    k_token_stride,
    head_size,
    cache_stride,
    NUM_Q_HEADS: tl.constexpr,
    NUM_KV_HEADS: tl.constexpr,
    HALF_ROT: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_H: tl.constexpr,
    IS_NEOX: tl.constexpr,
):
    t = tl.program_id(0)
    pos = tl.load(positions_ptr + t).to(tl.int64)
    d = tl.arange(0, BLOCK_D)
    dmask = d < HALF_ROT
    cache = cos_sin_cache_ptr + pos * cache_stride
    cos = tl.load(cache + d, mask=dmask, other=0.0).to(tl.float32)
    sin = tl.load(cache + HALF_ROT + d, mask=dmask, other=0.0).to(tl.float32)
    if IS_NEOX:
        off1 = d
        off2 = d + HALF_ROT
    else:
        off1 = 2 * d
        off2 = 2 * d + 1
    t64 = t.to(tl.int64)
    _sg_rotate_heads(q_ptr + t64 * q_token_stride, head_size, off1, off2, dmask, cos, sin,
                     NUM_Q_HEADS, BLOCK_H)
    _sg_rotate_heads(k_ptr + t64 * k_token_stride, head_size, off1, off2, dmask, cos, sin,
                     NUM_KV_HEADS, BLOCK_H)


# ---- attention ------------------------------------------------------------------------------


@triton.jit
def _sg_merge_attn_states(
    out_ptr,
    out_lse_ptr,
    prefix_out_ptr,
    prefix_lse_ptr,
    suffix_out_ptr,
    suffix_lse_ptr,
    HEAD_SIZE: tl.constexpr,
    PADDED_HEAD_SIZE: tl.constexpr,
    OUTPUT_LSE: tl.constexpr,
):
    tok = tl.program_id(0)
    n_tok = tl.num_programs(0)
    head = tl.program_id(1)
    n_heads = tl.num_programs(1)
    # lse is [heads, tokens]; +inf marks a partial with nothing in it
    p_lse = tl.load(prefix_lse_ptr + head * n_tok + tok)
    s_lse = tl.load(suffix_lse_ptr + head * n_tok + tok)
    p_lse = tl.where(p_lse == float("inf"), -float("inf"), p_lse)
    s_lse = tl.where(s_lse == float("inf"), -float("inf"), s_lse)
    m = tl.maximum(p_lse, s_lse)
    p_w = tl.exp(p_lse - m)
    s_w = tl.exp(s_lse - m)
    total = p_w + s_w
    if OUTPUT_LSE:
        tl.store(out_lse_ptr + head * n_tok + tok, tl.log(total) + m)
    offs = tl.arange(0, PADDED_HEAD_SIZE)
    dmask = offs < HEAD_SIZE
    base = (tok * n_heads + head).to(tl.int64) * HEAD_SIZE
    po = tl.load(prefix_out_ptr + base + offs, mask=dmask, other=0.0).to(tl.float32)
    so = tl.load(suffix_out_ptr + base + offs, mask=dmask, other=0.0).to(tl.float32)
    o = po * (p_w / total) + so * (s_w / total)
    tl.store(out_ptr + base + offs, o.to(out_ptr.dtype.element_ty), mask=dmask)


@triton.jit
def _sg_decode_softmax_reducev(
    mid_o_ptr,
    mid_lse_ptr,
    o_ptr,
    lse_ptr,
    kv_indptr_ptr,
    sinks_ptr,
    stride_mid_ob,
    stride_mid_oh,
    stride_mid_os,
    stride_lse_b,
    stride_lse_h,
    stride_ob,
    stride_oh,
    NUM_KV_SPLITS: tl.constexpr,
    MIN_BLOCK_KV: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    Lv: tl.constexpr,
    HAS_SINK: tl.constexpr,
):
    b = tl.program_id(0)
    h = tl.program_id(1)
    seq_len = tl.load(kv_indptr_ptr + b + 1) - tl.load(kv_indptr_ptr + b)
    offs_d = tl.arange(0, BLOCK_DV)
    mask_d = offs_d < Lv

    e_sum = 0.0
    e_max = -float("inf")
    acc = tl.zeros([BLOCK_DV], dtype=tl.float32)
    v_base = b * stride_mid_ob + h * stride_mid_oh
    l_base = b * stride_lse_b + h * stride_lse_h
    per_split = tl.cdiv(tl.cdiv(seq_len, NUM_KV_SPLITS), MIN_BLOCK_KV) * MIN_BLOCK_KV
    for split in range(NUM_KV_SPLITS):
        lo = per_split * split
        hi = tl.minimum(lo + per_split, seq_len)
        if hi > lo:
            tv = tl.load(mid_o_ptr + v_base + split * stride_mid_os + offs_d, mask=mask_d, other=0.0)
            tlogic = tl.load(mid_lse_ptr + l_base + split)
            n_max = tl.maximum(tlogic, e_max)
            old = tl.exp(e_max - n_max)
            acc *= old
            w = tl.exp(tlogic - n_max)
            acc += w * tv
            e_sum = e_sum * old + w
            e_max = n_max
    if HAS_SINK:
        e_sum += tl.exp(tl.load(sinks_ptr + h).to(tl.float32) - e_max)
    tl.store(o_ptr + b * stride_ob + h * stride_oh + offs_d,
             (acc / e_sum).to(o_ptr.dtype.element_ty), mask=mask_d)
    tl.store(lse_ptr + b * tl.num_programs(1) + h, e_max + tl.log(e_sum))


@triton.jit
def _sg_tanh(x):
    return 2 * tl.sigmoid(2 * x) - 1


@triton.jit
def _sg_extend_attention(
    Q_extend, K_extend, V_extend, O_extend, K_buffer, V_buffer,
    qo_indptr, kv_indptr, kv_indices, custom_mask, mask_indptr,
    sm_scale,
    stride_qbs, stride_qh, stride_kbs, stride_kh, stride_vbs, stride_vh,
    stride_obs, stride_oh, stride_buf_kbs, stride_buf_kh, stride_buf_vbs, stride_buf_vh,
    LOGIT_CAP: tl.constexpr,
    SLIDING_WINDOW: tl.constexpr,
    KV_GROUP: tl.constexpr,
    Lq: tl.constexpr,
    Lv: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    USE_CUSTOM_MASK: tl.constexpr,
):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    blk_m = tl.program_id(2)
    kv_head = head // KV_GROUP

    qo_start = tl.load(qo_indptr + seq)
    extend_len = tl.load(qo_indptr + seq + 1) - qo_start
    kv_start = tl.load(kv_indptr + seq)
    prefix_len = tl.load(kv_indptr + seq + 1) - kv_start
    total_len = prefix_len + extend_len
    if USE_CUSTOM_MASK:
        mask_start = tl.load(mask_indptr + seq).to(tl.int64)

    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_dv = tl.arange(0, BLOCK_DV)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    mask_d = offs_d < Lq
    mask_dv = offs_dv < Lv
    q_idx = blk_m * BLOCK_M + offs_m
    mask_m = q_idx < extend_len
    q_pos = prefix_len + q_idx

    q_rows = (qo_start + q_idx).to(tl.int64)
    q = tl.load(Q_extend + q_rows[:, None] * stride_qbs + head * stride_qh + offs_d[None, :],
                mask=mask_m[:, None] & mask_d[None, :], other=0.0)

    acc = tl.zeros([BLOCK_M, BLOCK_DV], dtype=tl.float32)
    deno = tl.zeros([BLOCK_M], dtype=tl.float32)
    e_max = tl.full([BLOCK_M], -1e20, dtype=tl.float32)

    # the cached prefix, through the page table
    for start_n in range(0, prefix_len, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        kv_idx = start_n + offs_n
        mask_n = kv_idx < prefix_len
        loc = tl.load(kv_indices + kv_start + kv_idx, mask=mask_n, other=0).to(tl.int64)
        k = tl.load(K_buffer + loc[None, :] * stride_buf_kbs + kv_head * stride_buf_kh + offs_d[:, None],
                    mask=mask_n[None, :] & mask_d[:, None], other=0.0)
        qk = tl.dot(q, k) * sm_scale
        if LOGIT_CAP > 0:
            qk = LOGIT_CAP * _sg_tanh(qk / LOGIT_CAP)
        keep = mask_m[:, None] & mask_n[None, :]
        if USE_CUSTOM_MASK:
            cm = tl.load(custom_mask + mask_start + q_idx[:, None] * total_len + kv_idx[None, :],
                         mask=keep, other=0)
            keep &= cm != 0
        if SLIDING_WINDOW > 0:
            keep &= q_pos[:, None] <= kv_idx[None, :] + SLIDING_WINDOW
        qk = tl.where(keep, qk, float("-inf"))
        n_max = tl.maximum(tl.max(qk, 1), e_max)
        rescale = tl.exp(e_max - n_max)
        p = tl.exp(qk - n_max[:, None])
        deno = deno * rescale + tl.sum(p, 1)
        v = tl.load(V_buffer + loc[:, None] * stride_buf_vbs + kv_head * stride_buf_vh + offs_dv[None, :],
                    mask=mask_n[:, None] & mask_dv[None, :], other=0.0)
        acc = acc * rescale[:, None] + tl.dot(p.to(v.dtype), v)
        e_max = n_max

    # the new tokens, causal unless a custom mask says otherwise
    if USE_CUSTOM_MASK:
        end_n = extend_len
    else:
        end_n = tl.minimum((blk_m + 1) * BLOCK_M, extend_len)
    for start_n in range(0, end_n, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        kv_idx = start_n + offs_n
        mask_n = kv_idx < end_n
        rows_n = (qo_start + kv_idx).to(tl.int64)
        k = tl.load(K_extend + rows_n[None, :] * stride_kbs + kv_head * stride_kh + offs_d[:, None],
                    mask=mask_n[None, :] & mask_d[:, None], other=0.0)
        qk = tl.dot(q, k) * sm_scale
        if LOGIT_CAP > 0:
            qk = LOGIT_CAP * _sg_tanh(qk / LOGIT_CAP)
        keep = mask_m[:, None] & mask_n[None, :]
        if USE_CUSTOM_MASK:
            cm = tl.load(custom_mask + mask_start + q_idx[:, None] * total_len + prefix_len + kv_idx[None, :],
                         mask=keep, other=0)
            keep &= cm != 0
        else:
            keep &= q_idx[:, None] >= kv_idx[None, :]
        if SLIDING_WINDOW > 0:
            keep &= q_pos[:, None] <= prefix_len + kv_idx[None, :] + SLIDING_WINDOW
        qk = tl.where(keep, qk, float("-inf"))
        n_max = tl.maximum(tl.max(qk, 1), e_max)
        rescale = tl.exp(e_max - n_max)
        p = tl.exp(qk - n_max[:, None])
        deno = deno * rescale + tl.sum(p, 1)
        v = tl.load(V_extend + rows_n[:, None] * stride_vbs + kv_head * stride_vh + offs_dv[None, :],
                    mask=mask_n[:, None] & mask_dv[None, :], other=0.0)
        acc = acc * rescale[:, None] + tl.dot(p.to(v.dtype), v)
        e_max = n_max

    o = acc / deno[:, None]
    tl.store(O_extend + q_rows[:, None] * stride_obs + head * stride_oh + offs_dv[None, :],
             o.to(O_extend.dtype.element_ty), mask=mask_m[:, None] & mask_dv[None, :])


# ---- KV cache -------------------------------------------------------------------------------


@triton.jit
def _sg_set_mla_kv_buffer(
    kv_buffer_ptr,
    k_nope_ptr,
    k_rope_ptr,
    loc_ptr,
    buffer_stride,
    nope_stride,
    rope_stride,
    NOPE_DIM: tl.constexpr,
    ROPE_DIM: tl.constexpr,
    BLOCK: tl.constexpr,
):
    t = tl.program_id(0)
    blk = tl.program_id(1)
    offs = blk * BLOCK + tl.arange(0, BLOCK)
    loc = tl.load(loc_ptr + t)
    dst = kv_buffer_ptr + loc * buffer_stride + offs
    t64 = t.to(tl.int64)
    if blk * BLOCK < NOPE_DIM:
        src = tl.load(k_nope_ptr + t64 * nope_stride + offs, mask=offs < NOPE_DIM)
        tl.store(dst, src, mask=offs < NOPE_DIM)
    else:
        r = offs - NOPE_DIM
        src = tl.load(k_rope_ptr + t64 * rope_stride + r, mask=r < ROPE_DIM)
        tl.store(dst, src, mask=r < ROPE_DIM)


@triton.jit
def _sg_create_flat_kv_indices(
    req_to_token_ptr,
    req_pool_indices_ptr,
    seq_lens_ptr,
    kv_indptr_ptr,
    kv_start_idx_ptr,
    kv_indices_ptr,
    req_to_token_stride,
    BLOCK: tl.constexpr,
    HAS_START: tl.constexpr,
):
    pid = tl.program_id(0)
    req = tl.load(req_pool_indices_ptr + pid)
    out_off = tl.load(kv_indptr_ptr + pid)
    start = 0
    if HAS_START:
        start = tl.load(kv_start_idx_ptr + pid).to(tl.int32)
    n = tl.load(seq_lens_ptr + pid)
    for i in range(tl.cdiv(n, BLOCK)):
        offs = tl.arange(0, BLOCK).to(tl.int64) + i * BLOCK
        mask = offs < n
        v = tl.load(req_to_token_ptr + req * req_to_token_stride + start + offs, mask=mask)
        tl.store(kv_indices_ptr + out_off + offs, v, mask=mask)


# ---- sampling -------------------------------------------------------------------------------


@triton.jit
def _sg_top_k_top_p_min_p_renorm(
    probs_sort_ptr,
    probs_idx_ptr,
    out_ptr,
    top_ks_ptr,
    top_ps_ptr,
    min_ps_ptr,
    vocab,
    stride,
    BLOCK_V: tl.constexpr,
    NEED_MIN_P: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_V)
    mask = offs < vocab
    p = tl.load(probs_sort_ptr + row * stride + offs, mask=mask, other=0.0)
    idx = tl.load(probs_idx_ptr + row * stride + offs, mask=mask, other=0)
    top_k = tl.load(top_ks_ptr + row)
    top_p = tl.load(top_ps_ptr + row)
    csum = tl.cumsum(p, axis=0)
    keep = mask & (offs < top_k) & ((csum - p) <= top_p)
    if NEED_MIN_P:
        min_p = tl.load(min_ps_ptr + row)
        keep = keep & (p >= tl.max(p, axis=0) * min_p)
    kept = tl.where(keep, p, 0.0)
    tl.store(out_ptr + row * stride + idx, kept / tl.sum(kept, axis=0), mask=mask)


# ---- more: fused MoE GEMM with block fp8 scales, split/join rotary, int8 ---------------------
# quantisation through libdevice, grouped decode attention stage 1


@triton.jit
def _sg_fused_moe_fp8_block(
    a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, topk_weights_ptr,
    sorted_token_ids_ptr, expert_ids_ptr, num_tokens_post_padded_ptr,
    N, K, EM, num_valid_tokens,
    stride_am, stride_ak, stride_be, stride_bk, stride_bn, stride_cm, stride_cn,
    stride_asm, stride_ask, stride_bse, stride_bsk, stride_bsn,
    group_n: tl.constexpr,
    group_k: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    MUL_ROUTED_WEIGHT: tl.constexpr,
    top_k: tl.constexpr,
):
    compute_type: tl.constexpr = c_ptr.dtype.element_ty
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(EM, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded:
        return
    offs_token_id = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id).to(tl.int64)
    token_mask = offs_token < num_valid_tokens
    off_experts = tl.load(expert_ids_ptr + pid_m).to(tl.int64)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + stride_cn * offs_cn[None, :]
    c_mask = token_mask[:, None] & (offs_cn[None, :] < N)
    if off_experts == -1:
        # an expert that lives on another rank: its rows are zero here
        tl.store(c_ptrs, tl.zeros([BLOCK_SIZE_M, BLOCK_SIZE_N], dtype=compute_type), mask=c_mask)
        return

    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_token[:, None] // top_k * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + off_experts * stride_be + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    a_scale_ptrs = a_scale_ptr + (offs_token // top_k) * stride_asm
    b_scale_ptrs = b_scale_ptr + off_experts * stride_bse + (offs_bn // group_n) * stride_bsn

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_left = K - k * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < k_left), other=0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0)
        a = a.to(tl.float8e4nv, bitcast=True)
        b = b.to(tl.float8e4nv, bitcast=True)
        ks = (k * BLOCK_SIZE_K) // group_k
        a_scale = tl.load(a_scale_ptrs + ks * stride_ask, mask=token_mask, other=0.0)
        b_scale = tl.load(b_scale_ptrs + ks * stride_bsk)
        acc += tl.dot(a, b) * a_scale[:, None] * b_scale[None, :]
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if MUL_ROUTED_WEIGHT:
        w = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0)
        acc = acc * w[:, None]
    tl.store(c_ptrs, acc.to(compute_type), mask=c_mask)


@triton.jit
def _sg_rope_gptj_split_join(x_ptr, positions_ptr, cache_ptr, stride_t, stride_h, cache_stride,
                             NUM_HEADS: tl.constexpr, HEAD: tl.constexpr):
    t = tl.program_id(0)
    pos = tl.load(positions_ptr + t).to(tl.int64)
    h = tl.arange(0, NUM_HEADS)
    d = tl.arange(0, HEAD)
    ptrs = x_ptr + t.to(tl.int64) * stride_t + h[:, None] * stride_h + d[None, :]
    x = tl.load(ptrs).to(tl.float32)
    x1, x2 = tl.split(tl.reshape(x, (NUM_HEADS, HEAD // 2, 2)))
    half = tl.arange(0, HEAD // 2)
    cos = tl.load(cache_ptr + pos * cache_stride + half)[None, :]
    sin = tl.load(cache_ptr + pos * cache_stride + HEAD // 2 + half)[None, :]
    y = tl.join(x1 * cos - x2 * sin, x2 * cos + x1 * sin)
    tl.store(ptrs, tl.reshape(y, (NUM_HEADS, HEAD)).to(x_ptr.dtype.element_ty))


@triton.jit
def _sg_per_token_quant_int8(x_ptr, xq_ptr, scale_ptr, stride_x, stride_xq, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(x)), 1e-10)
    scale_x = absmax / 127
    x_q = x * (127 / absmax)
    x_q = tl.extra.cuda.libdevice.round(x_q).to(tl.int8)
    tl.store(xq_ptr + row * stride_xq + cols, x_q, mask=mask)
    tl.store(scale_ptr + row, scale_x)


@triton.jit
def _sg_grouped_decode_stage1(
    Q, K_buffer, V_buffer, sm_scale, kv_indptr, kv_indices, Att_Out, Att_Lse,
    stride_qbs, stride_qh, stride_buf_kbs, stride_buf_kh, stride_buf_vbs, stride_buf_vh,
    stride_mid_ob, stride_mid_oh, stride_mid_os,
    kv_group_num: tl.constexpr,
    q_head_num: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_H: tl.constexpr,
    NUM_KV_SPLITS: tl.constexpr,
    Lk: tl.constexpr,
    Lv: tl.constexpr,
    LOGIT_CAP: tl.constexpr,
    SLIDING_WINDOW: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head_id = tl.program_id(1)
    split_kv_id = tl.program_id(2)
    if BLOCK_H < kv_group_num:
        VALID_BLOCK_H: tl.constexpr = BLOCK_H
    else:
        VALID_BLOCK_H: tl.constexpr = kv_group_num
    cur_kv_head = cur_head_id // tl.cdiv(kv_group_num, BLOCK_H)
    cur_head = cur_head_id * VALID_BLOCK_H + tl.arange(0, BLOCK_H)
    mask_h = (cur_head < (cur_head_id + 1) * VALID_BLOCK_H) & (cur_head < q_head_num)

    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_dv = tl.arange(0, BLOCK_DV)
    mask_d = offs_d < Lk
    mask_dv = offs_dv < Lv
    kv_start = tl.load(kv_indptr + cur_batch)
    seq_len = tl.load(kv_indptr + cur_batch + 1) - kv_start

    q = tl.load(Q + cur_batch * stride_qbs + cur_head[:, None] * stride_qh + offs_d[None, :],
                mask=mask_h[:, None] & mask_d[None, :], other=0.0)
    per_split = tl.cdiv(seq_len, NUM_KV_SPLITS)
    lo = per_split * split_kv_id
    hi = tl.minimum(lo + per_split, seq_len)
    if SLIDING_WINDOW > 0:
        lo = tl.maximum(lo, seq_len - 1 - SLIDING_WINDOW)

    e_max = tl.full([BLOCK_H], float("-inf"), dtype=tl.float32)
    e_sum = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_DV], dtype=tl.float32)
    if hi > lo:
        for start_n in tl.range(lo, hi, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            mask_n = offs_n < hi
            loc = tl.load(kv_indices + kv_start + offs_n, mask=mask_n, other=0)
            k = tl.load(K_buffer + loc[None, :] * stride_buf_kbs + cur_kv_head * stride_buf_kh + offs_d[:, None],
                        mask=mask_n[None, :] & mask_d[:, None], other=0.0)
            qk = tl.dot(q, k.to(q.dtype)) * sm_scale
            if LOGIT_CAP > 0:
                qk = LOGIT_CAP * _sg_tanh(qk / LOGIT_CAP)
            qk = tl.where(mask_h[:, None] & mask_n[None, :], qk, float("-inf"))
            v = tl.load(V_buffer + loc[:, None] * stride_buf_vbs + cur_kv_head * stride_buf_vh + offs_dv[None, :],
                        mask=mask_n[:, None] & mask_dv[None, :], other=0.0)
            n_max = tl.maximum(tl.max(qk, 1), e_max)
            re = tl.exp(e_max - n_max)
            p = tl.exp(qk - n_max[:, None])
            acc *= re[:, None]
            acc += tl.dot(p.to(v.dtype), v)
            e_sum = e_sum * re + tl.sum(p, 1)
            e_max = n_max
        base = cur_batch * stride_mid_ob + cur_head[:, None] * stride_mid_oh + split_kv_id * stride_mid_os
        tl.store(Att_Out + base + offs_dv[None, :], acc / e_sum[:, None],
                 mask=mask_h[:, None] & mask_dv[None, :])
        lse_off = (cur_batch * stride_mid_ob + cur_head * stride_mid_oh + split_kv_id * stride_mid_os) // Lv
        tl.store(Att_Lse + lse_off, e_max + tl.log(e_sum), mask=mask_h)
