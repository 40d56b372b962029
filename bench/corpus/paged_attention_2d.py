"""Paged decode attention in the style of serving engines' 2-D kernels: one
program per (sequence, KV head) for the query heads that share it, the head
dim padded to a power of two and masked with an integer mask cast to a
boolean, K read transposed straight from the cache pages, and the last page
(the only partial one) loaded under its own branch."""
import triton
import triton.language as tl


@triton.jit
def _online_softmax_step(qk, live, v, m_i, l_i, acc):
    """One page of the running softmax: scores of dead tokens dropped, the
    running max, sum and output rescaled, the page's values added."""
    qk = tl.where(live[None, :], qk, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(qk, axis=1))
    p = tl.exp(qk - m_new[:, None])
    alpha = tl.exp(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
    return m_new, l_i, acc


@triton.jit
def _paged_decode_padded_head(Q, K_cache, V_cache, block_tables, seq_lens, Out, sm_scale,
                              stride_qb, stride_qh, stride_bt, stride_kb, stride_kt,
                              stride_kh, stride_ob, stride_oh, QUERY_GROUP: tl.constexpr,
                              PAGE_SIZE: tl.constexpr, HEAD_SIZE: tl.constexpr,
                              HEAD_SIZE_PADDED: tl.constexpr, PADDED_GROUP: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    seq_len = tl.load(seq_lens + seq)
    offs_g = tl.arange(0, PADDED_GROUP)
    offs_d = tl.arange(0, HEAD_SIZE_PADDED)
    offs_t = tl.arange(0, PAGE_SIZE)
    dim_mask = tl.where(offs_d < HEAD_SIZE, 1, 0).to(tl.int1)
    g_mask = offs_g < QUERY_GROUP
    q_heads = kv_head * QUERY_GROUP + offs_g
    q = tl.load(Q + seq * stride_qb + q_heads[:, None] * stride_qh + offs_d[None, :],
                mask=g_mask[:, None] & dim_mask[None, :], other=0.0)

    m_i = tl.full([PADDED_GROUP], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([PADDED_GROUP], dtype=tl.float32)
    acc = tl.zeros([PADDED_GROUP, HEAD_SIZE_PADDED], dtype=tl.float32)
    num_pages = tl.cdiv(seq_len, PAGE_SIZE)
    for page in range(0, num_pages):
        phys = tl.load(block_tables + seq * stride_bt + page).to(tl.int64)
        base = phys * stride_kb + kv_head * stride_kh
        # K as [head, token]: the dot needs no transpose
        k_offs = base + offs_d[:, None] + offs_t[None, :] * stride_kt
        v_offs = base + offs_t[:, None] * stride_kt + offs_d[None, :]
        t_valid = page * PAGE_SIZE + offs_t < seq_len
        if page == num_pages - 1:
            k = tl.load(K_cache + k_offs, mask=dim_mask[:, None] & t_valid[None, :], other=0.0)
            v = tl.load(V_cache + v_offs, mask=t_valid[:, None] & dim_mask[None, :], other=0.0)
        else:
            k = tl.load(K_cache + k_offs, mask=dim_mask[:, None], other=0.0)
            v = tl.load(V_cache + v_offs, mask=dim_mask[None, :], other=0.0)
        qk = tl.dot(q, k).to(tl.float32) * sm_scale
        m_i, l_i, acc = _online_softmax_step(qk, t_valid, v, m_i, l_i, acc)
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_ob + q_heads[:, None] * stride_oh + offs_d[None, :],
             out.to(Out.dtype.element_ty), mask=g_mask[:, None] & dim_mask[None, :])


@triton.jit
def _paged_decode_group_rows(Q, K_cache, V_cache, block_tables, seq_lens, Out, sm_scale,
                             stride_qb, stride_qh, stride_bt, stride_kb, stride_kt, stride_kh,
                             stride_ob, stride_oh, QUERY_GROUP: tl.constexpr,
                             PAGE_SIZE: tl.constexpr, HEAD_SIZE: tl.constexpr):
    """The same decode with the query group itself as the rows of both dots
    (4 rows, no padding to 16), as newer serving kernels write it."""
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    seq_len = tl.load(seq_lens + seq)
    heads = kv_head * QUERY_GROUP + tl.arange(0, QUERY_GROUP)
    dims = tl.arange(0, HEAD_SIZE)
    toks = tl.arange(0, PAGE_SIZE)
    q = tl.load(Q + seq * stride_qb + heads[:, None] * stride_qh + dims[None, :])
    q = (q * sm_scale).to(q.dtype)
    m_i = tl.full([QUERY_GROUP], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([QUERY_GROUP], dtype=tl.float32)
    acc = tl.zeros([QUERY_GROUP, HEAD_SIZE], dtype=tl.float32)
    for page in range(0, tl.cdiv(seq_len, PAGE_SIZE)):
        phys = tl.load(block_tables + seq * stride_bt + page).to(tl.int64)
        offs = phys * stride_kb + kv_head * stride_kh + toks[:, None] * stride_kt + dims[None, :]
        live = page * PAGE_SIZE + toks < seq_len
        k = tl.load(K_cache + offs, mask=live[:, None], other=0.0)
        v = tl.load(V_cache + offs, mask=live[:, None], other=0.0)
        qk = tl.dot(q, tl.trans(k))
        m_i, l_i, acc = _online_softmax_step(qk, live, v, m_i, l_i, acc)
    tl.store(Out + seq * stride_ob + heads[:, None] * stride_oh + dims[None, :],
             (acc / l_i[:, None]).to(Out.dtype.element_ty))
