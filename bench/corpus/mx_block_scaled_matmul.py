"""Block-scaled (MX) GEMM in the manner of Triton's block-scaled matmul
tutorial and the mxfp8 kernels built on it: A [M, K] and B [N, K] both
in float8 e4m3, each with one e8m0 exponent (a uint8, value 2^(s - 127))
per 32 consecutive elements of K, for every row of A and every row of B
(column of the product's right operand). C = (A * 2^sa) @ (B * 2^sb)^T
through tl.dot_scaled with an fp32 accumulator, written as bf16. A plain
2-D grid of output tiles, the K loop stepping one BLOCK_K at a time; rows
past M and N are wrapped with a modulo on load and masked on store."""
import torch
import triton
import triton.language as tl


@triton.jit
def block_scaled_matmul_kernel(a_ptr, b_ptr, a_scale_ptr, b_scale_ptr, c_ptr, M, N, K,
                               stride_am, stride_bn, stride_asm, stride_bsn, stride_cm,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                               BLOCK_K: tl.constexpr, VEC_SIZE: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    SCALES_K: tl.constexpr = BLOCK_K // VEC_SIZE

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    offs_sk = tl.arange(0, SCALES_K)

    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    # B is K-major ([N, K] in memory); the tile is addressed as [BLOCK_K, BLOCK_N]
    b_ptrs = b_ptr + offs_bn[None, :] * stride_bn + offs_k[:, None]
    a_scale_ptrs = a_scale_ptr + offs_am[:, None] * stride_asm + offs_sk[None, :]
    b_scale_ptrs = b_scale_ptr + offs_bn[:, None] * stride_bsn + offs_sk[None, :]

    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        scale_a = tl.load(a_scale_ptrs)
        scale_b = tl.load(b_scale_ptrs)
        accumulator = tl.dot_scaled(a, scale_a, "e4m3", b, scale_b, "e4m3", accumulator)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
        a_scale_ptrs += SCALES_K
        b_scale_ptrs += SCALES_K

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, accumulator.to(c_ptr.dtype.element_ty), mask=c_mask)


def block_scaled_matmul(a, b, a_scale, b_scale, out_dtype=torch.bfloat16):
    """a [M, K], b [N, K] float8_e4m3fn; a_scale [M, K // 32], b_scale [N, K // 32] uint8."""
    M, K = a.shape
    N = b.shape[0]
    assert K % 128 == 0
    c = torch.empty((M, N), device=a.device, dtype=out_dtype)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
    block_scaled_matmul_kernel[grid](a, b, a_scale, b_scale, c, M, N, K, a.stride(0), b.stride(0),
                                     a_scale.stride(0), b_scale.stride(0), c.stride(0),
                                     BLOCK_M=128, BLOCK_N=128, BLOCK_K=128, VEC_SIZE=32,
                                     num_warps=8, num_stages=3)
    return c
