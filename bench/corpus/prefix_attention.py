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
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    K_ptrs += lo * stride_kn
    V_ptrs += lo * stride_vn
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(K_ptrs)
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V_ptrs)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        K_ptrs += BLOCK_N * stride_kn
        V_ptrs += BLOCK_N * stride_vn
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out, stride_qz, stride_qh, stride_qm, stride_kz, stride_kh,
              stride_kn, stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_om, H,
              N_CTX: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_offset = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_offset = off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_offset = off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_offset = off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    Q_ptrs = Q + q_offset + offs_m[:, None] * stride_qm + offs_d[None, :]
    K_ptrs = K + k_offset + offs_n[None, :] * stride_kn + offs_d[:, None]
    V_ptrs = V + v_offset + offs_n[:, None] * stride_vn + offs_d[None, :]
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = tl.load(Q_ptrs)
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_kn, stride_vn,
                                        start_m, qk_scale, BLOCK_M, BLOCK_N, 4 - STAGE, offs_m,
                                        offs_n, N_CTX)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_kn, stride_vn,
                                        start_m, qk_scale, BLOCK_M, BLOCK_N, 2, offs_m, offs_n,
                                        N_CTX)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    tl.store(Out + o_offset + offs_m[:, None] * stride_om + offs_d[None, :],
             acc.to(Out.type.element_ty))
