"""Stream-K GEMM: the MAC iterations of all output tiles are dealt evenly to
a fixed number of programs (one per SM), so a program may finish a tile
another one started. Partial tiles meet in the fp32 output under a
per-tile spin lock: the first to arrive stores, the later ones add."""
import torch
import triton
import triton.language as tl


@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    width = GROUP_M * num_pid_n
    group_id = tile_id // width
    group_size = tl.minimum(num_pid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (tile_id % group_size)
    pid_n = (tile_id % width) // group_size
    return pid_m, pid_n


@triton.jit
def streamk_gemm(A, B, C, locks, counts, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                 stride_cm, stride_cn, iters_per_program, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    iters_per_tile = tl.cdiv(K, BLOCK_K)
    total_iters = num_pid_m * num_pid_n * iters_per_tile
    it = pid * iters_per_program
    end = tl.minimum(it + iters_per_program, total_iters)
    while it < end:
        tile_id = it // iters_per_tile
        k_first = it % iters_per_tile
        k_last = tl.minimum(iters_per_tile, k_first + (end - it))
        pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = k_first * BLOCK_K + tl.arange(0, BLOCK_K)
        a_ptrs = A + (rm % M)[:, None] * stride_am + rk[None, :] * stride_ak
        b_ptrs = B + rk[:, None] * stride_bk + (rn % N)[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(k_first, k_last):
            k_left = K - kk * BLOCK_K
            a = tl.load(a_ptrs, mask=tl.arange(0, BLOCK_K)[None, :] < k_left, other=0.0)
            b = tl.load(b_ptrs, mask=tl.arange(0, BLOCK_K)[:, None] < k_left, other=0.0)
            acc += tl.dot(a, b)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c_ptrs = C + rm[:, None] * stride_cm + rn[None, :] * stride_cn
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        if (k_first == 0) & (k_last == iters_per_tile):
            tl.store(c_ptrs, acc, mask=mask)
        else:
            while tl.atomic_cas(locks + tile_id, 0, 1) == 1:
                pass
            count = tl.load(counts + tile_id)
            if count == 0:
                tl.store(c_ptrs, acc, mask=mask)
            else:
                cur = tl.load(c_ptrs, mask=mask, other=0.0)
                tl.store(c_ptrs, cur + acc, mask=mask)
            tl.store(counts + tile_id, count + 1)
            tl.atomic_xchg(locks + tile_id, 0)
        it += k_last - k_first


def matmul_streamk(a, b, num_sms=132, block_m=128, block_n=128, block_k=64):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    locks = torch.zeros(tiles, device=a.device, dtype=torch.int32)
    counts = torch.zeros(tiles, device=a.device, dtype=torch.int32)
    total = tiles * triton.cdiv(K, block_k)
    streamk_gemm[(num_sms,)](a, b, c, locks, counts, M, N, K, a.stride(0), a.stride(1),
                             b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                             triton.cdiv(total, num_sms), BLOCK_M=block_m, BLOCK_N=block_n,
                             BLOCK_K=block_k, GROUP_M=8, num_warps=8, num_stages=3)
    return c
