"""Attention forward over packed variable-length sequences whose mask
tile a runtime flag chooses in every key step: `qk = tl.zeros(...)`, then
`qk += tl.where(...)` under `if causal:` (rows against keys) or else (keys
past the sequence), then the scaled scores added, as sparse-attention
libraries write it. Block pointers read Q, K (transposed) and V."""
import triton
import triton.language as tl


@triton.jit
def flag_mask_fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, cu_seqlens, sm_scale, causal,
                  stride_n, stride_h, stride_lh, HEAD_DIM: tl.constexpr, BLOCK_Q: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    qk_scale = sm_scale * 1.44269504
    pid_b = tl.program_id(0)
    pid_h = tl.program_id(1)
    pid_q = tl.program_id(2)
    start = tl.load(cu_seqlens + pid_b)
    seq_len = tl.load(cu_seqlens + pid_b + 1) - start
    if BLOCK_Q * pid_q >= seq_len:
        return
    base = start * stride_n + pid_h * stride_h
    q_ptrs = tl.make_block_ptr(q_ptr + base, (seq_len, HEAD_DIM), (stride_n, 1),
                               (pid_q * BLOCK_Q, 0), (BLOCK_Q, HEAD_DIM), (1, 0))
    k_ptrs = tl.make_block_ptr(k_ptr + base, (HEAD_DIM, seq_len), (1, stride_n), (0, 0),
                               (HEAD_DIM, BLOCK_K), (0, 1))
    v_ptrs = tl.make_block_ptr(v_ptr + base, (seq_len, HEAD_DIM), (stride_n, 1), (0, 0),
                               (BLOCK_K, HEAD_DIM), (1, 0))
    q = tl.load(q_ptrs, boundary_check=(0, 1), padding_option="zero")
    off_q = pid_q * BLOCK_Q + tl.arange(0, BLOCK_Q)
    off_k = tl.arange(0, BLOCK_K)
    m_i = tl.full((BLOCK_Q,), float("-inf"), dtype=tl.float32)
    lse_i = tl.full((BLOCK_Q,), float("-inf"), dtype=tl.float32)
    acc = tl.zeros((BLOCK_Q, HEAD_DIM), dtype=tl.float32)
    if causal:
        hi = min(seq_len, (pid_q + 1) * BLOCK_Q)
    else:
        hi = seq_len
    for i in range(0, hi, BLOCK_K):
        i = tl.multiple_of(i, BLOCK_K)
        k = tl.load(k_ptrs, boundary_check=(1, 0), padding_option="zero")
        qk = tl.zeros((BLOCK_Q, BLOCK_K), dtype=tl.float32)
        if causal:
            qk += tl.where(off_q[:, None] >= (i + off_k)[None, :], 0, float("-inf"))
        else:
            qk += tl.where((off_k < seq_len - i)[None, :], 0, float("-inf"))
        qk += tl.dot(q, k) * qk_scale
        m_ij = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.math.exp2(qk - m_ij[:, None])
        l_ij = tl.sum(p, axis=1)
        acc = acc * tl.math.exp2(m_i - m_ij)[:, None]
        v = tl.load(v_ptrs, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(p.to(v.dtype), v)
        m_i = m_ij
        lse_i = m_ij + tl.math.log2(tl.math.exp2(lse_i - m_ij) + l_ij)
        k_ptrs = tl.advance(k_ptrs, (0, BLOCK_K))
        v_ptrs = tl.advance(v_ptrs, (BLOCK_K, 0))
    acc = acc * tl.math.exp2(m_i - lse_i)[:, None]
    o_ptrs = tl.make_block_ptr(o_ptr + base, (seq_len, HEAD_DIM), (stride_n, 1),
                               (pid_q * BLOCK_Q, 0), (BLOCK_Q, HEAD_DIM), (1, 0))
    tl.store(o_ptrs, acc.to(o_ptr.dtype.element_ty), boundary_check=(0, 1))
    tl.store(lse_ptr + pid_h * stride_lh + start + off_q, lse_i, mask=off_q < seq_len)
