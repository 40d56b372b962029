"""Gathers and scatters: an embedding lookup with int64 row offsets, its
backward that scatters gradient rows into the table with tl.atomic_add,
writing new keys and values into a paged KV cache through a slot
mapping (negative slots skipped), and a histogram of token ids with
integer atomics."""
import torch
import triton
import triton.language as tl


@triton.jit
def embedding_fwd_kernel(ids_ptr, weight_ptr, out_ptr, n_tokens, hidden, BLOCK_T: tl.constexpr,
                         BLOCK_H: tl.constexpr):
    pid_t = tl.program_id(0)
    pid_h = tl.program_id(1)
    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_h = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    t_mask = offs_t < n_tokens
    h_mask = offs_h < hidden
    ids = tl.load(ids_ptr + offs_t, mask=t_mask, other=0).to(tl.int64)
    rows = tl.load(weight_ptr + ids[:, None] * hidden + offs_h[None, :],
                   mask=t_mask[:, None] & h_mask[None, :])
    tl.store(out_ptr + offs_t.to(tl.int64)[:, None] * hidden + offs_h[None, :], rows,
             mask=t_mask[:, None] & h_mask[None, :])


@triton.jit
def embedding_bwd_kernel(grad_out_ptr, grad_weight_ptr, ids_ptr, n_tokens, hidden,
                         BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    mask_m = offs_m < n_tokens
    mask_n = offs_n < hidden
    ids = tl.load(ids_ptr + offs_m, mask=mask_m, other=0)
    g = tl.load(grad_out_ptr + offs_m[:, None] * hidden + offs_n[None, :],
                mask=mask_m[:, None] & mask_n[None, :], other=0.0)
    tl.atomic_add(grad_weight_ptr + ids[:, None] * hidden + offs_n[None, :], g,
                  mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def reshape_and_cache_kernel(key_ptr, value_ptr, key_cache_ptr, value_cache_ptr,
                             slot_mapping_ptr, key_stride, value_stride, block_stride,
                             page_stride, num_heads, head_size, block_size,
                             BLOCK_HD: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_mapping_ptr + token).to(tl.int64)
    if slot < 0:
        return
    blk = slot // block_size
    off = slot % block_size
    offs = tl.arange(0, BLOCK_HD)
    n = num_heads * head_size
    for start in range(0, n, BLOCK_HD):
        idx = start + offs
        m = idx < n
        k = tl.load(key_ptr + token * key_stride + idx, mask=m)
        v = tl.load(value_ptr + token * value_stride + idx, mask=m)
        dst = blk * block_stride + off * page_stride + idx
        tl.store(key_cache_ptr + dst, k, mask=m)
        tl.store(value_cache_ptr + dst, v, mask=m)


@triton.jit
def bincount_kernel(ids_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ids = tl.load(ids_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + ids, tl.full((BLOCK,), 1, tl.int32), mask=mask, sem="relaxed")
