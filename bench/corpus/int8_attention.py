"""Attention whose QK^T runs in int8, as quantised-attention libraries write
their Triton forward: Q and K are quantised per block on the host (one fp32
scale for each BLOCK_M query rows and each BLOCK_N keys, the softmax scale
and log2(e) folded into Q's), the int32 scores are rescaled in fp32, the
online softmax runs in base 2, and P V stays in fp16. Non-causal; tensors
[batch, heads, tokens, head_dim]."""
import torch
import triton
import triton.language as tl


@triton.jit
def _int8_qk_attn_fwd(Q, K, V, Q_scale, K_scale, Out, stride_qz, stride_qh, stride_qn,
                      stride_kz, stride_kh, stride_kn, stride_vz, stride_vh, stride_vn,
                      stride_oz, stride_oh, stride_on, H, N_CTX, HEAD_DIM: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_blocks = tl.cdiv(N_CTX, BLOCK_M)
    k_blocks = tl.cdiv(N_CTX, BLOCK_N)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + off_z * stride_qz + off_h * stride_qh + offs_m[:, None] * stride_qn + offs_d[None, :]
    # K read as [HEAD_DIM, BLOCK_N]: the dot needs no transpose
    k_ptrs = K + off_z * stride_kz + off_h * stride_kh + offs_n[None, :] * stride_kn + offs_d[:, None]
    v_ptrs = V + off_z * stride_vz + off_h * stride_vh + offs_n[:, None] * stride_vn + offs_d[None, :]
    q_scale = tl.load(Q_scale + off_hz * q_blocks + start_m)
    k_scale_ptr = K_scale + off_hz * k_blocks
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, N_CTX, BLOCK_N):
        live = start_n + offs_n < N_CTX
        k = tl.load(k_ptrs, mask=live[None, :], other=0)
        k_scale = tl.load(k_scale_ptr)
        qk = tl.dot(q, k).to(tl.float32) * (q_scale * k_scale)
        qk = tl.where(live[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs, mask=live[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
        k_ptrs += BLOCK_N * stride_kn
        v_ptrs += BLOCK_N * stride_vn
        k_scale_ptr += 1
    o_ptrs = Out + off_z * stride_oz + off_h * stride_oh + offs_m[:, None] * stride_on + offs_d[None, :]
    tl.store(o_ptrs, (acc / l_i[:, None]).to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


def quant_per_block(x, block, scale=1.0):
    """int8 codes of x [B, H, N, D] with one scale per `block` tokens (x
    multiplied by `scale` first), and the scales [B, H, cdiv(N, block)]."""
    B, H, N, D = x.shape
    pad = triton.cdiv(N, block) * block - N
    xs = torch.nn.functional.pad(x.float() * scale, (0, 0, 0, pad)).view(B, H, -1, block, D)
    s = xs.abs().amax(dim=(3, 4)).clamp(min=1e-8) / 127.0
    codes = (xs / s[..., None, None]).round().clamp(-127, 127).to(torch.int8)
    return codes.view(B, H, -1, D)[:, :, :N].contiguous(), s


def int8_attention(q, k, v, BLOCK_M=128, BLOCK_N=64):
    B, H, N, D = q.shape
    qi, qs = quant_per_block(q, BLOCK_M, D ** -0.5 * 1.4426950408889634)
    ki, ks = quant_per_block(k, BLOCK_N)
    o = torch.empty_like(v)
    grid = (triton.cdiv(N, BLOCK_M), B * H)
    _int8_qk_attn_fwd[grid](qi, ki, v, qs, ks, o, *qi.stride()[:3], *ki.stride()[:3],
                            *v.stride()[:3], *o.stride()[:3], H, N, HEAD_DIM=D,
                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=3)
    return o
