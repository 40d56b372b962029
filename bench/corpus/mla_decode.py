"""Multi-head latent attention decode with the up-projections absorbed:
every head attends over one shared latent cache. The score of a cached
token is q_nope . c_kv (the 512-wide latent part) plus q_pe . k_pe (the
64-wide rotary part); the output is the softmax-weighted sum of the latent
rows. A program takes BLOCK_H heads of one request so the latent tile
loaded for a block of tokens serves all of them through tl.dot."""
import torch
import triton
import triton.language as tl


@triton.jit
def _mla_decode_fwd(Q_nope, Q_pe, KV_latent, K_pe, Out, b_start, b_seq_len, sm_scale, num_heads,
                    stride_qn_b, stride_qn_h, stride_qp_b, stride_qp_h, stride_kv, stride_kpe,
                    stride_o_b, stride_o_h, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr,
                    LATENT_DIM: tl.constexpr, ROPE_DIM: tl.constexpr):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    mask_h = cur_head < num_heads
    start = tl.load(b_start + cur_batch)
    seq_len = tl.load(b_seq_len + cur_batch)
    offs_c = tl.arange(0, LATENT_DIM)
    offs_r = tl.arange(0, ROPE_DIM)
    offs_n = tl.arange(0, BLOCK_N)
    q_nope = tl.load(Q_nope + cur_batch * stride_qn_b + cur_head[:, None] * stride_qn_h +
                     offs_c[None, :], mask=mask_h[:, None], other=0.0)
    q_pe = tl.load(Q_pe + cur_batch * stride_qp_b + cur_head[:, None] * stride_qp_h +
                   offs_r[None, :], mask=mask_h[:, None], other=0.0)
    m_i = tl.full([BLOCK_H], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, LATENT_DIM], dtype=tl.float32)
    for start_n in range(0, seq_len, BLOCK_N):
        tok = start + start_n + offs_n
        mask_n = start_n + offs_n < seq_len
        kv = tl.load(KV_latent + tok[:, None] * stride_kv + offs_c[None, :],
                     mask=mask_n[:, None], other=0.0)
        kpe = tl.load(K_pe + tok[None, :] * stride_kpe + offs_r[:, None],
                      mask=mask_n[None, :], other=0.0)
        qk = tl.dot(q_nope, tl.trans(kv))
        qk += tl.dot(q_pe, kpe)
        qk *= sm_scale
        qk = tl.where(mask_n[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(kv.dtype), kv)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(Out + cur_batch * stride_o_b + cur_head[:, None] * stride_o_h + offs_c[None, :],
             acc.to(Out.dtype.element_ty), mask=mask_h[:, None])
