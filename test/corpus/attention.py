"""Fused attention forward (flash-attention style): each program owns a block
of queries of one head and streams the keys and values through an online
softmax. Causal masking runs in two stages so the blocks before the diagonal
need no mask. Autotune configs are built and filtered by host code."""
import os

import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
TORCH_HAS_FP8 = hasattr(torch, "float8_e5m2")


def is_hopper():
    return torch.cuda.get_device_capability()[0] >= 9


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, K, V, stride_kn, stride_vn, start_m, qk_scale,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                    STAGE: tl.constexpr, offs_m, offs_n, offs_d, N_CTX):
    # stage 1: blocks left of the diagonal; 2: the diagonal block; 3: all (non-causal)
    # K points at a [HEAD_DIM, BLOCK_N] tile of K^T for keys 0..BLOCK_N-1 and V
    # at a [BLOCK_N, HEAD_DIM] tile; stride_kn / stride_vn step one key in each.
    if STAGE == 1:
        key_lo = 0
        key_hi = start_m * BLOCK_M
    elif STAGE == 2:
        key_lo = start_m * BLOCK_M
        key_hi = key_lo + BLOCK_M
        key_lo = tl.multiple_of(key_lo, BLOCK_M)
    else:
        key_lo = 0
        key_hi = N_CTX
    for kstart in range(key_lo, key_hi, BLOCK_N):
        kstart = tl.multiple_of(kstart, BLOCK_N)
        kt = tl.load(K + kstart * stride_kn)
        scores = tl.dot(q, kt) * qk_scale
        if STAGE == 2:
            visible = offs_m[:, None] >= (kstart + offs_n[None, :])
            scores = tl.where(visible, scores, float("-inf"))
        row_max = tl.maximum(m_i, tl.max(scores, 1))
        probs = tl.math.exp2(scores - row_max[:, None])
        rescale = tl.math.exp2(m_i - row_max)
        l_i = l_i * rescale + tl.sum(probs, 1)
        vt = tl.load(V + kstart * stride_vn)
        acc = acc * rescale[:, None]
        acc = tl.dot(probs.to(vt.dtype), vt, acc)
        m_i = row_max
    return acc, l_i, m_i


def keep(conf):
    # Hopper wants the bigger tiles with 8 warps; everything else is fine
    BLOCK_M = conf.kwargs["BLOCK_M"]
    BLOCK_N = conf.kwargs["BLOCK_N"]
    return not (is_hopper() and BLOCK_M * BLOCK_N < 128 * 128 and conf.num_warps == 8)


configs = [
    triton.Config({"BLOCK_M": BM, "BLOCK_N": BN}, num_stages=s, num_warps=w)
    for BM in [64, 128]
    for BN in [32, 64]
    for s in ([1] if os.environ.get("ATTN_FAST_TUNE") else [3, 4])
    for w in [4, 8]
]


@triton.autotune(list(filter(keep, configs)), key=["N_CTX", "HEAD_DIM"])
@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out,
              stride_qz, stride_qh, stride_qm, stride_qk,
              stride_kz, stride_kh, stride_kn, stride_kk,
              stride_vz, stride_vh, stride_vk, stride_vn,
              stride_oz, stride_oh, stride_om, stride_on,
              Z, H, N_CTX,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    zh = tl.program_id(1)
    z_idx = zh // H
    h_idx = zh % H
    q_base = z_idx.to(tl.int64) * stride_qz + h_idx.to(tl.int64) * stride_qh
    k_base = z_idx.to(tl.int64) * stride_kz + h_idx.to(tl.int64) * stride_kh
    v_base = z_idx.to(tl.int64) * stride_vz + h_idx.to(tl.int64) * stride_vh
    o_base = z_idx.to(tl.int64) * stride_oz + h_idx.to(tl.int64) * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q = tl.load(Q + q_base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk)
    # K read transposed: rows are the head dimension, columns the keys
    kt_tile = K + k_base + offs_d[:, None] * stride_kk + offs_n[None, :] * stride_kn
    # V's sequence stride is stride_vk, its head-dim stride stride_vn
    v_tile = V + v_base + offs_n[:, None] * stride_vk + offs_d[None, :] * stride_vn

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # work in base 2: fold 1/ln(2) into the score scale
    qk_scale = sm_scale * 1.4426950408889634

    if STAGE & 1:
        # non-causal (STAGE 1) -> inner stage 3; causal (STAGE 3) -> inner stage 1
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, kt_tile, v_tile, stride_kn, stride_vk,
                                        start_m, qk_scale, BLOCK_M, HEAD_DIM, BLOCK_N,
                                        4 - STAGE, offs_m, offs_n, offs_d, N_CTX)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, kt_tile, v_tile, stride_kn, stride_vk,
                                        start_m, qk_scale, BLOCK_M, HEAD_DIM, BLOCK_N,
                                        2, offs_m, offs_n, offs_d, N_CTX)

    # log-sum-exp of the scaled scores, in base 2
    tl.store(M + zh * N_CTX + offs_m, m_i + tl.math.log2(l_i))
    out = acc / l_i[:, None]
    tl.store(Out + o_base + offs_m[:, None] * stride_om + offs_d[None, :] * stride_on,
             out.to(Out.type.element_ty))


