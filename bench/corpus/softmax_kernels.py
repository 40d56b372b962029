"""Softmax in three shapes: the tutorial's persistent-row form (programs
step through rows with tl.range and pipelined loads), an online softmax
for rows wider than one block (running max and sum, then a second pass),
and the softmax backward (dx = y * (dy - sum(y * dy)))."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


@triton.jit
def softmax_online_kernel(output_ptr, input_ptr, M, N, TILE_N: tl.constexpr):
    pid_m = tl.program_id(0)
    m = tl.full((TILE_N,), value=-float("inf"), dtype=tl.float32)
    z = tl.full((TILE_N,), value=0, dtype=tl.float32)
    for start_n in range(0, N, TILE_N):
        n_offsets = start_n + tl.arange(0, TILE_N)
        offset = pid_m * N + n_offsets
        mask = n_offsets < N
        inp = tl.load(input_ptr + offset, mask=mask, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, inp)
        all_neg_inf = m_new == float("-inf")
        z = tl.where(all_neg_inf, z, z * tl.exp(m - m_new) + tl.exp(inp - m_new))
        m = m_new
    m_reduced = tl.max(m, 0)
    z = tl.sum(z * tl.exp(m - m_reduced), 0)
    m = m_reduced
    for start_n in range(0, N, TILE_N):
        n_offsets = start_n + tl.arange(0, TILE_N)
        offset = pid_m * N + n_offsets
        mask = n_offsets < N
        inp = tl.load(input_ptr + offset, mask=mask, other=-float("inf")).to(tl.float32)
        o = tl.exp(inp - m) / z
        tl.store(output_ptr + offset, o.to(output_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_backward_kernel(out_ptr, out_grad_ptr, in_grad_ptr, M, N, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    m_offset = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    n_offset = tl.arange(0, BLOCK_N)
    offsets = m_offset[:, None] * N + n_offset[None, :]
    mask = (m_offset[:, None] < M) & (n_offset[None, :] < N)
    out_tile = tl.load(out_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    out_grad_tile = tl.load(out_grad_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    scale = tl.sum(out_tile * out_grad_tile, 1)
    in_grad_tile = out_tile * (out_grad_tile - scale[:, None])
    tl.store(in_grad_ptr + offsets, in_grad_tile.to(in_grad_ptr.dtype.element_ty), mask=mask)


def softmax(x, num_programs=132):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    y = torch.empty_like(x)
    softmax_kernel[(min(num_programs, n_rows),)](y, x, x.stride(0), y.stride(0), n_rows, n_cols,
                                                 BLOCK_SIZE=BLOCK_SIZE, num_stages=4, num_warps=8)
    return y
