"""max / argmax over the leading dimension of a row-major matrix, the way
FlagGems-style reduction ops handle a reduced dim that is not the innermost
one: x [M, N] is walked down its columns, each program owning BLOCK_N
adjacent columns (so every load is a run of contiguous elements of one row)
and stepping over M in BLOCK_M row chunks. Per chunk, one tl.max with
return_indices gives the column maxima and the row where each was reached
(ties going to the lower row); the running (max, row) pair per column is
only replaced on a strictly larger value, so across chunks the first row
wins too, as torch.max(x, dim=0) returns it. Strides are runtime ints (a
transposed view works unchanged); values come back in x's dtype, indices as
int64."""
import torch
import triton
import triton.language as tl


@triton.jit
def max_dim0_kernel(inp, out_value, out_index, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    rows = tl.arange(0, BLOCK_M)
    col_base = inp + cols[None, :] * stride_n

    run_max = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
    run_idx = tl.zeros([BLOCK_N], dtype=tl.int64)
    for m0 in range(0, M, BLOCK_M):
        r = m0 + rows
        ok = (r < M)[:, None] & col_ok[None, :]
        tile = tl.load(col_base + r[:, None] * stride_m, mask=ok, other=float("-inf"))
        blk_max, blk_arg = tl.max(tile.to(tl.float32), axis=0, return_indices=True,
                                  return_indices_tie_break_left=True)
        better = blk_max > run_max
        run_max = tl.where(better, blk_max, run_max)
        run_idx = tl.where(better, blk_arg.to(tl.int64) + m0, run_idx)

    tl.store(out_value + cols, run_max.to(out_value.dtype.element_ty), mask=col_ok)
    tl.store(out_index + cols, run_idx, mask=col_ok)


def max_dim0(x, BLOCK_M=128, BLOCK_N=32, num_warps=4):
    """x [M, N] -> (values [N] in x's dtype, indices [N] int64), as torch.max(x, dim=0)."""
    assert x.dim() == 2
    M, N = x.shape
    values = torch.empty((N,), device=x.device, dtype=x.dtype)
    indices = torch.empty((N,), device=x.device, dtype=torch.int64)
    grid = (triton.cdiv(N, BLOCK_N),)
    max_dim0_kernel[grid](x, values, indices, M, N, x.stride(0), x.stride(1), BLOCK_M=BLOCK_M,
                          BLOCK_N=BLOCK_N, num_warps=num_warps)
    return values, indices
