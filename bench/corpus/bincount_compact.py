"""Integer scatter and stream compaction, as FlagGems and the serving
stacks write them without tl.histogram:

- batched_bincount_kernel: per-sequence token counts (the bins a
  repetition/frequency penalty reads), torch.bincount row by row. A
  (block, row) grid loads int64 token ids, drops the padding (ids outside
  [0, n_bins)) and adds 1, or the token's weight, into the row's bins
  with tl.atomic_add: int32 counts without weights, fp32 sums with them.
- masked_select as two passes: masked_select_count_kernel counts the set
  mask entries of each BLOCK; with the exclusive prefix of those counts
  (the block offsets), masked_select_scatter_kernel takes an inclusive
  tl.cumsum of its block of the mask and stores every selected element
  at its compacted position."""
import torch
import triton
import triton.language as tl


# ---- bincount per row, integer or weighted atomics --------------------------------------------

@triton.jit
def batched_bincount_kernel(values_ptr, weights_ptr, bins_ptr, n_cols, n_bins, stride_v_row,
                            stride_bins_row, HAS_WEIGHTS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row = tl.program_id(1).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    in_row = offs < n_cols
    vals = tl.load(values_ptr + row * stride_v_row + offs, mask=in_row, other=-1)
    # padding ids (negative or past the vocabulary) are not counted
    valid = in_row & (vals >= 0) & (vals < n_bins)
    dst = bins_ptr + row * stride_bins_row + vals
    if HAS_WEIGHTS:
        wts = tl.load(weights_ptr + row * stride_v_row + offs, mask=in_row, other=0.0)
        tl.atomic_add(dst, wts.to(tl.float32), mask=valid, sem="relaxed")
    else:
        tl.atomic_add(dst, tl.full((BLOCK,), 1, tl.int32), mask=valid, sem="relaxed")


def batched_bincount(values, n_bins, weights=None, BLOCK=1024):
    n_rows, n_cols = values.shape
    dtype = torch.int32 if weights is None else torch.float32
    bins = torch.zeros(n_rows, n_bins, dtype=dtype, device=values.device)
    grid = (triton.cdiv(n_cols, BLOCK), n_rows)
    batched_bincount_kernel[grid](values, weights, bins, n_cols, n_bins, values.stride(0),
                                  bins.stride(0), HAS_WEIGHTS=weights is not None, BLOCK=BLOCK)
    return bins


# ---- masked_select: block counts, then a scatter to the compacted positions -----------------

@triton.jit
def masked_select_count_kernel(mask_ptr, counts_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = tl.load(mask_ptr + offs, mask=offs < n_elements, other=0) != 0
    tl.store(counts_ptr + pid, tl.sum(m.to(tl.int32), axis=0))


@triton.jit
def masked_select_scatter_kernel(inp_ptr, mask_ptr, block_offsets_ptr, out_ptr, n_elements,
                                 BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offs < n_elements
    m = tl.load(mask_ptr + offs, mask=in_bounds, other=0) != 0
    x = tl.load(inp_ptr + offs, mask=in_bounds & m)
    # position of each selected element among the selected ones of this block
    incl = tl.cumsum(m.to(tl.int32), axis=0)
    base = tl.load(block_offsets_ptr + pid)
    dst = base + (incl - 1).to(tl.int64)
    tl.store(out_ptr + dst, x, mask=m)


def masked_select(inp, mask, BLOCK=2048):
    x, m = inp.reshape(-1), mask.reshape(-1).view(torch.int8)
    n = x.numel()
    n_blocks = triton.cdiv(n, BLOCK)
    counts = torch.empty(n_blocks, dtype=torch.int32, device=x.device)
    masked_select_count_kernel[(n_blocks,)](m, counts, n, BLOCK=BLOCK)
    ends = torch.cumsum(counts, 0, dtype=torch.int64)
    out = torch.empty(int(ends[-1]), dtype=x.dtype, device=x.device)
    masked_select_scatter_kernel[(n_blocks,)](x, m, ends - counts, out, n, BLOCK=BLOCK)
    return out
