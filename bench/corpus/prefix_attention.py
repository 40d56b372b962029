"""Attention forwards written with plain pointer arithmetic. The
extend/prefill kernel of a serving engine: the new tokens of each request
attend to its cached prefix (key/value rows gathered from the KV pool
through the request's token table, no mask beyond the prefix length) and
then causally to themselves (contiguous new K/V), with grouped-query heads.
And the fused-attention forward in the tutorial's staged form (STAGE 1:
blocks left of the diagonal, 2: the diagonal block with its mask, 3: both,
causal) over [Z, H, N_CTX, HEAD_DIM] tensors addressed by strides, storing
the row logsumexp M next to the output."""
import torch
import triton
import triton.language as tl


@triton.jit
def _prefix_prefill_gqa(Q, K_new, V_new, K_pool, V_pool, Out, req_to_token, b_start_loc,
                        b_prefix_len, b_extend_len, sm_scale, stride_req, stride_qbs, stride_qh,
                        stride_kbs, stride_kh, stride_pbs, stride_ph, stride_obs, stride_oh,
                        kv_group_num: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr):
    cur_seq = tl.program_id(0)
    cur_head = tl.program_id(1)
    cur_block_m = tl.program_id(2)
    cur_kv_head = cur_head // kv_group_num
    start = tl.load(b_start_loc + cur_seq)
    prefix_len = tl.load(b_prefix_len + cur_seq)
    extend_len = tl.load(b_extend_len + cur_seq)
    if cur_block_m * BLOCK_M >= extend_len:
        return
    offs_m = cur_block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_n = tl.arange(0, BLOCK_N)
    mask_m = offs_m < extend_len
    q = tl.load(Q + (start + offs_m[:, None]) * stride_qbs + cur_head * stride_qh + offs_d[None, :],
                mask=mask_m[:, None], other=0.0)
    qk_scale = sm_scale * 1.4426950408889634
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    # stage 1: the cached prefix, gathered through the token table
    for start_n in range(0, prefix_len, BLOCK_N):
        mask_n = start_n + offs_n < prefix_len
        slot = tl.load(req_to_token + cur_seq * stride_req + start_n + offs_n, mask=mask_n,
                       other=0)
        k = tl.load(K_pool + slot[None, :] * stride_pbs + cur_kv_head * stride_ph +
                    offs_d[:, None], mask=mask_n[None, :], other=0.0)
        qk = tl.dot(q, k) * qk_scale
        qk = tl.where(mask_n[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V_pool + slot[:, None] * stride_pbs + cur_kv_head * stride_ph +
                    offs_d[None, :], mask=mask_n[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    # stage 2: the new tokens, causally
    end_n = tl.minimum((cur_block_m + 1) * BLOCK_M, extend_len)
    for start_n in range(0, end_n, BLOCK_N):
        cols = start_n + offs_n
        mask_n = cols < extend_len
        k = tl.load(K_new + (start + cols[None, :]) * stride_kbs + cur_kv_head * stride_kh +
                    offs_d[:, None], mask=mask_n[None, :], other=0.0)
        qk = tl.dot(q, k) * qk_scale
        keep = mask_n[None, :] & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(keep, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V_new + (start + cols[:, None]) * stride_kbs + cur_kv_head * stride_kh +
                    offs_d[None, :], mask=mask_n[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(Out + (start + offs_m[:, None]) * stride_obs + cur_head * stride_oh + offs_d[None, :],
             acc.to(Out.dtype.element_ty), mask=mask_m[:, None])


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_kn, stride_vn, start_m, qk_scale,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
                    offs_m, offs_n, N_CTX: tl.constexpr):
    # Key range swept by this call: STAGE 1 = the key blocks strictly left of
    # the query tile, STAGE 2 = the keys on the tile's diagonal (masked),
    # anything else = every key of the sequence.
    if STAGE == 1:
        n_lo = 0
        n_hi = start_m * BLOCK_M
    elif STAGE == 2:
        n_lo = start_m * BLOCK_M
        n_hi = n_lo + BLOCK_M
    else:
        n_lo = 0
        n_hi = N_CTX
    for n0 in range(n_lo, n_hi, BLOCK_N):
        # scores of the query tile against keys n0 .. n0 + BLOCK_N (K is read transposed)
        kt = tl.load(K_ptrs + n0 * stride_kn)
        s = tl.dot(q, kt) * qk_scale
        if STAGE == 2:
            s = tl.where(offs_m[:, None] >= (n0 + offs_n)[None, :], s, float("-inf"))
        # running max in base-2 units, rescale what was accumulated so far
        m_next = tl.maximum(m_i, tl.max(s, 1))
        corr = tl.math.exp2(m_i - m_next)
        w = tl.math.exp2(s - m_next[:, None])
        l_i = l_i * corr + tl.sum(w, 1)
        vb = tl.load(V_ptrs + n0 * stride_vn)
        acc = acc * corr[:, None] + tl.dot(w.to(vb.dtype), vb)
        m_i = m_next
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out, stride_qz, stride_qh, stride_qm, stride_kz, stride_kh,
              stride_kn, stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_om, H,
              N_CTX: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    z = bh // H
    h = bh % H
    q_base = Q + z.to(tl.int64) * stride_qz + h.to(tl.int64) * stride_qh
    k_base = K + z.to(tl.int64) * stride_kz + h.to(tl.int64) * stride_kh
    v_base = V + z.to(tl.int64) * stride_vz + h.to(tl.int64) * stride_vh
    o_base = Out + z.to(tl.int64) * stride_oz + h.to(tl.int64) * stride_oh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    # K addressed as a [HEAD_DIM, BLOCK_N] transposed tile, V as [BLOCK_N, HEAD_DIM],
    # both at key 0; the helper offsets them by the key index.
    K_ptrs = k_base + offs_d[:, None] + offs_n[None, :] * stride_kn
    V_ptrs = v_base + offs_n[:, None] * stride_vn + offs_d[None, :]
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :])
    # softmax in base 2: fold log2(e) into the score scale
    qk_scale = sm_scale * 1.4426950408889634
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    if STAGE == 3:
        # causal: unmasked blocks left of the diagonal, then the masked diagonal
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_kn, stride_vn,
                                        start_m, qk_scale, BLOCK_M, BLOCK_N, 1, offs_m, offs_n,
                                        N_CTX)
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_kn, stride_vn,
                                        start_m, qk_scale, BLOCK_M, BLOCK_N, 2, offs_m, offs_n,
                                        N_CTX)
    else:
        # full attention: one unmasked sweep over every key
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_kn, stride_vn,
                                        start_m, qk_scale, BLOCK_M, BLOCK_N, 3, offs_m, offs_n,
                                        N_CTX)
    # row log-sum-exp (base 2) and the normalised output
    tl.store(M + bh * N_CTX + offs_m, m_i + tl.math.log2(l_i))
    out = acc / l_i[:, None]
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :], out.to(Out.dtype.element_ty))
