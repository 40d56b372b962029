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
    pid = tl.program_id(axis=0)
    pid_z = tl.program_id(axis=1)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    PACKED_N: tl.constexpr = BLOCK_SIZE_N // 8

    acc_dtype = c_ptr.type.element_ty
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=acc_dtype)

    # undo AWQ's order: nibble index of column j (mod 8) is [0, 4, 1, 5, 2, 6, 3, 7][j]
    nibble_of_col = ((tl.arange(0, 2) * 4)[None, :] + tl.arange(0, 4)[:, None]).reshape(8)
    shifts = nibble_of_col * 4
    b_shifts = tl.broadcast_to(shifts[None, :], (BLOCK_SIZE_K * PACKED_N, 8))
    b_shifts = tl.reshape(b_shifts, (BLOCK_SIZE_K, BLOCK_SIZE_N))
    z_shifts = tl.broadcast_to(shifts[None, :], (PACKED_N, 8))
    z_shifts = tl.reshape(z_shifts, (1, BLOCK_SIZE_N))

    offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    mask_am = offs_am < M
    offs_bn = pid_n * PACKED_N + tl.arange(0, PACKED_N)
    mask_bn = offs_bn < N // 8
    offs_sn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    mask_sn = offs_sn < N
    offs_k = pid_z * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)

    a_ptrs = a_ptr + K * offs_am[:, None] + offs_k[None, :]
    b_ptrs = b_ptr + (N // 8) * offs_k[:, None] + offs_bn[None, :]
    num_groups = K // group_size

    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K * SPLIT_K)):
        mask_k = offs_k < K
        a = tl.load(a_ptrs, mask=mask_am[:, None] & mask_k[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=mask_k[:, None] & mask_bn[None, :], other=0)
        b = tl.interleave(b, b)
        b = tl.interleave(b, b)
        b = tl.interleave(b, b)

        # one zero/scale row per K tile: BLOCK_SIZE_K divides the group size
        g = (k * SPLIT_K * BLOCK_SIZE_K + pid_z * BLOCK_SIZE_K) // group_size
        z = tl.load(zeros_ptr + g * (N // 8) + offs_bn[None, :],
                    mask=(g < num_groups) & mask_bn[None, :], other=0)
        z = tl.interleave(z, z)
        z = tl.interleave(z, z)
        z = tl.interleave(z, z)
        s = tl.load(scales_ptr + g * N + offs_sn[None, :],
                    mask=(g < num_groups) & mask_sn[None, :], other=0.0)

        b = (b >> b_shifts) & 0xF
        z = (z >> z_shifts) & 0xF
        b = ((b - z) * s).to(acc_dtype)
        accumulator = tl.dot(a, b, accumulator, out_dtype=acc_dtype)

        offs_k += BLOCK_SIZE_K * SPLIT_K
        a_ptrs += BLOCK_SIZE_K * SPLIT_K
        b_ptrs += BLOCK_SIZE_K * SPLIT_K * (N // 8)

    c = accumulator.to(c_ptr.type.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + pid_z * M * N + N * offs_cm[:, None] + offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def awq_gemm(x, qweight, scales, qzeros, split_k=1, block_m=32, block_n=32, block_k=32):
    M, K = x.shape
    N = qweight.shape[1] * 8
    group_size = K // qzeros.shape[0]
    c = torch.empty((split_k, M, N), device=x.device, dtype=scales.dtype)
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n), split_k)
    awq_gemm_kernel[grid](x, qweight, c, qzeros, scales, M, N, K, group_size,
                          BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n, BLOCK_SIZE_K=block_k,
                          SPLIT_K=split_k)
    return c.sum(0)
