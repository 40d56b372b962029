"""Persistent GEMM with the tile loop flattened by hand into the K loop, as
persistent kernels were written before tl.range(flatten=True): one loop
over every K step of every tile this program owns; a K index that wraps
to 0 at each new tile, where an `if` computes the tile's rows and columns;
the epilogue in an `if` on the last K step, which stores and resets the
accumulator. fp16 out."""
import torch
import triton
import triton.language as tl


@triton.jit
def gemm_persistent_flat(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                         stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                         NUM_SMS: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    total_tiles = tiles_m * tiles_n
    band_size = GROUP_M * tiles_n
    # tiles owned by this program: pid, pid + NUM_SMS, ...
    my_tiles = tl.cdiv(total_tiles - pid, NUM_SMS)
    steps = my_tiles * k_steps

    ks = tl.arange(0, BLOCK_K)
    tile_id = pid - NUM_SMS
    kk = -1
    row0 = 0
    col0 = 0
    a_rows = tl.arange(0, BLOCK_M)
    b_cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, steps):
        kk = tl.where(kk == k_steps - 1, 0, kk + 1)
        if kk == 0:
            # a new tile starts: place it in the banded order
            tile_id += NUM_SMS
            band = tile_id // band_size
            first_row = band * GROUP_M
            band_rows = tl.minimum(tiles_m - first_row, GROUP_M)
            pos = tile_id - band * band_size
            row0 = (first_row + pos % band_rows) * BLOCK_M
            col0 = (pos // band_rows) * BLOCK_N
            # wrapped indices keep the loads in bounds; the store is masked
            a_rows = (row0 + tl.arange(0, BLOCK_M)) % M
            b_cols = (col0 + tl.arange(0, BLOCK_N)) % N
        k_here = kk * BLOCK_K + ks
        k_ok = k_here < K
        a = tl.load(a_ptr + a_rows[:, None] * stride_am + k_here[None, :] * stride_ak,
                    mask=k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + k_here[:, None] * stride_bk + b_cols[None, :] * stride_bn,
                    mask=k_ok[:, None], other=0.0)
        acc = tl.dot(a, b, acc)
        if kk == k_steps - 1:
            rows = row0 + tl.arange(0, BLOCK_M)
            cols = col0 + tl.arange(0, BLOCK_N)
            c_tile = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
            tl.store(c_tile, acc.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)

def gemm_flat(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    grid = lambda META: (min(sms, triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"])),)
    gemm_persistent_flat[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                               b.stride(1), c.stride(0), c.stride(1), BLOCK_M=128, BLOCK_N=256,
                               BLOCK_K=64, GROUP_M=8, NUM_SMS=sms, num_warps=8, num_stages=3)
    return c