@triton.jit
def _attn_scores(Q, K, S, stride_q, stride_k, stride_s, N_CTX, sm_scale,
                 HEAD_DIM: tl.constexpr, BLOCK: tl.constexpr):
    """The scaled scores of one block of queries against all keys (a
    debugging aid the tests compare the fused kernel's statistics with)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK + tl.arange(0, BLOCK)
    rn = pid_n * BLOCK + tl.arange(0, BLOCK)
    rd = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + rm[:, None] * stride_q + rd[None, :], mask=rm[:, None] < N_CTX, other=0.0)
    k = tl.load(K + rn[:, None] * stride_k + rd[None, :], mask=rn[:, None] < N_CTX, other=0.0)
    s = tl.dot(q, tl.trans(k)) * sm_scale
    mask = (rm[:, None] < N_CTX) & (rn[None, :] < N_CTX)
    tl.store(S + rm[:, None] * stride_s + rn[None, :], s, mask=mask)


class _attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal, sm_scale):
        HEAD_DIM_Q, HEAD_DIM_K = q.shape[-1], k.shape[-1]
        assert HEAD_DIM_Q == HEAD_DIM_K and HEAD_DIM_K in {16, 32, 64, 128}
        o = torch.empty_like(q)
        stage = 3 if causal else 1
        M = torch.empty((q.shape[0], q.shape[1], q.shape[2]), device=q.device, dtype=torch.float32)
        grid = lambda args: (triton.cdiv(q.shape[2], args["BLOCK_M"]), q.shape[0] * q.shape[1], 1)
        _attn_fwd[grid](q, k, v, sm_scale, M, o, *q.stride(), *k.stride(), *v.stride(),
                        *o.stride(), q.shape[0], q.shape[1], N_CTX=q.shape[2],
                        HEAD_DIM=HEAD_DIM_K, STAGE=stage)
        ctx.save_for_backward(q, k, v, o, M)
        ctx.sm_scale, ctx.causal = sm_scale, causal
        return o


attention = _attention.apply


def cases(*params):
    def wrap(fn):
        fn.cases = params
        return fn
    return wrap


@cases((1, 2, 128, 64, True), (2, 4, 1024, 64, False))
def test_op(Z, H, N_CTX, HEAD_DIM, causal, dtype=torch.float16):
    torch.manual_seed(20)
    q, k, v = (torch.randn((Z, H, N_CTX, HEAD_DIM), dtype=dtype, device=DEVICE) for _ in range(3))
    sm_scale = 0.5
    p = torch.matmul(q, k.transpose(2, 3)) * sm_scale
    if causal:
        p[:, :, torch.tril(torch.ones((N_CTX, N_CTX), device=DEVICE)) == 0] = float("-inf")
    ref = torch.matmul(torch.softmax(p.float(), dim=-1).half(), v)
    torch.testing.assert_close(attention(q, k, v, causal, sm_scale), ref, atol=1e-2, rtol=0)


if __name__ == "__main__":
    for case in test_op.cases:
        test_op(*case)
    print("ok")
