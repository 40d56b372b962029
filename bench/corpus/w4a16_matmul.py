"""Weight-only int4 GEMM: B holds two 4-bit weights per byte along K
(low nibble first), with one fp16 scale and zero point per (group of K,
column); each tile is unpacked with shifts, dequantised to fp16 and fed
to the dot."""
import torch
import triton
import triton.language as tl


@triton.jit
def w4a16_gemm_kernel(a_ptr, qb_ptr, scales_ptr, zeros_ptr, c_ptr, M, N, K, stride_am,
                      stride_qk, stride_cm, group_size, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + kk[None, :],
                    mask=mask_m[:, None], other=0.0)
        packed = tl.load(qb_ptr + (kk // 2)[:, None] * stride_qk + offs_n[None, :],
                         mask=mask_n[None, :], other=0)
        shift = (kk % 2) * 4
        q = (packed.to(tl.int32) >> shift[:, None]) & 0xF
        g = k0 // group_size
        scale = tl.load(scales_ptr + g * N + offs_n, mask=mask_n, other=0.0)
        zero = tl.load(zeros_ptr + g * N + offs_n, mask=mask_n, other=0.0)
        b = ((q.to(tl.float32) - zero[None, :]) * scale[None, :]).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(tl.float16),
             mask=mask_m[:, None] & mask_n[None, :])


def w4a16_gemm(a, qweight, scales, zeros, group_size=128):
    M, K = a.shape
    N = qweight.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 128))
    w4a16_gemm_kernel[grid](a, qweight, scales, zeros, c, M, N, K, a.stride(0), qweight.stride(0),
                            c.stride(0), group_size, BLOCK_M=64, BLOCK_N=128, BLOCK_K=64,
                            num_warps=4, num_stages=3)
    return c
