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
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # bands of GROUP_M tile rows are walked column by column so neighbouring
    # programs share the same B columns
    per_band = GROUP_M * tiles_n
    band_first = (pid // per_band) * GROUP_M
    band_height = tl.minimum(tiles_m - band_first, GROUP_M)
    in_band = pid % per_band
    tile_m = band_first + in_band % band_height
    tile_n = in_band // band_height

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    kk = tl.arange(0, BLOCK_K)
    # rows/cols past the edge read a valid row/col instead; they are never stored
    rows_ld = rows % M
    cols_ld = cols % N
    a_tile = A + rows_ld[:, None] * stride_am + kk[None, :] * stride_ak
    b_tile = B + kk[:, None] * stride_bk + cols_ld[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_tile)
            b = tl.load(b_tile)
        else:
            k_left = K - k0
            a = tl.load(a_tile, mask=kk[None, :] < k_left, other=0.0)
            b = tl.load(b_tile, mask=kk[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk

    # epilogue: row scale of A, column scale of B, then the bias
    row_ok = rows < M
    col_ok = cols < N
    s_row = tl.load(A_scale + rows, mask=row_ok, other=0.0)
    s_col = tl.load(B_scale + cols, mask=col_ok, other=0.0)
    res = acc * s_row[:, None] * s_col[None, :]
    if USE_BIAS:
        bias = tl.load(Bias + cols, mask=col_ok, other=0.0).to(tl.float32)
        res += bias[None, :]
    c_tile = C + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_tile, res.to(C.dtype.element_ty), mask=row_ok[:, None] & col_ok[None, :])


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
