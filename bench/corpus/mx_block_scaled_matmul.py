"""Block-scaled (MX) GEMM in the manner of Triton's block-scaled matmul
tutorial and the mxfp8 kernels built on it: A [M, K] and B [N, K] both
in float8 e4m3, each with one e8m0 exponent (a uint8, value 2^(s - 127))
per 32 consecutive elements of K, for every row of A and every row of B
(column of the product's right operand). C = (A * 2^sa) @ (B * 2^sb)^T
through tl.dot_scaled with an fp32 accumulator, written as bf16. A plain
2-D grid of output tiles, the K loop stepping one BLOCK_K at a time; rows
past M and N are wrapped with a modulo on load and masked on store."""
import torch
import triton
import triton.language as tl


@triton.jit
def block_scaled_matmul_kernel(a_ptr, b_ptr, a_scale_ptr, b_scale_ptr, c_ptr, M, N, K,
                               stride_am, stride_bn, stride_asm, stride_bsn, stride_cm,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                               BLOCK_K: tl.constexpr, VEC_SIZE: tl.constexpr):
    SCALES_K: tl.constexpr = BLOCK_K // VEC_SIZE
    row0 = tl.program_id(0) * BLOCK_M
    col0 = tl.program_id(1) * BLOCK_N

    # operand rows past M / N wrap onto valid rows; those results are dropped
    a_rows = (row0 + tl.arange(0, BLOCK_M)) % M
    b_rows = (col0 + tl.arange(0, BLOCK_N)) % N
    k_elems = tl.arange(0, BLOCK_K)
    k_groups = tl.arange(0, SCALES_K)

    # A and B are both K-contiguous: [rows, BLOCK_K] fp8 tiles, and
    # [rows, BLOCK_K / VEC_SIZE] e8m0 exponents for the same K slice
    a_at = a_ptr + a_rows[:, None] * stride_am + k_elems[None, :]
    b_at = b_ptr + b_rows[:, None] * stride_bn + k_elems[None, :]
    sa_at = a_scale_ptr + a_rows[:, None] * stride_asm + k_groups[None, :]
    sb_at = b_scale_ptr + b_rows[:, None] * stride_bsn + k_groups[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_at)
        b = tl.load(b_at)
        sa = tl.load(sa_at)
        sb = tl.load(sb_at)
        # B tile is [N, K]; the product wants its K-major view [K, N]
        acc = tl.dot_scaled(a, sa, "e4m3", tl.trans(b), sb, "e4m3", acc)
        a_at += BLOCK_K
        b_at += BLOCK_K
        sa_at += SCALES_K
        sb_at += SCALES_K

    out_rows = row0 + tl.arange(0, BLOCK_M)
    out_cols = col0 + tl.arange(0, BLOCK_N)
    c_at = c_ptr + out_rows[:, None] * stride_cm + out_cols[None, :]
    tl.store(c_at, acc.to(c_ptr.dtype.element_ty),
             mask=(out_rows[:, None] < M) & (out_cols[None, :] < N))


def block_scaled_matmul(a, b, a_scale, b_scale, out_dtype=torch.bfloat16):
    """a [M, K], b [N, K] float8_e4m3fn; a_scale [M, K // 32], b_scale [N, K // 32] uint8."""
    M, K = a.shape
    N = b.shape[0]
    assert K % 128 == 0
    c = torch.empty((M, N), device=a.device, dtype=out_dtype)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
    block_scaled_matmul_kernel[grid](a, b, a_scale, b_scale, c, M, N, K, a.stride(0), b.stride(0),
                                     a_scale.stride(0), b_scale.stride(0), c.stride(0),
                                     BLOCK_M=128, BLOCK_N=128, BLOCK_K=128, VEC_SIZE=32,
                                     num_warps=8, num_stages=3)
    return c
