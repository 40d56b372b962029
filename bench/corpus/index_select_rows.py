"""torch.index_select(x, 0, index) for a 2-D x, the gather that also
serves as an embedding lookup: out[i, :] = x[index[i], :]. The launch is a
2-D grid of tiles, BLOCK_M output rows by BLOCK_N columns. A program reads
its BLOCK_M int64 indices as one vector, turns each into the start of a
source row (index * stride, kept in int64 so that tables past 2**31
elements stay addressable) and copies the [BLOCK_M, BLOCK_N] tile, masked
on the last row block and on the last column block. The output row offset
is widened to int64 the same way. Indices are trusted to lie in range, as
in the fast path of a library op (no device-side bounds check)."""
import torch
import triton
import triton.language as tl


@triton.jit
def index_select_rows_kernel(src_ptr, index_ptr, out_ptr, num_indices, num_cols, stride_src_row,
                             stride_src_col, stride_out_row, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = offs_m < num_indices
    mask_n = offs_n < num_cols
    mask = mask_m[:, None] & mask_n[None, :]

    src_rows = tl.load(index_ptr + offs_m, mask=mask_m, other=0).to(tl.int64)
    src = src_ptr + src_rows[:, None] * stride_src_row + offs_n[None, :] * stride_src_col
    vals = tl.load(src, mask=mask)
    dst = out_ptr + offs_m.to(tl.int64)[:, None] * stride_out_row + offs_n[None, :]
    tl.store(dst, vals, mask=mask)


def index_select_rows(x, index, BLOCK_M=8, BLOCK_N=512, num_warps=4):
    """x [V, D], index [n] (int64) -> out [n, D] with out[i] = x[index[i]]."""
    assert x.dim() == 2 and index.dim() == 1
    n, D = index.numel(), x.shape[1]
    out = torch.empty((n, D), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(n, BLOCK_M), triton.cdiv(D, BLOCK_N))
    index_select_rows_kernel[grid](x, index, out, n, D, x.stride(0), x.stride(1), out.stride(0),
                                   BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return out
