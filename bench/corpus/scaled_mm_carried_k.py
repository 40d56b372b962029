"""A W8A8 int8 GEMM written the way serving engines' fallback scaled-mm
kernels are: a 1-D grid without group ordering, 64-bit offsets, the K
offsets carried through the loop (`offsets_k += BLOCK_SIZE_K`) and masked
on every step, and the per-token and per-channel scales loaded as [M, 1]
and [N, 1] columns that broadcast against the int32 accumulator."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scaled_mm_carried_k(a_ptr, b_ptr, scale_a_ptr, scale_b_ptr, c_ptr, M, N, K,
                         stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                         BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                         BLOCK_SIZE_K: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    # plain row-major tile order
    tile_m = pid // tiles_n
    tile_n = pid % tiles_n

    # 64-bit row/column offsets
    offsets_am = tile_m.to(tl.int64) * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    offsets_bn = tile_n.to(tl.int64) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
    offsets_k = tl.arange(0, BLOCK_SIZE_K).to(tl.int64)
    m_ok = offsets_am < M
    n_ok = offsets_bn < N

    a_ptrs = a_ptr + offsets_am[:, None] * stride_am + offsets_k[None, :] * stride_ak
    b_ptrs = b_ptr + offsets_k[:, None] * stride_bk + offsets_bn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.int32)
    for _ in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_ok = offsets_k < K
        a = tl.load(a_ptrs, mask=m_ok[:, None] & k_ok[None, :], other=0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & n_ok[None, :], other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        # the K offsets and both pointer tiles move on together
        offsets_k += BLOCK_SIZE_K
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    # per-token scale as an [M, 1] column, per-channel scale laid across N as [1, N]
    s_a = tl.load(scale_a_ptr + offsets_am[:, None], mask=m_ok[:, None], other=0.0)
    s_b = tl.load(scale_b_ptr + offsets_bn[None, :], mask=n_ok[None, :], other=0.0)
    res = s_a * (s_b * acc.to(tl.float32))

    c_ptrs = c_ptr + offsets_am[:, None] * stride_cm + offsets_bn[None, :] * stride_cn
    tl.store(c_ptrs, res.to(c_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def scaled_mm_carried_k(a, b, scale_a, scale_b, out_dtype=torch.bfloat16, BLOCK_SIZE_M=64,
                        BLOCK_SIZE_N=128, BLOCK_SIZE_K=128):
    """a: [M, K] int8, b: [K, N] int8 (often a transposed [N, K] weight),
    scale_a: [M] or [M, 1], scale_b: [N] or [N, 1], fp32."""
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=out_dtype)
    grid = (triton.cdiv(M, BLOCK_SIZE_M) * triton.cdiv(N, BLOCK_SIZE_N),)
    _scaled_mm_carried_k[grid](a, b, scale_a, scale_b, c, M, N, K, a.stride(0), a.stride(1),
                               b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                               BLOCK_SIZE_M=BLOCK_SIZE_M, BLOCK_SIZE_N=BLOCK_SIZE_N,
                               BLOCK_SIZE_K=BLOCK_SIZE_K, num_warps=4, num_stages=3)
    return c
