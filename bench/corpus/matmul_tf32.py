"""fp32 GEMM on tensor cores, as a PyTorch user with fp32 activations and
weights writes it: the operands stay fp32 in memory and the dot asks for
tf32 explicitly (`input_precision="tf32"`), so each product keeps about
10 mantissa bits while the accumulator stays fp32. One program per output
tile on a 1-D grid, tiles visited in column groups of GROUP_M rows so that
neighbouring programs share B's tiles in L2; loads masked on the M and N
edges and on the ragged tail of K; a per-column bias added in the fp32
epilogue (a Linear layer's forward)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _tf32_linear_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                        stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr, HAS_BIAS: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    tiles_per_group = GROUP_M * grid_n
    group = pid // tiles_per_group
    first_m = group * GROUP_M
    rows_in_group = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % tiles_per_group) % rows_in_group
    pid_n = (pid % tiles_per_group) // rows_in_group

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mask_m = rm < M
    mask_n = rn < N
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_left = K - k0
        a = tl.load(a_tile, mask=mask_m[:, None] & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_tile, mask=(rk[:, None] < k_left) & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision="tf32")
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk

    if HAS_BIAS:
        bias = tl.load(bias_ptr + rn, mask=mask_n, other=0.0)
        acc += bias[None, :]
    c_tile = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_tile, acc, mask=mask_m[:, None] & mask_n[None, :])


def linear_tf32(x, weight_t, bias=None, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8):
    """x [M, K] @ weight_t [K, N] (+ bias [N]) in fp32 with tf32 products."""
    assert x.dtype == torch.float32 and weight_t.dtype == torch.float32
    M, K = x.shape
    K2, N = weight_t.shape
    assert K == K2, "inner dimensions differ"
    out = torch.empty((M, N), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _tf32_linear_kernel[grid](x, weight_t, bias if bias is not None else out, out, M, N, K,
                              x.stride(0), x.stride(1), weight_t.stride(0), weight_t.stride(1),
                              out.stride(0), out.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                              BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, HAS_BIAS=bias is not None,
                              num_warps=8, num_stages=3)
    return out
