"""Grouped GEMM over independent problems in one launch: the operand
addresses come from tables of int64 and are cast back to typed pointers
with .to(tl.pointer_type(...)); a fixed number of programs walk the tiles
of every problem in turn. Alignment of the table-loaded pointers is stated
with tl.multiple_of(..., [16, 16]) as bare statements, and that of the
table-loaded sizes (multiples of 16) with tl.multiple_of on the values."""
import torch
import triton
import triton.language as tl


@triton.jit
def grouped_matmul_kernel(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes,
                          g_lds, group_size, NUM_SM: tl.constexpr, BLOCK_SIZE_M: tl.constexpr,
                          BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    tile = tl.program_id(0)
    # tiles of the problems before the current one, in the global numbering
    tiles_before = 0
    ks = tl.arange(0, BLOCK_SIZE_K)
    for g in range(group_size):
        # the sizes are multiples of 16: a wrapped row or column and the K
        # tail's mask then keep whole 16-element runs, which move as vectors
        M = tl.multiple_of(tl.load(group_gemm_sizes + 3 * g), 16)
        N = tl.multiple_of(tl.load(group_gemm_sizes + 3 * g + 1), 16)
        K = tl.multiple_of(tl.load(group_gemm_sizes + 3 * g + 2), 16)
        tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
        tiles_here = tl.cdiv(M, BLOCK_SIZE_M) * tiles_n
        while tile < tiles_before + tiles_here:
            lda = tl.load(g_lds + 3 * g)
            ldb = tl.load(g_lds + 3 * g + 1)
            ldc = tl.load(g_lds + 3 * g + 2)
            a_base = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_base = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_base = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            local = tile - tiles_before
            rows = (local // tiles_n) * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            cols = (local % tiles_n) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            # rows and columns past the edge read a valid row or column again
            # (the store drops them), so only the K tail needs a mask
            a_ptrs = a_base + (rows % M)[:, None] * lda + ks[None, :]
            b_ptrs = b_base + ks[:, None] * ldb + (cols % N)[None, :]
            acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for k0 in range(0, K, BLOCK_SIZE_K):
                # the tables' pointers and leading dimensions keep 16-element
                # alignment: stated on the pointer tiles the loop carries
                tl.multiple_of(a_ptrs, [16, 16])
                tl.multiple_of(b_ptrs, [16, 16])
                left = K - k0
                a = tl.load(a_ptrs, mask=ks[None, :] < left, other=0.0)
                b = tl.load(b_ptrs, mask=ks[:, None] < left, other=0.0)
                acc = tl.dot(a, b, acc)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c_ptrs = c_base + rows[:, None] * ldc + cols[None, :]
            tl.multiple_of(c_ptrs, [16, 16])
            tl.store(c_ptrs, acc.to(tl.float16), mask=(rows < M)[:, None] & (cols < N)[None, :])
            tile += NUM_SM
        tiles_before += tiles_here

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
