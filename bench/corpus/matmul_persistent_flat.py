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
    start = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    total = tiles_m * tiles_n
    mine = total // NUM_SMS
    if start < total % NUM_SMS:
        mine += 1
    tile = start - NUM_SMS
    ki = -1
    k_lane = tl.arange(0, BLOCK_K)
    group_width = GROUP_M * tiles_n
    pid_m = 0
    pid_n = 0
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, k_steps * mine):
        ki = tl.where(ki == k_steps - 1, 0, ki + 1)
        if ki == 0:
            tile += NUM_SMS
            group = tile // group_width
            first_m = group * GROUP_M
            rows_in_group = min(tiles_m - first_m, GROUP_M)
            pid_m = first_m + (tile % rows_in_group)
            pid_n = (tile % group_width) // rows_in_group
            rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            rows = tl.where(rows < M, rows, 0)
            cols = tl.where(cols < N, cols, 0)
            rows = tl.max_contiguous(tl.multiple_of(rows, BLOCK_M), BLOCK_M)
            cols = tl.max_contiguous(tl.multiple_of(cols, BLOCK_N), BLOCK_N)
        ks = ki * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=k_lane[None, :] < K - ki * BLOCK_K, other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=k_lane[:, None] < K - ki * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        if ki == k_steps - 1:
            out_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            out_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            c_ptrs = c_ptr + out_m[:, None] * stride_cm + out_n[None, :] * stride_cn
            keep = (out_m[:, None] < M) & (out_n[None, :] < N)
            tl.store(c_ptrs, acc.to(tl.float16), mask=keep)
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
