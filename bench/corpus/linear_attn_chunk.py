"""Causal linear attention in the chunked form: each program owns one
(batch*head, block of value columns) and walks the sequence chunk by chunk,
carrying the running state h = sum k^T v in registers. Per chunk the output
is the intra-chunk part (q k^T masked to the lower triangle, times v) plus
the inter-chunk part q h; the state is then updated with the chunk's k^T v.
The final state is stored for the next segment."""
import torch
import triton
import triton.language as tl


@triton.jit
def fused_chunk_linear_attn_fwd_kernel(q, k, v, o, ht, s_qk_h, s_qk_t, s_vo_h, s_vo_t, scale, T,
                                       K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr,
                                       BK: tl.constexpr, BV: tl.constexpr,
                                       STORE_FINAL_STATE: tl.constexpr):
    i_v, i_bh = tl.program_id(0), tl.program_id(1)
    o_i = tl.arange(0, BT)
    o_k = tl.arange(0, BK)
    o_v = i_v * BV + tl.arange(0, BV)
    m_s = o_i[:, None] >= o_i[None, :]
    mask_k = o_k < K
    mask_v = o_v < V
    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    for i in range(0, tl.cdiv(T, BT)):
        o_t = i * BT + o_i
        mask_t = o_t < T
        p_q = q + i_bh * s_qk_h + o_t[:, None] * s_qk_t + o_k[None, :]
        p_k = k + i_bh * s_qk_h + o_t[None, :] * s_qk_t + o_k[:, None]
        p_v = v + i_bh * s_vo_h + o_t[:, None] * s_vo_t + o_v[None, :]
        b_q = tl.load(p_q, mask=mask_t[:, None] & mask_k[None, :], other=0.0)
        b_q = (b_q * scale).to(b_q.dtype)
        b_k = tl.load(p_k, mask=mask_k[:, None] & mask_t[None, :], other=0.0)
        b_v = tl.load(p_v, mask=mask_t[:, None] & mask_v[None, :], other=0.0)
        b_s = tl.dot(b_q, b_k, allow_tf32=False)
        b_s = tl.where(m_s, b_s, 0)
        b_o = tl.dot(b_s.to(b_q.dtype), b_v, allow_tf32=False)
        b_o += tl.dot(b_q, b_h.to(b_q.dtype), allow_tf32=False)
        b_h = b_h + tl.dot(b_k, b_v, allow_tf32=False)
        p_o = o + i_bh * s_vo_h + o_t[:, None] * s_vo_t + o_v[None, :]
        tl.store(p_o, b_o.to(p_o.dtype.element_ty), mask=mask_t[:, None] & mask_v[None, :])
    if STORE_FINAL_STATE:
        p_ht = ht + i_bh * K * V + o_k[:, None] * V + o_v[None, :]
        tl.store(p_ht, b_h, mask=mask_k[:, None] & mask_v[None, :])
