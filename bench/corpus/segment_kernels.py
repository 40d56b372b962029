"""segment_kernels.py: kernels whose work follows data-dependent counts and
offsets, as MoE dispatch and recommendation models write them: counting
the tokens routed to each expert one token at a time (each program owns a
row of counters, so no atomics are needed), the running sum of those rows
down each expert's column, and a jagged (variable-length) row sum whose
loop bounds are loaded from an offsets table."""
import triton
import triton.language as tl


# ---- MoE dispatch: per-program expert counts, then their prefix down each column -----------

@triton.jit
def expert_count_rows_kernel(topk_ids_ptr, counts_ptr, numel, NUM_EXPERTS: tl.constexpr,
                             TOKENS_PER_PROGRAM: tl.constexpr):
    # program p counts its slice of the flattened (token, k) ids into row p + 1 of an
    # (programs + 1) x NUM_EXPERTS table; row 0 stays zero for the prefix below
    prog = tl.program_id(0)
    experts = tl.arange(0, NUM_EXPERTS)
    tally = tl.zeros([NUM_EXPERTS], dtype=tl.int32)
    first = prog * TOKENS_PER_PROGRAM
    last = tl.minimum(first + TOKENS_PER_PROGRAM, numel)
    # one routed id per step: bump the counter whose lane matches it
    for i in range(first, last):
        eid = tl.load(topk_ids_ptr + i)
        tally += (experts == eid).to(tl.int32)
    tl.store(counts_ptr + (prog + 1) * NUM_EXPERTS + experts, tally)


@triton.jit
def expert_count_prefix_kernel(counts_ptr, num_rows, NUM_EXPERTS: tl.constexpr):
    # one program per expert: row r becomes the number of its tokens in rows 1..r
    ROWS: tl.constexpr = 128
    col = counts_ptr + tl.program_id(0)
    carry = tl.zeros([], dtype=tl.int32)
    # walk down the column a block of rows at a time, scanning each block and adding
    # the total of the blocks above it
    for r0 in range(0, num_rows, ROWS):
        rows = r0 + tl.arange(0, ROWS)
        ok = rows < num_rows
        vals = tl.load(col + rows * NUM_EXPERTS, mask=ok, other=0)
        scan = tl.cumsum(vals, axis=0) + carry
        tl.store(col + rows * NUM_EXPERTS, scan, mask=ok)
        carry += tl.sum(vals, axis=0)


# ---- jagged sum: each segment's rows added up, the segment's extent from offsets -----------

@triton.jit
def jagged_row_sum_kernel(values_ptr, offsets_ptr, out_ptr, D, BLOCK_N: tl.constexpr,
                          BLOCK_D: tl.constexpr):
    seg = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    col_ok = cols < D
    begin = tl.load(offsets_ptr + seg)
    end = tl.load(offsets_ptr + seg + 1)
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for start in range(begin, end, BLOCK_N):
        rows = start + tl.arange(0, BLOCK_N)
        tile = tl.load(values_ptr + rows[:, None] * D + cols[None, :],
                       mask=(rows[:, None] < end) & col_ok[None, :], other=0.0)
        acc += tl.sum(tile.to(tl.float32), axis=0)
    tl.store(out_ptr + seg * D + cols, acc.to(out_ptr.dtype.element_ty), mask=col_ok)


def expert_counts(topk_ids, num_experts, programs):
    """The host side: count, then prefix, on one (programs + 1) x E table."""
    import torch
    numel = topk_ids.numel()
    per = triton.cdiv(numel, programs)
    counts = torch.zeros((programs + 1, num_experts), dtype=torch.int32, device=topk_ids.device)
    expert_count_rows_kernel[(programs,)](topk_ids, counts, numel, NUM_EXPERTS=num_experts,
                                          TOKENS_PER_PROGRAM=per)
    expert_count_prefix_kernel[(num_experts,)](counts, programs + 1, NUM_EXPERTS=num_experts)
    return counts


def jagged_sum(values, offsets, BLOCK_N=32, BLOCK_D=128):
    import torch
    segments, d = offsets.numel() - 1, values.shape[1]
    out = torch.empty((segments, d), dtype=values.dtype, device=values.device)
    jagged_row_sum_kernel[(segments, triton.cdiv(d, BLOCK_D))](values, offsets, out, d,
                                                                BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D)
    return out
