"""Seeded dropout in the low-memory form: the keep mask is never stored
but regenerated from (seed, element offset) with Philox through tl.rand,
so the forward and the backward draw the same stream. _dropout_keep_mask
writes the mask the same stream gives (for backward-by-mask users and for
checking the forward)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _seeded_dropout_fwd(x_ptr, out_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    idx = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_range = idx < n_elements
    x = tl.load(x_ptr + idx, mask=in_range, other=0.0)
    # the same (seed, offset) stream as _dropout_keep_mask decides which lanes survive
    survive = tl.rand(seed, idx) > p
    inv_keep = 1.0 / (1.0 - p)
    y = tl.where(survive, x * inv_keep, 0.0)
    tl.store(out_ptr + idx, y.to(out_ptr.dtype.element_ty), mask=in_range)


@triton.jit
def _dropout_keep_mask(mask_out_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    keep = tl.rand(seed, offsets) > p
    tl.store(mask_out_ptr + offsets, keep.to(tl.int8), mask=offsets < n_elements)
