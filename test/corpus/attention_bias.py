"""Attention forward that adds a bias tile to the scores in every key step
(a relative-position bias, or a float attention mask): the tile has its
own row stride and element type, and its padding beyond the last key is
either -inf (the bias masks the keys) or zero (the keys are masked apart)."""
import triton
import triton.language as tl


@triton.jit
def attn_bias_fwd(Q, K, V, Bias, Out, sm_scale, stride_h, stride_m, stride_bh, stride_bm, N_CTX,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  PAD_INF: tl.constexpr):
    pid_m = tl.program_id(0)
    head = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    row_ok = rows < N_CTX
    base = head * stride_h
    q = tl.load(Q + base + rows[:, None] * stride_m + dims[None, :], mask=row_ok[:, None],
                other=0.0)
    bias_rows = Bias + head * stride_bh + rows[:, None] * stride_bm
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start in range(0, N_CTX, BLOCK_N):
        keys = start + cols
        key_ok = keys < N_CTX
        k = tl.load(K + base + keys[None, :] * stride_m + dims[:, None], mask=key_ok[None, :],
                    other=0.0)
        v = tl.load(V + base + keys[:, None] * stride_m + dims[None, :], mask=key_ok[:, None],
                    other=0.0)
        s = tl.dot(q, k) * sm_scale
        both = row_ok[:, None] & key_ok[None, :]
        if PAD_INF:
            b = tl.load(bias_rows + keys[None, :], mask=both, other=float("-inf"))
            s = s + b.to(tl.float32)
        else:
            b = tl.load(bias_rows + keys[None, :], mask=both, other=0.0)
            s = tl.where(key_ok[None, :], s + b.to(tl.float32), float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(Out + base + rows[:, None] * stride_m + dims[None, :], out.to(Out.dtype.element_ty),
             mask=row_ok[:, None])
