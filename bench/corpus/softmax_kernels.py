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
    # Each program owns rows pid, pid + nprog, ...; one row fits in one block.
    first_row = tl.program_id(0)
    row_step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_SIZE)
    col_ok = cols < n_cols
    for row in tl.range(first_row, n_rows, row_step, num_stages=num_stages):
        src = input_ptr + row.to(tl.int64) * input_row_stride
        vals = tl.load(src + cols, mask=col_ok, other=-float("inf")).to(tl.float32)
        shifted = vals - tl.max(vals, axis=0)
        num = tl.exp(shifted)
        denom = tl.sum(num, axis=0)
        dst = output_ptr + row.to(tl.int64) * output_row_stride
        tl.store(dst + cols, (num / denom).to(output_ptr.dtype.element_ty), mask=col_ok)


@triton.jit
def softmax_online_kernel(output_ptr, input_ptr, M, N, TILE_N: tl.constexpr):
    # One program per contiguous row of N elements, walked TILE_N at a time.
    row = tl.program_id(0)
    row_in = input_ptr + row.to(tl.int64) * N
    row_out = output_ptr + row.to(tl.int64) * N
    lane = tl.arange(0, TILE_N)

    # Pass 1: running maximum and running sum of exp(x - maximum), rescaled
    # whenever a tile raises the maximum.
    run_max = -float("inf")
    run_sum = 0.0
    for base in range(0, N, TILE_N):
        idx = base + lane
        t = tl.load(row_in + idx, mask=idx < N, other=-float("inf")).to(tl.float32)
        hi = tl.maximum(run_max, tl.max(t, axis=0))
        run_sum = run_sum * tl.exp(run_max - hi) + tl.sum(tl.exp(t - hi), axis=0)
        run_max = hi

    # Pass 2: normalise with the final statistics.
    inv_sum = 1.0 / run_sum
    for base in range(0, N, TILE_N):
        idx = base + lane
        keep = idx < N
        t = tl.load(row_in + idx, mask=keep, other=-float("inf")).to(tl.float32)
        p = tl.exp(t - run_max) * inv_sum
        tl.store(row_out + idx, p.to(output_ptr.dtype.element_ty), mask=keep)


@triton.jit
def softmax_backward_kernel(out_ptr, out_grad_ptr, in_grad_ptr, M, N, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr):
    # A program handles BLOCK_M contiguous rows; BLOCK_N spans a whole row.
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    tile_ok = (rows < M)[:, None] & (cols < N)[None, :]
    offs = rows.to(tl.int64)[:, None] * N + cols[None, :]
    y = tl.load(out_ptr + offs, mask=tile_ok, other=0.0).to(tl.float32)
    g = tl.load(out_grad_ptr + offs, mask=tile_ok, other=0.0).to(tl.float32)
    row_dot = tl.sum(y * g, axis=1)
    dx = y * (g - row_dot[:, None])
    tl.store(in_grad_ptr + offs, dx.to(in_grad_ptr.dtype.element_ty), mask=tile_ok)


def softmax(x, num_programs=132):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    y = torch.empty_like(x)
    softmax_kernel[(min(num_programs, n_rows),)](y, x, x.stride(0), y.stride(0), n_rows, n_cols,
                                                 BLOCK_SIZE=BLOCK_SIZE, num_stages=4, num_warps=8)
    return y
