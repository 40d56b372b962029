"""Decode attention where one program serves the G query heads that share
a key/value head (G = 2, 4 or 8, fewer than the 16 rows an MMA takes): the
group's queries are the rows of tl.dot(q, k) and of tl.dot(p, v)."""
import triton
import triton.language as tl


@triton.jit
def gqa_group_decode(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale, stride_qh, stride_kt,
                     stride_kh, G: tl.constexpr, D: tl.constexpr, BN: tl.constexpr):
    kv_head = tl.program_id(0)
    rows = tl.arange(0, G)
    cols = tl.arange(0, D)
    q = tl.load(q_ptr + (kv_head * G + rows)[:, None] * stride_qh + cols[None, :])
    m_i = tl.full([G], float("-inf"), tl.float32)
    l_i = tl.zeros([G], tl.float32)
    acc = tl.zeros([G, D], tl.float32)
    for start in range(0, seq_len, BN):
        keys = start + tl.arange(0, BN)
        kv_off = keys[:, None] * stride_kt + kv_head * stride_kh + cols[None, :]
        live = keys < seq_len
        k = tl.load(k_ptr + kv_off, mask=live[:, None], other=0.0)
        v = tl.load(v_ptr + kv_off, mask=live[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * sm_scale
        s = tl.where(live[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + (kv_head * G + rows)[:, None] * stride_qh + cols[None, :],
             out.to(o_ptr.dtype.element_ty))
