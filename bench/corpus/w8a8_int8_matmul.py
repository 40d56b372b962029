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
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    # grouped tile order over bands of GROUP_SIZE_M tile rows
    per_band = GROUP_SIZE_M * tiles_n
    band_first = (pid // per_band) * GROUP_SIZE_M
    band_height = tl.minimum(tiles_m - band_first, GROUP_SIZE_M)
    in_band = pid % per_band
    tile_m = band_first + in_band % band_height
    tile_n = in_band // band_height

    rows = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    kk = tl.arange(0, BLOCK_SIZE_K)
    rows_ld = rows % M
    cols_ld = cols % N
    # A is [M, K] and B is [N, K], both contiguous along K
    a_tile = A + rows_ld[:, None] * stride_am + kk[None, :]
    b_tile = B + cols_ld[None, :] * stride_bn + kk[:, None]

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        k_left = K - k0
        a = tl.load(a_tile, mask=kk[None, :] < k_left, other=0)
        b = tl.load(b_tile, mask=kk[:, None] < k_left, other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        a_tile += BLOCK_SIZE_K
        b_tile += BLOCK_SIZE_K

    row_ok = rows < M
    col_ok = cols < N
    s_row = tl.load(As + rows, mask=row_ok, other=0.0)
    s_col = tl.load(Bs + cols, mask=col_ok, other=0.0)
    res = acc.to(tl.float32) * s_row[:, None] * s_col[None, :]
    c_tile = C + rows[:, None] * stride_cm + cols[None, :]
    tl.store(c_tile, res.to(C.dtype.element_ty), mask=row_ok[:, None] & col_ok[None, :])


def w8a8_int8_matmul(a, b, a_scale, b_scale, out_dtype=torch.float16):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=out_dtype)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    _w8a8_int8_kernel[grid](a, b, c, a_scale, b_scale, M, N, K, a.stride(0), b.stride(0),
                            c.stride(0), BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128,
                            GROUP_SIZE_M=8, num_warps=8, num_stages=3)
    return c
