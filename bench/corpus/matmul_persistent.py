"""Persistent GEMM: NUM_SMS programs walk the output tiles with a stride of
NUM_SMS, tiles taken in groups of GROUP_SIZE_M rows; the K loop uses
tl.range so the loads are software-pipelined; bf16 or fp16 out."""
import torch
import triton
import triton.language as tl


@triton.jit
def _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    # tiles are numbered in bands of GROUP_SIZE_M tile-rows; inside a band the
    # row index runs fastest, so consecutive tiles share columns of B
    band = tile_id // num_pid_in_group
    first_row = band * GROUP_SIZE_M
    band_rows = tl.minimum(num_pid_m - first_row, GROUP_SIZE_M)
    pos = tile_id - band * num_pid_in_group
    pid_m = first_row + pos % band_rows
    pid_n = pos // band_rows
    return pid_m, pid_n


@triton.jit
def matmul_kernel_persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                             stride_bn, stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr,
                             BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                             GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr):
    start = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_steps = tl.cdiv(K, BLOCK_SIZE_K)
    total_tiles = tiles_m * tiles_n
    band_size = GROUP_SIZE_M * tiles_n
    out_ty = c_ptr.dtype.element_ty

    ks = tl.arange(0, BLOCK_SIZE_K)
    for tile_id in range(start, total_tiles, NUM_SMS):
        pid_m, pid_n = _compute_pid(tile_id, band_size, tiles_m, GROUP_SIZE_M)
        rows = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        row_ok = rows < M
        col_ok = cols < N
        a_tile = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
        b_tile = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
        acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for kk in tl.range(0, k_steps):
            k_left = K - kk * BLOCK_SIZE_K
            a = tl.load(a_tile, mask=row_ok[:, None] & (ks[None, :] < k_left), other=0.0)
            b = tl.load(b_tile, mask=(ks[:, None] < k_left) & col_ok[None, :], other=0.0)
            acc = tl.dot(a, b, acc)
            a_tile += BLOCK_SIZE_K * stride_ak
            b_tile += BLOCK_SIZE_K * stride_bk
        c_tile = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
        tl.store(c_tile, acc.to(out_ty), mask=row_ok[:, None] & col_ok[None, :])


def matmul_persistent(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    grid = lambda META: (min(sms, triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"])),)
    matmul_kernel_persistent[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                   b.stride(1), c.stride(0), c.stride(1), BLOCK_SIZE_M=128,
                                   BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8,
                                   NUM_SMS=sms, num_warps=8, num_stages=3)
    return c
