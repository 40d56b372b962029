"""Scans and reductions over tuples: a running maximum that carries the
index where it was reached (tl.associative_scan over (value, index) pairs
with a combine function), a row argmax written as tl.reduce over
(value, index) with a tie-break on the lower index, and a long cumulative
sum done in blocks with the carry passed from block to block."""
import torch
import triton
import triton.language as tl


@triton.jit
def _max_with_index(a_value, a_index, b_value, b_index):
    take_b = (b_value > a_value) | ((b_value == a_value) & (b_index < a_index))
    return tl.where(take_b, b_value, a_value), tl.where(take_b, b_index, a_index)


@triton.jit
def cummax_kernel(inp, out_values, out_indices, n_cols, stride_row, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < n_cols
    x = tl.load(inp + row * stride_row + offs, mask=mask, other=-float("inf")).to(tl.float32)
    idx = offs.to(tl.int32)
    vals, inds = tl.associative_scan((x, idx), axis=0, combine_fn=_max_with_index)
    tl.store(out_values + row * stride_row + offs, vals, mask=mask)
    tl.store(out_indices + row * stride_row + offs, inds, mask=mask)


@triton.jit
def argmax_rows_kernel(inp, out_index, out_value, M, N, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    best_v = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    best_i = tl.zeros((BLOCK_M,), dtype=tl.int32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        v = tl.load(inp + rows[:, None] * N + cols[None, :], mask=mask, other=-float("inf"))
        v = v.to(tl.float32)
        i = tl.broadcast_to(cols[None, :], (BLOCK_M, BLOCK_N))
        tile_v, tile_i = tl.reduce((v, i), 1, _max_with_index)
        best_v, best_i = _max_with_index(best_v, best_i, tile_v, tile_i)
    tl.store(out_index + rows, best_i, mask=rows < M)
    tl.store(out_value + rows, best_v, mask=rows < M)


@triton.jit
def blocked_cumsum_kernel(inp, out, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros((1,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < N
        x = tl.load(inp + row * stride + offs, mask=mask, other=0.0).to(tl.float32)
        acc = tl.cumsum(x, axis=0) + carry
        tl.store(out + row * stride + offs, acc, mask=mask)
        carry += tl.sum(x, axis=0)
