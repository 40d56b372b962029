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
    pid = tl.program_id(0)
    first = pid * TOKENS_PER_PROGRAM
    row = counts_ptr + (pid + 1) * NUM_EXPERTS
    for i in range(TOKENS_PER_PROGRAM):
        if first + i < numel:
            expert = tl.load(topk_ids_ptr + first + i)
            seen = tl.load(row + expert)
            tl.store(row + expert, seen + 1)


@triton.jit
def expert_count_prefix_kernel(counts_ptr, num_rows, NUM_EXPERTS: tl.constexpr):
    # one program per expert: row r becomes the number of its tokens in rows 1..r
    expert = tl.program_id(0)
    running = 0
    for r in range(1, num_rows):
        here = tl.load(counts_ptr + r * NUM_EXPERTS + expert)
        running += here
        tl.store(counts_ptr + r * NUM_EXPERTS + expert, running)


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
