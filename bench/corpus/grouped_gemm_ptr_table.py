"""Grouped GEMM over independent problems in one launch: the operand
addresses come from tables of int64 and are cast back to typed pointers
with .to(tl.pointer_type(...)); a fixed number of programs walk the tiles
of every problem in turn. Alignment of the table-loaded pointers is stated
with tl.multiple_of(..., [16, 16]) as bare statements."""
import torch
import triton
import triton.language as tl


@triton.jit
def grouped_matmul_kernel(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes,
                          g_lds, group_size, NUM_SM: tl.constexpr, BLOCK_SIZE_M: tl.constexpr,
                          BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
        num_tiles = num_m_tiles * num_n_tiles
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            k = gk
            lda = tl.load(g_lds + g * 3)
            ldb = tl.load(g_lds + g * 3 + 1)
            ldc = tl.load(g_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles
            offs_am = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_bn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_SIZE_K)):
                tl.multiple_of(a_ptrs, [16, 16])
                tl.multiple_of(b_ptrs, [16, 16])
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
                accumulator += tl.dot(a, b)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c = accumulator.to(tl.float16)
            offs_cm = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_cn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            c_ptrs = c_ptr + ldc * offs_cm[:, None] + offs_cn[None, :]
            tl.store(c_ptrs, c)
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


def group_gemm(group_A, group_B, num_sm=132):
    dev = group_A[0].device
    sizes, lds, C = [], [], []
    for a, b in zip(group_A, group_B):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), device=dev, dtype=a.dtype)
        C.append(c)
        sizes += [M, N, K]
        lds += [a.stride(0), b.stride(0), c.stride(0)]
    a_ptrs = torch.tensor([t.data_ptr() for t in group_A], device=dev)
    b_ptrs = torch.tensor([t.data_ptr() for t in group_B], device=dev)
    c_ptrs = torch.tensor([t.data_ptr() for t in C], device=dev)
    sizes = torch.tensor(sizes, dtype=torch.int32, device=dev)
    lds = torch.tensor(lds, dtype=torch.int32, device=dev)
    grouped_matmul_kernel[(num_sm,)](a_ptrs, b_ptrs, c_ptrs, sizes, lds, len(group_A),
                                     NUM_SM=num_sm, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128,
                                     BLOCK_SIZE_K=64, num_warps=4, num_stages=3)
    return C
