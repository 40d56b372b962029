"""AWQ int4 weight-only GEMM in the form of vLLM's Triton AWQ path. The
weight qweight [K, N // 8] int32 holds eight 4-bit values along N in
AWQ's packing order, so column j of each group of eight sits in nibble
(0, 4, 1, 5, 2, 6, 3, 7)[j]; the zero points qzeros [K // G, N // 8] are
packed the same way, and scales [K // G, N] are fp16. A packed tile is
widened eightfold along N with three tl.interleave(b, b), each column
then shifted by a table of nibble offsets built from tl.arange, masked
to four bits and dequantised (q - z) * s to fp16 for tl.dot. The
accumulator takes the output's element type (fp16 here, so the dot
accumulates in fp16). Split-K runs on grid axis 1: slice z takes the
K tiles z, z + SPLIT_K, ... and writes its partial product to plane z
of c [SPLIT_K, M, N], which the host sums."""
import torch
import triton
import triton.language as tl


@triton.jit
def awq_gemm_kernel(a_ptr, b_ptr, c_ptr, zeros_ptr, scales_ptr, M, N, K, group_size,
                    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                    BLOCK_SIZE_K: tl.constexpr, SPLIT_K: tl.constexpr):
    # program -> (row block, column block); axis 1 selects the split-K slice
    pid = tl.program_id(0)
    pid_z = tl.program_id(1)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    PACKED_N: tl.constexpr = BLOCK_SIZE_N // 8
    packed_cols = N // 8

    rows = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    pcols = pid_n * PACKED_N + tl.arange(0, PACKED_N)
    row_ok = rows < M
    col_ok = cols < N
    pcol_ok = pcols < packed_cols
    kk = tl.arange(0, BLOCK_SIZE_K)

    # bit offset of column j within its int32 word: nibble (0, 4, 1, 5, 2, 6, 3, 7)[j % 8]
    lane = tl.arange(0, BLOCK_SIZE_N) % 8
    shifts = ((lane // 2) + (lane % 2) * 4) * 4
    shifts = shifts[None, :]

    acc_dtype = c_ptr.dtype.element_ty
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=acc_dtype)

    num_k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    for kt in range(pid_z, num_k_tiles, SPLIT_K):
        k0 = kt * BLOCK_SIZE_K
        ks = k0 + kk
        k_ok = ks < K

        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :],
                    mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        w = tl.load(b_ptr + ks[:, None] * packed_cols + pcols[None, :],
                    mask=k_ok[:, None] & pcol_ok[None, :], other=0)

        # one quantisation group covers this K tile (group_size is a multiple of BLOCK_SIZE_K)
        grp = k0 // group_size
        zw = tl.load(zeros_ptr + grp * packed_cols + pcols, mask=pcol_ok, other=0)
        sc = tl.load(scales_ptr + grp * N + cols, mask=col_ok, other=0.0)

        # widen each packed column eightfold, then pick each column's nibble
        w = tl.interleave(w, w)
        w = tl.interleave(w, w)
        w = tl.interleave(w, w)
        q = (w >> shifts) & 0xF

        zw = zw[None, :]
        zw = tl.interleave(zw, zw)
        zw = tl.interleave(zw, zw)
        zw = tl.interleave(zw, zw)
        z = (zw >> shifts) & 0xF

        b = ((q - z).to(sc.dtype) * sc[None, :]).to(a.dtype)
        acc = tl.dot(a, b, acc, out_dtype=acc_dtype)

    out = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + pid_z * M * N + rows[:, None] * N + cols[None, :]
    tl.store(c_ptrs, out, mask=row_ok[:, None] & col_ok[None, :])


def awq_gemm(x, qweight, scales, qzeros, split_k=1, block_m=32, block_n=32, block_k=32):
    M, K = x.shape
    N = qweight.shape[1] * 8
    group_size = K // qzeros.shape[0]
    # the kernel reads one zero/scale row per K tile
    assert group_size % block_k == 0, "group_size must be a multiple of block_k"
    c = torch.empty((split_k, M, N), device=x.device, dtype=scales.dtype)
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n), split_k)
    awq_gemm_kernel[grid](x, qweight, c, qzeros, scales, M, N, K, group_size,
                          BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n, BLOCK_SIZE_K=block_k,
                          SPLIT_K=split_k)
    return c.sum(0)
