"""GEMM in the shape of the tutorials: a 1-D launch remapped to tiles in
groups of GROUP_SIZE_M rows for L2 reuse, autotuned configs, contiguity and
divisibility stated on the offsets (values, not statements), the
accumulator threaded through `tl.dot(a, b, acc)`, and an optional
leaky-ReLU fused into the epilogue."""
import torch
import triton
import triton.language as tl


def get_autotune_config():
    return [
        triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64,
                       "GROUP_SIZE_M": 8}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64,
                       "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4),
        triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32,
                       "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4),
    ]


@triton.jit
def leaky_relu(x):
    # negative inputs keep 1% of their value, the rest pass through
    return tl.where(x >= 0, x, x * 0.01)


@triton.jit
def _grouped_tile(pid, tiles_m, tiles_n, GROUP: tl.constexpr):
    # Programs walk a band of GROUP row blocks column by column, so the
    # consecutive programs of a band share the same B columns and A rows.
    band_size = GROUP * tiles_n
    band = pid // band_size
    first_row = band * GROUP
    rows_here = tl.minimum(tiles_m - first_row, GROUP)
    within = pid - band * band_size
    return first_row + within % rows_here, within // rows_here


@triton.autotune(configs=get_autotune_config(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                  ACTIVATION: tl.constexpr):
    tile_m, tile_n = _grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_SIZE_M),
                                   tl.cdiv(N, BLOCK_SIZE_N), GROUP_SIZE_M)

    # Rows of A and columns of B past the edge wrap around (their results
    # are never stored); the offsets carry alignment/contiguity hints.
    rows = (tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    cols = (tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    rows = tl.max_contiguous(tl.multiple_of(rows, BLOCK_SIZE_M), BLOCK_SIZE_M)
    cols = tl.max_contiguous(tl.multiple_of(cols, BLOCK_SIZE_N), BLOCK_SIZE_N)
    ks = tl.arange(0, BLOCK_SIZE_K)

    a_tile = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    a_step = BLOCK_SIZE_K * stride_ak
    b_step = BLOCK_SIZE_K * stride_bk

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        # only the final step can run past K; zeros there add nothing
        in_k = (k0 + ks) < K
        a = tl.load(a_tile, mask=in_k[None, :], other=0.0)
        b = tl.load(b_tile, mask=in_k[:, None], other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += a_step
        b_tile += b_step

    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    out = acc.to(tl.float16)

    out_rows = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    out_cols = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_tile = c_ptr + out_rows[:, None] * stride_cm + out_cols[None, :] * stride_cn
    tl.store(c_tile, out, mask=(out_rows[:, None] < M) & (out_cols[None, :] < N))


def matmul(a, b, activation=""):
    assert a.shape[1] == b.shape[0], "incompatible dimensions"
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), ACTIVATION=activation)
    return c
