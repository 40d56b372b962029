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
    m_kv = m_k[:, None] & m_v[None, :]
    # token t of head i_h sits at row (i_b * T + t) * H + i_h of the [B, T, H, *] tensors
    row0 = i_b * T * H + i_h
    p_r = r + row0 * K + o_k
    p_k = k + row0 * K + o_k
    p_w = w + row0 * K + o_k
    p_v = v + row0 * V + o_v
    p_o = o + row0 * V + o_v
    b_u = tl.load(u + i_h * K + o_k, mask=m_k, other=0.).to(tl.float32)
    # the [K, BV] slice of the state this program owns, kept in fp32
    state_off = i_bh * K * V + o_k[:, None] * V + o_v[None, :]
    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    if USE_INITIAL_STATE:
        b_h += tl.load(h0 + state_off, mask=m_kv, other=0.).to(tl.float32)
    for _ in range(0, T):
        b_r = tl.load(p_r, mask=m_k, other=0.).to(tl.float32) * scale
        b_k = tl.load(p_k, mask=m_k, other=0.).to(tl.float32)
        b_w = tl.load(p_w, mask=m_k, other=0.).to(tl.float32)
        b_v = tl.load(p_v, mask=m_v, other=0.).to(tl.float32)
        b_kv = b_k[:, None] * b_v[None, :]
        # the current token enters the read-out through the bonus u only
        b_o = tl.sum(b_r[:, None] * (b_h + b_u[:, None] * b_kv), axis=0)
        tl.store(p_o, b_o.to(p_o.dtype.element_ty), mask=m_v)
        b_h = b_h * tl.exp(b_w)[:, None] + b_kv
        p_r += H * K
        p_k += H * K
        p_w += H * K
        p_v += H * V
        p_o += H * V
    if STORE_FINAL_STATE:
        tl.store(ht + state_off, b_h.to(ht.dtype.element_ty), mask=m_kv)


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
