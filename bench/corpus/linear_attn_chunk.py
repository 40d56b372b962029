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
    # q and k^T of the first chunk; k^T is a (K, T) view with K fastest
    p_q = tl.make_block_ptr(q + i_bh * s_qk_h, (T, K), (s_qk_t, 1), (0, 0), (BT, BK), (1, 0))
    p_kt = tl.make_block_ptr(k + i_bh * s_qk_h, (K, T), (1, s_qk_t), (0, 0), (BK, BT), (0, 1))
    p_v = tl.make_block_ptr(v + i_bh * s_vo_h, (T, V), (s_vo_t, 1), (0, i_v * BV), (BT, BV),
                            (1, 0))
    p_o = tl.make_block_ptr(o + i_bh * s_vo_h, (T, V), (s_vo_t, 1), (0, i_v * BV), (BT, BV),
                            (1, 0))
    o_t = tl.arange(0, BT)
    causal = o_t[:, None] >= o_t[None, :]
    # running state sum_t k_t^T v_t over the chunks already passed
    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    for _ in range(0, tl.cdiv(T, BT)):
        b_q = tl.load(p_q, boundary_check=(0, 1), padding_option="zero")
        b_q = (b_q * scale).to(b_q.dtype)
        b_kt = tl.load(p_kt, boundary_check=(0, 1), padding_option="zero")
        b_v = tl.load(p_v, boundary_check=(0, 1), padding_option="zero")
        b_s = tl.dot(b_q, b_kt)
        b_s = tl.where(causal, b_s, 0.)
        b_o = tl.dot(b_s.to(b_q.dtype), b_v)
        b_o += tl.dot(b_q, b_h.to(b_q.dtype))
        tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))
        # padded rows of the last chunk are zero and add nothing to the state
        b_h += tl.dot(b_kt, b_v)
        p_q = tl.advance(p_q, (BT, 0))
        p_kt = tl.advance(p_kt, (0, BT))
        p_v = tl.advance(p_v, (BT, 0))
        p_o = tl.advance(p_o, (BT, 0))
    if STORE_FINAL_STATE:
        p_ht = tl.make_block_ptr(ht + i_bh * K * V, (K, V), (V, 1), (0, i_v * BV), (BK, BV),
                                 (1, 0))
        tl.store(p_ht, b_h.to(p_ht.dtype.element_ty), boundary_check=(0, 1))
