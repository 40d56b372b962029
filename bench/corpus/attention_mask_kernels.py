"""Attention forward with an additive mask tensor, as scaled_dot_product_attention
takes one (a float attn_mask added to the scores: relative-position biases,
padding masks written as -inf): one program per (query block, batch x head);
the mask has its own strides, so a mask shared by all heads passes stride 0."""
import triton
import triton.language as tl


@triton.jit
def _sdpa_fwd_additive_mask(Q, K, V, Mask, Out, sm_scale,
                            stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
                            stride_vb, stride_vh, stride_vn, stride_mb, stride_mh, stride_mm,
                            stride_ob, stride_oh, stride_om, H, N_CTX,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_b = off_hz // H
    off_h = off_hz % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_valid = offs_m < N_CTX

    q_ptrs = Q + off_b * stride_qb + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :]
    k_ptrs = K + off_b * stride_kb + off_h * stride_kh + offs_n[None, :] * stride_kn + offs_d[:, None]
    v_ptrs = V + off_b * stride_vb + off_h * stride_vh + offs_n[:, None] * stride_vn + offs_d[None, :]
    mask_ptrs = Mask + off_b * stride_mb + off_h * stride_mh + offs_m[:, None] * stride_mm + \
        offs_n[None, :]

    # scores in base 2: exp(x) = exp2(x * log2(e)), the mask scaled the same way
    LOG2E: tl.constexpr = 1.4426950408889634
    qk_scale = sm_scale * LOG2E
    q = tl.load(q_ptrs, mask=m_valid[:, None], other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, N_CTX, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        n_valid = (start_n + offs_n) < N_CTX
        k = tl.load(k_ptrs + start_n * stride_kn, mask=n_valid[None, :], other=0.0)
        qk = tl.dot(q, k)
        # keys past the end get -inf from the mask's padding value
        bias = tl.load(mask_ptrs + start_n, mask=m_valid[:, None] & n_valid[None, :],
                       other=float("-inf")).to(tl.float32)
        qk = qk * qk_scale + bias * LOG2E
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs + start_n * stride_vn, mask=n_valid[:, None], other=0.0)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_ptrs = Out + off_b * stride_ob + off_h * stride_oh + offs_m[:, None] * stride_om + \
        offs_d[None, :]
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=m_valid[:, None])


def sdpa_additive_mask(q, k, v, mask, sm_scale, BLOCK_M=128, BLOCK_N=64, num_warps=4,
                       num_stages=3):
    """q, k, v: [B, H, N, D]; mask: [B, 1 or H, N, N], added to the scaled scores."""
    B, H, N, D = q.shape
    o = q.new_empty(q.shape)
    stride_mh = 0 if mask.shape[1] == 1 else mask.stride(1)
    grid = (triton.cdiv(N, BLOCK_M), B * H)
    _sdpa_fwd_additive_mask[grid](
        q, k, v, mask, o, sm_scale, q.stride(0), q.stride(1), q.stride(2), k.stride(0),
        k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2), mask.stride(0),
        stride_mh, mask.stride(2), o.stride(0), o.stride(1), o.stride(2), H, N,
        HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=num_warps,
        num_stages=num_stages)
    return o
