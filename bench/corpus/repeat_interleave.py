"""FlagGems-style repeat_interleave with a per-row repeats tensor
(torch.repeat_interleave(x, repeats, dim=0) for a 2-D x). A first kernel,
one program, turns the repeats into exclusive offsets (offsets[0] = 0,
offsets[n] = the output's row count) with tl.cumsum over a block at a
time and a running carry. The copy kernel then gives each program a block
of output rows by a block of columns; every output row finds its source
row by a binary search over the offsets (the last row whose offset is at
or below it, so rows repeated zero times are stepped over) and copies it."""
import torch
import triton
import triton.language as tl


@triton.jit
def repeat_offsets_kernel(repeats_ptr, offsets_ptr, n_rows, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    carry = tl.zeros((), dtype=tl.int64)
    tl.store(offsets_ptr, carry)
    for start in range(0, n_rows, BLOCK):
        idx = start + offs
        mask = idx < n_rows
        r = tl.load(repeats_ptr + idx, mask=mask, other=0).to(tl.int64)
        incl = tl.cumsum(r, axis=0) + carry
        # offsets[i + 1] = repeats[0] + ... + repeats[i]
        tl.store(offsets_ptr + 1 + idx, incl, mask=mask)
        carry += tl.sum(r, axis=0)


@triton.jit
def repeat_interleave_copy_kernel(x_ptr, offsets_ptr, out_ptr, n_rows, n_out, n_cols,
                                  search_steps, stride_x, stride_out, BLOCK_M: tl.constexpr,
                                  BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    out_rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_mask = out_rows < n_out
    target = out_rows.to(tl.int64)
    # offsets[lo] <= target < offsets[hi] throughout
    lo = tl.zeros((BLOCK_M,), dtype=tl.int32)
    hi = tl.full((BLOCK_M,), 0, dtype=tl.int32) + n_rows
    for _ in range(search_steps):
        mid = (lo + hi) // 2
        v = tl.load(offsets_ptr + mid, mask=row_mask, other=0)
        go_right = v <= target
        lo = tl.where(go_right, mid, lo)
        hi = tl.where(go_right, hi, mid)
    mask = row_mask[:, None] & (cols < n_cols)[None, :]
    vals = tl.load(x_ptr + lo.to(tl.int64)[:, None] * stride_x + cols[None, :], mask=mask)
    tl.store(out_ptr + target[:, None] * stride_out + cols[None, :], vals, mask=mask)


def repeat_interleave(x, repeats, output_size=None, BLOCK_M=16, BLOCK_N=512):
    n_rows, n_cols = x.shape
    offsets = torch.empty(n_rows + 1, device=x.device, dtype=torch.int64)
    repeat_offsets_kernel[(1,)](repeats, offsets, n_rows, BLOCK=1024, num_warps=4)
    n_out = int(offsets[-1].item()) if output_size is None else output_size
    out = torch.empty((n_out, n_cols), device=x.device, dtype=x.dtype)
    steps = max(n_rows - 1, 1).bit_length()
    grid = (triton.cdiv(n_out, BLOCK_M), triton.cdiv(n_cols, BLOCK_N))
    repeat_interleave_copy_kernel[grid](x, offsets, out, n_rows, n_out, n_cols, steps,
                                        x.stride(0), out.stride(0), BLOCK_M=BLOCK_M,
                                        BLOCK_N=BLOCK_N, num_warps=4)
    return out
