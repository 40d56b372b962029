"""Index-heavy and attention-like kernels in the manner of serving and
linear-attention libraries: paged decode attention through a block table,
varlen prefill over cu_seqlens with causal and sliding-window masks, a
split-KV merge, chunk-local cumsums and chunk states over block pointers, a
selective-scan recurrence, batched 3-D dots, a neox/GPT-J rotary embedding
and an expert-routing scatter with atomics."""
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def paged_decode_kernel(out_ptr, q_ptr, k_cache_ptr, v_cache_ptr, block_tables_ptr, seq_lens_ptr,
                        scale, stride_q_seq, stride_q_head, stride_kc_blk, stride_kc_tok,
                        stride_kc_head, stride_bt_seq, stride_o_seq, stride_o_head,
                        NUM_Q_PER_KV: tl.constexpr, Q_GROUP_PAD: tl.constexpr,
                        HEAD_DIM: tl.constexpr, PAGE_SIZE: tl.constexpr):
    # one program per (sequence, kv head); the query heads that share the kv
    # head are the rows of one dot, padded to Q_GROUP_PAD
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    seq_len = tl.load(seq_lens_ptr + seq)
    if seq_len == 0:
        return
    grp = tl.arange(0, Q_GROUP_PAD)
    head_mask = grp < NUM_Q_PER_KV
    q_heads = kv_head * NUM_Q_PER_KV + grp
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + seq * stride_q_seq + q_heads[:, None] * stride_q_head + offs_d[None, :],
                mask=head_mask[:, None], other=0.0)
    m_i = tl.full([Q_GROUP_PAD], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([Q_GROUP_PAD], dtype=tl.float32)
    acc = tl.zeros([Q_GROUP_PAD, HEAD_DIM], dtype=tl.float32)
    qk_scale = scale * LOG2E
    offs_t = tl.arange(0, PAGE_SIZE)
    num_pages = tl.cdiv(seq_len, PAGE_SIZE)
    for p in range(0, num_pages):
        # pages are anywhere in the pool: 64-bit offsets from the loaded id
        page = tl.load(block_tables_ptr + seq * stride_bt_seq + p).to(tl.int64)
        tok_mask = p * PAGE_SIZE + offs_t < seq_len
        kv_off = (page * stride_kc_blk + kv_head * stride_kc_head
                  + offs_t[:, None] * stride_kc_tok + offs_d[None, :])
        k = tl.load(k_cache_ptr + kv_off, mask=tok_mask[:, None], other=0.0)
        v = tl.load(v_cache_ptr + kv_off, mask=tok_mask[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        s = tl.where(tok_mask[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        prob = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(prob, axis=1)
        acc = acc * alpha[:, None]
        acc = tl.dot(prob.to(v.dtype), v, acc=acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    o = out_ptr + seq * stride_o_seq + q_heads[:, None] * stride_o_head + offs_d[None, :]
    tl.store(o, acc.to(out_ptr.dtype.element_ty), mask=head_mask[:, None])


@triton.jit
def varlen_prefill_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, cu_seqlens_ptr, sm_scale,
                          stride_tok, stride_head, stride_lse_head,
                          IS_CAUSAL: tl.constexpr, WINDOW: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    # grid: (query blocks, heads, sequences); the longest sequence sets the
    # first axis, shorter ones return early
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    batch = tl.program_id(2)
    seq_start = tl.load(cu_seqlens_ptr + batch)
    seq_end = tl.load(cu_seqlens_ptr + batch + 1)
    seqlen = seq_end - seq_start
    if start_m * BLOCK_M >= seqlen:
        return
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    base = seq_start.to(tl.int64) * stride_tok + head * stride_head
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_tok + offs_d[None, :],
                mask=offs_m[:, None] < seqlen, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    if IS_CAUSAL:
        hi = tl.minimum(seqlen, (start_m + 1) * BLOCK_M)
    else:
        hi = seqlen
    lo = 0
    if WINDOW > 0:
        lo = tl.maximum(start_m * BLOCK_M - WINDOW + 1, 0) // BLOCK_N * BLOCK_N
    for start_n in tl.range(lo, hi, BLOCK_N, num_stages=2, loop_unroll_factor=1):
        cols = start_n + offs_n
        k = tl.load(k_ptr + base + cols[:, None] * stride_tok + offs_d[None, :],
                    mask=cols[:, None] < seqlen, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * sm_scale
        keep = cols[None, :] < seqlen
        if IS_CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        if WINDOW > 0:
            keep = keep & (offs_m[:, None] - cols[None, :] < WINDOW)
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        # a row with nothing kept yet has m_new = -inf: shift by 0 instead
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_use)
        p = tl.exp(s - m_use[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + cols[:, None] * stride_tok + offs_d[None, :],
                    mask=cols[:, None] < seqlen, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee", out_dtype=tl.float32)
        m_i = m_new
    row_ok = offs_m < seqlen
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_tok + offs_d[None, :],
             acc.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])
    tl.store(lse_ptr + head * stride_lse_head + seq_start + offs_m, m_i + tl.log(l_i), mask=row_ok)


@triton.jit
def merge_splits_kernel(out_ptr, part_o_ptr, part_lse_ptr, num_splits_ptr, stride_po_split,
                        stride_po_head, stride_pl_head, stride_o_head,
                        MAX_SPLITS: tl.constexpr, HEAD_DIM: tl.constexpr):
    # split-KV decode: each head's partial outputs come with the log-sum-exp
    # of their scores; a head may have used fewer splits than MAX_SPLITS
    head = tl.program_id(0)
    n = tl.load(num_splits_ptr + head)
    offs_s = tl.arange(0, MAX_SPLITS)
    offs_d = tl.arange(0, HEAD_DIM)
    smask = offs_s < n
    lse = tl.load(part_lse_ptr + head * stride_pl_head + offs_s, mask=smask, other=float("-inf"))
    lse_max = tl.max(lse, axis=0)
    w = tl.exp(lse - lse_max)
    w = w / tl.sum(w, axis=0)
    o = tl.load(part_o_ptr + head * stride_po_head + offs_s[:, None] * stride_po_split
                + offs_d[None, :], mask=smask[:, None], other=0.0)
    merged = tl.sum(o * w[:, None], axis=0)
    tl.store(out_ptr + head * stride_o_head + offs_d, merged)


@triton.jit
def chunk_local_cumsum_kernel(g_ptr, o_ptr, scale, cu_seqlens_ptr, chunk_indices_ptr,
                              H: tl.constexpr, S: tl.constexpr, BT: tl.constexpr,
                              BS: tl.constexpr, REVERSE: tl.constexpr, HAS_SCALE: tl.constexpr):
    # g: [total_tokens, H, S]; each chunk of BT tokens of each sequence sums
    # on its own; chunk_indices lists (sequence, chunk) pairs of all chunks
    col_blk = tl.program_id(0)
    chunk_id = tl.program_id(1)
    head = tl.program_id(2)
    seq_id = tl.load(chunk_indices_ptr + chunk_id * 2).to(tl.int32)
    local_chunk = tl.load(chunk_indices_ptr + chunk_id * 2 + 1).to(tl.int32)
    seq_start = tl.load(cu_seqlens_ptr + seq_id).to(tl.int32)
    seq_end = tl.load(cu_seqlens_ptr + seq_id + 1).to(tl.int32)
    seq_len = seq_end - seq_start
    # a view of this sequence's rows for one head; rows past seq_len are
    # clipped by the block pointer's shape
    row_stride = H * S
    base = seq_start.to(tl.int64) * row_stride + head * S
    src = tl.make_block_ptr(g_ptr + base, shape=(seq_len, S), strides=(row_stride, 1),
                            offsets=(local_chunk * BT, col_blk * BS), block_shape=(BT, BS),
                            order=(1, 0))
    dst = tl.make_block_ptr(o_ptr + base, shape=(seq_len, S), strides=(row_stride, 1),
                            offsets=(local_chunk * BT, col_blk * BS), block_shape=(BT, BS),
                            order=(1, 0))
    vals = tl.load(src, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
    running = tl.cumsum(vals, axis=0)
    if REVERSE:
        # suffix sum = chunk total - inclusive prefix + own element
        whole = tl.sum(vals, axis=0)
        running = whole[None, :] - running + vals
    if HAS_SCALE:
        running = running * scale
    tl.store(dst, running.to(o_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def chunk_state_kernel(k_ptr, v_ptr, g_ptr, h_ptr, h0_ptr, ht_ptr, T,
                       H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr,
                       BK: tl.constexpr, BV: tl.constexpr, USE_INITIAL_STATE: tl.constexpr,
                       STORE_FINAL_STATE: tl.constexpr):
    # gated linear attention's inter-chunk recurrence: the state entering
    # each chunk is written out, then decayed by the chunk's last gate and
    # updated with the chunk's keys and values. k: [B, T, H, K], g: [B, T, H]
    # (cumulative within a chunk), h: [B, NT, H, K, V]
    kb = tl.program_id(0)
    vb = tl.program_id(1)
    bh = tl.program_id(2)
    bidx = bh // H
    hidx = bh % H
    n_chunks = tl.cdiv(T, BT)
    tok_stride_kv = H * K
    tok_stride_v = H * V
    k_base = k_ptr + (bidx * T * H + hidx).to(tl.int64) * K
    v_base = v_ptr + (bidx * T * H + hidx).to(tl.int64) * V
    g_base = g_ptr + (bidx * T * H + hidx).to(tl.int64)
    state = tl.zeros([BK, BV], dtype=tl.float32)
    if USE_INITIAL_STATE:
        init_blk = tl.make_block_ptr(h0_ptr + bh.to(tl.int64) * K * V, shape=(K, V), strides=(V, 1),
                                     offsets=(kb * BK, vb * BV), block_shape=(BK, BV), order=(1, 0))
        state += tl.load(init_blk, boundary_check=(0, 1)).to(tl.float32)
    rows = tl.arange(0, BT)
    for c in range(0, n_chunks):
        # the state entering chunk c
        out_blk = tl.make_block_ptr(h_ptr + ((bidx * n_chunks + c) * H + hidx).to(tl.int64) * K * V,
                                    shape=(K, V), strides=(V, 1), offsets=(kb * BK, vb * BV),
                                    block_shape=(BK, BV), order=(1, 0))
        tl.store(out_blk, state.to(h_ptr.dtype.element_ty), boundary_check=(0, 1))
        t0 = c * BT
        # keys read transposed: [BK, BT]
        kt_blk = tl.make_block_ptr(k_base, shape=(K, T), strides=(1, tok_stride_kv),
                                   offsets=(kb * BK, t0), block_shape=(BK, BT), order=(0, 1))
        v_blk = tl.make_block_ptr(v_base, shape=(T, V), strides=(tok_stride_v, 1),
                                  offsets=(t0, vb * BV), block_shape=(BT, BV), order=(1, 0))
        kt = tl.load(kt_blk, boundary_check=(0, 1), padding_option="zero")
        vals = tl.load(v_blk, boundary_check=(0, 1), padding_option="zero")
        t_idx = t0 + rows
        in_seq = t_idx < T
        last_t = tl.minimum(t0 + BT, T) - 1
        g_last = tl.load(g_base + last_t * H).to(tl.float32)
        g_rows = tl.load(g_base + t_idx * H, mask=in_seq, other=0.0).to(tl.float32)
        w = tl.where(in_seq, tl.exp(g_last - g_rows), 0.0)
        vw = (vals.to(tl.float32) * w[:, None]).to(kt.dtype)
        state = state * tl.exp(g_last)
        state = tl.dot(kt, vw, acc=state)
    if STORE_FINAL_STATE:
        fin_blk = tl.make_block_ptr(ht_ptr + bh.to(tl.int64) * K * V, shape=(K, V), strides=(V, 1),
                                    offsets=(kb * BK, vb * BV), block_shape=(BK, BV), order=(1, 0))
        tl.store(fin_blk, state.to(ht_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def _softplus(x):
    # log(1 + e^x) without overflow for large x
    return tl.where(x <= 20.0, tl.log(1.0 + tl.exp(x)), x)


@triton.jit
def _ssm_step(state, x_t, dt_t, A, B_t, C_t, DT_SOFTPLUS: tl.constexpr):
    if DT_SOFTPLUS:
        dt_t = _softplus(dt_t)
    dA = tl.exp(A * dt_t[:, None])
    state = state * dA + (dt_t * x_t)[:, None] * B_t[None, :]
    y = tl.sum(state * C_t[None, :], axis=1)
    return state, y


@triton.jit
def selective_scan_kernel(x_ptr, dt_ptr, A_ptr, B_ptr, C_ptr, D_ptr, z_ptr, out_ptr,
                          seqlen, dim, stride_x_b, stride_x_l, stride_bc_b, stride_bc_l,
                          DSTATE: tl.constexpr, BLOCK_D: tl.constexpr,
                          DT_SOFTPLUS: tl.constexpr, HAS_D: tl.constexpr, HAS_Z: tl.constexpr):
    # x, dt, z, out: [batch, seqlen, dim]; A: [dim, DSTATE]; B, C: [batch,
    # seqlen, DSTATE]; each program runs BLOCK_D channels of one sequence
    pid_d = tl.program_id(0)
    pid_b = tl.program_id(1)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    offs_n = tl.arange(0, DSTATE)
    dmask = offs_d < dim
    A = tl.load(A_ptr + offs_d[:, None] * DSTATE + offs_n[None, :], mask=dmask[:, None], other=0.0)
    if HAS_D:
        D = tl.load(D_ptr + offs_d, mask=dmask, other=0.0).to(tl.float32)
    x_base = x_ptr + pid_b * stride_x_b
    dt_base = dt_ptr + pid_b * stride_x_b
    bc_off = pid_b * stride_bc_b
    state = tl.zeros([BLOCK_D, DSTATE], dtype=tl.float32)
    for t in range(seqlen):
        x_t = tl.load(x_base + t * stride_x_l + offs_d, mask=dmask, other=0.0).to(tl.float32)
        dt_t = tl.load(dt_base + t * stride_x_l + offs_d, mask=dmask, other=0.0).to(tl.float32)
        B_t = tl.load(B_ptr + bc_off + t * stride_bc_l + offs_n).to(tl.float32)
        C_t = tl.load(C_ptr + bc_off + t * stride_bc_l + offs_n).to(tl.float32)
        state, y = _ssm_step(state, x_t, dt_t, A, B_t, C_t, DT_SOFTPLUS)
        if HAS_D:
            y += x_t * D
        if HAS_Z:
            z = tl.load(z_ptr + pid_b * stride_x_b + t * stride_x_l + offs_d, mask=dmask,
                        other=0.0).to(tl.float32)
            y *= z * tl.sigmoid(z)
        tl.store(out_ptr + pid_b * stride_x_b + t * stride_x_l + offs_d, y, mask=dmask)


@triton.jit
def batched_dot_3d_kernel(a_ptr, b_ptr, c_ptr, ct_ptr, M, N, K,
                          BLOCK_B: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr):
    # a: [batch, M, K], b: [batch, K, N]; c = a @ b and ct = its per-batch
    # transpose, BLOCK_B batches a program through one 3-D dot
    pid_b = tl.program_id(0)
    ob = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    om = tl.arange(0, BLOCK_M)
    on = tl.arange(0, BLOCK_N)
    ok = tl.arange(0, BLOCK_K)
    ob3 = tl.expand_dims(tl.expand_dims(ob, 1), 2)
    om3 = tl.expand_dims(tl.expand_dims(om, 0), 2)
    on3 = tl.expand_dims(tl.expand_dims(on, 0), 1)
    acc = tl.zeros((BLOCK_B, BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ok3_col = tl.expand_dims(tl.expand_dims(k0 + ok, 0), 1)   # [1, 1, BK]
        ok3_row = tl.reshape(k0 + ok, (1, BLOCK_K, 1))            # [1, BK, 1]
        a = tl.load(a_ptr + ob3 * M * K + om3 * K + ok3_col,
                    mask=(om3 < M) & (ok3_col < K), other=0.0)
        b = tl.load(b_ptr + ob3 * K * N + ok3_row * N + on3,
                    mask=(ok3_row < K) & (on3 < N), other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=tl.float32)
    cmask = (om3 < M) & (on3 < N)
    cmask = tl.broadcast_to(cmask, (BLOCK_B, BLOCK_M, BLOCK_N))
    tl.store(c_ptr + ob3 * M * N + om3 * N + on3, acc.to(c_ptr.dtype.element_ty), mask=cmask)
    # the transpose goes through a permuted block and permuted offsets
    acc_t = tl.permute(acc, (0, 2, 1))
    on3_t = tl.permute(on3, (0, 2, 1))
    om3_t = tl.permute(om3, (0, 2, 1))
    tl.store(ct_ptr + ob3 * M * N + on3_t * M + om3_t, acc_t, mask=tl.permute(cmask, 0, 2, 1))


@triton.jit
def rotary_kernel(q_ptr, positions_ptr, cos_sin_ptr, num_tokens, num_heads, stride_q_tok,
                  stride_cs_pos, HEAD_DIM: tl.constexpr, BLOCK_H: tl.constexpr,
                  IS_NEOX: tl.constexpr):
    # cos_sin: [max_pos, HEAD_DIM], cos in the first half, sin in the second;
    # neox rotates the two halves of a head, GPT-J its even/odd pairs.
    # Programs stride over tokens; axis 1 splits the heads.
    HALF: tl.constexpr = HEAD_DIM // 2
    pid_h = tl.program_id(1)
    offs_h = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    hmask = offs_h < num_heads
    offs_half = tl.arange(0, HALF)
    for tok in range(tl.program_id(0), num_tokens, tl.num_programs(0)):
        pos = tl.load(positions_ptr + tok).to(tl.int64)
        cos = tl.load(cos_sin_ptr + pos * stride_cs_pos + offs_half)
        sin = tl.load(cos_sin_ptr + pos * stride_cs_pos + HALF + offs_half)
        base = q_ptr + tok * stride_q_tok + offs_h[:, None] * HEAD_DIM
        if IS_NEOX:
            x1 = tl.load(base + offs_half[None, :], mask=hmask[:, None], other=0.0).to(tl.float32)
            x2 = tl.load(base + HALF + offs_half[None, :], mask=hmask[:, None],
                         other=0.0).to(tl.float32)
            y1 = x1 * cos[None, :] - x2 * sin[None, :]
            y2 = x2 * cos[None, :] + x1 * sin[None, :]
            tl.store(base + offs_half[None, :], y1, mask=hmask[:, None])
            tl.store(base + HALF + offs_half[None, :], y2, mask=hmask[:, None])
        else:
            offs = tl.arange(0, HEAD_DIM)
            x = tl.load(base + offs[None, :], mask=hmask[:, None], other=0.0).to(tl.float32)
            x1, x2 = tl.split(tl.reshape(x, (BLOCK_H, HALF, 2)))
            y1 = x1 * cos[None, :] - x2 * sin[None, :]
            y2 = x2 * cos[None, :] + x1 * sin[None, :]
            y = tl.reshape(tl.join(y1, y2), (BLOCK_H, HEAD_DIM))
            tl.store(base + offs[None, :], y, mask=hmask[:, None])


@triton.jit(debug=True)
def expert_scatter_kernel(topk_ids_ptr, topk_weights_ptr, counts_ptr, max_weight_ptr,
                          token_expert_pos_ptr, num_pairs, num_experts, BLOCK: tl.constexpr):
    # tokens' (expert, weight) pairs: count tokens per expert, keep each
    # expert's largest weight and record each pair's expert as i32
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < num_pairs
    ids = tl.load(topk_ids_ptr + offs, mask=mask, other=0)
    tl.device_assert((ids >= 0) & (ids < num_experts), "expert id out of range")
    w = tl.load(topk_weights_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(counts_ptr + ids, 1, mask=mask)
    tl.atomic_max(max_weight_ptr + ids, w, mask=mask)
    tl.store(token_expert_pos_ptr + offs, ids.to(tl.int32), mask=mask)
