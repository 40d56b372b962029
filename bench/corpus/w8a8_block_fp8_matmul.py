"""Block-scaled fp8 GEMM as DeepSeek-style checkpoints need it: A is fp8
with one scale per (row, 128-wide K group), B is fp8 stored [N, K] with one
scale per (128 x 128) block; each K step multiplies its partial product by
both scales before adding it: acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]."""
import torch
import triton
import triton.language as tl


@triton.jit
def _w8a8_block_fp8_matmul(A, B, C, As, Bs, M, N, K, group_n, group_k, stride_am, stride_ak,
                           stride_bk, stride_bn, stride_cm, stride_cn, stride_As_m, stride_As_k,
                           stride_Bs_k, stride_Bs_n, BLOCK_SIZE_M: tl.constexpr,
                           BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                           GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    # grouped tile order: GROUP_SIZE_M tile rows per band, column-major inside a band
    per_band = GROUP_SIZE_M * tiles_n
    band_first = (pid // per_band) * GROUP_SIZE_M
    band_height = tl.minimum(tiles_m - band_first, GROUP_SIZE_M)
    in_band = pid % per_band
    tile_m = band_first + in_band % band_height
    tile_n = in_band // band_height

    rows = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    kk = tl.arange(0, BLOCK_SIZE_K)
    # out-of-range rows/cols are redirected to valid ones for loading only
    rows_ld = rows % M
    cols_ld = cols % N
    a_tile = A + rows_ld[:, None] * stride_am + kk[None, :] * stride_ak
    b_tile = B + kk[:, None] * stride_bk + cols_ld[None, :] * stride_bn
    # scale pointers: one A scale per row, one B scale per N group, both per K group
    a_scale_row = As + rows_ld * stride_As_m
    b_scale_col = Bs + (cols_ld // group_n) * stride_Bs_n

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        k_left = K - k0
        a = tl.load(a_tile, mask=kk[None, :] < k_left, other=0.0)
        b = tl.load(b_tile, mask=kk[:, None] < k_left, other=0.0)
        kgrp = k0 // group_k
        sa = tl.load(a_scale_row + kgrp * stride_As_k)
        sb = tl.load(b_scale_col + kgrp * stride_Bs_k)
        acc += tl.dot(a, b) * sa[:, None] * sb[None, :]
        a_tile += BLOCK_SIZE_K * stride_ak
        b_tile += BLOCK_SIZE_K * stride_bk

    c_tile = C + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    keep = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_tile, acc.to(C.dtype.element_ty), mask=keep)


def w8a8_block_fp8_matmul(A, B, As, Bs, block_size=(128, 128), output_dtype=torch.bfloat16):
    block_n, block_k = block_size
    M, K = A.shape
    N = B.shape[0]
    C = torch.empty((M, N), device=A.device, dtype=output_dtype)
    grid = (triton.cdiv(M, 64) * triton.cdiv(N, block_n),)
    _w8a8_block_fp8_matmul[grid](A, B, C, As, Bs, M, N, K, block_n, block_k, A.stride(0),
                                 A.stride(1), B.stride(1), B.stride(0), C.stride(0), C.stride(1),
                                 As.stride(0), As.stride(1), Bs.stride(1), Bs.stride(0),
                                 BLOCK_SIZE_M=64, BLOCK_SIZE_N=block_n, BLOCK_SIZE_K=block_k,
                                 GROUP_SIZE_M=32, num_warps=4, num_stages=3)
    return C
