"""Batched matrix multiply over a 3-D grid: the batch is the grid's third
axis and every operand has its own batch stride, all strides runtime
ints; masks on every dimension (M, N and the K tail)."""
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"TILE_M": 64, "TILE_N": 64, "TILE_K": 32}, num_warps=4, num_stages=3),
        triton.Config({"TILE_M": 128, "TILE_N": 64, "TILE_K": 32}, num_warps=4, num_stages=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def bmm_kernel(A, B, O, M, N, K, stride_ab, stride_am, stride_ak, stride_bb, stride_bk,
               stride_bn, stride_ob, stride_om, stride_on, TILE_M: tl.constexpr,
               TILE_N: tl.constexpr, TILE_K: tl.constexpr):
    pid_b = tl.program_id(2)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    A += pid_b * stride_ab
    B += pid_b * stride_bb
    O += pid_b * stride_ob
    offs_m = pid_m * TILE_M + tl.arange(0, TILE_M)
    offs_n = pid_n * TILE_N + tl.arange(0, TILE_N)
    offs_k = tl.arange(0, TILE_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = A + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = B + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    o = tl.zeros((TILE_M, TILE_N), dtype=tl.float32)
    num_iters = tl.cdiv(K, TILE_K)
    for i in range(num_iters):
        mask_k = offs_k < K - i * TILE_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        o += tl.dot(a, b, allow_tf32=False)
        a_ptrs += TILE_K * stride_ak
        b_ptrs += TILE_K * stride_bk
    o_ptrs = O + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on
    tl.store(o_ptrs, o.to(O.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def bmm(a, b):
    batch, M, K = a.shape
    N = b.shape[2]
    out = torch.empty((batch, M, N), device=a.device, dtype=a.dtype)
    grid = lambda META: (triton.cdiv(M, META["TILE_M"]), triton.cdiv(N, META["TILE_N"]), batch)
    bmm_kernel[grid](a, b, out, M, N, K, a.stride(0), a.stride(1), a.stride(2), b.stride(0),
                     b.stride(1), b.stride(2), out.stride(0), out.stride(1), out.stride(2))
    return out
