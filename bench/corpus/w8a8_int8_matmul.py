"""int8 x int8 GEMM with an int32 accumulator and dynamic per-token scales
for activations and per-channel scales for weights, applied in the
epilogue: out = (A @ B) * a_scale[:, None] * b_scale[None, :], fp16 out.
B is the weight stored [N, K] (read K-major)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _w8a8_int8_kernel(A, B, C, As, Bs, M, N, K, stride_am, stride_bn, stride_cm,
                      BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                      BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = A + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = B + offs_bn[None, :] * stride_bn + offs_k[:, None]
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0)
        accumulator = tl.dot(a, b, accumulator, out_dtype=tl.int32)
        a_ptrs += BLOCK_SIZE_K
        b_ptrs += BLOCK_SIZE_K
    a_s = tl.load(As + offs_am)
    b_s = tl.load(Bs + offs_bn)
    c = accumulator.to(tl.float32) * a_s[:, None] * b_s[None, :]
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = C + stride_cm * offs_cm[:, None] + offs_cn[None, :]
    tl.store(c_ptrs, c.to(C.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def w8a8_int8_matmul(a, b, a_scale, b_scale, out_dtype=torch.float16):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=out_dtype)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    _w8a8_int8_kernel[grid](a, b, c, a_scale, b_scale, M, N, K, a.stride(0), b.stride(0),
                            c.stride(0), BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128,
                            GROUP_SIZE_M=8, num_warps=8, num_stages=3)
    return c
