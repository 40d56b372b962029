"""The state pass of a chunked linear-attention scan: each program owns one
head's [K, V] state block, walks the sequence in chunks of BT rows, writes
the state at the start of every NTS-th chunk (stored as [V, K] when
V_FIRST), decays it by the chunk's last gate and adds k^T v of the chunk.
The state is a tensor-core accumulator that an `if` reads at the top of
the loop body."""
import triton
import triton.language as tl


@triton.jit
def chunk_state_fwd(k, v, g, h, T, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
                    BT: tl.constexpr, NTS: tl.constexpr, V_FIRST: tl.constexpr,
                    USE_G: tl.constexpr):
    i_h = tl.program_id(0)
    o_k = tl.arange(0, K)
    o_v = tl.arange(0, V)
    b_h = tl.zeros([K, V], dtype=tl.float32)
    n_t = tl.cdiv(T, BT)
    n_s = tl.cdiv(n_t, NTS)
    for i_t in range(n_t):
        o_t = i_t * BT + tl.arange(0, BT)
        m_t = o_t < T
        base = (i_h * n_s + i_t // NTS) * K * V
        if i_t % NTS == 0:
            if V_FIRST:
                p_h = h + base + o_v[:, None] * K + o_k[None, :]
                tl.store(p_h, tl.trans(b_h).to(p_h.dtype.element_ty))
            else:
                p_h = h + base + o_k[:, None] * V + o_v[None, :]
                tl.store(p_h, b_h.to(p_h.dtype.element_ty))
        b_k = tl.load(k + (o_t[None, :] * H + i_h) * K + o_k[:, None], mask=m_t[None, :], other=0.0)
        b_v = tl.load(v + (o_t[:, None] * H + i_h) * V + o_v[None, :], mask=m_t[:, None], other=0.0)
        if USE_G:
            last = tl.minimum((i_t + 1) * BT, T) - 1
            g_last = tl.load(g + last * H + i_h)
            b_g = tl.load(g + o_t * H + i_h, mask=m_t, other=0.0)
            b_h *= tl.exp(g_last)
            b_v = (b_v * tl.exp(g_last - b_g)[:, None]).to(b_v.dtype)
        b_h = tl.dot(b_k, b_v, b_h)
