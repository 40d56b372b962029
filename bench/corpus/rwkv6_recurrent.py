"""RWKV-6 time mixing ("wkv") as flash-linear-attention's fused recurrent
kernel writes it: one program per (value block, batch*head) keeps a fp32
[K, BV] state in registers and walks the sequence token by token. Each step
loads r, k, v and the data-dependent log decay w (w < 0) of one token from
the [B, T, H, K] layout, emits o_t = r_t (S + diag(u) k_t v_t^T) with the
per-head bonus u for the current token, then decays the state key by key,
S <- diag(exp(w_t)) S + k_t v_t^T. Optional initial and final states."""
import torch
import triton
import triton.language as tl


@triton.jit
def fused_recurrent_rwkv6_fwd_kernel(r, k, v, w, u, o, h0, ht, scale, T, H,
                                     K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr,
                                     BV: tl.constexpr, USE_INITIAL_STATE: tl.constexpr,
                                     STORE_FINAL_STATE: tl.constexpr):
    i_v, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    o_k = tl.arange(0, BK)
    o_v = i_v * BV + tl.arange(0, BV)
    m_k = o_k < K
    m_v = o_v < V
    m_h = m_k[:, None] & m_v[None, :]

    # token t of head h in batch b sits at ((b * T + t) * H + h) * K
    bos = i_b * T * H + i_h
    p_r = r + bos * K + o_k
    p_k = k + bos * K + o_k
    p_w = w + bos * K + o_k
    p_v = v + bos * V + o_v
    p_o = o + bos * V + o_v

    b_u = tl.load(u + i_h * K + o_k, mask=m_k, other=0).to(tl.float32)
    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    if USE_INITIAL_STATE:
        p_h0 = h0 + i_bh * K * V + o_k[:, None] * V + o_v[None, :]
        b_h += tl.load(p_h0, mask=m_h, other=0).to(tl.float32)

    for _ in range(0, T):
        b_r = tl.load(p_r, mask=m_k, other=0).to(tl.float32) * scale
        b_k = tl.load(p_k, mask=m_k, other=0).to(tl.float32)
        b_v = tl.load(p_v, mask=m_v, other=0).to(tl.float32)
        b_w = tl.load(p_w, mask=m_k, other=0).to(tl.float32)
        b_kv = b_k[:, None] * b_v[None, :]
        # the current token reaches the output through the bonus u, not through the state
        b_o = tl.sum((b_h + b_kv * b_u[:, None]) * b_r[:, None], 0)
        b_h = b_h * tl.exp(b_w)[:, None] + b_kv
        tl.store(p_o, b_o.to(p_o.dtype.element_ty), mask=m_v)

        p_r += H * K
        p_k += H * K
        p_w += H * K
        p_v += H * V
        p_o += H * V

    if STORE_FINAL_STATE:
        p_ht = ht + i_bh * K * V + o_k[:, None] * V + o_v[None, :]
        tl.store(p_ht, b_h.to(p_ht.dtype.element_ty), mask=m_h)


def fused_recurrent_rwkv6(r, k, v, w, u, scale=1.0, initial_state=None, BV=32):
    B, T, H, K = r.shape
    V = v.shape[-1]
    o = torch.empty_like(v)
    ht = r.new_empty(B, H, K, V, dtype=torch.float32)
    grid = (triton.cdiv(V, BV), B * H)
    fused_recurrent_rwkv6_fwd_kernel[grid](
        r, k, v, w, u, o, initial_state, ht, scale, T, H, K=K, V=V,
        BK=triton.next_power_of_2(K), BV=BV, USE_INITIAL_STATE=initial_state is not None,
        STORE_FINAL_STATE=True, num_warps=2, num_stages=1)
    return o, ht
