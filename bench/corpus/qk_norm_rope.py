"""Per-head RMSNorm of q and k followed by NeoX rotary embedding, fused
and in place, as serving stacks do for models with "qk-norm" attention
(Qwen3 and its relatives normalise every query and key head over its
head_dim with a learned [head_dim] weight, one for q and one for k, before
rotating them). q is [T, Hq, D] and k [T, Hk, D]; the grid is (tokens,
head blocks), the head blocks of q first and then those of k, so one
launch covers both and each program picks its tensor, weight and head
count with a branch on its block index. A program loads BLOCK_H heads of
one token as their two halves (x1 = dims [0, D/2), x2 = [D/2, D)), takes
the mean square of each head from both halves in fp32, scales by the
reciprocal RMS and the weight, then rotates the pair with the cos and
sin rows its token's int64 position selects from [max_pos, D/2] caches
(x1 * cos - x2 * sin, x2 * cos + x1 * sin) and writes both halves back
over the input. Token and head strides are runtime ints."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_rope_heads(base, head_stride, num_heads, head0, w_ptr, cos, sin, eps,
                    HEAD_DIM: tl.constexpr, BLOCK_H: tl.constexpr):
    HALF: tl.constexpr = HEAD_DIM // 2
    d = tl.arange(0, HALF)
    heads = head0 + tl.arange(0, BLOCK_H)
    live = (heads < num_heads)[:, None]
    lo = base + heads[:, None] * head_stride + d[None, :]
    x1 = tl.load(lo, mask=live, other=0.0).to(tl.float32)
    x2 = tl.load(lo + HALF, mask=live, other=0.0).to(tl.float32)
    w1 = tl.load(w_ptr + d).to(tl.float32)
    w2 = tl.load(w_ptr + HALF + d).to(tl.float32)

    mean_sq = (tl.sum(x1 * x1, axis=1) + tl.sum(x2 * x2, axis=1)) / HEAD_DIM
    rstd = tl.math.rsqrt(mean_sq + eps)[:, None]
    x1 = x1 * rstd * w1[None, :]
    x2 = x2 * rstd * w2[None, :]

    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    tl.store(lo, o1.to(base.dtype.element_ty), mask=live)
    tl.store(lo + HALF, o2.to(base.dtype.element_ty), mask=live)


@triton.jit
def qk_rmsnorm_rope_kernel(q_ptr, k_ptr, q_weight_ptr, k_weight_ptr, cos_ptr, sin_ptr,
                           positions_ptr, stride_q_tok, stride_q_head, stride_k_tok,
                           stride_k_head, stride_cache, num_q_heads, num_k_heads, eps,
                           HEAD_DIM: tl.constexpr, BLOCK_H: tl.constexpr):
    HALF: tl.constexpr = HEAD_DIM // 2
    token = tl.program_id(0).to(tl.int64)
    hblk = tl.program_id(1)
    pos = tl.load(positions_ptr + token)
    d = tl.arange(0, HALF)
    cos = tl.load(cos_ptr + pos * stride_cache + d).to(tl.float32)[None, :]
    sin = tl.load(sin_ptr + pos * stride_cache + d).to(tl.float32)[None, :]

    q_blocks = tl.cdiv(num_q_heads, BLOCK_H)
    if hblk < q_blocks:
        _rms_rope_heads(q_ptr + token * stride_q_tok, stride_q_head, num_q_heads,
                        hblk * BLOCK_H, q_weight_ptr, cos, sin, eps, HEAD_DIM, BLOCK_H)
    else:
        _rms_rope_heads(k_ptr + token * stride_k_tok, stride_k_head, num_k_heads,
                        (hblk - q_blocks) * BLOCK_H, k_weight_ptr, cos, sin, eps, HEAD_DIM,
                        BLOCK_H)


def qk_rmsnorm_rope_(q, k, q_weight, k_weight, cos_cache, sin_cache, positions, eps=1e-6,
                     BLOCK_H=8, num_warps=4):
    """In place: q [T, Hq, D], k [T, Hk, D] <- rope(rmsnorm(.) * weight) at positions [T]."""
    T, Hq, D = q.shape
    Hk = k.shape[1]
    assert q.stride(2) == 1 and k.stride(2) == 1 and cos_cache.shape[1] * 2 == D
    grid = (T, triton.cdiv(Hq, BLOCK_H) + triton.cdiv(Hk, BLOCK_H))
    qk_rmsnorm_rope_kernel[grid](q, k, q_weight, k_weight, cos_cache, sin_cache, positions,
                                 q.stride(0), q.stride(1), k.stride(0), k.stride(1),
                                 cos_cache.stride(0), Hq, Hk, eps, HEAD_DIM=D, BLOCK_H=BLOCK_H,
                                 num_warps=num_warps)
    return q, k
