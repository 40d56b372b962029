"""The key/value half of a flash-attention backward, as attention libraries
write it in Triton: one program per BLOCK_N keys of one (batch, head) keeps
its K and V tiles in registers and walks the query blocks, reloading Q, dO,
the forward's per-row logsumexp (base 2: the forward ran its softmax with
exp2 on scores scaled by sm_scale * log2(e)) and Delta = rowsum(dO * O),
which the host computes before the launch. The probabilities are rebuilt
from the scores, P = exp2(Q K^T * sm_scale * log2(e) - LSE), and the
program accumulates dV += P^T dO and dK += dS^T Q with
dS = P * (dO V^T - Delta) in fp32; dK takes sm_scale once at the end.
Causal is a constexpr: a query sees the keys at or before its position, so
key blocks start their walk at their own diagonal. fp16 operands, tensors
[batch, heads, tokens, head_dim]."""
import torch
import triton
import triton.language as tl


@triton.jit
def _attn_bwd_dkdv(Q, K, V, DO, LSE, Delta, DK, DV, sm_scale,
                   stride_qz, stride_qh, stride_qn, stride_kz, stride_kh, stride_kn,
                   stride_vz, stride_vh, stride_vn, stride_dz, stride_dh, stride_dn,
                   H, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_n = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    qk_scale = sm_scale * 1.4426950408889634

    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    key_ok = offs_n < N_CTX

    k_ptrs = K + off_z * stride_kz + off_h * stride_kh + offs_n[:, None] * stride_kn + offs_d[None, :]
    v_ptrs = V + off_z * stride_vz + off_h * stride_vh + offs_n[:, None] * stride_vn + offs_d[None, :]
    k = tl.load(k_ptrs, mask=key_ok[:, None], other=0.0)
    v = tl.load(v_ptrs, mask=key_ok[:, None], other=0.0)

    # query blocks wholly before this key block see none of it when causal
    if CAUSAL:
        lo = (start_n * BLOCK_N) // BLOCK_M * BLOCK_M
    else:
        lo = 0
    q_ptrs = Q + off_z * stride_qz + off_h * stride_qh + (lo + offs_m)[:, None] * stride_qn \
        + offs_d[None, :]
    do_ptrs = DO + off_z * stride_qz + off_h * stride_qh + (lo + offs_m)[:, None] * stride_qn \
        + offs_d[None, :]
    lse_ptrs = LSE + off_hz * N_CTX + lo + offs_m
    delta_ptrs = Delta + off_hz * N_CTX + lo + offs_m

    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    for start_m in range(lo, N_CTX, BLOCK_M):
        rows = start_m + offs_m
        row_ok = rows < N_CTX
        q = tl.load(q_ptrs, mask=row_ok[:, None], other=0.0)
        do = tl.load(do_ptrs, mask=row_ok[:, None], other=0.0)
        lse = tl.load(lse_ptrs, mask=row_ok, other=0.0)
        delta = tl.load(delta_ptrs, mask=row_ok, other=0.0)

        qk = tl.dot(q, tl.trans(k))
        p = tl.math.exp2(qk * qk_scale - lse[:, None])
        if CAUSAL:
            p = tl.where(rows[:, None] >= offs_n[None, :], p, 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q)

        q_ptrs += BLOCK_M * stride_qn
        do_ptrs += BLOCK_M * stride_qn
        lse_ptrs += BLOCK_M
        delta_ptrs += BLOCK_M

    dk *= sm_scale
    dk_ptrs = DK + off_z * stride_dz + off_h * stride_dh + offs_n[:, None] * stride_dn + offs_d[None, :]
    dv_ptrs = DV + off_z * stride_dz + off_h * stride_dh + offs_n[:, None] * stride_dn + offs_d[None, :]
    tl.store(dk_ptrs, dk.to(DK.dtype.element_ty), mask=key_ok[:, None])
    tl.store(dv_ptrs, dv.to(DV.dtype.element_ty), mask=key_ok[:, None])


def attention_bwd_dkdv(q, k, v, o, do, lse, sm_scale, causal=False, BLOCK_M=64, BLOCK_N=128):
    """dK and dV of attention from its saved output o and base-2 logsumexp
    lse [B, H, N] (fp32). q, k, v, o, do: [B, H, N, D] fp16, contiguous."""
    B, H, N, D = q.shape
    assert do.stride() == q.stride() and k.stride() == q.stride() and v.stride() == q.stride()
    delta = (do.float() * o.float()).sum(dim=-1).contiguous()
    dk = torch.empty_like(k)
    dv = torch.empty_like(v)
    grid = (triton.cdiv(N, BLOCK_N), B * H)
    _attn_bwd_dkdv[grid](q, k, v, do, lse, delta, dk, dv, sm_scale, *q.stride()[:3],
                         *k.stride()[:3], *v.stride()[:3], *dk.stride()[:3], H, N,
                         HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=causal,
                         num_warps=8, num_stages=2)
    return dk, dv
