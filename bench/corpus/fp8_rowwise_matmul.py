"""fp8 GEMM with row-wise scaling: per-row scales of A and per-column
scales of B are applied once after the K loop, with a bias added; the
accumulator runs through tl.dot(a, b, acc). The K loop assumes K is a
multiple of BLOCK_K (EVEN_K, decided by a heuristic)."""
import torch
import triton
import triton.language as tl


@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def _kernel_matmul_fp8_row(A, B, C, M, N, K, A_scale, B_scale, Bias, stride_am, stride_ak,
                           stride_bn, stride_bk, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                           EVEN_K: tl.constexpr, USE_BIAS: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // group_size
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    A = A + (ram[:, None] * stride_am + rk[None, :] * stride_ak)
    B = B + (rk[:, None] * stride_bk + rbn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(A)
            b = tl.load(B)
        else:
            a = tl.load(A, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(B, mask=rk[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        A += BLOCK_K * stride_ak
        B += BLOCK_K * stride_bk
    a_scale = tl.load(A_scale + rm, mask=rm < M)
    b_scale = tl.load(B_scale + rn, mask=rn < N)
    acc *= a_scale[:, None] * b_scale[None, :]
    if USE_BIAS:
        bias = tl.load(Bias + rn, mask=rn < N)
        acc += bias[None, :]
    acc = acc.to(C.dtype.element_ty)
    C = C + (rm[:, None] * stride_cm + rn[None, :] * stride_cn)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    tl.store(C, acc, mask=mask)


def matmul_fp8_row(a, b, a_scale, b_scale, bias=None):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    _kernel_matmul_fp8_row[grid](a, b, c, M, N, K, a_scale, b_scale, bias, a.stride(0),
                                 a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                                 BLOCK_M=128, BLOCK_N=128, BLOCK_K=128, GROUP_M=8,
                                 USE_BIAS=bias is not None, num_warps=8, num_stages=3)
    return c
