"""Attention forward with ALiBi position biases and a sliding causal window,
as long-context serving stacks run it: the score of query i and key j gets
slope_h * (j - i), the slope read from a per-head table (the geometric
ALiBi sequence, or whatever the model was trained with), and key j is
visible only if i - window <= j <= i. One program per (query block,
batch x head); its key loop runs only over the blocks the window can reach,
from max(0, first query - window) rounded down to a key block to the end of
the query block, so the cost grows with the window, not the sequence.
Scores are kept in base 2 (scale and slope both multiplied by log2 e) for
exp2 in the online softmax; hidden keys get a large finite negative score
instead of -inf, so a row whose first key block is wholly outside its
window stays finite and is reset by the first block it can see."""
import torch
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_alibi_window(Q, K, V, Slopes, Out, sm_scale, stride_qz, stride_qh, stride_qm,
                           stride_kz, stride_kh, stride_kn, stride_vz, stride_vh, stride_vn,
                           stride_oz, stride_oh, stride_om, H, N_CTX, window,
                           HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ok = offs_m < N_CTX

    q_ptrs = Q + off_z * stride_qz + off_h * stride_qh + offs_m[:, None] * stride_qm + \
        offs_d[None, :]
    k_ptrs = K + off_z * stride_kz + off_h * stride_kh + offs_n[None, :] * stride_kn + \
        offs_d[:, None]
    v_ptrs = V + off_z * stride_vz + off_h * stride_vh + offs_n[:, None] * stride_vn + \
        offs_d[None, :]

    LOG2E: tl.constexpr = 1.4426950408889634
    qk_scale = sm_scale * LOG2E
    slope = tl.load(Slopes + off_h).to(tl.float32) * LOG2E
    q = tl.load(q_ptrs, mask=q_ok[:, None], other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # only the key blocks some query of this block can see
    lo = tl.maximum(start_m * BLOCK_M - window, 0)
    lo = (lo // BLOCK_N) * BLOCK_N
    hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k = tl.load(k_ptrs + start_n * stride_kn, mask=(cols < N_CTX)[None, :], other=0.0)
        qk = tl.dot(q, k)
        rel = cols[None, :] - offs_m[:, None]  # j - i, <= 0 for a visible key
        qk = qk * qk_scale + slope * rel.to(tl.float32)
        qk = tl.where((rel <= 0) & (rel >= -window), qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs + start_n * stride_vn, mask=(cols < N_CTX)[:, None], other=0.0)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij

    acc = acc / l_i[:, None]
    o_ptrs = Out + off_z * stride_oz + off_h * stride_oh + offs_m[:, None] * stride_om + \
        offs_d[None, :]
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=q_ok[:, None])


def alibi_slopes(n_heads):
    """The ALiBi slope table 2^(-8 h / H), h = 1..H, for a power-of-two head count."""
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)],
                        dtype=torch.float32)


def attention_alibi_window(q, k, v, slopes, window, sm_scale=None, BLOCK_M=128, BLOCK_N=64,
                           num_warps=8, num_stages=3):
    """q, k, v [Z, H, N, D] (last dim contiguous), slopes [H] fp32; key j is seen by
    query i when i - window <= j <= i."""
    Z, H, N, D = q.shape
    assert k.shape == v.shape == q.shape and slopes.numel() == H
    if sm_scale is None:
        sm_scale = D ** -0.5
    o = torch.empty_like(q)
    grid = (triton.cdiv(N, BLOCK_M), Z * H)
    _attn_fwd_alibi_window[grid](
        q, k, v, slopes.to(q.device), o, sm_scale, q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2),
        o.stride(0), o.stride(1), o.stride(2), H, N, window, HEAD_DIM=D, BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N, num_warps=num_warps, num_stages=num_stages)
    return o
