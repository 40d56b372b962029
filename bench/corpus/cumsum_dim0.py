"""Inclusive prefix sum over the leading dimension of a row-major matrix,
in the way FlagGems-style scan ops treat a scanned dim that is not the
innermost one: x [M, N] is split into column strips of BLOCK_N adjacent
columns, one program per strip, so every load and store touches a run of
contiguous elements of a row. The program walks down M in BLOCK_M row
chunks; each chunk is widened to fp32, scanned along its rows with
tl.cumsum(axis=0), shifted by the running total of the rows above it, and
written back in x's dtype. The running total of each column is then taken
from the chunk's own last scanned row (picked out with a where/sum over the
row index), so that the carry is exactly the value just stored for that row
rather than a second, differently rounded sum. Rows past M load as zero and
leave the carry unchanged. Strides are runtime ints; the output may have
its own."""
import torch
import triton
import triton.language as tl


@triton.jit
def cumsum_dim0_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym, stride_yn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < N
    offs_m = tl.arange(0, BLOCK_M)
    is_last = (offs_m == BLOCK_M - 1)[:, None]
    x_cols = x_ptr + offs_n[None, :] * stride_xn
    y_cols = y_ptr + offs_n[None, :] * stride_yn

    carry = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + offs_m
        mask = (rows < M)[:, None] & mask_n[None, :]
        tile = tl.load(x_cols + rows[:, None] * stride_xm, mask=mask, other=0.0)
        acc = tl.cumsum(tile.to(tl.float32), axis=0) + carry[None, :]
        tl.store(y_cols + rows[:, None] * stride_ym, acc.to(y_ptr.dtype.element_ty), mask=mask)
        carry = tl.sum(tl.where(is_last, acc, 0.0), axis=0)


def cumsum_dim0(x, BLOCK_M=128, BLOCK_N=32, num_warps=4):
    """torch.cumsum(x, dim=0) for a 2-D fp16/bf16 x, summed in fp32, returned in x's dtype."""
    assert x.dim() == 2
    M, N = x.shape
    y = torch.empty_like(x)
    grid = (triton.cdiv(N, BLOCK_N),)
    cumsum_dim0_kernel[grid](x, y, M, N, x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                             BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return y
