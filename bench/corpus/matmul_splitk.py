"""Split-K GEMM: the K loop is cut into SPLIT_K slices on the grid's third
axis, each slice accumulates its partial product and adds it into an fp32
output with tl.atomic_add (the caller zeroes it first). Rows and columns
are masked, K is assumed a multiple of BLOCK_K * SPLIT_K (EVEN_K)."""
import torch
import triton
import triton.language as tl


@triton.heuristics({"EVEN_K": lambda args: args["K"] % (args["BLOCK_K"] * args["SPLIT_K"]) == 0})
@triton.jit
def _splitk_kernel(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                   stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    slice_id = tl.program_id(2)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    # slice s takes K blocks s, s + SPLIT_K, s + 2*SPLIT_K, ...
    ks = slice_id * BLOCK_K + tl.arange(0, BLOCK_K)
    a_tile = A + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_tile = B + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    stride_k = BLOCK_K * SPLIT_K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for it in range(0, tl.cdiv(K, stride_k)):
        if EVEN_K:
            a = tl.load(a_tile, mask=row_ok[:, None], other=0.0)
            b = tl.load(b_tile, mask=col_ok[None, :], other=0.0)
        else:
            k_ok = ks < K - it * stride_k
            a = tl.load(a_tile, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            b = tl.load(b_tile, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += stride_k * stride_ak
        b_tile += stride_k * stride_bk
    c_tile = C + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    out = acc.to(C.dtype.element_ty)
    out_ok = row_ok[:, None] & col_ok[None, :]
    if SPLIT_K == 1:
        tl.store(c_tile, out, mask=out_ok)
    else:
        tl.atomic_add(c_tile, out, mask=out_ok)


def matmul_splitk(a, b, split_k=4, block_m=64, block_n=64, block_k=64):
    M, K = a.shape
    N = b.shape[1]
    c = torch.zeros((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n), split_k)
    _splitk_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                         c.stride(0), c.stride(1), BLOCK_M=block_m, BLOCK_N=block_n,
                         BLOCK_K=block_k, SPLIT_K=split_k, num_warps=4, num_stages=4)
    return c
